/// What a streaming shifter will be asked for, when that is known before it runs: an offline
/// render's pitch lane and time map. The shifter then builds only the interpolation tables of
/// these pitches and sizes its look-ahead, input history, gate envelope, stretched buffer and
/// splice read-ahead for these pitches
/// and tempos instead of the whole live range (a quarter to four times the tempo, two octaves
/// either way: megabytes per track that the render would sweep through for nothing).
///
/// The shifter keeps within them (with 0 cents and tempo 1, where it starts): its pitch and
/// tempo setters clamp to them, and a pitch or tempo map beyond them is refused (a
/// precondition), since a frame beyond them could outrun what the buffers hold. Live, there
/// are no bounds: a hand may move anything anywhere.
public struct StreamingBounds: Sendable, Equatable {
    /// The lowest and highest pitch, cents.
    public var pitchCents: ClosedRange<Double>
    /// The slowest and fastest tempo R.
    public var tempo: ClosedRange<Double>

    /// The pitches the buffers are sized for: the bounds' and 0 cents (where a streaming shifter
    /// starts, before its first output frame).
    public var sizedCents: ClosedRange<Double> { min(pitchCents.lowerBound, 0)...max(pitchCents.upperBound, 0) }
    /// The tempos the buffers are sized for: the bounds' and 1.
    public var sizedTempo: ClosedRange<Double> { min(tempo.lowerBound, 1)...max(tempo.upperBound, 1) }

    /// Bounds of `pitchCents` and `tempo`, limited to `PitchShifterSettings.centsRange` and
    /// `liveTempoRange` (a streaming shifter's own limits).
    public init(pitchCents: ClosedRange<Double>, tempo: ClosedRange<Double> = 1...1) {
        func limited(_ r: ClosedRange<Double>, to l: ClosedRange<Double>) -> ClosedRange<Double> {
            let lo = min(max(r.lowerBound, l.lowerBound), l.upperBound), hi = min(max(r.upperBound, l.lowerBound), l.upperBound)
            return lo...hi
        }
        self.pitchCents = limited(pitchCents, to: PitchShifterSettings.centsRange)
        self.tempo = limited(tempo, to: PitchShifterSettings.liveTempoRange)
    }
}
