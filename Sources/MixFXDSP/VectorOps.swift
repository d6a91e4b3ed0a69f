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
