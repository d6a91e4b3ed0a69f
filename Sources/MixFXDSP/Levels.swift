/// Meter levels of a block of one or two channels: the largest |a[i]| and |b[i]| (into `peak`,
/// if larger), Σ a[i]² added to `sumA` and Σ b[i]² to `sumB` (`b` nil for one channel: `sumB`
/// is left alone). Eight lanes at a time (the per-sample Swift `max` is slow on the mix path).
@inline(__always) @_noAllocation @_noLocks
public func levels(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>?, count: Int, peak: inout Float,
                   sumA: inout Float, sumB: inout Float) {
    let ra = UnsafeRawPointer(a), rb = UnsafeRawPointer(b ?? a)
    var top = SIMD8<Float>(), accA = SIMD8<Float>(), accB = SIMD8<Float>()
    var i = 0
    while i + 8 <= count {
        let x = ra.loadUnaligned(fromByteOffset: 4 * i, as: SIMD8<Float>.self)
        accA += x * x
        top = pointwiseMaxLanes(top, absLanes(x))
        if b != nil {
            let y = rb.loadUnaligned(fromByteOffset: 4 * i, as: SIMD8<Float>.self)
            accB += y * y
            top = pointwiseMaxLanes(top, absLanes(y))
        }
        i += 8
    }
    var p = peak, sa: Float = 0, sb: Float = 0
    for k in 0..<8 { p = top[k] > p ? top[k] : p; sa += accA[k]; sb += accB[k] }
    while i < count {
        let x = a[i] < 0 ? -a[i] : a[i]
        p = x > p ? x : p
        sa += a[i] * a[i]
        if let b {
            let y = b[i] < 0 ? -b[i] : b[i]
            p = y > p ? y : p
            sb += b[i] * b[i]
        }
        i += 1
    }
    peak = p
    sumA += sa
    if b != nil { sumB += sb }
}

/// `levels` compiled in this DSP copy and kept out of its caller, for `DSPCopy.levels`: the
/// engine that calls it is compiled for any x86-64, and an inlined `levels` would run as that.
@inline(never) @_noAllocation @_noLocks
public func levelsOfThisCopy(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>?, count: Int, peak: inout Float,
                             sumA: inout Float, sumB: inout Float) {
    levels(a, b, count: count, peak: &peak, sumA: &sumA, sumB: &sumB)
}
