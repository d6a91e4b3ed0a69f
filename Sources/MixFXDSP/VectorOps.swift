/// Small vector loops of the render path, eight lanes at a time (counts need not be multiples
/// of eight). Pointers may be unaligned; `out` may alias an input only where noted.

/// out[i] = a[i]·b[i]
@inline(__always) @_noAllocation @_noLocks
func vmul(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>, _ count: Int) {
    let ra = UnsafeRawPointer(a), rb = UnsafeRawPointer(b), ro = UnsafeMutableRawPointer(out)
    var i = 0
    while i + 8 <= count {
        let v = ra.loadUnaligned(fromByteOffset: i &* 4, as: SIMD8<Float>.self) * rb.loadUnaligned(fromByteOffset: i &* 4, as: SIMD8<Float>.self)
        ro.storeBytes(of: v, toByteOffset: i &* 4, as: SIMD8<Float>.self)
        i += 8
    }
    while i < count { out[i] = a[i] * b[i]; i += 1 }
}

/// power[i] += re[i]² + im[i]² (or = when not `accumulating`: the first channel). (The two
/// loops written apart: with the choice inside one, LLVM kept a test in the loop and rebuilt
/// the last lane of every vector on its own.)
@inline(__always) @_noAllocation @_noLocks
func vaddPower(_ re: UnsafePointer<Float>, _ im: UnsafePointer<Float>, _ power: UnsafeMutablePointer<Float>, _ count: Int,
               accumulating: Bool = true) {
    let rr = UnsafeRawPointer(re), ri = UnsafeRawPointer(im), rp = UnsafeMutableRawPointer(power)
    var i = 0
    if accumulating {
        while i + 8 <= count {
            let r = rr.loadUnaligned(fromByteOffset: i &* 4, as: SIMD8<Float>.self)
            let m = ri.loadUnaligned(fromByteOffset: i &* 4, as: SIMD8<Float>.self)
            let v = rp.loadUnaligned(fromByteOffset: i &* 4, as: SIMD8<Float>.self) + r * r + m * m
            rp.storeBytes(of: v, toByteOffset: i &* 4, as: SIMD8<Float>.self)
            i &+= 8
        }
    } else {
        while i + 8 <= count {
            let r = rr.loadUnaligned(fromByteOffset: i &* 4, as: SIMD8<Float>.self)
            let m = ri.loadUnaligned(fromByteOffset: i &* 4, as: SIMD8<Float>.self)
            rp.storeBytes(of: r * r + m * m, toByteOffset: i &* 4, as: SIMD8<Float>.self)
            i &+= 8
        }
    }
    while i < count { power[i] = (accumulating ? power[i] : 0) + re[i] * re[i] + im[i] * im[i]; i += 1 }
}

/// Σ re[i]² + im[i]² over `count` bins (eight lanes, then their sum: the same order every time).
@inline(__always) @_noAllocation @_noLocks
func vsumPower(_ re: UnsafePointer<Float>, _ im: UnsafePointer<Float>, _ count: Int) -> Float {
    let rr = UnsafeRawPointer(re), ri = UnsafeRawPointer(im)
    var sum = SIMD8<Float>()
    var i = 0
    while i + 8 <= count {
        let r = rr.loadUnaligned(fromByteOffset: i &* 4, as: SIMD8<Float>.self)
        let m = ri.loadUnaligned(fromByteOffset: i &* 4, as: SIMD8<Float>.self)
        sum += r * r + m * m
        i &+= 8
    }
    var total = sum.sum()
    while i < count { total += re[i] * re[i] + im[i] * im[i]; i += 1 }
    return total
}

/// out[i] = (re, im)[i]·(ur, ui)[i]·gain, complex; `outRe`/`outIm` must not alias the inputs.
/// (A gain of 1 leaves every product as it is: x·1 is x.)
@inline(__always) @_noAllocation @_noLocks
func vrotate(_ re: UnsafePointer<Float>, _ im: UnsafePointer<Float>, _ ur: UnsafePointer<Float>,
             _ ui: UnsafePointer<Float>, into outRe: UnsafeMutablePointer<Float>,
             _ outIm: UnsafeMutablePointer<Float>, _ count: Int, gain: Float = 1) {
    let rr = UnsafeRawPointer(re), ri = UnsafeRawPointer(im)
    let qr = UnsafeRawPointer(ur), qi = UnsafeRawPointer(ui)
    let orr = UnsafeMutableRawPointer(outRe), ori = UnsafeMutableRawPointer(outIm)
    let g = SIMD8<Float>(repeating: gain)
    var i = 0
    while i + 8 <= count {
        let xr = rr.loadUnaligned(fromByteOffset: i &* 4, as: SIMD8<Float>.self)
        let xi = ri.loadUnaligned(fromByteOffset: i &* 4, as: SIMD8<Float>.self)
        let wr = qr.loadUnaligned(fromByteOffset: i &* 4, as: SIMD8<Float>.self)
        let wi = qi.loadUnaligned(fromByteOffset: i &* 4, as: SIMD8<Float>.self)
        orr.storeBytes(of: (xr * wr - xi * wi) * g, toByteOffset: i &* 4, as: SIMD8<Float>.self)
        ori.storeBytes(of: (xr * wi + xi * wr) * g, toByteOffset: i &* 4, as: SIMD8<Float>.self)
        i += 8
    }
    while i < count {
        let xr = re[i], xi = im[i]
        outRe[i] = (xr * ur[i] - xi * ui[i]) * gain
        outIm[i] = (xr * ui[i] + xi * ur[i]) * gain
        i += 1
    }
}

/// out[i] = (re, im)[i]·(ur, ui)[i]·gains[i], complex; as `vrotate`.
@inline(__always) @_noAllocation @_noLocks
func vrotate(_ re: UnsafePointer<Float>, _ im: UnsafePointer<Float>, _ ur: UnsafePointer<Float>,
             _ ui: UnsafePointer<Float>, into outRe: UnsafeMutablePointer<Float>,
             _ outIm: UnsafeMutablePointer<Float>, _ count: Int, gains: UnsafePointer<Float>) {
    for i in 0..<count {
        let xr = re[i], xi = im[i], g = gains[i]
        outRe[i] = (xr * ur[i] - xi * ui[i]) * g
        outIm[i] = (xr * ui[i] + xi * ur[i]) * g
    }
}

/// (cr, ci)[i] += (ar, ai)[i]·conj (br, bi)[i], complex (or = when not `accumulating`). (The two
/// loops written apart, as in `vaddPower`.)
@inline(__always) @_noAllocation @_noLocks
func vaddCrossSpectrum(_ ar: UnsafePointer<Float>, _ ai: UnsafePointer<Float>, _ br: UnsafePointer<Float>,
                       _ bi: UnsafePointer<Float>, _ cr: UnsafeMutablePointer<Float>,
                       _ ci: UnsafeMutablePointer<Float>, _ count: Int, accumulating: Bool = true) {
    let pa = UnsafeRawPointer(ar), pai = UnsafeRawPointer(ai)
    let pb = UnsafeRawPointer(br), pbi = UnsafeRawPointer(bi)
    let pc = UnsafeMutableRawPointer(cr), pci = UnsafeMutableRawPointer(ci)
    @inline(__always) func load(_ p: UnsafeRawPointer, _ i: Int) -> SIMD8<Float> {
        p.loadUnaligned(fromByteOffset: i &* 4, as: SIMD8<Float>.self)
    }
    var i = 0
    if accumulating {
        while i + 8 <= count {
            let xr = load(pa, i), xi = load(pai, i), yr = load(pb, i), yi = load(pbi, i)
            pc.storeBytes(of: load(pc, i) + xr * yr + xi * yi, toByteOffset: i &* 4, as: SIMD8<Float>.self)
            pci.storeBytes(of: load(pci, i) + xi * yr - xr * yi, toByteOffset: i &* 4, as: SIMD8<Float>.self)
            i &+= 8
        }
    } else {
        while i + 8 <= count {
            let xr = load(pa, i), xi = load(pai, i), yr = load(pb, i), yi = load(pbi, i)
            pc.storeBytes(of: xr * yr + xi * yi, toByteOffset: i &* 4, as: SIMD8<Float>.self)
            pci.storeBytes(of: xi * yr - xr * yi, toByteOffset: i &* 4, as: SIMD8<Float>.self)
            i &+= 8
        }
    }
    while i < count {
        cr[i] = (accumulating ? cr[i] : 0) + ar[i] * br[i] + ai[i] * bi[i]
        ci[i] = (accumulating ? ci[i] : 0) + ai[i] * br[i] - ar[i] * bi[i]
        i += 1
    }
}

/// dst[i] = src[i] for `count` samples; the ranges may overlap (memmove). (The standard
/// library's `update(from:count:)` assigns element by element for any type, which the
/// compiler's performance check counts as a possible release.)
@inline(__always) @_noAllocation @_noLocks
func vcopy(_ src: UnsafePointer<Float>, into dst: UnsafeMutablePointer<Float>, _ count: Int) {
    UnsafeMutableRawPointer(dst).copyMemory(from: src, byteCount: count * MemoryLayout<Float>.stride)
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

/// Σ a[i]·b[i] (eight lanes, then their sum: the same order every time).
@inline(__always) @_noAllocation @_noLocks
func vdot(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ count: Int) -> Float {
    let ra = UnsafeRawPointer(a), rb = UnsafeRawPointer(b)
    var sum = SIMD8<Float>()
    var i = 0
    while i + 8 <= count {
        sum += ra.loadUnaligned(fromByteOffset: i &* 4, as: SIMD8<Float>.self) * rb.loadUnaligned(fromByteOffset: i &* 4, as: SIMD8<Float>.self)
        i &+= 8
    }
    var total = sum.sum()
    while i < count { total += a[i] * b[i]; i += 1 }
    return total
}

/// y[i] += x[i]·w[i]·s, eight lanes at a time.
@inline(__always) @_noAllocation @_noLocks
func vaddScaledProduct(_ x: UnsafePointer<Float>, _ w: UnsafePointer<Float>, _ s: Float, into y: UnsafeMutablePointer<Float>, _ count: Int) {
    let px = UnsafeRawPointer(x), pw = UnsafeRawPointer(w), py = UnsafeMutableRawPointer(y)
    let scale = SIMD8<Float>(repeating: s)
    var i = 0
    while i + 8 <= count {
        let v = px.loadUnaligned(fromByteOffset: 4 * i, as: SIMD8<Float>.self) * pw.loadUnaligned(fromByteOffset: 4 * i, as: SIMD8<Float>.self)
        py.storeBytes(of: py.loadUnaligned(fromByteOffset: 4 * i, as: SIMD8<Float>.self) + v * scale, toByteOffset: 4 * i, as: SIMD8<Float>.self)
        i += 8
    }
    while i < count { y[i] += x[i] * w[i] * s; i += 1 }
}
