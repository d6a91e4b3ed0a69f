/// The peak envelope of a block's power, e[i] = max(p[i], ρ·e[i−1]) with p[i] = l[i]² (stereo:
/// (l[i]² + r[i]²)/2): instant attack, release ρ per sample, starting from `start`; returns the
/// last e. Eight samples at a time: a doubling scan inside the vector (each lane against its
/// neighbours 1, 2 and 4 lanes back, scaled by ρ, ρ², ρ⁴), then the previous vector's last value
/// scaled by ρ^(lane + 1). The same envelope as the sample-by-sample recursion, rounding aside.
@inline(__always) @_noAllocation @_noLocks
func peakEnvelope(_ l: UnsafePointer<Float>, _ r: UnsafePointer<Float>?, count: Int, release rho: Float,
                  from start: Float, into e: UnsafeMutablePointer<Float>) -> Float {
    let pl = UnsafeRawPointer(l), pe = UnsafeMutableRawPointer(e)
    let rho1 = SIMD8<Float>(repeating: rho), rho2 = rho1 * rho1, rho4 = rho2 * rho2
    var powers = SIMD8<Float>()
    var q: Float = 1
    for i in 0..<8 { q *= rho; powers[i] = q }   // ρ^(lane + 1)
    let half = SIMD8<Float>(repeating: 0.5)
    var last = start
    var i = 0
    while i + 8 <= count {
        let x = pl.loadUnaligned(fromByteOffset: 4 * i, as: SIMD8<Float>.self)
        var v = x * x
        if let r {
            let y = UnsafeRawPointer(r).loadUnaligned(fromByteOffset: 4 * i, as: SIMD8<Float>.self)
            v = half * (v + y * y)
        }
        v = pointwiseMaxLanes(v, shiftedUp(v, by: 1) * rho1)
        v = pointwiseMaxLanes(v, shiftedUp(v, by: 2) * rho2)
        v = pointwiseMaxLanes(v, shiftedUp(v, by: 4) * rho4)
        v = pointwiseMaxLanes(v, SIMD8<Float>(repeating: last) * powers)
        pe.storeBytes(of: v, toByteOffset: 4 * i, as: SIMD8<Float>.self)
        last = v[7]
        i += 8
    }
    while i < count {
        var p = l[i] * l[i]
        if let r { p = 0.5 * (p + r[i] * r[i]) }
        let decayed = last * rho
        last = p > decayed ? p : decayed
        e[i] = last
        i += 1
    }
    return last
}
