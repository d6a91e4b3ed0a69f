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
    public let size: Int
    private let half: Int
    private let log2Half: Int
    private let bitReverse: UnsafeMutablePointer<Int32>
    private let twiddleRe: UnsafeMutablePointer<Float>   // e^{−2πij/half}, j < half/2
    private let twiddleIm: UnsafeMutablePointer<Float>
    private let splitRe: UnsafeMutablePointer<Float>     // e^{−2πik/n}, k ≤ half
    private let splitIm: UnsafeMutablePointer<Float>
    private let zr: UnsafeMutablePointer<Float>
    private let zi: UnsafeMutablePointer<Float>

    public init(size: Int) {
        precondition(size >= 4 && size & (size - 1) == 0, "FFT size must be a power of two ≥ 4")
        self.size = size
        half = size / 2
        log2Half = half.trailingZeroBitCount
        bitReverse = .allocate(capacity: half)
        twiddleRe = .allocate(capacity: max(1, half / 2))
        twiddleIm = .allocate(capacity: max(1, half / 2))
        splitRe = .allocate(capacity: half + 1)
        splitIm = .allocate(capacity: half + 1)
        zr = .allocate(capacity: half)
        zi = .allocate(capacity: half)
        for i in 0..<half {
            var r = 0, v = i
            for _ in 0..<log2Half { r = (r << 1) | (v & 1); v >>= 1 }
            bitReverse[i] = Int32(r)
        }
        for j in 0..<max(1, half / 2) {
            let a = -2 * Double.pi * Double(j) / Double(half)
            twiddleRe[j] = Float(cos(a)); twiddleIm[j] = Float(sin(a))
        }
        for k in 0...half {
            let a = -2 * Double.pi * Double(k) / Double(size)
            splitRe[k] = Float(cos(a)); splitIm[k] = Float(sin(a))
        }
    }

    deinit {
        bitReverse.deallocate(); twiddleRe.deallocate(); twiddleIm.deallocate()
        splitRe.deallocate(); splitIm.deallocate(); zr.deallocate(); zi.deallocate()
    }

    /// In-place complex FFT of `zr`/`zi` (length `half`), already in bit-reversed order.
    /// `sign` = −1 forward, +1 inverse (unscaled).
    @inline(__always)
    private func complexTransform(sign: Float) {
        var len = 2
        var stride = half / 2
        while len <= half {
            let h = len / 2
            var start = 0
            while start < half {
                var t = 0
                for j in 0..<h {
                    let wr = twiddleRe[t], wi = sign < 0 ? twiddleIm[t] : -twiddleIm[t]
                    let a = start + j, b = a + h
                    let br = zr[b] * wr - zi[b] * wi
                    let bi = zr[b] * wi + zi[b] * wr
                    zr[b] = zr[a] - br; zi[b] = zi[a] - bi
                    zr[a] += br; zi[a] += bi
                    t += stride
                }
                start += len
            }
            len <<= 1
            stride >>= 1
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
