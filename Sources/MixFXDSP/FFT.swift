#if canImport(Glibc)
import Glibc
#endif

/// A real FFT of a power-of-two size `n`, in split (separate real/imaginary) form.
///
/// Forward: `X[k] = Σ x[t]·e^{−2πikt/n}` for k = 0…n/2 (n/2 + 1 bins), unscaled.
/// Inverse: `x[t] = (1/n)·Σ X[k]·e^{+2πikt/n}` over the full Hermitian spectrum.
///
/// **Real ↔ complex.** The n real samples are packed into an m = n/2-point complex sequence
/// z[t] = x[2t] + i·x[2t+1], transformed, and split with
///
///     E[k] = (Z[k] + conj Z[m−k]) / 2,   O[k] = (Z[k] − conj Z[m−k]) / 2i
///     X[k] = E[k] + W^k·O[k],            W = e^{−2πi/n}
///
/// and the inverse undoes it: E[k] = (X[k] + conj X[m−k])/2, O[k] = (X[k] − conj X[m−k])/(2·W^k),
/// Z = E + i·O.
///
/// **Complex transform, four lanes wide.** With t = 4a + b and k = k1 + L·k2 (L = m/4),
///
///     Z[k1 + L·k2] = Σ_b W_4^{b·k2} · W_m^{b·k1} · Y_b[k1],    Y_b[k1] = Σ_a z[4a + b]·W_L^{a·k1}
///
/// Four consecutive samples z[4a…4a+3] are one SIMD4 vector whose lane b belongs to sub-sequence
/// b, so the four L-point transforms Y_b run side by side in the lanes (radix-4 decimation in time
/// on bit-reversed vectors, one radix-2 stage first when log2 L is odd), and every stage is a
/// full-width vector operation with no shuffles. The last step twiddles the lanes by W_m^{b·k1},
/// transposes 4×4 blocks and does the 4-point transforms across them. Where the CPU has 256-bit
/// vectors (`wideVectors`), each radix-4 stage runs two neighbouring butterflies as one eight-lane
/// butterfly: the same arithmetic on every value, so the same bits. The buffers are allocated in
/// `init`, the tables taken from a process-wide cache there (`Tables`); `forward`/`inverse`
/// never allocate.
/// `@unchecked Sendable`: it works in scratch buffers (its own, or a shifter's workspace), so
/// one thread at a time.
public final class RealFFT: @unchecked Sendable {
    /// Points per transform (a power of two).
    public let size: Int
    /// Whether the radix-4 stages run two butterflies at once in eight-lane vectors
    /// (`wideStage`): the same operations on every value as `narrowStage`, so the same bits,
    /// in about half the instructions where the CPU has 256-bit vectors, and slower where
    /// eight lanes are two SSE registers. The build chooses (`-D MIXFX_WIDE_VECTORS`, which
    /// the Makefile passes when it builds for a CPU with AVX2).
    let wideVectors: Bool
    #if MIXFX_WIDE_VECTORS
    static let defaultWideVectors = true
    #else
    static let defaultWideVectors = false
    #endif
    private let half: Int                                  // m
    private let columns: Int                               // L = m/4 (0 below 32 points)
    /// The twiddles and the bit reversal, shared by every transform of this size and width in
    /// the process (`Tables.shared`): about 137 KB at 4096 points, which each shifter of a
    /// 300-track session used to hold a copy of.
    private let tables: Tables
    private let reversed: UnsafeMutablePointer<Int32>      // bit reversal of 0..<L
    private let stageForward: UnsafeMutablePointer<SIMD4<Float>>
    private let stageInverse: UnsafeMutablePointer<SIMD4<Float>>
    private let laneRe: UnsafeMutablePointer<SIMD4<Float>>
    private let laneIm: UnsafeMutablePointer<SIMD4<Float>>
    private let laneImInverse: UnsafeMutablePointer<SIMD4<Float>>
    private let splitRe: UnsafeMutablePointer<Float>
    private let splitIm: UnsafeMutablePointer<Float>
    // The work buffers: its own (`ownedWork`), or a shared workspace's (`bindScratch`).
    private var zr: UnsafeMutablePointer<Float>            // m complex values, natural order
    private var zi: UnsafeMutablePointer<Float>
    private var vr: UnsafeMutablePointer<SIMD4<Float>>     // L vectors, the lane transforms
    private var vi: UnsafeMutablePointer<SIMD4<Float>>
    private let ownedWork: UnsafeMutableRawPointer?

    /// The read-only tables of one size and width, built once per process on the control side.
    /// `@unchecked Sendable`: written only in `init`, read by any thread after.
    final class Tables: @unchecked Sendable {
        let reversed: UnsafeMutablePointer<Int32>      // bit reversal of 0..<L
        // Radix-4 stage twiddles, per stage and j < h: W^j, W^2j, W^3j (W = e^{−2πi/4h}) as
        // re, im pairs, broadcast to all lanes: 6 vectors per j. The inverse set is conjugated.
        let stageForward: UnsafeMutablePointer<SIMD4<Float>>
        let stageInverse: UnsafeMutablePointer<SIMD4<Float>>
        // Lane twiddles W_m^{b·k1}, lane b, for k1 < L (re, im), and the conjugates' im for the inverse.
        let laneRe: UnsafeMutablePointer<SIMD4<Float>>
        let laneIm: UnsafeMutablePointer<SIMD4<Float>>
        let laneImInverse: UnsafeMutablePointer<SIMD4<Float>>
        let splitRe: UnsafeMutablePointer<Float>       // e^{−2πik/n}, k ≤ m
        let splitIm: UnsafeMutablePointer<Float>

        private static let cache = ControlLock<[Int: Tables]>([:])

        /// The tables for `size` points and stage width `wideVectors`, built on first use.
        static func shared(size: Int, wideVectors: Bool) -> Tables {
            cache.withLock { c in
                let key = 2 * size + (wideVectors ? 1 : 0)
                if let t = c[key] { return t }
                let t = Tables(size: size, wideVectors: wideVectors)
                c[key] = t
                return t
            }
        }

        private init(size: Int, wideVectors: Bool) {
            let half = size / 2
            let columns = half >= 16 ? half / 4 : 0
            let l = max(columns, 1)
            reversed = .allocate(capacity: l)
            let bits = l.trailingZeroBitCount
            for a in 0..<l {
                var r = 0, v = a
                for _ in 0..<bits { r = (r << 1) | (v & 1); v >>= 1 }
                reversed[a] = Int32(r)
            }
            stageForward = .allocate(capacity: 6 * l)
            stageInverse = .allocate(capacity: 6 * l)
            var h = bits % 2 == 1 ? 2 : 1, o = 0
            while h < l {
                // the six of j: cos and sin of the angles for q = 1, 2, 3. For the wide stages
                // (h ≥ 2, even), j and j + 1 interleave theirs, so that each is one eight-lane load.
                let paired = wideVectors && h >= 2
                for j in 0..<h {
                    for t in 0..<6 {
                        let angle = -2 * Double.pi * Double((t / 2 + 1) * j) / Double(4 * h)
                        let v = Float(t % 2 == 0 ? cos(angle) : sin(angle))
                        let slot = paired ? o + 6 * (j & ~1) + 2 * t + (j & 1) : o + 6 * j + t
                        stageForward[slot] = SIMD4(repeating: v)
                        stageInverse[slot] = SIMD4(repeating: t % 2 == 0 ? v : -v)
                    }
                }
                o += 6 * h
                h *= 4
            }
            laneRe = .allocate(capacity: l)
            laneIm = .allocate(capacity: l)
            laneImInverse = .allocate(capacity: l)
            for k1 in 0..<l {
                var re = SIMD4<Float>(), im = SIMD4<Float>()
                for b in 0..<4 {
                    let angle = -2 * Double.pi * Double(b * k1) / Double(max(half, 1))
                    re[b] = Float(cos(angle)); im[b] = Float(sin(angle))
                }
                laneRe[k1] = re; laneIm[k1] = im; laneImInverse[k1] = -im
            }
            splitRe = .allocate(capacity: half + 1)
            splitIm = .allocate(capacity: half + 1)
            for k in 0...half {
                let angle = -2 * Double.pi * Double(k) / Double(size)
                splitRe[k] = Float(cos(angle)); splitIm[k] = Float(sin(angle))
            }
        }
        // (never freed: one per size and width for the life of the process)
    }

    /// Allocates the buffers for `size` points and takes the shared tables (control side).
    public convenience init(size: Int) {
        self.init(size: size, wideVectors: RealFFT.defaultWideVectors)
    }

    /// The same, with the radix-4 stages' vector width chosen (tests run both); with
    /// `sharedWork`, no work buffers of its own: `bindScratch` must give it some before it runs.
    init(size: Int, wideVectors: Bool, sharedWork: Bool = false) {
        precondition(size >= 4 && size & (size - 1) == 0, "FFT size must be a power of two ≥ 4")
        self.size = size
        self.wideVectors = wideVectors
        half = size / 2
        columns = half >= 16 ? half / 4 : 0
        let l = max(columns, 1)
        tables = Tables.shared(size: size, wideVectors: wideVectors)
        reversed = tables.reversed
        stageForward = tables.stageForward; stageInverse = tables.stageInverse
        laneRe = tables.laneRe; laneIm = tables.laneIm; laneImInverse = tables.laneImInverse
        splitRe = tables.splitRe; splitIm = tables.splitIm
        var measure = ScratchCarver(nil)
        (zr, zi, vr, vi) = Self.workBuffers(&measure, half: half, columns: l)
        ownedWork = sharedWork ? nil : .allocate(byteCount: measure.byteCount, alignment: 64)
        if let ownedWork {
            var own = ScratchCarver(ownedWork)
            (zr, zi, vr, vi) = Self.workBuffers(&own, half: half, columns: l)
        }
    }

    deinit { ownedWork?.deallocate() }

    private static func workBuffers(_ c: inout ScratchCarver, half: Int, columns l: Int)
        -> (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>, UnsafeMutablePointer<SIMD4<Float>>, UnsafeMutablePointer<SIMD4<Float>>) {
        (c.take(Float.self, half), c.take(Float.self, half), c.take(SIMD4<Float>.self, l), c.take(SIMD4<Float>.self, l))
    }

    /// Takes the work buffers from `carver` (a transform made with `sharedWork`; render side:
    /// no allocation). Measured the same way with a counting carver.
    func bindScratch(_ carver: inout ScratchCarver) {
        (zr, zi, vr, vi) = Self.workBuffers(&carver, half: half, columns: max(columns, 1))
    }

    /// `input` holds `size` real samples; `re`/`im` receive `size/2 + 1` bins.
    public func forward(_ input: UnsafePointer<Float>, re: UnsafeMutablePointer<Float>,
                        im: UnsafeMutablePointer<Float>) {
        forward(input, window: nil, re: re, im: im)
    }

    /// The transform of `input[t]·window[t]` (the window applied as the samples are read).
    @_noLocks
    public func forward(_ input: UnsafePointer<Float>, window: UnsafePointer<Float>?,
                        re: UnsafeMutablePointer<Float>, im: UnsafeMutablePointer<Float>) {
        let m = half
        if columns == 0 {
            for t in 0..<m {
                zr[t] = input[2 * t] * (window?[2 * t] ?? 1)
                zi[t] = input[2 * t + 1] * (window?[2 * t + 1] ?? 1)
            }
            smallTransform(sign: -1)
        } else {
            // z[4a…4a+3] = x[8a…8a+7] deinterleaved, into bit-reversed vector order
            if let window {
                laneTransforms(stageForward, inverse: false, WindowedRealLoader(samples: input, window: window))
            } else {
                laneTransforms(stageForward, inverse: false, RealLoader(samples: input))
            }
            combineLanesChoosing(inverse: false, interleavedOutput: nil, scale: 1, window: nil, accumulate: false)
        }
        // X[k] = E + W^k·O, and from the same values X[m−k] = conj(E − W^k·O) (E and O at m − k
        // are the conjugates of those at k, and W^{m−k} = −conj W^k); k = 0 and m from Z[0] alone
        re[0] = zr[0] + zi[0]; im[0] = 0
        re[m] = zr[0] - zi[0]; im[m] = 0
        let zin = (UnsafeRawPointer(zr), UnsafeRawPointer(zi)), xout = (UnsafeMutableRawPointer(re), UnsafeMutableRawPointer(im))
        var k = wideVectors ? split(SIMD8<Float>.self, ForwardSplit.self, from: 1, zin.0, zin.1, xout.0, xout.1) : 1
        k = split(SIMD4<Float>.self, ForwardSplit.self, from: k, zin.0, zin.1, xout.0, xout.1)
        while k <= m - k {
            let ar = zr[k], ai = zi[k], br = zr[m - k], bi = -zi[m - k]
            let er = 0.5 * (ar + br), ei = 0.5 * (ai + bi)
            let or = 0.5 * (ai - bi), oi = 0.5 * (br - ar)
            let wr = splitRe[k], wi = splitIm[k]
            let tr = wr * or - wi * oi, ti = wr * oi + wi * or
            re[m - k] = er - tr; im[m - k] = ti - ei
            re[k] = er + tr; im[k] = ei + ti
            k += 1
        }
    }

    /// A split (`Step`: the forward's or the inverse's) for k from `k0`, a vector of V's lanes
    /// at a time, and their mirrors m − k: reads bins k and m − k of `inRe`/`inIm` and the
    /// twiddles W^k, writes bins k and m − k of `outRe`/`outIm`; returns the first k not done.
    /// (Eight lanes on wide builds, then four: the same arithmetic on every bin either way.)
    @inline(__always)
    private func split<V: SplitLanes, Step: SplitStep>(_: V.Type, _: Step.Type, from k0: Int,
                                                       _ inRe: UnsafeRawPointer, _ inIm: UnsafeRawPointer,
                                                       _ outRe: UnsafeMutableRawPointer,
                                                       _ outIm: UnsafeMutableRawPointer) -> Int {
        let m = half, n = V.scalarCount
        let sr = UnsafeRawPointer(splitRe), si = UnsafeRawPointer(splitIm)
        var k = k0
        while k + n <= m / 2 {
            let mk = 4 &* (m &- k &- (n - 1))   // the mirrors' first byte
            let (xr, xi, yr, yi) = Step.apply(
                inRe.loadUnaligned(fromByteOffset: 4 &* k, as: V.self), inIm.loadUnaligned(fromByteOffset: 4 &* k, as: V.self),
                inRe.loadUnaligned(fromByteOffset: mk, as: V.self).reversedLanes,
                -inIm.loadUnaligned(fromByteOffset: mk, as: V.self).reversedLanes,
                sr.loadUnaligned(fromByteOffset: 4 &* k, as: V.self), si.loadUnaligned(fromByteOffset: 4 &* k, as: V.self))
            outRe.storeBytes(of: xr, toByteOffset: 4 &* k, as: V.self)
            outIm.storeBytes(of: xi, toByteOffset: 4 &* k, as: V.self)
            outRe.storeBytes(of: yr.reversedLanes, toByteOffset: mk, as: V.self)
            outIm.storeBytes(of: yi.reversedLanes, toByteOffset: mk, as: V.self)
            k &+= n
        }
        return k
    }

    /// `re`/`im` hold `size/2 + 1` bins; `output` receives `size` real samples, scaled by 1/size.
    public func inverse(re: UnsafePointer<Float>, im: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>) {
        inverse(re: re, im: im, window: nil, addingTo: output, accumulate: false)
    }

    /// Overlap-add synthesis in one pass: `output[t] += x[t]·window[t]`, x the inverse transform.
    @_noLocks
    public func inverse(re: UnsafePointer<Float>, im: UnsafePointer<Float>, window: UnsafePointer<Float>,
                        addingTo output: UnsafeMutablePointer<Float>) {
        inverse(re: re, im: im, window: window, addingTo: output, accumulate: true)
    }

    private func inverse(re: UnsafePointer<Float>, im: UnsafePointer<Float>, window: UnsafePointer<Float>?,
                         addingTo output: UnsafeMutablePointer<Float>, accumulate: Bool) {
        let m = half
        // Z[k] = E + i·O, O = (X[k] − conj X[m−k])/2 · conj W^k; k = 0 from X[0] and X[m]
        do {
            let er = 0.5 * (re[0] + re[m]), dr = 0.5 * (re[0] - re[m])
            zr[0] = er; zi[0] = dr
        }
        // and from the same values Z[m−k] = conj E + i·conj O
        let xin = (UnsafeRawPointer(re), UnsafeRawPointer(im)), zout = (UnsafeMutableRawPointer(zr), UnsafeMutableRawPointer(zi))
        var k = wideVectors ? split(SIMD8<Float>.self, InverseSplit.self, from: 1, xin.0, xin.1, zout.0, zout.1) : 1
        k = split(SIMD4<Float>.self, InverseSplit.self, from: k, xin.0, xin.1, zout.0, zout.1)
        while k <= m - k {
            let ar = re[k], ai = im[k], br = re[m - k], bi = -im[m - k]
            let er = 0.5 * (ar + br), ei = 0.5 * (ai + bi)
            let dr = 0.5 * (ar - br), di = 0.5 * (ai - bi)
            let wr = splitRe[k], wi = -splitIm[k]
            let or = dr * wr - di * wi, oi = dr * wi + di * wr
            zr[m - k] = er + oi; zi[m - k] = or - ei
            zr[k] = er - oi; zi[k] = ei + or
            k += 1
        }
        let scale = 1 / Float(m)   // z = (1/m)·IDFT_m(Z) gives x exactly
        if columns == 0 {
            smallTransform(sign: 1)
            for t in 0..<m {
                let a = zr[t] * scale * (window?[2 * t] ?? 1), b = zi[t] * scale * (window?[2 * t + 1] ?? 1)
                if accumulate { output[2 * t] += a; output[2 * t + 1] += b } else { output[2 * t] = a; output[2 * t + 1] = b }
            }
        } else {
            laneTransforms(stageInverse, inverse: true, SplitLoader(re: zr, im: zi))
            if let window, accumulate {
                combineLanesOverlapAdding(output, scale: scale, window: window)
            } else {
                combineLanesChoosing(inverse: true, interleavedOutput: output, scale: scale, window: window, accumulate: accumulate)
            }
        }
    }

    /// The four L-point transforms Y_b of the vectors `loader.load(a)`, a < L, into `vr`/`vi`
    /// (natural order). The first stage (radix 2 when log2 L is odd, else a twiddle-free radix 4)
    /// reads its inputs straight from the loader in bit-reversed order; the later radix-4 stages
    /// run in place. A radix-2 first stage runs together with the radix-4 stage after it where
    /// that is not the last, eight positions at a time in registers (`fusedFirstStages`). (A
    /// generic loader, not a closure: the closure was compiled as a function called for every
    /// vector.)
    @inline(__always)
    private func laneTransforms<Loader: LaneLoader>(_ twiddles: UnsafeMutablePointer<SIMD4<Float>>, inverse: Bool,
                                                    _ loader: Loader) {
        @inline(__always) func load(_ a: Int) -> (SIMD4<Float>, SIMD4<Float>) { loader.load(a) }
        let l = columns
        var h: Int
        if l.trailingZeroBitCount % 2 == 1 && l >= 32 {
            fusedFirstStages(twiddles, inverse: inverse, loader)
            radix4Stages(from: 8, twiddles: twiddles + 12, inverse: inverse)
            return
        }
        if l.trailingZeroBitCount % 2 == 1 {
            // position 2c holds input rev(2c) = rev'(c), position 2c + 1 input rev'(c) + L/2
            let half = l / 2
            for c in 0..<half {
                let e = 2 &* c, s = Int(reversed[e])
                let (ar, ai) = load(s), (br, bi) = load(s &+ half)
                vr[e] = ar + br; vi[e] = ai + bi
                vr[e &+ 1] = ar - br; vi[e &+ 1] = ai - bi
            }
            h = 2
        } else {
            // positions 4c…4c+3 hold inputs s, s + L/2, s + L/4, s + 3L/4 (s = rev(4c)): the
            // sub-sequences ≡ 0, 2, 1, 3; their 4-point transform needs no twiddles
            let q = l / 4
            for c in 0..<q {
                let s = Int(reversed[4 &* c])
                let (a0r, a0i) = load(s), (b1r, b1i) = load(s &+ q)
                let (b2r, b2i) = load(s &+ 2 &* q), (b3r, b3i) = load(s &+ 3 &* q)
                let s02r = a0r + b2r, s02i = a0i + b2i, d02r = a0r - b2r, d02i = a0i - b2i
                let s13r = b1r + b3r, s13i = b1i + b3i, d13r = b1r - b3r, d13i = b1i - b3i
                let g = 4 &* c
                vr[g] = s02r + s13r; vi[g] = s02i + s13i
                vr[g &+ 2] = s02r - s13r; vi[g &+ 2] = s02i - s13i
                if inverse {
                    vr[g &+ 1] = d02r - d13i; vi[g &+ 1] = d02i + d13r
                    vr[g &+ 3] = d02r + d13i; vi[g &+ 3] = d02i - d13r
                } else {
                    vr[g &+ 1] = d02r + d13i; vi[g &+ 1] = d02i - d13r
                    vr[g &+ 3] = d02r - d13i; vi[g &+ 3] = d02i + d13r
                }
            }
            h = 4
        }
        radix4Stages(from: h, twiddles: twiddles + (h == 4 ? 6 : 0), inverse: inverse)
    }

    /// The radix-2 first stage and the h = 2 radix-4 stage, a group of eight positions g…g+7 at
    /// a time: the radix-2 butterfly of positions 2c, 2c + 1 (inputs rev(2c) and rev(2c) + L/2)
    /// is one (sum | difference) pair, and the h = 2 butterflies j = 0, 1 of the group take the
    /// pairs at g, g + 2, g + 4, g + 6, as `wideStage` takes them, with the stage's six twiddles
    /// for j = 0 | j = 1 (the same for every group). The same arithmetic on every value as the
    /// two stages one after the other (eight lanes are two SSE registers in the baseline copy),
    /// without storing and loading the positions in between.
    @inline(__always)
    private func fusedFirstStages<Loader: LaneLoader>(_ twiddles: UnsafeMutablePointer<SIMD4<Float>>, inverse: Bool,
                                                      _ loader: Loader) {
        let l = columns, half = l / 2
        let pr = UnsafeMutableRawPointer(vr), pi = UnsafeMutableRawPointer(vi)
        // twiddle t of j = 0 | j = 1: interleaved in the wide tables, six apart in the narrow ones
        let t = UnsafeMutableRawPointer(twiddles)
        @inline(__always) func w(_ k: Int) -> SIMD8<Float> {
            wideVectors ? loadPair(t, 2 &* k) : SIMD8(lowHalf: twiddles[k], highHalf: twiddles[6 &+ k])
        }
        let w0 = w(0), w1 = w(1), w2 = w(2), w3 = w(3), w4 = w(4), w5 = w(5)
        var g = 0
        while g < l {
            let (p0r, p0i) = loader.radix2(Int(reversed[g]), half)
            let (p1r, p1i) = loader.radix2(Int(reversed[g &+ 2]), half)
            let (p2r, p2i) = loader.radix2(Int(reversed[g &+ 4]), half)
            let (p3r, p3i) = loader.radix2(Int(reversed[g &+ 6]), half)
            let x = radix4(p0r, p0i, p2r, p2i, p1r, p1i, p3r, p3i, w0, w1, w2, w3, w4, w5, inverse: inverse)
            storePair(x.0, pr, g); storePair(x.1, pi, g); storePair(x.2, pr, g &+ 2); storePair(x.3, pi, g &+ 2)
            storePair(x.4, pr, g &+ 4); storePair(x.5, pi, g &+ 4); storePair(x.6, pr, g &+ 6); storePair(x.7, pi, g &+ 6)
            g &+= 8
        }
    }

    /// The radix-4 stages from block size `h` on, in place in `vr`/`vi` (`twiddles` at the
    /// first of them; the table starts at the h = 1 stage when log2 L is even). Blocks 0, 1, 2,
    /// 3 of each group of 4h hold the transforms of the sub-sequences ≡ 0, 2, 1, 3 (mod 4)
    /// (bit-reversed order): A0, A2, A1, A3.
    @inline(never)
    private func radix4Stages(from first: Int, twiddles: UnsafeMutablePointer<SIMD4<Float>>, inverse: Bool) {
        var h = first
        var tw = twiddles
        var twiddled = false
        while h < columns {
            // the last stage also applies the lane twiddles W_m^{b·k1} of the combining step,
            // while the values are in registers (one vector at a time)
            let last = 4 * h == columns
            if wideVectors && h >= 2 {
                if last { wideLastStage(h, tw, inverse: inverse) } else { wideStage(h, tw, inverse: inverse) }
            } else {
                narrowStage(h, tw, inverse: inverse, last: last)
            }
            twiddled = twiddled || last
            tw += 6 * h
            h *= 4
        }
        if !twiddled { applyLaneTwiddles(inverse: inverse) }
    }

    /// Multiplies lane b of vector k1 by W_m^{b·k1} (when no radix-4 stage ran to do it).
    private func applyLaneTwiddles(inverse: Bool) {
        let wim = inverse ? laneImInverse : laneIm
        for k in 0..<columns { (vr[k], vi[k]) = turned(vr[k], vi[k], laneRe[k], wim[k]) }
    }

    /// One radix-4 stage of block size h, a butterfly per vector j < h of each group; the last
    /// stage turns the results by the lane twiddles.
    @inline(never)
    private func narrowStage(_ h: Int, _ tw: UnsafeMutablePointer<SIMD4<Float>>, inverse: Bool, last: Bool) {
        let wim = inverse ? laneImInverse : laneIm
        var g = 0
        while g < columns {
            for j in 0..<h {
                let i0 = g &+ j, i1 = i0 &+ h, i2 = i1 &+ h, i3 = i2 &+ h
                let w = tw + 6 &* j
                var x = radix4(vr[i0], vi[i0], vr[i2], vi[i2], vr[i1], vi[i1], vr[i3], vi[i3],
                               w[0], w[1], w[2], w[3], w[4], w[5], inverse: inverse)
                if last {
                    (x.0, x.1) = turned(x.0, x.1, laneRe[i0], wim[i0]); (x.2, x.3) = turned(x.2, x.3, laneRe[i1], wim[i1])
                    (x.4, x.5) = turned(x.4, x.5, laneRe[i2], wim[i2]); (x.6, x.7) = turned(x.6, x.7, laneRe[i3], wim[i3])
                }
                vr[i0] = x.0; vi[i0] = x.1; vr[i1] = x.2; vi[i1] = x.3
                vr[i2] = x.4; vi[i2] = x.5; vr[i3] = x.6; vi[i3] = x.7
            }
            g += 4 * h
        }
    }

    /// The same stage, two butterflies (j, j + 1: their vectors lie side by side) as one.
    @inline(never)
    private func wideStage(_ h: Int, _ tw: UnsafeMutablePointer<SIMD4<Float>>, inverse: Bool) {
        let pr = UnsafeMutableRawPointer(vr), pi = UnsafeMutableRawPointer(vi)
        var g = 0
        while g < columns {
            var j = 0
            while j < h {
                let i0 = g &+ j, i1 = i0 &+ h, i2 = i1 &+ h, i3 = i2 &+ h
                let x = pairButterfly(pr, pi, i0, h, tw + 6 &* j, inverse: inverse)
                storePair(x.0, pr, i0); storePair(x.1, pi, i0); storePair(x.2, pr, i1); storePair(x.3, pi, i1)
                storePair(x.4, pr, i2); storePair(x.5, pi, i2); storePair(x.6, pr, i3); storePair(x.7, pi, i3)
                j &+= 2
            }
            g += 4 * h
        }
    }

    /// The last stage (one group, 4h = L), two butterflies at a time, its results turned by the
    /// lane twiddles. (A function of its own: with the turn behind a flag in `wideStage`, the
    /// compiler broke the eight-lane code into lanes.)
    @inline(never)
    private func wideLastStage(_ h: Int, _ tw: UnsafeMutablePointer<SIMD4<Float>>, inverse: Bool) {
        let pr = UnsafeMutableRawPointer(vr), pi = UnsafeMutableRawPointer(vi)
        let lr = UnsafeMutableRawPointer(laneRe), li = UnsafeMutableRawPointer(inverse ? laneImInverse : laneIm)
        @inline(__always) func store(_ r: SIMD8<Float>, _ i: SIMD8<Float>, _ k: Int) {
            let (tr, ti) = turned(r, i, loadPair(lr, k), loadPair(li, k))
            storePair(tr, pr, k)
            storePair(ti, pi, k)
        }
        var j = 0
        while j < h {
            let x = pairButterfly(pr, pi, j, h, tw + 6 &* j, inverse: inverse)
            store(x.0, x.1, j); store(x.2, x.3, j &+ h); store(x.4, x.5, j &+ 2 &* h); store(x.6, x.7, j &+ 3 &* h)
            j &+= 2
        }
    }

    /// The butterflies at i0 and i0 + 1 (vectors i0, i0 + h, i0 + 2h, i0 + 3h and their
    /// neighbours) with the pair's interleaved twiddles at `w`.
    @inline(__always)
    private func pairButterfly(_ pr: UnsafeMutableRawPointer, _ pi: UnsafeMutableRawPointer, _ i0: Int, _ h: Int,
                               _ w: UnsafeMutablePointer<SIMD4<Float>>, inverse: Bool)
        -> (SIMD8<Float>, SIMD8<Float>, SIMD8<Float>, SIMD8<Float>, SIMD8<Float>, SIMD8<Float>, SIMD8<Float>, SIMD8<Float>) {
        let i1 = i0 &+ h, i2 = i1 &+ h, i3 = i2 &+ h
        let t = UnsafeMutableRawPointer(w)
        return radix4(loadPair(pr, i0), loadPair(pi, i0), loadPair(pr, i2), loadPair(pi, i2),
                      loadPair(pr, i1), loadPair(pi, i1), loadPair(pr, i3), loadPair(pi, i3),
                      loadPair(t, 0), loadPair(t, 2), loadPair(t, 4), loadPair(t, 6), loadPair(t, 8), loadPair(t, 10),
                      inverse: inverse)
    }

    /// The inverse's combine as the vocoder's synthesis runs it (windowed, added to `output`):
    /// the same code with the choices made, so none is tested in the loop.
    @inline(never)
    private func combineLanesOverlapAdding(_ output: UnsafeMutablePointer<Float>, scale: Float, window: UnsafePointer<Float>) {
        combineLanes(inverse: true, interleavedOutput: output, scale: scale, window: window, accumulate: true)
    }

    /// The combine with its choices tested as it runs: the forward's (its constants given to the
    /// loop, the compiler took the (re | im) vectors apart into scalar adds: 1.9× the
    /// instructions) and the plain inverse's.
    @inline(never)
    private func combineLanesChoosing(inverse: Bool, interleavedOutput: UnsafeMutablePointer<Float>?, scale: Float,
                                      window: UnsafePointer<Float>?, accumulate: Bool) {
        combineLanes(inverse: inverse, interleavedOutput: interleavedOutput, scale: scale, window: window, accumulate: accumulate)
    }

    /// Z[k1 + L·k2] = Σ_b W_4^{b·k2}·W_m^{b·k1}·Y_b[k1], four k1 at a time: into `zr`/`zi`, or
    /// (inverse) straight into `interleavedOutput` as scaled real samples.
    @inline(__always)
    private func combineLanes(inverse: Bool, interleavedOutput: UnsafeMutablePointer<Float>?, scale: Float,
                              window: UnsafePointer<Float>?, accumulate: Bool) {
        let l = columns
        let zrr = UnsafeMutableRawPointer(zr), zri = UnsafeMutableRawPointer(zi)
        var k1 = 0
        // the real and imaginary parts side by side in one eight-lane vector (r | i): the
        // butterflies on whole vectors, ∓i·d13 a swap of the halves with a sign per half (exact:
        // x + (−1·y) is x − y), and the interleaved output one permutation of a vector
        let sign = inverse ? SIMD8<Float>(-1, -1, -1, -1, 1, 1, 1, 1) : SIMD8<Float>(1, 1, 1, 1, -1, -1, -1, -1)
        let s = SIMD8<Float>(repeating: scale)
        while k1 < l {
            // (the lane twiddles were applied by the last radix-4 stage)
            let (t0r, t1r, t2r, t3r) = transposed(UnsafeRawPointer(vr + k1).loadUnaligned(as: SIMD16<Float>.self))
            let (t0i, t1i, t2i, t3i) = transposed(UnsafeRawPointer(vi + k1).loadUnaligned(as: SIMD16<Float>.self))
            let t0 = SIMD8(lowHalf: t0r, highHalf: t0i), t1 = SIMD8(lowHalf: t1r, highHalf: t1i)
            let t2 = SIMD8(lowHalf: t2r, highHalf: t2i), t3 = SIMD8(lowHalf: t3r, highHalf: t3i)
            let s02 = t0 + t2, d02 = t0 - t2, s13 = t1 + t3, d13 = t1 - t3
            let turned = SIMD8(lowHalf: d13.highHalf, highHalf: d13.lowHalf) * sign
            var y0 = s02 + s13, y2 = s02 - s13, y1 = d02 + turned, y3 = d02 - turned
            if let out = interleavedOutput {
                y0 *= s; y1 *= s; y2 *= s; y3 *= s
                let o = UnsafeMutableRawPointer(out)
                @inline(__always) func put(_ y: SIMD8<Float>, _ offset: Int) {
                    var v = SIMD8(y[0], y[4], y[1], y[5], y[2], y[6], y[3], y[7])
                    if let window { v *= UnsafeRawPointer(window).loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self) }
                    if accumulate { v += o.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self) }
                    o.storeBytes(of: v, toByteOffset: offset, as: SIMD8<Float>.self)
                }
                put(y0, 8 &* k1)
                put(y1, 8 &* (k1 &+ l))
                put(y2, 8 &* (k1 &+ 2 &* l))
                put(y3, 8 &* (k1 &+ 3 &* l))
            } else {
                zrr.storeBytes(of: y0.lowHalf, toByteOffset: 4 &* k1, as: SIMD4<Float>.self)
                zri.storeBytes(of: y0.highHalf, toByteOffset: 4 &* k1, as: SIMD4<Float>.self)
                zrr.storeBytes(of: y1.lowHalf, toByteOffset: 4 &* (k1 &+ l), as: SIMD4<Float>.self)
                zri.storeBytes(of: y1.highHalf, toByteOffset: 4 &* (k1 &+ l), as: SIMD4<Float>.self)
                zrr.storeBytes(of: y2.lowHalf, toByteOffset: 4 &* (k1 &+ 2 &* l), as: SIMD4<Float>.self)
                zri.storeBytes(of: y2.highHalf, toByteOffset: 4 &* (k1 &+ 2 &* l), as: SIMD4<Float>.self)
                zrr.storeBytes(of: y3.lowHalf, toByteOffset: 4 &* (k1 &+ 3 &* l), as: SIMD4<Float>.self)
                zri.storeBytes(of: y3.highHalf, toByteOffset: 4 &* (k1 &+ 3 &* l), as: SIMD4<Float>.self)
            }
            k1 &+= 4
        }
    }

    /// Transforms of fewer than 16 complex points (sizes below 32), directly from the definition.
    private func smallTransform(sign: Float) {
        let m = half
        var outR = SIMD16<Float>(), outI = SIMD16<Float>()
        for k in 0..<m {
            var sr: Float = 0, si: Float = 0
            for t in 0..<m {
                // W_m^{kt} = e^{∓2πi·kt/m} = splitRe/Im at index 2·(kt mod m) (W_n², n = 2m)
                let j = 2 * ((k * t) % m)
                let wr = j <= m ? splitRe[j] : splitRe[2 * m - j]
                var wi = j <= m ? splitIm[j] : -splitIm[2 * m - j]
                if sign > 0 { wi = -wi }
                sr += zr[t] * wr - zi[t] * wi
                si += zr[t] * wi + zi[t] * wr
            }
            outR[k] = sr; outI[k] = si
        }
        for k in 0..<m { zr[k] = outR[k]; zi[k] = outI[k] }
    }
}

/// Where `RealFFT.laneTransforms` reads vector a (z[4a…4a+3], real and imaginary parts).
private protocol LaneLoader {
    func load(_ a: Int) -> (SIMD4<Float>, SIMD4<Float>)
}

extension LaneLoader {
    /// The radix-2 butterfly of vectors s and s + d: (a + b | a − b), real parts and imaginary.
    @inline(__always) func radix2(_ s: Int, _ d: Int) -> (SIMD8<Float>, SIMD8<Float>) {
        let (ar, ai) = load(s), (br, bi) = load(s &+ d)
        return (SIMD8(lowHalf: ar + br, highHalf: ar - br), SIMD8(lowHalf: ai + bi, highHalf: ai - bi))
    }
}

/// The even and the odd floats of the eight at byte `offset` of `p`: each pair read as one
/// 64-bit lane, its low and high halves (little-endian: the low half is the first). Taken as
/// `evenHalf`/`oddHalf` of eight floats times the window's, the AVX2 copy read the samples in
/// overlapping pieces and put lanes in one at a time; this way each half is two loads and a
/// shuffle (the forward transform 13 % fewer instructions, the baseline copy unchanged).
@inline(__always)
private func evenAndOdd(_ p: UnsafeRawPointer, _ offset: Int) -> (SIMD4<Float>, SIMD4<Float>) {
    let pairs = p.loadUnaligned(fromByteOffset: offset, as: SIMD4<UInt64>.self)
    return (unsafeBitCast(SIMD4<UInt32>(truncatingIfNeeded: pairs), to: SIMD4<Float>.self),
            unsafeBitCast(SIMD4<UInt32>(truncatingIfNeeded: pairs &>> 32), to: SIMD4<Float>.self))
}

/// Real samples x[8a…8a+7] deinterleaved: z = x[2t] + i·x[2t+1].
private struct RealLoader: LaneLoader {
    let samples: UnsafePointer<Float>
    @inline(__always) func load(_ a: Int) -> (SIMD4<Float>, SIMD4<Float>) {
        evenAndOdd(UnsafeRawPointer(samples), 32 &* a)
    }
}

/// The same, times the window as they are read.
private struct WindowedRealLoader: LaneLoader {
    let samples: UnsafePointer<Float>, window: UnsafePointer<Float>
    @inline(__always) func load(_ a: Int) -> (SIMD4<Float>, SIMD4<Float>) {
        let (xe, xo) = evenAndOdd(UnsafeRawPointer(samples), 32 &* a)
        let (we, wo) = evenAndOdd(UnsafeRawPointer(window), 32 &* a)
        return (xe * we, xo * wo)
    }
}

/// Complex values in split form.
private struct SplitLoader: LaneLoader {
    let re: UnsafePointer<Float>, im: UnsafePointer<Float>
    @inline(__always) func load(_ a: Int) -> (SIMD4<Float>, SIMD4<Float>) {
        (UnsafeRawPointer(re).loadUnaligned(fromByteOffset: 16 &* a, as: SIMD4<Float>.self),
         UnsafeRawPointer(im).loadUnaligned(fromByteOffset: 16 &* a, as: SIMD4<Float>.self))
    }
}

/// Vectors i and i + 1 of `SIMD4`s at `p`, as one `SIMD8`.
@inline(__always)
private func loadPair(_ p: UnsafeMutableRawPointer, _ i: Int) -> SIMD8<Float> {
    p.loadUnaligned(fromByteOffset: 16 &* i, as: SIMD8<Float>.self)
}

/// `v` into vectors i and i + 1 of `SIMD4`s at `p`.
@inline(__always)
private func storePair(_ v: SIMD8<Float>, _ p: UnsafeMutableRawPointer, _ i: Int) {
    p.storeBytes(of: v, toByteOffset: 16 &* i, as: SIMD8<Float>.self)
}

/// (r + i·x)·(c + i·s) lane by lane: a value turned by a twiddle (the stages' and the lanes').
@inline(__always)
private func turned<V: SIMD>(_ r: V, _ x: V, _ c: V, _ s: V) -> (V, V) where V.Scalar == Float {
    (r * c - x * s, r * s + x * c)
}

/// The radix-4 butterfly of `RealFFT`'s stages on four inputs (a0, then b1, b2, b3 turned by the
/// twiddles w0 + i·w1, w2 + i·w3, w4 + i·w5), lane by lane, for one vector of lanes (`SIMD4`) or
/// two (`SIMD8`): X0 = s02 + s13, X2 = s02 − s13, X1/X3 = d02 ∓ i·d13 (± inverse), returned as
/// (X0, X1, X2, X3), re and im each.
@inline(__always)
private func radix4<V: SIMD>(_ a0r: V, _ a0i: V, _ c1r: V, _ c1i: V, _ c2r: V, _ c2i: V, _ c3r: V, _ c3i: V,
                             _ w0: V, _ w1: V, _ w2: V, _ w3: V, _ w4: V, _ w5: V,
                             inverse: Bool) -> (V, V, V, V, V, V, V, V) where V.Scalar == Float {
    let (b1r, b1i) = turned(c1r, c1i, w0, w1)
    let (b2r, b2i) = turned(c2r, c2i, w2, w3)
    let (b3r, b3i) = turned(c3r, c3i, w4, w5)
    let s02r = a0r + b2r, s02i = a0i + b2i, d02r = a0r - b2r, d02i = a0i - b2i
    let s13r = b1r + b3r, s13i = b1i + b3i, d13r = b1r - b3r, d13i = b1i - b3i
    if inverse {   // X1 = d02 + i·d13, X3 = d02 − i·d13
        return (s02r + s13r, s02i + s13i, d02r - d13i, d02i + d13r,
                s02r - s13r, s02i - s13i, d02r + d13i, d02i - d13r)
    } else {       // X1 = d02 − i·d13, X3 = d02 + i·d13
        return (s02r + s13r, s02i + s13i, d02r + d13i, d02i - d13r,
                s02r - s13r, s02i - s13i, d02r - d13i, d02i + d13r)
    }
}

/// One step of a real split on bins k (a) and the conjugated mirrors m − k (b), with the twiddles
/// W^k (w): returns the new bins k (x) and, lanes to be reversed, m − k (y).
private protocol SplitStep {
    static func apply<V: SplitLanes>(_ ar: V, _ ai: V, _ br: V, _ bi: V, _ wr: V, _ wi: V) -> (V, V, V, V)
}

/// Forward: X[k] = E + W^k·O and X[m−k] = conj(E − W^k·O), E = (Z[k] + conj Z[m−k])/2,
/// O = (Z[k] − conj Z[m−k])/2i.
private enum ForwardSplit: SplitStep {
    @inline(__always)
    static func apply<V: SplitLanes>(_ ar: V, _ ai: V, _ br: V, _ bi: V, _ wr: V, _ wi: V) -> (V, V, V, V) {
        let half = V(repeating: 0.5)
        let er = half * (ar + br), ei = half * (ai + bi)
        let or = half * (ai - bi), oi = half * (br - ar)
        let tr = wr * or - wi * oi, ti = wr * oi + wi * or
        return (er + tr, ei + ti, er - tr, ti - ei)
    }
}

/// Inverse: Z[k] = E + i·O and Z[m−k] = conj E + i·conj O, E = (X[k] + conj X[m−k])/2,
/// O = (X[k] − conj X[m−k])/2 · conj W^k.
private enum InverseSplit: SplitStep {
    @inline(__always)
    static func apply<V: SplitLanes>(_ ar: V, _ ai: V, _ br: V, _ bi: V, _ wr: V, _ w: V) -> (V, V, V, V) {
        let half = V(repeating: 0.5), wi = -w
        let er = half * (ar + br), ei = half * (ai + bi)
        let dr = half * (ar - br), di = half * (ai - bi)
        let or = dr * wr - di * wi, oi = dr * wi + di * wr
        return (er - oi, ei + or, er + oi, or - ei)
    }
}

/// The vectors the real split runs on: four lanes, or eight on wide builds.
private protocol SplitLanes: SIMD where Scalar == Float {
    /// The lanes in reverse order.
    var reversedLanes: Self { get }
}

extension SIMD4<Float>: SplitLanes {
    @inline(__always) var reversedLanes: Self { SIMD4(self[3], self[2], self[1], self[0]) }
}

extension SIMD8<Float>: SplitLanes {
    @inline(__always) var reversedLanes: Self {
        SIMD8(self[7], self[6], self[5], self[4], self[3], self[2], self[1], self[0])
    }
}

/// The 4×4 transpose of four vectors held as one (a | b | c | d): result c holds lane c of
/// each. Two perfect unshuffles (each rotates the four bits of the index right by one). From
/// one 16-lane load the compiler makes fewer instructions than from four vectors gathered lane
/// by lane: 7 % fewer in the inverse transform's last pass (callgrind).
@inline(__always)
private func transposed(_ v: SIMD16<Float>) -> (SIMD4<Float>, SIMD4<Float>, SIMD4<Float>, SIMD4<Float>) {
    let u = SIMD16(lowHalf: v.evenHalf, highHalf: v.oddHalf)
    let w = SIMD16(lowHalf: u.evenHalf, highHalf: u.oddHalf)
    return (w.lowHalf.lowHalf, w.lowHalf.highHalf, w.highHalf.lowHalf, w.highHalf.highHalf)
}
