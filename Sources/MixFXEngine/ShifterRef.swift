import MixFXDSP
import MixFXDSPAVX2

/// A track's time-pitch processor as the checked render path calls it: the concrete
/// `PitchShifter` of the DSP copy that made it (`DSPCopy`), held unretained (the track kernel
/// keeps it as `any PitchShifting`), and called directly, not through the protocol's witness
/// table (which the realtime check cannot follow). The input-pulling entry points
/// (`shift(into:…)`, `shift(live:…)`) are called at the track kernel itself, one `switch`
/// over the two copies there: a checked function that is handed a closure refuses to pass it
/// on, so the pull function must be made where the shifter is called.
enum ShifterRef {
    case baseline(Unmanaged<MixFXDSP.PitchShifter>)
    case avx2(Unmanaged<MixFXDSPAVX2.PitchShifter>)

    /// `shifter`, which `DSPCopy.makePitchShifter` made (control side).
    init(_ shifter: any PitchShifting) {
        if let s = shifter as? MixFXDSP.PitchShifter {
            self = .baseline(.passUnretained(s))
        } else if let s = shifter as? MixFXDSPAVX2.PitchShifter {
            self = .avx2(.passUnretained(s))
        } else {
            preconditionFailure("a shifter of neither DSP copy: \(type(of: shifter))")
        }
    }

    /// `PitchShifter.inputTime`.
    var inputTime: Double {
        @inline(__always) get {
            switch self {
            case .baseline(let s): s._withUnsafeGuaranteedRef { $0.inputTime }
            case .avx2(let s): s._withUnsafeGuaranteedRef { $0.inputTime }
            }
        }
    }

    /// `PitchShifter.nextFrameInputTime`.
    var nextFrameInputTime: Double {
        @inline(__always) get {
            switch self {
            case .baseline(let s): s._withUnsafeGuaranteedRef { $0.nextFrameInputTime }
            case .avx2(let s): s._withUnsafeGuaranteedRef { $0.nextFrameInputTime }
            }
        }
    }

    /// `PitchShifter.currentCents`.
    var currentCents: Double {
        @inline(__always) get {
            switch self {
            case .baseline(let s): s._withUnsafeGuaranteedRef { $0.currentCents }
            case .avx2(let s): s._withUnsafeGuaranteedRef { $0.currentCents }
            }
        }
    }

    /// `PitchShifter.currentTempo`.
    var currentTempo: Double {
        @inline(__always) get {
            switch self {
            case .baseline(let s): s._withUnsafeGuaranteedRef { $0.currentTempo }
            case .avx2(let s): s._withUnsafeGuaranteedRef { $0.currentTempo }
            }
        }
    }

    /// `PitchShifter.switches(toCents:)`.
    @inline(__always)
    func switches(toCents cents: Double) -> Bool {
        switch self {
        case .baseline(let s): s._withUnsafeGuaranteedRef { $0.switches(toCents: cents) }
        case .avx2(let s): s._withUnsafeGuaranteedRef { $0.switches(toCents: cents) }
        }
    }

    /// `PitchShifter.setPitchCents`.
    @inline(__always)
    func setPitchCents(_ cents: Double) {
        switch self {
        case .baseline(let s): s._withUnsafeGuaranteedRef { $0.setPitchCents(cents) }
        case .avx2(let s): s._withUnsafeGuaranteedRef { $0.setPitchCents(cents) }
        }
    }

    /// `PitchShifter.holdPitch`.
    @inline(__always)
    func holdPitch(_ cents: Double?) {
        switch self {
        case .baseline(let s): s._withUnsafeGuaranteedRef { $0.holdPitch(cents) }
        case .avx2(let s): s._withUnsafeGuaranteedRef { $0.holdPitch(cents) }
        }
    }

    /// `PitchShifter.setPreserveFormants`.
    @inline(__always)
    func setPreserveFormants(_ on: Bool) {
        switch self {
        case .baseline(let s): s._withUnsafeGuaranteedRef { $0.setPreserveFormants(on) }
        case .avx2(let s): s._withUnsafeGuaranteedRef { $0.setPreserveFormants(on) }
        }
    }

    /// `PitchShifter.setTempo`.
    @inline(__always)
    func setTempo(_ tempo: Double) {
        switch self {
        case .baseline(let s): s._withUnsafeGuaranteedRef { $0.setTempo(tempo) }
        case .avx2(let s): s._withUnsafeGuaranteedRef { $0.setTempo(tempo) }
        }
    }

    /// `PitchShifter.process(left:right:frameCount:)`: offline without a tempo, in place.
    @inline(__always)
    func process(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?, frameCount: Int) {
        switch self {
        case .baseline(let s): s._withUnsafeGuaranteedRef { $0.process(left: left, right: right, frameCount: frameCount) }
        case .avx2(let s): s._withUnsafeGuaranteedRef { $0.process(left: left, right: right, frameCount: frameCount) }
        }
    }
}
