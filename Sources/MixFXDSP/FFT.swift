#if canImport(Glibc)
import Glibc
#endif

/// A real FFT of a power-of-two size `n`, in split (separate real/imaginary) form.
///
/// Forward: `X[k] = Σ x[t]·e^{−2πikt/n}` for k = 0…n/2 (n/2 + 1 bins), unscaled.
/// Inverse: `x[t] = (1/n)·Σ X[k]·e^{+2πikt/n}` over the full Hermitian spectrum.
///
/// Method: the n real samples are packed into an n/2-point complex sequence z[t] = x[2t] + i·x[2t+1],
/// transformed by an iterative radix-2 FFT, and split with
///
///     E[k] = (Z[k] + conj Z[m−k]) / 2,   O[k] = (Z[k] − conj Z[m−k]) / 2i,   m = n/2
///     X[k] = E[k] + W^k·O[k],            W = e^{−2πi/n}
///
/// and the inverse undoes it: E[k] = (X[k] + conj X[m−k])/2, O[k] = (X[k] − conj X[m−k])/(2·W^k).
/// All buffers are allocated in `init`; `forward`/`inverse` never allocate.
public final class RealFFT: @unchecked Sendable {
    /// Points per transform (a power of two).
    public let size: Int
    private let half: Int
    private let log2Half: Int
    private let bitReverse: UnsafeMutablePointer<Int32>
    // Per-stage twiddles, contiguous: for the stage of half-size h (h = 8, 16, …, half/2),
    // stageRe/Im[h − 8 + j] = e^{−iπj/h}, j < h.
    private let stageRe: UnsafeMutablePointer<Float>
    private let stageIm: UnsafeMutablePointer<Float>
    private let splitRe: UnsafeMutablePointer<Float>     // e^{−2πik/n}, k ≤ half
    private let splitIm: UnsafeMutablePointer<Float>
    private let zr: UnsafeMutablePointer<Float>
    private let zi: UnsafeMutablePointer<Float>

    /// Allocates the tables and buffers for `size` points (control side).
    public init(size: Int) {
        precondition(size >= 4 && size & (size - 1) == 0, "FFT size must be a power of two ≥ 4")
        self.size = size
        half = size / 2
        log2Half = half.trailingZeroBitCount
        bitReverse = .allocate(capacity: half)
        stageRe = .allocate(capacity: max(8, half))
        stageIm = .allocate(capacity: max(8, half))
        splitRe = .allocate(capacity: half + 1)
        splitIm = .allocate(capacity: half + 1)
        zr = .allocate(capacity: half)
        zi = .allocate(capacity: half)
        for i in 0..<half {
            var r = 0, v = i
            for _ in 0..<log2Half { r = (r << 1) | (v & 1); v >>= 1 }
            bitReverse[i] = Int32(r)
        }
        var h = 8
        while h < half {
            for j in 0..<h {
                let a = -Double.pi * Double(j) / Double(h)
                stageRe[h - 8 + j] = Float(cos(a)); stageIm[h - 8 + j] = Float(sin(a))
            }
            h *= 2
        }
        for k in 0...half {
            let a = -2 * Double.pi * Double(k) / Double(size)
            splitRe[k] = Float(cos(a)); splitIm[k] = Float(sin(a))
        }
    }

    deinit {
        bitReverse.deallocate(); stageRe.deallocate(); stageIm.deallocate()
        splitRe.deallocate(); splitIm.deallocate(); zr.deallocate(); zi.deallocate()
    }

    /// In-place complex FFT of `zr`/`zi` (length `half`), already in bit-reversed order.
    /// `sign` = −1 forward, +1 inverse (unscaled). Radix-2 decimation in time: the first three
    /// stages (butterfly spans 1, 2, 4, twiddles ±1, ±i, (±1 ± i)/√2) run as one radix-8 pass,
    /// the later ones eight butterflies at a time in SIMD lanes.
    @inline(__always)
    private func complexTransform(sign: Float) {
        let n = half
        let r = UnsafeMutableRawPointer(zr), i = UnsafeMutableRawPointer(zi)
        if n >= 8 {
            let s = sign   // −1 forward: w4 = −i; +1 inverse: w4 = +i
            let h = Float(0.5).squareRoot()
            var k = 0
            while k < n {
                // spans 1 and 2 (radix-4 on 4 points), twice, then span 4
                var xr = SIMD8<Float>(), xi = SIMD8<Float>()
                for q in 0..<2 {
                    let o = k + 4 * q
                    let a0r = zr[o] + zr[o + 1], a0i = zi[o] + zi[o + 1]
                    let a1r = zr[o] - zr[o + 1], a1i = zi[o] - zi[o + 1]
                    let a2r = zr[o + 2] + zr[o + 3], a2i = zi[o + 2] + zi[o + 3]
                    let a3r = zr[o + 2] - zr[o + 3], a3i = zi[o + 2] - zi[o + 3]
                    // a3 · w4, w4 = s·i  → (−s·a3i, s·a3r)
                    let t3r = -s * a3i, t3i = s * a3r
                    xr[4 * q] = a0r + a2r; xi[4 * q] = a0i + a2i
                    xr[4 * q + 2] = a0r - a2r; xi[4 * q + 2] = a0i - a2i
                    xr[4 * q + 1] = a1r + t3r; xi[4 * q + 1] = a1i + t3i
                    xr[4 * q + 3] = a1r - t3r; xi[4 * q + 3] = a1i - t3i
                }
                // span 4: twiddles e^{s·iπj/4}, j = 0…3
                let wr = SIMD4<Float>(1, h, 0, -h)
                let wi = SIMD4<Float>(0, s * h, s, s * h)
                let ar = SIMD4<Float>(xr[0], xr[1], xr[2], xr[3]), ai = SIMD4<Float>(xi[0], xi[1], xi[2], xi[3])
                let br = SIMD4<Float>(xr[4], xr[5], xr[6], xr[7]), bi = SIMD4<Float>(xi[4], xi[5], xi[6], xi[7])
                let tr = br * wr - bi * wi, ti = br * wi + bi * wr
                let lo = ar + tr, hi = ar - tr, loi = ai + ti, hii = ai - ti
                r.storeBytes(of: SIMD8<Float>(lowHalf: lo, highHalf: hi), toByteOffset: k * 4, as: SIMD8<Float>.self)
                i.storeBytes(of: SIMD8<Float>(lowHalf: loi, highHalf: hii), toByteOffset: k * 4, as: SIMD8<Float>.self)
                k += 8
            }
        } else {
            // tiny sizes (2, 4 points): plain radix-2, twiddles e^{sign·iπj/span}
            var span = 1
            while span < n {
                for start in stride(from: 0, to: n, by: 2 * span) {
                    for j in 0..<span {
                        let angle = Double.pi * Double(j) / Double(span)
                        let wr = Float(cos(angle)), wi = sign * Float(sin(angle))
                        let b0 = start + j, b1 = b0 + span
                        let br = zr[b1] * wr - zi[b1] * wi, bi = zr[b1] * wi + zi[b1] * wr
                        zr[b1] = zr[b0] - br; zi[b1] = zi[b0] - bi
                        zr[b0] += br; zi[b0] += bi
                    }
                }
                span *= 2
            }
            return
        }
        var h = 8
        while h < n {
            let wrBase = UnsafeRawPointer(stageRe + (h - 8)), wiBase = UnsafeRawPointer(stageIm + (h - 8))
            var start = 0
            while start < n {
                var j = 0
                while j < h {
                    let wr = wrBase.loadUnaligned(fromByteOffset: j * 4, as: SIMD8<Float>.self)
                    var wi = wiBase.loadUnaligned(fromByteOffset: j * 4, as: SIMD8<Float>.self)
                    if sign > 0 { wi = -wi }
                    let a = (start + j) * 4, b = (start + j + h) * 4
                    let ar = r.loadUnaligned(fromByteOffset: a, as: SIMD8<Float>.self)
                    let ai = i.loadUnaligned(fromByteOffset: a, as: SIMD8<Float>.self)
                    let br = r.loadUnaligned(fromByteOffset: b, as: SIMD8<Float>.self)
                    let bi = i.loadUnaligned(fromByteOffset: b, as: SIMD8<Float>.self)
                    let tr = br * wr - bi * wi, ti = br * wi + bi * wr
                    r.storeBytes(of: ar + tr, toByteOffset: a, as: SIMD8<Float>.self)
                    i.storeBytes(of: ai + ti, toByteOffset: a, as: SIMD8<Float>.self)
                    r.storeBytes(of: ar - tr, toByteOffset: b, as: SIMD8<Float>.self)
                    i.storeBytes(of: ai - ti, toByteOffset: b, as: SIMD8<Float>.self)
                    j += 8
                }
                start += 2 * h
            }
            h *= 2
        }
    }

    /// `input` holds `size` real samples; `re`/`im` receive `size/2 + 1` bins.
    public func forward(_ input: UnsafePointer<Float>, re: UnsafeMutablePointer<Float>,
                        im: UnsafeMutablePointer<Float>) {
        for t in 0..<half {
            let r = Int(bitReverse[t])
            zr[r] = input[2 * t]; zi[r] = input[2 * t + 1]
        }
        complexTransform(sign: -1)
        for k in 0...half {
            let k1 = k == half ? 0 : k, k2 = k == 0 ? 0 : half - k
            let ar = zr[k1], ai = zi[k1], br = zr[k2], bi = -zi[k2]   // Z[k], conj Z[m−k]
            let er = 0.5 * (ar + br), ei = 0.5 * (ai + bi)
            // O = (Z − conj Z')/(2i) = (ai − bi)/2 − i(ar − br)/2
            let or = 0.5 * (ai - bi), oi = -0.5 * (ar - br)
            let wr = splitRe[k], wi = splitIm[k]
            re[k] = er + wr * or - wi * oi
            im[k] = ei + wr * oi + wi * or
        }
    }

    /// `re`/`im` hold `size/2 + 1` bins; `output` receives `size` real samples, scaled by 1/size.
    public func inverse(re: UnsafePointer<Float>, im: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>) {
        for k in 0..<half {
            let ar = re[k], ai = im[k], br = re[half - k], bi = -im[half - k]  // X[k], conj X[m−k]
            let er = 0.5 * (ar + br), ei = 0.5 * (ai + bi)
            let dr = 0.5 * (ar - br), di = 0.5 * (ai - bi)
            // O = d / W^k = d · conj(W^k)
            let wr = splitRe[k], wi = -splitIm[k]
            let or = dr * wr - di * wi, oi = dr * wi + di * wr
            // Z = E + i·O
            let r = Int(bitReverse[k])
            zr[r] = er - oi; zi[r] = ei + or
        }
        complexTransform(sign: 1)
        let scale = 1 / Float(half)   // z = (1/m)·IDFT_m(Z) gives x exactly
        for t in 0..<half {
            output[2 * t] = zr[t] * scale
            output[2 * t + 1] = zi[t] * scale
        }
    }
}
