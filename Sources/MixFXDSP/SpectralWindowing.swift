#if canImport(Glibc)
import Glibc
#endif

/// Narrower frames for the highs, without a second vocoder: the vocoder's frames are N points
/// long (frequency resolution for the bass), and above a crossover they act as frames about half
/// as long, by raising the Hann window w to a higher power.
///
/// - Multiplying a frame by w = ½ − ½·cos(2πi/N) (origin at the frame's start) is convolving its
///   spectrum with (−¼, ½, −¼), so p extra factors of w are the 2p + 1 taps of that kernel's
///   p-th power (`narrowSpectrum`).
/// - Analysis: above the crossover the spectrum becomes that of w^(1+a)·x (a = 1 or 2), scaled
///   by κ_a = m(1)/m(1+a) (m(q): the mean of w^q, C(2q, q)/4^q), which keeps a steady tone's peak
///   as high on both sides (what the phase locking and the formant envelope read); blended in
///   from the frame's own bins over `blendBins` (a raised cosine β from 0 to 1).
/// - Synthesis: above the analysis blend the turned spectrum is that of the frame times w^s
///   more (s = 1 or 2, blended in over the next `blendBins`), so the highs' synthesis window is
///   w^(1+s).
/// - Overlap-add then sums w^(2+a+s) at the synthesis hop where the running normalisation divides
///   by Σ w². With N/Hs = K whole that is flat while 2 + a + s < K (the sum's Fourier series stops
///   at harmonic 2 + a + s); at other hops the two sums ripple against each other. The powers
///   are measured at every synthesis hop the vocoder can use: the most (a first, up to 2, then s
///   up to 2)
///   whose ratio ripples by less than `rippleLimit`; the vocoder moves a hop where that costs an
///   analysis power to the nearest whole K (`PhaseVocoder.synthesisHop`).
/// - Gain: a steady tone at a bin comes out g times as loud, with β_a, β_s the two blends' weights
///   there, g = [(1 − β_s)·((1 − β_a)·m(2) + β_a·κ_a·m(2+a)) + β_s·κ_a·m(2+a+s)] / m(2) (β_s = 0
///   wherever β_a < 1); the rotation multiplies each bin by G = 1/g (`Narrowing.gains`).
/// - The formant envelope is read from the frame's own spectrum (before the narrowing): the
///   narrowed bins' power counts a noise floor through another window (Parseval: E/m(2) times as
///   much, E = (1 − β)²·m(2) + 2β(1 − β)·κ_a·m(2+a) + β²·κ_a²·m(2+2a)), a step at the crossover.
///
/// The tables depend on N and the shorter hop only and are shared by every vocoder of that size
/// (built once per process on the control side, read-only after: `@unchecked Sendable`).
final class SpectralWindowing: @unchecked Sendable {
    /// Where the narrower frames start (the analysis blend is centred on it).
    static let crossoverHz = 700.0
    /// The most extra window powers at analysis (each costs two taps a bin).
    static let mostAnalysisPowers = 2
    /// The most extra window powers at synthesis (each two taps a bin).
    static let mostSynthesisPowers = 2
    /// How far Σ w^(2+a+s) / Σ w² may ripple over a hop, relative (the sideband a steady tone
    /// gets from it is about half that: −76 dB).
    static let rippleLimit = 3e-4

    let fftSize: Int
    /// The shorter hop N/overlap: synthesis hops run from it to N/4.
    let hopFrames: Int
    /// Bins of each raised-cosine blend (about 170 Hz at 44.1 and 48 kHz).
    let blendBins: Int
    /// For each synthesis hop from `hopFrames` to N/4: a + 4·s.
    private let allowed: UnsafeMutablePointer<Int8>
    /// The taps of analysis a = 1, a = 2 and synthesis s = 1, s = 2 (`tapsStride` each: the taps
    /// padded to 8, the blend's weights of the bins as they were and of the narrowed ones, `blendBins`
    /// each then 0 and 1 for a vector's reach), then the gains G of (a, s) = (1, 0), (2, 0),
    /// (2, 1), (2, 2) (`gainsStride` each: over the blends, then above them).
    private let storage: UnsafeMutablePointer<Float>
    private let tapsStride: Int, gainsStride: Int
    /// m(2) … m(6), κ₁ = m(1)/m(2), κ₂ = m(1)/m(3) (for the mixes of `narrowing(powers:scratch:)`).
    private let m2: Double, m3: Double, m4: Double, m5: Double, m6: Double, kappa1: Double, kappa2: Double

    private static let cache = ControlLock<[SIMD3<Int>: SpectralWindowing]>([:])

    /// The tables for frames of `fftSize` at `sampleRate` and the shorter hop `hopFrames`, built on
    /// first use.
    static func shared(fftSize n: Int, sampleRate: Double, hopFrames: Int) -> SpectralWindowing {
        cache.withLock { c in
            let blendBins = Self.blendBins(fftSize: n, sampleRate: sampleRate)
            let key = SIMD3(n, hopFrames, blendBins)
            if let w = c[key] { return w }
            let w = SpectralWindowing(fftSize: n, hopFrames: hopFrames, blendBins: blendBins)
            c[key] = w
            return w
        }
    }

    /// m(q), the mean of w^q over a period: the mean of sin^(2q) is C(2q, q)/4^q.
    static func meanOfWindowPower(_ q: Int) -> Double {
        var c = 1.0
        for i in 0..<q { c *= Double(2 * q - i) / Double(i + 1) }
        return c / pow(4, Double(q))
    }

    /// The first bin narrowed at `sampleRate` (where the analysis blend starts), for frames of
    /// `fftSize`.
    static func firstBin(sampleRate: Double, fftSize n: Int) -> Int {
        let crossover = Int((crossoverHz / sampleRate * Double(n)).rounded())
        return max(mostAnalysisPowers, crossover - blendBins(fftSize: n, sampleRate: sampleRate) / 2)
    }

    /// At least 170 Hz (16 bins at 44.1 and 48 kHz; fewer bins lose a tone's level in the blend).
    static func blendBins(fftSize n: Int, sampleRate: Double) -> Int {
        max(8, n / 256, Int((170 * Double(n) / sampleRate).rounded()))
    }

    /// The relative ripple over a hop of Σ_m w^q(t − m·hop) / Σ_m w²(t − m·hop), q = 3 … 6.
    static func ripples(fftSize n: Int, hop: Int) -> SIMD4<Double> {
        ripples(hop: hop, powers: windowPowers(fftSize: n))
    }

    /// w² and (w³, w⁴, w⁵, w⁶) at each of N points.
    private static func windowPowers(fftSize n: Int) -> [(Double, SIMD4<Double>)] {
        (0..<n).map { i in
            let w = 0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(n)), w2 = w * w
            return (w2, SIMD4(w2 * w, w2 * w2, w2 * w2 * w, w2 * w2 * w2))
        }
    }

    private static func ripples(hop: Int, powers: [(Double, SIMD4<Double>)]) -> SIMD4<Double> {
        let n = powers.count
        var low = SIMD4<Double>(repeating: .infinity), high = SIMD4<Double>(), sum = SIMD4<Double>()
        for t in 0..<hop {
            var s2 = 0.0, sq = SIMD4<Double>()
            var i = t
            while i < n {
                s2 += powers[i].0
                sq += powers[i].1
                i += hop
            }
            let ratio = sq / s2
            low = pointwiseMin(low, ratio); high = pointwiseMax(high, ratio); sum += ratio
        }
        return (high - low) / (sum / Double(hop))
    }

    private init(fftSize n: Int, hopFrames: Int, blendBins: Int) {
        fftSize = n
        self.hopFrames = hopFrames
        self.blendBins = blendBins
        // the powers each hop allows
        let hops = max(0, n / 4 - hopFrames) + 1
        allowed = .allocate(capacity: hops)
        let powers = Self.windowPowers(fftSize: n)
        for j in 0..<hops {
            let hop = hopFrames + j, k = n / hop
            let ripple = Self.ripples(hop: hop, powers: powers)
            let flat = { (q: Int) in q < k && ripple[q - 3] < Self.rippleLimit }
            let a = flat(4) ? 2 : flat(3) ? 1 : 0
            let s = a < 2 || !flat(5) ? 0 : Self.mostSynthesisPowers > 1 && flat(6) ? 2 : 1
            allowed[j] = Int8(a + 4 * s)
        }
        // the taps and the gains
        let m = Self.meanOfWindowPower
        (m2, m3, m4, m5, m6) = (m(2), m(3), m(4), m(5), m(6))
        (kappa1, kappa2) = (m(1) / m(2), m(1) / m(3))
        tapsStride = 8 + 2 * (blendBins + 8)
        gainsStride = 2 * blendBins + 1
        let count = 4 * tapsStride + 4 * gainsStride
        storage = .allocate(capacity: count)
        storage.initialize(repeating: 0, count: count)
        let beta = (0..<(blendBins + 8)).map { j in
            j < blendBins ? 0.5 - 0.5 * cos(Double.pi * (Double(j) + 0.5) / Double(blendBins)) : 1
        }
        for (table, powers, scale) in [(0, 1, m(1) / m(2)), (1, 2, m(1) / m(3)), (2, 1, 1.0), (3, 2, 1.0)] {
            var taps: [Double] = [1]
            for _ in 0..<powers {
                var next = [Double](repeating: 0, count: taps.count + 2)
                for (i, v) in taps.enumerated() { next[i] -= 0.25 * v; next[i + 1] += 0.5 * v; next[i + 2] -= 0.25 * v }
                taps = next
            }
            let t = storage + table * tapsStride
            for (i, v) in taps.enumerated() { t[i] = Float(scale * v) }
            t[6] = 8; t[7] = 4   // (`Taps.byteSteps`)
            for j in 0..<(blendBins + 8) {
                t[8 + j] = Float(1 - beta[j])
                t[8 + blendBins + 8 + j] = Float(beta[j])
            }
        }
        for (table, a, s) in [(0, 1, 0), (1, 2, 0), (2, 2, 1), (3, 2, 2)] {
            let kappa = m(1) / m(1 + a)
            let g = storage + 4 * tapsStride + table * gainsStride
            for j in 0..<gainsStride {
                let betaA = j < blendBins ? beta[j] : 1
                let betaS = s == 0 || j < blendBins ? 0 : (j - blendBins < blendBins ? beta[j - blendBins] : 1)
                let analysed = (1 - betaA) * m(2) + betaA * kappa * m(2 + a)
                g[j] = Float(m(2) / ((1 - betaS) * analysed + betaS * kappa * m(2 + a + s)))
            }
        }
    }

    deinit { allowed.deallocate(); storage.deallocate() }

    /// What a frame with synthesis hop `hop` takes.
    @inline(__always)
    func narrowing(hop: Int) -> Narrowing {
        narrowing(powers: powers(hop: hop))
    }

    /// The powers p = a + s a synthesis hop allows: 0, 1 (a = 1), 2 (a = 2), 3 (a = 2, s = 1) or 4
    /// (a = 2, s = 2).
    @inline(__always)
    func powers(hop: Int) -> Int {
        let code = Int(allowed[max(0, min(fftSize / 4, hop) - hopFrames)])
        return (code & 3) + (code >> 2)
    }

    /// What a frame with the whole powers p takes (the shared tables).
    @inline(__always)
    func narrowing(powers p: Int) -> Narrowing {
        let a = min(p, 2), s = p - a
        let gains = UnsafePointer(storage + 4 * tapsStride + (a == 1 ? 0 : 1 + s) * gainsStride)
        return Narrowing(analysis: taps(table: a == 1 ? 0 : 1, powers: a), synthesis: taps(table: s == 2 ? 3 : 2, powers: s),
                         gains: gains, gainBins: (s > 0 ? 2 : 1) * blendBins)
    }

    /// Floats of the scratch a frame between two whole powers needs (`narrowing(powers:scratch:)`).
    var mixScratchCount: Int { 16 + gainsStride }

    /// What a frame with powers p between two whole values c and c + 1 takes (a glide between
    /// hops that allow different powers): f = p − c of the narrowing of c + 1 and 1 − f of c's,
    /// so its highs' window is that mix, e.g. at 1 < p < 2 the analysis window is
    /// (1 − f)·κ₁·w² + f·κ₂·w³ (five taps, the mix of both kernels), at 2 < p < 3 the synthesis
    /// multiplies by (1 − f) + f·w, at 3 < p < 4 by (1 − f)·w + f·w². The gains G follow the mix:
    /// with A and B the means of the highs' window after analysis and after synthesis (over m(2)
    /// as before),
    ///     g = [(1 − β_s)·((1 − β_a)·m(2) + β_a·A) + β_s·B] / m(2).
    /// A whole p reads the shared tables (the same bytes as `narrowing(powers:)`). The mixed taps
    /// and gains are written into `scratch` (`mixScratchCount` floats, the vocoder's own).
    @inline(__always) @_noAllocation @_noLocks
    func narrowing(powers p: Double, scratch: UnsafeMutablePointer<Float>) -> Narrowing {
        let c = Int(p), f = p - Double(c)
        let whole = narrowing(powers: c)
        if f == 0 { return whole }
        let m2 = m2, m3 = m3, m4 = m4, m5 = m5, m6 = m6, kappa1 = kappa1, kappa2 = kappa2
        // the mixed kernel: (1 − f)·(c's taps) + f·(c + 1's), centred, in 5 taps + the byte steps
        let mixed = scratch, gains = scratch + 16
        let one = storage, two = storage + tapsStride, synthesis = storage + 2 * tapsStride
        var analysisMean: Double, highsMean: Double
        var analysis = whole.analysis, synthesisTaps = whole.synthesis
        switch c {
        case 0:   // δ → κ₁·(−¼, ½, −¼)
            mixed[0] = Float(f) * one[0]; mixed[1] = Float(1 - f) + Float(f) * one[1]; mixed[2] = Float(f) * one[2]
            analysis = Taps(powers: 1, taps: mixed, own: one + 8, narrowed: one + 8 + blendBins + 8, blendBins: blendBins)
            analysisMean = (1 - f) * m2 + f * kappa1 * m3
            highsMean = analysisMean
        case 1:   // κ₁ kernel (3 taps) → κ₂ kernel (5 taps)
            mixed[0] = Float(f) * two[0]; mixed[4] = Float(f) * two[4]
            for i in 0..<3 { mixed[1 + i] = Float(1 - f) * one[i] + Float(f) * two[1 + i] }
            analysis = Taps(powers: 2, taps: mixed, own: two + 8, narrowed: two + 8 + blendBins + 8, blendBins: blendBins)
            analysisMean = (1 - f) * kappa1 * m3 + f * kappa2 * m4
            highsMean = analysisMean
        case 3:   // synthesis (−¼, ½, −¼) → its square (5 taps)
            let s2 = storage + 3 * tapsStride
            mixed[0] = Float(f) * s2[0]; mixed[4] = Float(f) * s2[4]
            for i in 0..<3 { mixed[1 + i] = Float(1 - f) * synthesis[i] + Float(f) * s2[1 + i] }
            synthesisTaps = Taps(powers: 2, taps: mixed, own: synthesis + 8, narrowed: synthesis + 8 + blendBins + 8,
                                 blendBins: blendBins)
            analysisMean = kappa2 * m4
            highsMean = kappa2 * ((1 - f) * m5 + f * m6)
        default:  // synthesis δ → (−¼, ½, −¼)
            mixed[0] = Float(f) * synthesis[0]; mixed[1] = Float(1 - f) + Float(f) * synthesis[1]; mixed[2] = Float(f) * synthesis[2]
            synthesisTaps = Taps(powers: 1, taps: mixed, own: synthesis + 8, narrowed: synthesis + 8 + blendBins + 8,
                                 blendBins: blendBins)
            analysisMean = kappa2 * m4
            highsMean = kappa2 * ((1 - f) * m4 + f * m5)
        }
        mixed[6] = 8; mixed[7] = 4   // (`Taps.byteSteps`)
        // the gains over the analysis blend, the synthesis blend (c = 2), then above them
        let beta = one + 8 + blendBins + 8, blends = c >= 2 ? 2 : 1
        for j in 0..<(blends * blendBins) {
            let betaA = j < blendBins ? Double(beta[j]) : 1
            let betaS = j < blendBins || c < 2 ? 0 : Double(beta[j - blendBins])
            let analysed = (1 - betaA) * m2 + betaA * analysisMean
            gains[j] = Float(m2 / ((1 - betaS) * analysed + betaS * highsMean))
        }
        gains[blends * blendBins] = Float(m2 / highsMean)
        return Narrowing(analysis: analysis, synthesis: synthesisTaps, gains: UnsafePointer(gains), gainBins: blends * blendBins)
    }

    @inline(__always)
    private func taps(table: Int, powers: Int) -> Taps {
        let t = UnsafePointer(storage + table * tapsStride)
        return Taps(powers: powers, taps: t, own: t + 8, narrowed: t + 8 + blendBins + 8, blendBins: blendBins)
    }

    /// Whether a synthesis hop allows as many analysis powers as the nearest whole overlap would.
    @inline(__always)
    func allowsAsMany(hop: Int) -> Bool {
        let k = max(4, min(fftSize / hopFrames, (fftSize + hop / 2) / hop))
        return narrowing(hop: hop).analysis.powers >= min(Self.mostAnalysisPowers, k - 3)
    }

    /// The taps of one narrowing (pointers into the shared tables).
    struct Taps {
        /// p: 2p + 1 taps (0: none).
        let powers: Int
        let taps: UnsafePointer<Float>
        /// The blend's weights of the bins as they were and of the narrowed ones.
        let own: UnsafePointer<Float>, narrowed: UnsafePointer<Float>
        let blendBins: Int
        /// 4 and 8 (bytes to the neighbours one and two bins away), read from the table.
        var byteSteps: (Int, Int) { (Int(taps[7]), Int(taps[6])) }
    }

    /// What a frame takes: the analysis's and the synthesis's taps (the synthesis's blend starts
    /// where the analysis's ends), and the gains G over `gainBins` from the first narrowed bin,
    /// then G above them (at `gainBins`).
    struct Narrowing {
        let analysis: Taps, synthesis: Taps
        let gains: UnsafePointer<Float>
        let gainBins: Int
    }
}

/// Replaces bins [from, to) of one channel's spectrum (re, im), of `bins` bins, by the narrowed
/// spectrum (`SpectralWindowing`); from ≥ 2. In place: each block of eight is stored only after
/// the next block has read the bins it shares with it. Above N/2 the spectrum is read mirrored
/// (X[N/2 + j] = conj X[N/2 − j]). Bins past `to` in its last block of eight may be narrowed too.
@inline(__always) @_noAllocation @_noLocks
func narrowSpectrum(_ re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>, bins: Int, from: Int, to: Int,
                    _ n: SpectralWindowing.Taps) {
    // (one loop each: the compiler drops the outer pair's loads for p = 1)
    if n.powers == 1 {
        narrowSpectrum(re, im, bins: bins, from: from, to: to, n, twoPairs: false)
    } else {
        narrowSpectrum(re, im, bins: bins, from: from, to: to, n, twoPairs: true)
    }
}

@inline(__always) @_noAllocation @_noLocks
private func narrowSpectrum(_ re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>, bins: Int, from: Int, to: Int,
                            _ n: SpectralWindowing.Taps, twoPairs: Bool) {
    typealias V = SIMD8<Float>
    let xr = UnsafeMutableRawPointer(re), xi = UnsafeMutableRawPointer(im)
    let own = UnsafeRawPointer(n.own), narrowed = UnsafeRawPointer(n.narrowed), blendBins = n.blendBins
    let half = n.powers, kernel = n.taps
    // the taps are symmetric: the centre's and the pairs'
    let c0 = V(repeating: kernel[half]), c1 = V(repeating: kernel[half - 1]), c2 = V(repeating: twoPairs ? kernel[0] : 0)
    // The neighbours' byte offsets come from the table: known to the compiler, the five
    // overlapping loads were merged into partial loads and shuffles, twice as slow.
    let (d1, d2) = n.byteSteps
    // vectors while their reach stays below N/2, each stored one block late
    var k = from
    var pendingRe = V(), pendingIm = V(), pending = -1
    let vectorEnd = min(to, bins - 8 - 2 + 1)
    while k < vectorEnd {
        let o = 4 &* k
        let r0 = xr.loadUnaligned(fromByteOffset: o, as: V.self), i0 = xi.loadUnaligned(fromByteOffset: o, as: V.self)
        var yr = c0 * r0 + c1 * (xr.loadUnaligned(fromByteOffset: o &- d1, as: V.self) + xr.loadUnaligned(fromByteOffset: o &+ d1, as: V.self))
        var yi = c0 * i0 + c1 * (xi.loadUnaligned(fromByteOffset: o &- d1, as: V.self) + xi.loadUnaligned(fromByteOffset: o &+ d1, as: V.self))
        if twoPairs {
            yr += c2 * (xr.loadUnaligned(fromByteOffset: o &- d2, as: V.self) + xr.loadUnaligned(fromByteOffset: o &+ d2, as: V.self))
            yi += c2 * (xi.loadUnaligned(fromByteOffset: o &- d2, as: V.self) + xi.loadUnaligned(fromByteOffset: o &+ d2, as: V.self))
        }
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
