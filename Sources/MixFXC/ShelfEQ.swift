import CMixFX
import MixFX
import Synchronization

/// What `mixfx_shelf_eq` is: the engine's `ShelfEQ` (RBJ low and high shelf, global gain) with
/// its settings in atomics, so the setters may run on any thread while another processes; the
/// processing thread reads them once per call and recomputes the coefficients when they
/// changed (the filter state kept; no smoothing).
final class ShelfEQProcessor: @unchecked Sendable {
    let sampleRate: Double
    let channelCount: Int
    private var eq = ShelfEQ()
    /// The settings' doubles as bit patterns: bass gain, bass corner, treble gain, treble
    /// corner, global gain.
    private let bassGain: Atomic<UInt64>, bassCorner: Atomic<UInt64>
    private let trebleGain: Atomic<UInt64>, trebleCorner: Atomic<UInt64>
    private let globalGain: Atomic<UInt64>

    init(sampleRate: Double, channelCount: Int) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        let flat = ShelfEQSettings()
        bassGain = Atomic(flat.bass.gainDB.bitPattern)
        bassCorner = Atomic(flat.bass.frequencyHz.bitPattern)
        trebleGain = Atomic(flat.treble.gainDB.bitPattern)
        trebleCorner = Atomic(flat.treble.frequencyHz.bitPattern)
        globalGain = Atomic(flat.globalGainDB.bitPattern)
        eq.prepare(ProcessSpec(sampleRate: sampleRate, maximumFrameCount: 0, channelCount: channelCount))
        // the registry's specs are made on first use: here, not in the first setter (mixfx.h)
        for id in [ParameterID.bassGainDB, .bassFrequencyHz, .trebleGainDB, .trebleFrequencyHz, .eqGlobalGainDB] {
            _ = id.spec.problem(with: id.spec.defaultValue)
        }
    }

    /// The settings the setters stored (any thread).
    var target: ShelfEQSettings {
        func v(_ a: borrowing Atomic<UInt64>) -> Double { Double(bitPattern: a.load(ordering: .relaxed)) }
        return ShelfEQSettings(bass: .init(frequencyHz: v(bassCorner), gainDB: v(bassGain)),
                               treble: .init(frequencyHz: v(trebleCorner), gainDB: v(trebleGain)),
                               globalGainDB: v(globalGain))
    }

    func setBand(bass: Bool, gainDB: Double, cornerHz: Double) throws(CAPIError) {
        try check(bass ? .bassGainDB : .trebleGainDB, gainDB, name: "gain_db")
        try check(bass ? .bassFrequencyHz : .trebleFrequencyHz, cornerHz, name: "corner_hz")
        guard cornerHz < sampleRate / 2 else {
            throw .range("corner_hz: \(cornerHz) Hz is not below Nyquist (\(sampleRate / 2) Hz at \(sampleRate) Hz)")
        }
        if bass {
            bassGain.store(gainDB.bitPattern, ordering: .relaxed)
            bassCorner.store(cornerHz.bitPattern, ordering: .relaxed)
        } else {
            trebleGain.store(gainDB.bitPattern, ordering: .relaxed)
            trebleCorner.store(cornerHz.bitPattern, ordering: .relaxed)
        }
    }

    func setGlobalGain(_ gainDB: Double) throws(CAPIError) {
        try check(.eqGlobalGainDB, gainDB, name: "gain_db")
        globalGain.store(gainDB.bitPattern, ordering: .relaxed)
    }

    private func check(_ id: ParameterID, _ value: Double, name: String) throws(CAPIError) {
        let spec = id.spec
        if let problem = spec.problem(with: value) { throw .range("\(name): \(problem) (allowed: \(spec.allowedText))") }
    }

    /// Filters `frameCount` frames from `input` into `output` (they may be the same). No
    /// allocation.
    func process(_ input: UnsafePointer<UnsafePointer<Float>?>, _ output: UnsafePointer<UnsafeMutablePointer<Float>?>,
                 frameCount: Int) {
        let settings = target
        if settings != eq.settings { eq.update(settings) }
        for c in 0..<channelCount where UnsafePointer(output[c]!) != input[c]! {
            output[c]!.update(from: input[c]!, count: frameCount)
        }
        // (a NaN or ∞ would stay in the filters' state for good: replaced by 0, as the engine does)
        for c in 0..<channelCount { _ = SampleGuard.sanitize(output[c]!, count: frameCount) }
        eq.process(left: output[0]!, right: channelCount > 1 ? output[1]! : nil, frameCount: frameCount)
    }

    func reset() { eq.reset() }
}

// The mixfx_shelf_eq_* functions of mixfx.h.

private func equalizer(_ handle: OpaquePointer?) throws(CAPIError) -> ShelfEQProcessor {
    try Handle.object(handle, .shelfEQ, as: ShelfEQProcessor.self, argument: "eq")
}

@_cdecl("mixfx_shelf_eq_create")
public func mixfx_shelf_eq_create(_ sampleRate: Double, _ channels: Int32, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    cCall(#function) { () throws(CAPIError) in
        guard let out else { throw .null("out") }
        out.pointee = nil
        try checkFormat(sampleRate: sampleRate, channels: channels)
        out.pointee = Handle.make(ShelfEQProcessor(sampleRate: sampleRate, channelCount: Int(channels)), kind: .shelfEQ)
    }
}

@_cdecl("mixfx_shelf_eq_destroy")
public func mixfx_shelf_eq_destroy(_ eq: OpaquePointer?) -> Int32 {
    cCall(#function) { () throws(CAPIError) in try Handle.destroy(eq, .shelfEQ, argument: "eq") }
}

@_cdecl("mixfx_shelf_eq_set_bass")
public func mixfx_shelf_eq_set_bass(_ eq: OpaquePointer?, _ gainDB: Double, _ cornerHz: Double) -> Int32 {
    cCall(#function) { () throws(CAPIError) in try equalizer(eq).setBand(bass: true, gainDB: gainDB, cornerHz: cornerHz) }
}

@_cdecl("mixfx_shelf_eq_set_treble")
public func mixfx_shelf_eq_set_treble(_ eq: OpaquePointer?, _ gainDB: Double, _ cornerHz: Double) -> Int32 {
    cCall(#function) { () throws(CAPIError) in try equalizer(eq).setBand(bass: false, gainDB: gainDB, cornerHz: cornerHz) }
}

@_cdecl("mixfx_shelf_eq_set_gain")
public func mixfx_shelf_eq_set_gain(_ eq: OpaquePointer?, _ gainDB: Double) -> Int32 {
    cCall(#function) { () throws(CAPIError) in try equalizer(eq).setGlobalGain(gainDB) }
}

@_cdecl("mixfx_shelf_eq_process")
public func mixfx_shelf_eq_process(_ eq: OpaquePointer?, _ input: UnsafePointer<UnsafePointer<Float>?>?,
                                   _ output: UnsafePointer<UnsafeMutablePointer<Float>?>?, _ frames: Int) -> Int32 {
    cCall(#function) { () throws(CAPIError) in
        let e = try equalizer(eq)
        guard frames >= 0 else { throw .range("frames: \(UInt(bitPattern: frames)) is not a frame count") }
        guard let input else { throw .null("input") }
        guard let output else { throw .null("output") }
        for c in 0..<e.channelCount {
            guard input[c] != nil else { throw .null("input[\(c)]") }
            guard output[c] != nil else { throw .null("output[\(c)]") }
        }
        e.process(input, output, frameCount: frames)
    }
}

@_cdecl("mixfx_shelf_eq_reset")
public func mixfx_shelf_eq_reset(_ eq: OpaquePointer?) -> Int32 {
    cCall(#function) { () throws(CAPIError) in try equalizer(eq).reset() }
}
