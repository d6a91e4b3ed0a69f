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

/// out[i] += a[i]·b[i]
@inline(__always) @_noAllocation @_noLocks
func vmulAdd(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>, _ count: Int) {
    let ra = UnsafeRawPointer(a), rb = UnsafeRawPointer(b), ro = UnsafeMutableRawPointer(out)
    var i = 0
    while i + 8 <= count {
        let v = ro.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
            + ra.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self) * rb.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
        ro.storeBytes(of: v, toByteOffset: i * 4, as: SIMD8<Float>.self)
        i += 8
    }
    while i < count { out[i] += a[i] * b[i]; i += 1 }
}

/// power[i] += re[i]² + im[i]²
@inline(__always) @_noAllocation @_noLocks
func vaddPower(_ re: UnsafePointer<Float>, _ im: UnsafePointer<Float>, _ power: UnsafeMutablePointer<Float>, _ count: Int) {
    let rr = UnsafeRawPointer(re), ri = UnsafeRawPointer(im), rp = UnsafeMutableRawPointer(power)
    var i = 0
    while i + 8 <= count {
        let r = rr.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
        let m = ri.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
        rp.storeBytes(of: rp.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self) + r * r + m * m,
                      toByteOffset: i * 4, as: SIMD8<Float>.self)
        i += 8
    }
    while i < count { power[i] += re[i] * re[i] + im[i] * im[i]; i += 1 }
}

/// (re, im)[i] ·= (ur, ui)[i], complex, in place.
@inline(__always) @_noAllocation @_noLocks
func vrotate(_ re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>,
             _ ur: UnsafePointer<Float>, _ ui: UnsafePointer<Float>, _ count: Int) {
    let rr = UnsafeMutableRawPointer(re), ri = UnsafeMutableRawPointer(im)
    let qr = UnsafeRawPointer(ur), qi = UnsafeRawPointer(ui)
    var i = 0
    while i + 8 <= count {
        let xr = rr.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
        let xi = ri.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
        let wr = qr.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
        let wi = qi.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
        rr.storeBytes(of: xr * wr - xi * wi, toByteOffset: i * 4, as: SIMD8<Float>.self)
        ri.storeBytes(of: xr * wi + xi * wr, toByteOffset: i * 4, as: SIMD8<Float>.self)
        i += 8
    }
    while i < count {
        let xr = re[i], xi = im[i]
        re[i] = xr * ur[i] - xi * ui[i]
        im[i] = xr * ui[i] + xi * ur[i]
        i += 1
    }
}

/// atan2(y, x) to within 2e-6 rad, without a library call: octant reduction to [0, 1] and a
/// degree-15 odd minimax polynomial (coefficients after Abramowitz & Stegun 4.4.49-style fits).
@inline(__always) @_noAllocation @_noLocks
func fastAtan2(_ y: Float, _ x: Float) -> Float {
    let ax = abs(x), ay = abs(y)
    let mx = max(ax, ay), mn = min(ax, ay)
    if mx == 0 { return 0 }
    let a = mn / mx
    let s = a * a
    // atan(a) on [0, 1]
    var r = ((((((-0.0040540580 * s + 0.0218612288) * s - 0.0559098861) * s + 0.0964200441) * s
                - 0.1390853351) * s + 0.1994653599) * s - 0.3332985605) * s * a + a
    if ay > ax { r = Float.pi / 2 - r }
    if x < 0 { r = Float.pi - r }
    return y < 0 ? -r : r
}

/// (sin θ, cos θ) for θ in [−π, π], to within 1e-6, without a library call: reduction to
/// [−π/4, π/4] by quadrant and Taylor polynomials (degree 9 for sin, 8 for cos).
@inline(__always) @_noAllocation @_noLocks
func fastSinCos(_ theta: Float) -> (sin: Float, cos: Float) {
    let q = theta * (2 / Float.pi)
    var k = Int(q + (q >= 0 ? 0.5 : -0.5))          // nearest quadrant
    let x = theta - Float(k) * (Float.pi / 2)
    let x2 = x * x
    let s = x * (1 + x2 * (-1.0 / 6 + x2 * (1.0 / 120 + x2 * (-1.0 / 5040 + x2 * (1.0 / 362_880)))))
    let c = 1 + x2 * (-0.5 + x2 * (1.0 / 24 + x2 * (-1.0 / 720 + x2 * (1.0 / 40_320))))
    k &= 3
    switch k {
    case 0: return (s, c)
    case 1: return (c, -s)
    case 2: return (-s, -c)
    default: return (-c, s)
    }
}
