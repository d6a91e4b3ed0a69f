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
    /// Scans eight samples at a time on their bit patterns (|x| > limit, ∞ and NaN all compare
    /// above the limit's bits once the sign is masked off), so a clean block costs a compare per
    /// eight samples.
    @_noAllocation @_noLocks
    public static func sanitize(_ samples: UnsafeMutablePointer<Float>, count: Int) -> Int {
        let limitBits = limit.bitPattern
        let raw = UnsafeMutableRawPointer(samples)
        var replaced = 0
        var i = 0
        while i + 8 <= count {
            let bits = raw.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<UInt32>.self)
            if any((bits & 0x7FFF_FFFF) .> SIMD8(repeating: limitBits)) {
                replaced += fix(samples + i, count: 8, limitBits: limitBits)
            }
            i += 8
        }
        if i < count { replaced += fix(samples + i, count: count - i, limitBits: limitBits) }
        return replaced
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
