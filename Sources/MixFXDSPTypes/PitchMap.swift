/// A pitch that moves over the input's time, for an offline shifter driven by an automation
/// lane: cents sampled every `stepFrames` input frames (value k at frame `originFrame + k·step`
/// of the lane's timeline), read linearly between samples; before the first the first holds,
/// after the last the last. The shifter takes each vocoder frame's target pitch from it at the
/// frame's analysis centre (the input time it stands for), so the pitch follows the map in the
/// input's own time, whatever the shifter's look-ahead; the vocoder's glide (τ = 20 ms) then
/// smooths it as it smooths a live change.
///
/// Built on the control side (it allocates); read on the render side (no allocation).
/// `@unchecked Sendable`: immutable after `init`.
public final class PitchMap: @unchecked Sendable {
    /// Frames of the timeline between two samples.
    public let stepFrames: Int
    /// The samples, cents.
    private let values: UnsafeMutablePointer<Float>
    public let count: Int
    /// The lowest and highest cents of the map (the shifter's look-ahead is sized for the lowest).
    public let minimumCents: Double, maximumCents: Double

    /// A map of `count` samples, sample k being `cents(k)` (k·`stepFrames` frames into the
    /// timeline).
    public init(stepFrames: Int, count: Int, cents: (Int) -> Double) {
        precondition(stepFrames >= 1 && count >= 1)
        self.stepFrames = stepFrames
        self.count = count
        values = .allocate(capacity: count)
        var lo = Double.infinity, hi = -Double.infinity
        for k in 0..<count {
            let v = cents(k)
            values[k] = Float(v)
            lo = min(lo, Double(values[k])); hi = max(hi, Double(values[k]))
        }
        minimumCents = lo
        maximumCents = hi
    }

    deinit { values.deallocate() }

    /// Live looped playback: the length of a pass in the map's frames (0: no loop): the
    /// timeline's length, or, on the input's time with a tempo map, the input a pass takes
    /// (not whole). Frame f ≥ 0 then reads the map at f mod `periodFrames`, so the map starts
    /// again at every seam. Set on the control side, before rendering.
    public var periodFrames = 0.0

    /// The cents at `frame` of the timeline (fractional frames allowed). Does not allocate.
    @inline(__always) @_noAllocation @_noLocks
    public func cents(atFrame frame: Double) -> Double {
        let period = periodFrames
        var f = frame
        if period > 0 && frame >= period {
            // (f mod P in whole periods, the fraction kept; a period that is not whole by the
            // division, one pass either way if its rounding left f outside [0, P))
            let whole = Int(period)
            if Double(whole) == period {
                f = frame - Double((Int(frame) / whole) * whole)
            } else {
                f = frame - Double(Int(frame / period)) * period   // (positive: Int truncates to the floor)
                if f < 0 { f += period } else if f >= period { f -= period }
            }
        }
        let x = f / Double(stepFrames)
        guard x > 0 else { return Double(values[0]) }
        let i = Int(x)
        guard i + 1 < count else { return Double(values[count - 1]) }
        let a = Double(values[i]), b = Double(values[i + 1])
        return a == b ? a : a + (b - a) * (x - Double(i))
    }
}
