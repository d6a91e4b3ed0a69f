/// Small vector loops of the render path, eight lanes at a time (counts need not be multiples
/// of eight). Pointers may be unaligned; `out` may alias an input only where noted.

/// out[i] = a[i]·b[i]
@inline(__always) @_noAllocation @_noLocks
func vmul(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>, _ count: Int) {
    let ra = UnsafeRawPointer(a), rb = UnsafeRawPointer(b), ro = UnsafeMutableRawPointer(out)
    var i = 0
    while i + 8 <= count {
        let v = ra.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self) * rb.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
        ro.storeBytes(of: v, toByteOffset: i * 4, as: SIMD8<Float>.self)
        i += 8
    }
    while i < count { out[i] = a[i] * b[i]; i += 1 }
}

/// power[i] += re[i]² + im[i]² (or = when not `accumulating`: the first channel)
@inline(__always) @_noAllocation @_noLocks
func vaddPower(_ re: UnsafePointer<Float>, _ im: UnsafePointer<Float>, _ power: UnsafeMutablePointer<Float>, _ count: Int,
               accumulating: Bool = true) {
    let rr = UnsafeRawPointer(re), ri = UnsafeRawPointer(im), rp = UnsafeMutableRawPointer(power)
    var i = 0
    while i + 8 <= count {
        let r = rr.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
        let m = ri.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
        let v = accumulating ? rp.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self) + r * r + m * m
            : r * r + m * m
        rp.storeBytes(of: v, toByteOffset: i * 4, as: SIMD8<Float>.self)
        i += 8
    }
    while i < count { power[i] = (accumulating ? power[i] : 0) + re[i] * re[i] + im[i] * im[i]; i += 1 }
}

/// out[i] = (re, im)[i]·(ur, ui)[i], complex; `outRe`/`outIm` must not alias the inputs.
@inline(__always) @_noAllocation @_noLocks
func vrotate(_ re: UnsafePointer<Float>, _ im: UnsafePointer<Float>, _ ur: UnsafePointer<Float>,
             _ ui: UnsafePointer<Float>, into outRe: UnsafeMutablePointer<Float>,
             _ outIm: UnsafeMutablePointer<Float>, _ count: Int) {
    let rr = UnsafeRawPointer(re), ri = UnsafeRawPointer(im)
    let qr = UnsafeRawPointer(ur), qi = UnsafeRawPointer(ui)
    let orr = UnsafeMutableRawPointer(outRe), ori = UnsafeMutableRawPointer(outIm)
    var i = 0
    while i + 8 <= count {
        let xr = rr.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
        let xi = ri.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
        let wr = qr.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
        let wi = qi.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
        orr.storeBytes(of: xr * wr - xi * wi, toByteOffset: i * 4, as: SIMD8<Float>.self)
        ori.storeBytes(of: xr * wi + xi * wr, toByteOffset: i * 4, as: SIMD8<Float>.self)
        i += 8
    }
    while i < count {
        let xr = re[i], xi = im[i]
        outRe[i] = xr * ur[i] - xi * ui[i]
        outIm[i] = xr * ui[i] + xi * ur[i]
        i += 1
    }
}

/// (cr, ci)[i] += (ar, ai)[i]·conj (br, bi)[i], complex (or = when not `accumulating`).
@inline(__always) @_noAllocation @_noLocks
func vaddCrossSpectrum(_ ar: UnsafePointer<Float>, _ ai: UnsafePointer<Float>, _ br: UnsafePointer<Float>,
                       _ bi: UnsafePointer<Float>, _ cr: UnsafeMutablePointer<Float>,
                       _ ci: UnsafeMutablePointer<Float>, _ count: Int, accumulating: Bool = true) {
    let pa = UnsafeRawPointer(ar), pai = UnsafeRawPointer(ai)
    let pb = UnsafeRawPointer(br), pbi = UnsafeRawPointer(bi)
    let pc = UnsafeMutableRawPointer(cr), pci = UnsafeMutableRawPointer(ci)
    var i = 0
    while i + 8 <= count {
        let xr = pa.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
        let xi = pai.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
        let yr = pb.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
        let yi = pbi.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
        if accumulating {
            pc.storeBytes(of: pc.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self) + xr * yr + xi * yi,
                          toByteOffset: i * 4, as: SIMD8<Float>.self)
            pci.storeBytes(of: pci.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self) + xi * yr - xr * yi,
                           toByteOffset: i * 4, as: SIMD8<Float>.self)
        } else {
            pc.storeBytes(of: xr * yr + xi * yi, toByteOffset: i * 4, as: SIMD8<Float>.self)
            pci.storeBytes(of: xi * yr - xr * yi, toByteOffset: i * 4, as: SIMD8<Float>.self)
        }
        i += 8
    }
    while i < count {
        cr[i] = (accumulating ? cr[i] : 0) + ar[i] * br[i] + ai[i] * bi[i]
        ci[i] = (accumulating ? ci[i] : 0) + ai[i] * br[i] - ar[i] * bi[i]
        i += 1
    }
}

/// The smallest lane (the stdlib's `min()` on SIMD is a generic call in the hot path).
@inline(__always) @_noAllocation @_noLocks
func minLane(_ v: SIMD8<Float>) -> Float {
    let lo = v.lowHalf, hi = v.highHalf
    let four = lo.replacing(with: hi, where: hi .< lo)
    let a = four.lowHalf, b = four.highHalf
    let two = a.replacing(with: b, where: b .< a)
    return two[1] < two[0] ? two[1] : two[0]
}

/// Each lane rounded to the nearest integer (ties to even), for |x| < 2^22: adding and
/// subtracting 1.5·2^23 leaves only the integer part under IEEE round-to-nearest.
@inline(__always) @_noAllocation @_noLocks
func roundLanes(_ x: SIMD8<Float>) -> SIMD8<Float> {
    let magic = SIMD8<Float>(repeating: 12_582_912)
    return (x + magic) - magic
}

/// |x| per lane (the sign bit cleared).
@inline(__always) @_noAllocation @_noLocks
func absLanes(_ x: SIMD8<Float>) -> SIMD8<Float> {
    unsafeBitCast(unsafeBitCast(x, to: SIMD8<UInt32>.self) & 0x7FFF_FFFF, to: SIMD8<Float>.self)
}

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

/// The principal argument per lane: x wrapped into [−π, π].
@inline(__always) @_noAllocation @_noLocks
func princarg(_ x: SIMD8<Float>) -> SIMD8<Float> {
    x - (2 * Float.pi) * roundLanes(x * (1 / (2 * Float.pi)))
}

/// atan2(y, x) per lane to within 2e-6 rad, without a library call: octant reduction to [0, 1]
/// and a degree-15 odd minimax polynomial for atan on [0, 1].
@inline(__always) @_noAllocation @_noLocks
func fastAtan2(_ y: SIMD8<Float>, _ x: SIMD8<Float>) -> SIMD8<Float> {
    let ax = absLanes(x), ay = absLanes(y)
    let yBigger = ay .> ax
    let mx = ax.replacing(with: ay, where: yBigger), mn = ay.replacing(with: ax, where: yBigger)
    let zero = SIMD8<Float>(), one = SIMD8<Float>(repeating: 1)   // named constants vectorise
    let a = mn / mx.replacing(with: one, where: mx .== zero)
    let s = a * a
    var poly = SIMD8<Float>(repeating: -0.0040540580)
    poly = poly * s + 0.0218612288
    poly = poly * s - 0.0559098861
    poly = poly * s + 0.0964200441
    poly = poly * s - 0.1390853351
    poly = poly * s + 0.1994653599
    poly = poly * s - 0.3332985605
    var r = poly * s * a + a
    r.replace(with: Float.pi / 2 - r, where: yBigger)
    r.replace(with: Float.pi - r, where: x .< zero)
    r.replace(with: -r, where: y .< zero)
    return r
}

/// (sin θ, cos θ) per lane for |θ| < 10⁵, to within 2e-6 near [−π, π], without a library call:
/// reduction to [−π/4, π/4] by the nearest quadrant k and Taylor polynomials (degree 9 for sin,
/// 8 for cos), then sin θ = ±sin x or ±cos x by k mod 4. The quadrant is rounded with the 1.5·2^23
/// trick, whose bit pattern then holds k mod 4 in its low bits.
@inline(__always) @_noAllocation @_noLocks
func fastSinCos(_ theta: SIMD8<Float>) -> (sin: SIMD8<Float>, cos: SIMD8<Float>) {
    let magic = SIMD8<Float>(repeating: 12_582_912)
    let shifted = theta * (2 / Float.pi) + magic
    let k = unsafeBitCast(shifted, to: SIMD8<UInt32>.self)
    let x = theta - (shifted - magic) * (Float.pi / 2)
    let x2 = x * x
    var s = x2 * Float(1.0 / 362_880) - Float(1.0 / 5040)
    s = s * x2 + Float(1.0 / 120)
    s = s * x2 - Float(1.0 / 6)
    s = (s * x2 + 1) * x
    var c = x2 * Float(1.0 / 40_320) - Float(1.0 / 720)
    c = c * x2 + Float(1.0 / 24)
    c = c * x2 - 0.5
    c = c * x2 + 1
    // k odd: sin and cos swap; sin's sign flips where k & 2, cos's where (k + 1) & 2 (bit ops
    // only: the stdlib's integer lane masks are not vectorised)
    let swap = SIMD8<UInt32>(repeating: 0) &- (k & 1)
    let sBits = unsafeBitCast(s, to: SIMD8<UInt32>.self), cBits = unsafeBitCast(c, to: SIMD8<UInt32>.self)
    let sinBits = ((cBits & swap) | (sBits & ~swap)) ^ ((k & 2) &<< 30)
    let cosBits = ((sBits & swap) | (cBits & ~swap)) ^ (((k &+ 1) & 2) &<< 30)
    return (unsafeBitCast(sinBits, to: SIMD8<Float>.self), unsafeBitCast(cosBits, to: SIMD8<Float>.self))
}

/// y[i] += x[i], eight lanes at a time.
@inline(__always) @_noAllocation @_noLocks
func vadd(_ x: UnsafePointer<Float>, into y: UnsafeMutablePointer<Float>, _ count: Int) {
    let px = UnsafeRawPointer(x), py = UnsafeMutableRawPointer(y)
    var i = 0
    while i + 8 <= count {
        py.storeBytes(of: py.loadUnaligned(fromByteOffset: 4 * i, as: SIMD8<Float>.self)
                      + px.loadUnaligned(fromByteOffset: 4 * i, as: SIMD8<Float>.self),
                      toByteOffset: 4 * i, as: SIMD8<Float>.self)
        i += 8
    }
    while i < count { y[i] += x[i]; i += 1 }
}

/// a[i] /= norm[i] (and b[i], when given) for `count` samples, eight at a time; 0 where the
/// norm is below 10⁻³ (no frame covers the sample).
@inline(__always) @_noAllocation @_noLocks
func vdivideByNorm(_ a: UnsafeMutablePointer<Float>, _ b: UnsafeMutablePointer<Float>?,
                   _ norm: UnsafePointer<Float>, _ count: Int) {
    let pa = UnsafeMutableRawPointer(a), pn = UnsafeRawPointer(norm)
    let tiny = SIMD8<Float>(repeating: 1e-3), zero = SIMD8<Float>(), one = SIMD8<Float>(repeating: 1)
    var i = 0
    while i + 8 <= count {
        let d = pn.loadUnaligned(fromByteOffset: 4 * i, as: SIMD8<Float>.self)
        let inverse = (one / d).replacing(with: zero, where: d .< tiny)
        pa.storeBytes(of: pa.loadUnaligned(fromByteOffset: 4 * i, as: SIMD8<Float>.self) * inverse,
                      toByteOffset: 4 * i, as: SIMD8<Float>.self)
        if let b {
            let pb = UnsafeMutableRawPointer(b)
            pb.storeBytes(of: pb.loadUnaligned(fromByteOffset: 4 * i, as: SIMD8<Float>.self) * inverse,
                          toByteOffset: 4 * i, as: SIMD8<Float>.self)
        }
        i += 8
    }
    while i < count {
        let inverse: Float = norm[i] < 1e-3 ? 0 : 1 / norm[i]
        a[i] *= inverse
        b?[i] *= inverse
        i += 1
    }
}

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

/// Lanes moved up by `by` (1, 2 or 4) places, zeros shifted in at lane 0.
@inline(__always) @_noAllocation @_noLocks
func shiftedUp(_ v: SIMD8<Float>, by n: Int) -> SIMD8<Float> {
    switch n {
    case 1: return SIMD8(0, v[0], v[1], v[2], v[3], v[4], v[5], v[6])
    case 2: return SIMD8(0, 0, v[0], v[1], v[2], v[3], v[4], v[5])
    default: return SIMD8(0, 0, 0, 0, v[0], v[1], v[2], v[3])
    }
}

/// The larger of each pair of lanes (the stdlib's `pointwiseMax` is a generic call in the hot
/// path).
@inline(__always) @_noAllocation @_noLocks
func pointwiseMaxLanes(_ a: SIMD8<Float>, _ b: SIMD8<Float>) -> SIMD8<Float> {
    a.replacing(with: b, where: b .> a)
}
