#if canImport(Glibc)
import Glibc
#endif

/// Settings of one shelf band.
public struct ShelfBandSettings: Sendable, Equatable {
    /// Corner frequency, Hz (below Nyquist).
    public var frequencyHz: Double
    /// Shelf gain, dB (−96…24); 0 is an exact no-op.
    public var gainDB: Double
    /// RBJ shelf slope S, in `slopeRange` (1 = the steepest slope without overshoot).
    public var slope: Double
    /// The slopes allowed. As S → 0 the shelf's transition widens without end: its poles and
    /// zeros close in on z = ±1 (the pole nearest the unit circle is about √S·ω0 from it), and
    /// below about 1e-18 they reach it in double precision; below about 5.6e-309, 1/S is
    /// infinite and every coefficient NaN. From 1e-4 up, the poles stay at least 1.3e-8 inside
    /// the unit circle at every corner, gain and rate allowed (20 Hz at 384 kHz, −96 dB is the
    /// nearest) and the measured response matches the formula.
    public static let slopeRange = 0.0001...1.0
    /// Skip the band.
    public var bypass: Bool

    /// Settings of a band (0 dB, S = 1 unless given).
    public init(frequencyHz: Double, gainDB: Double = 0, slope: Double = 1, bypass: Bool = false) {
        self.frequencyHz = frequencyHz
        self.gainDB = gainDB
        self.slope = slope
        self.bypass = bypass
    }

    /// True when the band changes nothing (bypassed, or exactly 0 dB).
    /// Field by field (written out: another module's realtime check cannot see a synthesized `==`).
    @_noAllocation @_noLocks
    public static func == (a: ShelfBandSettings, b: ShelfBandSettings) -> Bool {
        a.frequencyHz == b.frequencyHz && a.gainDB == b.gainDB && a.slope == b.slope && a.bypass == b.bypass
    }

    public var isNeutral: Bool { bypass || gainDB == 0 }
}

/// Settings of the two-band shelf EQ: a bass (low) shelf, a treble (high) shelf, a global gain.
public struct ShelfEQSettings: Sendable, Equatable {
    /// The low shelf.
    public var bass: ShelfBandSettings
    /// The high shelf.
    public var treble: ShelfBandSettings
    /// Gain after both shelves, dB.
    public var globalGainDB: Double

    /// The defaults of the app mixfx grew from: bass at 55 Hz, treble at 5800 Hz, both flat.
    public init(bass: ShelfBandSettings = .init(frequencyHz: 55),
                treble: ShelfBandSettings = .init(frequencyHz: 5800),
                globalGainDB: Double = 0) {
        self.bass = bass
        self.treble = treble
        self.globalGainDB = globalGainDB
    }

    /// True when the EQ changes nothing (it is then skipped: bit-exact).
    /// Field by field (as `ShelfBandSettings.==`).
    @_noAllocation @_noLocks
    public static func == (a: ShelfEQSettings, b: ShelfEQSettings) -> Bool {
        a.bass == b.bass && a.treble == b.treble && a.globalGainDB == b.globalGainDB
    }

    public var isNeutral: Bool { bass.isNeutral && treble.isNeutral && globalGainDB == 0 }

    /// The EQ's gain at `frequencyHz`, dB: |H_low(f)|·|H_high(f)|·global, each shelf the RBJ
    /// biquad `ShelfEQ` runs (a bypassed or 0 dB band is 0 dB; corners above Nyquist are held
    /// just below it, as `ShelfEQ.update` does).
    public func responseDB(atHz frequencyHz: Double, sampleRate: Double) -> Double {
        let corner = sampleRate * 0.499
        func band(_ b: ShelfBandSettings, _ kind: ShelfKind) -> Double {
            b.isNeutral ? 0 : BiquadCoefficients.shelf(kind, frequencyHz: min(b.frequencyHz, corner), gainDB: b.gainDB,
                                                       slope: b.slope, sampleRate: sampleRate)
                .magnitudeDB(atHz: frequencyHz, sampleRate: sampleRate)
        }
        return band(bass, .low) + band(treble, .high) + globalGainDB
    }
}

/// The two-band shelf EQ processor: RBJ low shelf → RBJ high shelf → global gain, both channels
/// of a stereo signal in SIMD lanes.
///
/// A neutral band is skipped (not run with identity coefficients), so 0 dB is bit-exact.
public struct ShelfEQ: Sendable {
    /// The settings in use (set with `update`).
    public private(set) var settings = ShelfEQSettings()
    private var sampleRate: Double = 48_000
    private var low = StereoBiquad()
    private var high = StereoBiquad()
    private var globalGain: Float = 1

    /// A flat EQ; call `prepare` before `process`.
    public init() {}

    /// Biquads add no latency.
    public var latencyFrames: Int { 0 }

    /// Sets the sample rate and clears the state (control side).
    public mutating func prepare(_ spec: ProcessSpec) {
        precondition(spec.channelCount <= 2, "ShelfEQ runs one or two channels")
        sampleRate = spec.sampleRate
        update(settings)
        reset()
    }

    /// Clears the filter state. Does not allocate.
    public mutating func reset() {
        low.reset()
        high.reset()
    }

    /// Recomputes the coefficients for new settings; the filter state is kept, so a small change
    /// between blocks does not click. Call on the render side only.
    @_noAllocation @_noLocks
    public mutating func update(_ newSettings: ShelfEQSettings) {
        settings = newSettings
        let nyquistGuard = sampleRate * 0.499
        low.coefficients = .shelf(.low, frequencyHz: min(settings.bass.frequencyHz, nyquistGuard),
                                  gainDB: settings.bass.gainDB, slope: settings.bass.slope,
                                  sampleRate: sampleRate)
        high.coefficients = .shelf(.high, frequencyHz: min(settings.treble.frequencyHz, nyquistGuard),
                                   gainDB: settings.treble.gainDB, slope: settings.treble.slope,
                                   sampleRate: sampleRate)
        globalGain = Float(Libm.pow(10, settings.globalGainDB / 20))
    }

    /// Filters `frameCount` frames in place. `right` may equal `left` for a mono signal.
    @_noAllocation @_noLocks
    public mutating func process(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?,
                                 frameCount: Int) {
        let runLow = !settings.bass.isNeutral, runHigh = !settings.treble.isNeutral
        if runLow {
            low.process(left, right, count: frameCount)
            low.flushDenormals()
        }
        if runHigh {
            high.process(left, right, count: frameCount)
            high.flushDenormals()
        }
        if settings.globalGainDB != 0 {
            let g = globalGain
            for i in 0..<frameCount { left[i] *= g }
            if let right { for i in 0..<frameCount { right[i] *= g } }
        }
    }
}
