#if canImport(Glibc)
import Glibc
#endif

/// Narrower analysis frames for the highs, without a second vocoder: the vocoder's frames are
/// N points long (frequency resolution for the bass), and above a crossover the analysis sees
/// them as narrow in time as frames of about half that, by raising the Hann window w to a higher
/// power.
///
/// - Multiplying a frame by w = ½ − ½·cos(2πi/N) (origin at the frame's start) is convolving its
///   spectrum with (−¼, ½, −¼), so a extra factors of w are the 2a + 1 taps of that kernel's
///   a-th power. Above the crossover the analysis spectrum becomes that of w^(1+a)·x, blended in
///   from the frame's own bins over `blendBins` (a raised cosine β rising from 0 to 1).
/// - Overlap-add then sums w^(2+a) at the synthesis hop, where the running normalisation divides
///   by Σ w²: the highs' gain is the ratio of the two sums, m(2+a)/m(2) for a steady tone (m(q),
///   the mean of w^q), and flat only where Σ w^(2+a) is as flat as Σ w². With N/Hs = K whole
///   that holds while 2 + a < K (the sum's Fourier series stops at harmonic 2 + a); at other hops
///   the two sums ripple against each other. `allowedPowers` is measured at every synthesis hop
///   the vocoder can use: the most a ≤ 2 whose ratio ripples by less than `rippleLimit`, and
///   the vocoder moves a hop where that costs a power to the nearest whole K
///   (`PhaseVocoder.synthesisHop`).
/// - The taps are scaled by κ_a = m(1)/m(1+a), which keeps a steady tone's peak as high on both
///   sides of the crossover (what the phase locking and the formant envelope read), so a bin is
///   (1 − β)·X + β·κ_a·X_a. A tone there then comes out (1 − β) + β·κ_a·m(2+a)/m(2) times as
///   loud, and the turned spectrum is multiplied by the inverse, G (`Narrowing.gains`, in the
///   rotation's pass).
///
/// The tables depend on N and the shorter hop only and are shared by every vocoder of that size
/// (built once per process on the control side, read-only after: `@unchecked Sendable`).
final class SpectralWindowing: @unchecked Sendable {
    /// Where the narrower frames start (the blend is centred on it).
    static let crossoverHz = 700.0
    /// The most extra window powers (each costs two taps a bin; `ripples` measures two).
    static let mostPowers = 2
    /// How far Σ w^(2+a) / Σ w² may ripple over a hop, relative (the sideband a steady tone
    /// gets from it is about half that: −76 dB).
    static let rippleLimit = 3e-4

    let fftSize: Int
    /// The shorter hop N/overlap: synthesis hops run from it to N/4.
    let hopFrames: Int
    /// Bins of the raised-cosine blend from the frame's own bins to the narrowed ones.
    let blendBins: Int
    /// The most powers each synthesis hop from `hopFrames` to N/4 allows.
    private let allowed: UnsafeMutablePointer<Int8>
    /// For a = 1, 2: the 2a + 1 taps, padded to 8, then the blend's weights of the frame's own
    /// bins and of the narrowed ones (`blendBins` each, then 0 and 1 for a vector's reach), then
    /// G over the blend and above it.
    private let tables: UnsafeMutablePointer<Float>
    private let tableStride: Int

    private static let cache = ControlLock<[SIMD2<Int>: SpectralWindowing]>([:])

    /// The tables for frames of `fftSize` at the shorter hop `hopFrames`, built on first use.
    static func shared(fftSize n: Int, hopFrames: Int) -> SpectralWindowing {
        cache.withLock { c in
            let key = SIMD2(n, hopFrames)
            if let w = c[key] { return w }
            let w = SpectralWindowing(fftSize: n, hopFrames: hopFrames)
            c[key] = w
            return w
        }
    }

    /// The mean of w^q over a period: the mean of sin^(2q) is C(2q, q)/4^q.
    static func meanOfWindowPower(_ q: Int) -> Double {
        var c = 1.0
        for i in 0..<q { c *= Double(2 * q - i) / Double(i + 1) }
        return c / pow(4, Double(q))
    }

    /// The first bin narrowed at `sampleRate` (where the blend starts), for frames of `fftSize`.
    static func firstBin(sampleRate: Double, fftSize n: Int) -> Int {
        let crossover = Int((crossoverHz / sampleRate * Double(n)).rounded())
        return max(mostPowers, crossover - blendBins(fftSize: n) / 2)
    }

    /// About 170 Hz at 44.1 and 48 kHz.
    static func blendBins(fftSize n: Int) -> Int { max(8, n / 256) }

    /// The relative ripple over a hop of Σ_m w^(2+a)(t − m·hop) / Σ_m w²(t − m·hop), for a = 1 and 2.
    static func ripples(fftSize n: Int, hop: Int) -> (Double, Double) {
        var w2 = [Double](repeating: 0, count: n), w3 = w2, w4 = w2
        for i in 0..<n {
            let w = 0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(n))
            w2[i] = w * w; w3[i] = w2[i] * w; w4[i] = w2[i] * w2[i]
        }
        return ripples(hop: hop, w2, w3, w4)
    }

    private static func ripples(hop: Int, _ w2: [Double], _ w3: [Double], _ w4: [Double]) -> (Double, Double) {
        var low = (Double.infinity, Double.infinity), high = (0.0, 0.0), sum = (0.0, 0.0)
        for t in 0..<hop {
            var s2 = 0.0, s3 = 0.0, s4 = 0.0
            var i = t
            while i < w2.count { s2 += w2[i]; s3 += w3[i]; s4 += w4[i]; i += hop }
            let r3 = s3 / s2, r4 = s4 / s2
            low = (min(low.0, r3), min(low.1, r4)); high = (max(high.0, r3), max(high.1, r4)); sum = (sum.0 + r3, sum.1 + r4)
        }
        return ((high.0 - low.0) / (sum.0 / Double(hop)), (high.1 - low.1) / (sum.1 / Double(hop)))
    }

    private init(fftSize n: Int, hopFrames: Int) {
        fftSize = n
        self.hopFrames = hopFrames
        let blendBins = Self.blendBins(fftSize: n)
        self.blendBins = blendBins
        let hops = max(0, n / 4 - hopFrames) + 1
        allowed = .allocate(capacity: hops)
        var w2 = [Double](repeating: 0, count: n), w3 = w2, w4 = w2
        for i in 0..<n {
            let w = 0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(n))
            w2[i] = w * w; w3[i] = w2[i] * w; w4[i] = w2[i] * w2[i]
        }
        for j in 0..<hops {
            let hop = hopFrames + j
            let (r3, r4) = Self.ripples(hop: hop, w2, w3, w4)
            var a = 0
            if 3 < n / hop && r3 < Self.rippleLimit { a = 1 }
            if 4 < n / hop && r4 < Self.rippleLimit { a = 2 }
            allowed[j] = Int8(a)
        }
        let m = Self.meanOfWindowPower
        tableStride = 8 + 2 * (blendBins + 8) + blendBins + 1
        tables = .allocate(capacity: (Self.mostPowers + 1) * tableStride)
        tables.initialize(repeating: 0, count: (Self.mostPowers + 1) * tableStride)
        for a in 1...Self.mostPowers {
            var taps: [Double] = [1]
            for _ in 0..<a {
                var next = [Double](repeating: 0, count: taps.count + 2)
                for (i, v) in taps.enumerated() { next[i] -= 0.25 * v; next[i + 1] += 0.5 * v; next[i + 2] -= 0.25 * v }
                taps = next
            }
            // a steady tone's gain above the blend, the taps scaled by κ_a
            let kappa = m(1) / m(1 + a), highGain = kappa * m(2 + a) / m(2)
            let t = table(a: a)
            for (i, v) in taps.enumerated() { t[i] = Float(kappa * v) }
            t[7] = 4; t[6] = 8   // (`Narrowing.byteSteps`)
            for j in 0..<(blendBins + 8) {
                let beta = j < blendBins ? 0.5 - 0.5 * cos(Double.pi * (Double(j) + 0.5) / Double(blendBins)) : 1
                t[8 + j] = Float(1 - beta)
                t[8 + blendBins + 8 + j] = Float(beta)
                if j <= blendBins { t[8 + 2 * (blendBins + 8) + j] = Float(1 / ((1 - beta) + beta * highGain)) }
            }
        }
    }

    deinit { allowed.deallocate(); tables.deallocate() }

    private func table(a: Int) -> UnsafeMutablePointer<Float> { tables + a * tableStride }

    /// The extra powers the analysis of a frame with synthesis hop `hop` takes.
    @inline(__always)
    func powers(hop: Int) -> Int {
        Int(allowed[max(0, min(fftSize / 4, hop) - hopFrames)])
    }

    /// The narrowing of a frame with a powers.
    @inline(__always)
    func narrowing(powers a: Int) -> Narrowing {
        let t = table(a: a)
        return Narrowing(powers: a, taps: t, own: t + 8, narrowed: t + 8 + blendBins + 8, gains: t + 8 + 2 * (blendBins + 8),
                         blendBins: blendBins)
    }

    /// What `narrowSpectrum` needs for one frame (pointers into the shared tables).
    struct Narrowing {
        let powers: Int
        let taps: UnsafePointer<Float>, own: UnsafePointer<Float>, narrowed: UnsafePointer<Float>
        /// G over the blend, then above it.
        let gains: UnsafePointer<Float>
        let blendBins: Int
        /// 4 and 8 (bytes to the neighbours one and two bins away), read from memory.
        let byteSteps: (Int, Int)
        init(powers: Int, taps: UnsafeMutablePointer<Float>, own: UnsafeMutablePointer<Float>,
             narrowed: UnsafeMutablePointer<Float>, gains: UnsafeMutablePointer<Float>, blendBins: Int) {
            self.powers = powers
            self.taps = UnsafePointer(taps); self.own = UnsafePointer(own); self.narrowed = UnsafePointer(narrowed)
            self.gains = UnsafePointer(gains); self.blendBins = blendBins
            byteSteps = (Int(taps[7]), Int(taps[6]))
        }
    }

    /// Whether a synthesis hop allows as many powers as the nearest whole overlap would.
    @inline(__always)
    func allowsAsMany(hop: Int) -> Bool {
        let k = max(4, min(fftSize / hopFrames, (fftSize + hop / 2) / hop))
        return powers(hop: hop) >= min(Self.mostPowers, k - 3)
    }
}

/// Replaces bins [from, to) of one channel's analysis spectrum (re, im), of `bins` bins, by the
/// narrowed spectrum (`SpectralWindowing`); from ≥ 2. In place: each block of eight is stored
/// only after the next block has read the bins it shares with it. Above N/2 the spectrum is
/// read mirrored (X[N/2 + j] = conj X[N/2 − j]). Bins past `to` in its last block of eight may
/// be narrowed too.
@inline(__always) @_noAllocation @_noLocks
func narrowSpectrum(_ re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>, bins: Int, from: Int, to: Int,
                    _ n: SpectralWindowing.Narrowing) {
    typealias V = SIMD8<Float>
    let xr = UnsafeMutableRawPointer(re), xi = UnsafeMutableRawPointer(im)
    let own = UnsafeRawPointer(n.own), narrowed = UnsafeRawPointer(n.narrowed), blendBins = n.blendBins
    let half = n.powers, kernel = n.taps
    // the taps are symmetric: the centre's and the pairs' (a = 1: the outer pair's are 0)
    let c0 = V(repeating: kernel[half]), c1 = V(repeating: kernel[half - 1]), c2 = V(repeating: half > 1 ? kernel[0] : 0)
    // The neighbours' byte offsets come from the table: known to the compiler, the five
    // overlapping loads were merged into partial loads and shuffles, twice as slow.
    let d1 = n.byteSteps.0, d2 = n.byteSteps.1
    // vectors while their reach stays below N/2, each stored one block late
    var k = from
    var pendingRe = V(), pendingIm = V(), pending = -1
    let vectorEnd = min(to, bins - 8 - 2 + 1)
    while k < vectorEnd {
        let o = 4 &* k
        let r0 = xr.loadUnaligned(fromByteOffset: o, as: V.self), i0 = xi.loadUnaligned(fromByteOffset: o, as: V.self)
        var yr = c0 * r0 + c1 * (xr.loadUnaligned(fromByteOffset: o &- d1, as: V.self) + xr.loadUnaligned(fromByteOffset: o &+ d1, as: V.self))
            + c2 * (xr.loadUnaligned(fromByteOffset: o &- d2, as: V.self) + xr.loadUnaligned(fromByteOffset: o &+ d2, as: V.self))
        var yi = c0 * i0 + c1 * (xi.loadUnaligned(fromByteOffset: o &- d1, as: V.self) + xi.loadUnaligned(fromByteOffset: o &+ d1, as: V.self))
            + c2 * (xi.loadUnaligned(fromByteOffset: o &- d2, as: V.self) + xi.loadUnaligned(fromByteOffset: o &+ d2, as: V.self))
        let j = k &- from
        if j < blendBins {
            let wo = own.loadUnaligned(fromByteOffset: 4 &* j, as: V.self), wn = narrowed.loadUnaligned(fromByteOffset: 4 &* j, as: V.self)
            yr = wo * r0 + wn * yr
            yi = wo * i0 + wn * yi
        }
        if pending >= 0 {
            xr.storeBytes(of: pendingRe, toByteOffset: 4 &* pending, as: V.self)
            xi.storeBytes(of: pendingIm, toByteOffset: 4 &* pending, as: V.self)
        }
        pendingRe = yr; pendingIm = yi; pending = k
        k &+= 8
    }
    // the last bins one at a time (fewer than 10), reading the mirror above N/2, kept in
    // vectors until the pending block (whose bins they read) is stored
    var tailRe = V(), tailIm = V(), tailRe2 = V(), tailIm2 = V()
    let tailStart = k, tailCount = max(0, to - k)
    for t in 0..<tailCount {
        let b = tailStart + t
        var sr: Float = 0, si: Float = 0
        for j in -half...half {
            var q = b + j, sign: Float = 1
            if q > bins - 1 { q = 2 * (bins - 1) - q; sign = -1 }
            sr += kernel[j + half] * re[q]; si += kernel[j + half] * sign * im[q]
        }
        let jb = b - from
        if jb < blendBins {
            sr = n.own[jb] * re[b] + n.narrowed[jb] * sr; si = n.own[jb] * im[b] + n.narrowed[jb] * si
        }
        if t < 8 { tailRe[t] = sr; tailIm[t] = si } else { tailRe2[t - 8] = sr; tailIm2[t - 8] = si }
    }
    if pending >= 0 {
        xr.storeBytes(of: pendingRe, toByteOffset: 4 &* pending, as: V.self)
        xi.storeBytes(of: pendingIm, toByteOffset: 4 &* pending, as: V.self)
    }
    for t in 0..<tailCount {
        re[tailStart + t] = t < 8 ? tailRe[t] : tailRe2[t - 8]
        im[tailStart + t] = t < 8 ? tailIm[t] : tailIm2[t - 8]
    }
}
