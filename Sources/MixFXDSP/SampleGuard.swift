/// Keeps non-finite and absurd samples out of the DSP: one NaN in a filter's or the shifter's
/// state would otherwise silence (or poison) everything after it. Applied where samples enter
/// the engine (each track's source), so no node ever sees such a value.
///
/// A sample is replaced by 0 when it is NaN, ±∞ or larger in magnitude than `limit` (10⁶, i.e.
/// +120 dBFS: far beyond any real recording, float files included, yet small enough that the
/// largest EQ boost and the sum of many tracks stay finite).
public enum SampleGuard {
    /// The largest magnitude let through.
    public static let limit: Float = 1e6

    /// Replaces every bad sample of `samples[0..<count]` by 0; returns how many there were.
    /// One pass on the bit patterns, eight samples at a time, with no reduction inside the loop:
    /// with m = bits & 0x7FFF_FFFF (|x| > limit, ∞ and NaN all give m above the limit's bits),
    /// limitBits − m, as a signed 32-bit lane, is negative exactly for a bad sample (both lie in
    /// 0…2³¹ − 1, so the difference cannot overflow), and the lanes are OR-ed together. Only if
    /// a sign bit is set at the end is the block scanned again to replace the bad samples. (An
    /// `any` on a SIMD8 mask per eight samples compiled to a store and a scalar loop per lane on
    /// the baseline copy: 7.6 % of a two-track render's CPU.) Never inlined into a caller, so
    /// that `DSPCopy.sanitize` runs the chosen copy's code.
    @inline(never) @_noAllocation @_noLocks
    public static func sanitize(_ samples: UnsafeMutablePointer<Float>, count: Int) -> Int {
        let limitBits = limit.bitPattern
        let raw = UnsafeMutableRawPointer(samples)
        let limitLanes = SIMD8<Int32>(repeating: Int32(bitPattern: limitBits))
        var flags = SIMD8<Int32>(repeating: 0)
        var i = 0
        while i + 8 <= count {
            let bits = raw.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Int32>.self)
            flags |= limitLanes &- (bits & 0x7FFF_FFFF)
            i += 8
        }
        var bad = false
        for lane in 0..<8 where flags[lane] < 0 { bad = true }
        while i < count {
            if samples[i].bitPattern & 0x7FFF_FFFF > limitBits { bad = true }
            i += 1
        }
        return bad ? fix(samples, count: count, limitBits: limitBits) : 0
    }

    @inline(__always) @_noAllocation @_noLocks
    private static func fix(_ p: UnsafeMutablePointer<Float>, count: Int, limitBits: UInt32) -> Int {
        var n = 0
        for j in 0..<count where p[j].bitPattern & 0x7FFF_FFFF > limitBits {
            p[j] = 0
            n += 1
        }
        return n
    }
}
