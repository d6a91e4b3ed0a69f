#if canImport(Glibc)
import Glibc
#endif

/// Settings of the time-pitch processor, with AVAudioUnitTimePitch's units and ranges.
public struct PitchShifterSettings: Sendable, Equatable {
    /// Shift in cents, −2400…+2400; the frequency ratio is 2^(cents/1200).
    public var pitchCents: Double
    /// Analysis frames overlapping each output instant, 3…32 (more: smoother, more CPU).
    public var overlap: Int

    /// Keep the spectral envelope (formants) where it was, so shifted voices keep their timbre.
    public var preserveFormants: Bool
    /// Tempo R, 1/32…32 (AVAudioUnitTimePitch's `rate`): the output lasts 1/R of the input,
    /// the pitch kept (or moved by `pitchCents`). 1: the duration is kept.
    public var tempo: Double

    /// Above this frequency (Hz; 0: off) the highs move by a constant frequency instead of by
    /// the pitch ratio: their timing kept exactly, their partials no longer harmonic
    /// (`TonalityLimit`). Offline, at a fixed pitch and tempo 1.
    public var tonalityLimitHz: Double

    /// Keep the output at the input's level where the vocoder's frames lose some (noise, music
    /// more than steady tones): offline at a fixed pitch and tempo 1 (`PitchLevelMatch`), or at
    /// a fixed tempo above 1 whose stretch r/R is below 1 (`LevelMatch`). Streaming shifters
    /// (live playback, a render's moving lanes) never match; off, a render is what they give.
    public var levelMatch: Bool

    /// Settings for `PitchShifter.prepare`.
    public init(pitchCents: Double = 0, overlap: Int = 8, preserveFormants: Bool = false, tempo: Double = 1,
                tonalityLimitHz: Double = 0, levelMatch: Bool = true) {
        self.pitchCents = pitchCents
        self.overlap = overlap
        self.preserveFormants = preserveFormants
        self.tempo = tempo
        self.tonalityLimitHz = tonalityLimitHz
        self.levelMatch = levelMatch
    }

    /// The tonality limits allowed, Hz (0: off).
    public static let tonalityLimitRange = 0.0...24_000.0
    /// The lowest tonality limit at `cents`, 1000·max(√r, 1/√r) Hz: the split at limit/√r keeps
    /// its 1 kHz transition band clear of 0 Hz in the input and, moved, in the output.
    public static func tonalityLimitFloorHz(cents: Double) -> Double {
        let root = ratio(cents: cents).squareRoot()
        return (1000 * max(root, 1 / root)).rounded(.up)
    }

    /// The frequency ratio 2^(cents/1200).
    public var ratio: Double {
        @_noAllocation @_noLocks get { Self.ratio(cents: pitchCents) }
    }
    /// True at 0 cents and tempo 1.
    public var isNeutral: Bool {
        @_noAllocation @_noLocks get { pitchCents == 0 && tempo == 1 }
    }
    /// True when the duration changes (tempo ≠ 1): `process(into:...pull:)` then, not the
    /// in-place `process`.
    public var changesTempo: Bool { tempo != 1 }

    /// The allowed tempos (Apple's range).
    public static let tempoRange = (1.0 / 32)...32.0
    /// The tempos a live shifter takes (its buffers are sized for them; a wider range would
    /// cost megabytes per track): a quarter to four times.
    public static let liveTempoRange = 0.25...4.0

    /// The allowed pitch range, cents (two octaves either way: the tables and the latency are
    /// sized for it).
    public static let centsRange = -2400.0...2400.0

    /// `cents` within `centsRange` (the render side's clamp, checked by the compiler: another
    /// module cannot read the range itself on a checked path).
    @_noAllocation @_noLocks
    public static func clampedCents(_ cents: Double) -> Double {
        min(max(cents, centsRange.lowerBound), centsRange.upperBound)
    }

    /// `tempo` within `liveTempoRange`, NaN as 1 (the render side's clamp, as `clampedCents`).
    @_noAllocation @_noLocks
    public static func clampedLiveTempo(_ tempo: Double) -> Double {
        tempo.isNaN ? 1 : min(max(tempo, liveTempoRange.lowerBound), liveTempoRange.upperBound)
    }
    /// The allowed overlaps.
    public static let overlapRange = 3...32

    /// The frequency ratio of `cents`: 2^(cents/1200).
    /// (`@inlinable`: each DSP copy inlines it with its own code, as when it lived beside it.)
    /// (`no_performance_analysis`: one libm call, which neither allocates nor locks but which the
    /// realtime check cannot see into; see `Libm` in the DSP copies.)
    @inlinable @inline(__always) @_semantics("no_performance_analysis")
    public static func ratio(cents: Double) -> Double { pow(2, cents / 1200) }
    /// The cents of frequency ratio `r`: 1200·log2(r).
    /// (`no_performance_analysis`: one libm call, as `ratio(cents:)`.)
    @inlinable @inline(__always) @_semantics("no_performance_analysis")
    public static func cents(ratio r: Double) -> Double { 1200 * log2(r) }
}

/// How a shifter will be used (the engine: `.offline` to render, `.streaming` to play).
public enum PitchShifterMode: Sendable {
    /// Fixed settings: at 0 cents the shifter is skipped (latency 0); otherwise the latency is the
    /// least the ratio needs (with a tempo: none, the input is pulled ahead instead).
    case offline
    /// Live, reading its input ahead as its output needs it (`process(live:...)`; files, whose
    /// input ahead of the playhead is known): the pitch, tempo and formants may change while it
    /// runs, and 0 cents at tempo 1 crossfades to the exact input. No latency, and a change is
    /// heard once the frames made from then on are read, which is within the look-ahead the
    /// current stretch needs (the latency bound for it), not the whole range's. With fixed
    /// settings the output is exactly the offline shifter's.
    case streaming
}
