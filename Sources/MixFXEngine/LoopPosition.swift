/// Where a frame falls in a span that repeats: live `--loop` (the lanes start again at every
/// seam of the session) and the EQ's cells of `EQKernel.subBlock` frames.
enum LoopPosition {
    /// `frame` modulo `period`, floored (in 0..<period for frames before 0 too); `frame` itself
    /// when `period` is 0 (no loop).
    @inline(__always)
    static func frame(_ frame: Int, period: Int) -> Int {
        period > 0 ? ((frame % period) + period) % period : frame
    }
}
