#if canImport(Glibc)
import Glibc
#endif

/// How hard a band-limited interpolator works.
public struct ResamplerQuality: Sendable, Equatable {
    /// Zero crossings of the sinc on each side of the centre (at the lower of the two rates).
    public var halfWidthZeroCrossings: Int
    /// Kaiser window β: stop-band attenuation A ≈ β/0.1102 + 8.7 dB.
    public var kaiserBeta: Double
    /// The −6 dB cutoff as a fraction of the lower rate's Nyquist frequency.
    public var cutoff: Double

    /// A filter design for `SincTable` and `Resampler`.
    public init(halfWidthZeroCrossings: Int, kaiserBeta: Double, cutoff: Double) {
        self.halfWidthZeroCrossings = halfWidthZeroCrossings
        self.kaiserBeta = kaiserBeta
        self.cutoff = cutoff
    }

    /// Sample-rate conversion: 128 taps at the lower rate, Kaiser β = 10.5 (≈ −100 dB stop band),
    /// transition ≈ 0.05·Fs (Kaiser: taps ≈ (A − 8)/(14.36·Δf)), cutoff 0.95·Nyquist, so the stop
    /// band starts at the lower Nyquist frequency and nothing above it folds back.
    public static let mastering = ResamplerQuality(halfWidthZeroCrossings: 64, kaiserBeta: 10.5, cutoff: 0.95)
    /// Inside the pitch shifter: 64 taps, β = 9 (≈ −90 dB), cutoff 0.92·Nyquist.
    public static let shifter = ResamplerQuality(halfWidthZeroCrossings: 32, kaiserBeta: 9, cutoff: 0.92)
}

/// A polyphase table of a Kaiser-windowed sinc, for interpolating a signal at any fractional
/// position. `scale` < 1 lowers the cutoff (and widens the kernel) for decimation:
///
///     h(d) = s·c·sinc(s·c·d) · I0(β·sqrt(1 − (d/W)²)) / I0(β),   |d| < W = taps/2
///
/// with s = scale, c = cutoff, sinc(x) = sin(πx)/(πx). Row p holds h at d = j − W + 1 − p/P for tap
/// j, followed by the difference to row p + 1, so a value between two rows is interpolated
/// linearly as h_p + t·Δh_p (P = 1024 keeps that error near −110 dB).
/// `@unchecked Sendable`: immutable after `init`, so every shifter shares it read-only.
public final class SincTable: @unchecked Sendable {
    /// Taps per phase (a multiple of 8).
    public let taps: Int
    /// Fractional positions tabulated between two samples.
    public let phases: Int
    private let rows: UnsafeMutablePointer<Float>

    /// The taps per phase a table of `scale` and `quality` has, without building it: the
    /// kernel's width 2·⌈zero crossings/scale⌉ (scale at most 1), rounded up to a multiple of 8.
    public static func taps(scale: Double, quality: ResamplerQuality) -> Int {
        let t = 2 * Int((Double(quality.halfWidthZeroCrossings) / min(1, scale)).rounded(.up))
        return (t + 7) / 8 * 8
    }

    /// Builds the table (control side): `scale` < 1 lowers the cutoff for decimation by 1/scale.
    public init(scale: Double, quality: ResamplerQuality, phases: Int = 1024) {
        let s = min(1, scale)
        let t = SincTable.taps(scale: scale, quality: quality)
        taps = t
        self.phases = phases
        rows = .allocate(capacity: 2 * phases * t)
        var h = [Float](repeating: 0, count: (phases + 1) * t)
        let w = Double(t / 2)
        let beta = quality.kaiserBeta
        let i0beta = SincTable.besselI0(beta)
        let sc = s * quality.cutoff
        // h is even, and tap t − 1 − j of row P − p sits at −d of tap j of row p. With P a power
        // of two every d is exact (a small whole number less a multiple of 1/P), so −d is exactly
        // the mirror's, and so is each step after (sin is odd, the rest depends on d² or |d|):
        // the rows past the middle are the first half's mirrored, the same values, at half the
        // cost (the build is most of a render's start; `SincTableTests` checks every table
        // against the formula evaluated at each tap).
        let mirrored = phases & (phases - 1) == 0 ? phases / 2 + 1 : phases + 1
        for p in 0...phases {
            for j in 0..<t {
                if p >= mirrored {
                    h[p * t + j] = h[(phases - p) * t + (t - 1 - j)]
                    continue
                }
                let d = Double(j) - w + 1 - Double(p) / Double(phases)
                let u = d / w
                var v = 0.0
                if abs(u) < 1 {
                    let x = Double.pi * sc * d
                    let sinc = abs(x) < 1e-12 ? 1 : sin(x) / x
                    v = sc * sinc * SincTable.besselI0(beta * (1 - u * u).squareRoot()) / i0beta
                }
                h[p * t + j] = Float(v)
            }
        }
        for p in 0..<phases {
            for j in 0..<t {
                rows[2 * p * t + j] = h[p * t + j]
                rows[(2 * p + 1) * t + j] = h[(p + 1) * t + j] - h[p * t + j]
            }
        }
    }

    deinit { rows.deallocate() }

    /// Every stored value: row 0, its difference row, row 1, … (tests).
    var storedValues: [Float] { Array(UnsafeBufferPointer(start: rows, count: 2 * phases * taps)) }

    /// Frames of history needed on the left of the interpolated position (inclusive of it).
    public var leftFrames: Int { taps / 2 }
    /// Frames needed on the right of the interpolated position.
    public var rightFrames: Int { taps / 2 }

    /// The signal at position `index + fraction` (0 ≤ fraction < 1): `View.interpolate`.
    @inline(__always) @_noAllocation @_noLocks
    public func interpolate(_ data: UnsafePointer<Float>, index: Int, fraction: Double) -> Float {
        view.interpolate(data, index: index, fraction: fraction)
    }

    /// Two signals at the same position: `View.interpolate(_:_:index:fraction:)`.
    @inline(__always) @_noAllocation @_noLocks
    public func interpolate(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, index: Int,
                            fraction: Double) -> (Float, Float) {
        view.interpolate(a, b, index: index, fraction: fraction)
    }

    /// Four stereo positions at once: `View.interpolate4`.
    @inline(__always) @_noAllocation @_noLocks
    public func interpolate4(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, offsets: SIMD4<Int>,
                             fractions: SIMD4<Double>) -> (SIMD4<Float>, SIMD4<Float>) {
        view.interpolate4(a, b, offsets: offsets, fractions: fractions)
    }

    /// The table as a value, for the render path's loops (see `View`).
    var view: View { View(taps: taps, phases: phases, rows: rows) }

    /// Modified Bessel function of the first kind, order 0 (power series).
    static func besselI0(_ x: Double) -> Double {
        var sum = 1.0, term = 1.0
        let q = x * x / 4
        var k = 1.0
        while term > 1e-17 * sum {
            term *= q / (k * k)
            sum += term
            k += 1
        }
        return sum
    }
}


extension SincTable {
    /// A table as a value: its taps, phases and rows (immutable, and kept alive by the table,
    /// which every reader's owner holds). A reader's loop that picks a table per sample reads
    /// it as a `View`: a class reference read from storage is reference counted, which the
    /// compiler's realtime check refuses (see `Owned`), and a closure per sample to avoid that
    /// costs the reader's loop (Benchmarks/RESULTS.md).
    struct View {
        /// Taps per phase (a multiple of 8).
        let taps: Int
        /// Fractional positions tabulated between two samples.
        let phases: Int
        let rows: UnsafeMutablePointer<Float>
        /// Frames of history needed on the left of the interpolated position (inclusive of it).
        var leftFrames: Int { taps / 2 }
        /// Frames needed on the right of the interpolated position.
        var rightFrames: Int { taps / 2 }
    }
}

extension SincTable.View {
    /// The signal at position `index + fraction` (0 ≤ fraction < 1). Reads
    /// `data[index − taps/2 + 1 ... index + taps/2]`.
    @inline(__always) @_noAllocation @_noLocks
    public func interpolate(_ data: UnsafePointer<Float>, index: Int, fraction: Double) -> Float {
        let ph = fraction * Double(phases)
        var p0 = Int(ph)
        if p0 >= phases { p0 = phases - 1 }
        let t = Float(ph - Double(p0))
        let x = data + (index - taps / 2 + 1)
        let r0 = rows + 2 * p0 * taps
        return dot(x, r0, taps) + t * dot(x, r0 + taps, taps)
    }

    /// Two signals (a stereo pair) at the same position: the row is blended with its
    /// difference once per tap and applied to both, which costs little more than one `interpolate`.
    @inline(__always) @_noAllocation @_noLocks
    public func interpolate(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, index: Int,
                            fraction: Double) -> (Float, Float) {
        let ph = fraction * Double(phases)
        var p0 = Int(ph)
        if p0 >= phases { p0 = phases - 1 }
        let t = SIMD8<Float>(repeating: Float(ph - Double(p0)))
        // pointers stepped through the taps (offsets computed with checked arithmetic cost
        // more instructions per step than the multiply-adds)
        let first = index &- taps / 2 &+ 1
        var pa = UnsafeRawPointer(a + first), pb = UnsafeRawPointer(b + first)
        var r0 = UnsafeRawPointer(rows + 2 &* p0 &* taps)
        let end = r0 + 4 &* taps
        var accA = SIMD8<Float>(), accB = SIMD8<Float>()
        while r0 < end {
            let h0 = r0.loadUnaligned(as: SIMD8<Float>.self)
            let d = r0.loadUnaligned(fromByteOffset: 4 &* taps, as: SIMD8<Float>.self)
            let h = h0 + t * d
            accA += h * pa.loadUnaligned(as: SIMD8<Float>.self)
            accB += h * pb.loadUnaligned(as: SIMD8<Float>.self)
            r0 += 32; pa += 32; pb += 32
        }
        return (accA.sum(), accB.sum())
    }

    /// Four stereo positions at once, `offsets[e]` + `fractions[e]` (e = 0…3): each the same
    /// arithmetic as `interpolate(_:_:index:fraction:)`, so the same values, with the four
    /// positions' multiply-add chains interleaved. One position's chain is a series of dependent
    /// adds and its sums another, which left most of the CPU idle: reading four at a time took the
    /// reader from 19 % to 13.5 % of a two-track render's CPU (`perf`). The four rows and blend
    /// weights are found in vector operations (`floorWhole`), and the eight sums are added in
    /// columns (`orderedSums`): each −5 % of the band's CPU on one core, the same bits.
    /// `fractions` lie in [0, 1).
    @inline(__always) @_noAllocation @_noLocks
    public func interpolate4(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, offsets: SIMD4<Int>,
                             fractions: SIMD4<Double>) -> (SIMD4<Float>, SIMD4<Float>) {
        let d = 4 &* taps   // bytes from a row to its difference row
        // the rows and blend weights of the four at once (as `interpolate` finds one: the row
        // ⌊ph⌋, at most the last, ph = fraction·P ≥ 0)
        let ph = fractions * Double(phases)
        let (down, downInt) = floorWhole(ph)
        let last = down .> Double(phases - 1)
        let row = down.replacing(with: Double(phases - 1), where: last)
        let rowIndex = downInt.replacing(with: phases - 1, where: downInt .> phases - 1)
        let blend = ph - row
        /// Position e's blend weight, row and first samples.
        struct Position { let t: SIMD8<Float>, row: UnsafeRawPointer, a: UnsafeRawPointer, b: UnsafeRawPointer }
        @inline(__always) func position(_ e: Int) -> Position {
            let first = offsets[e] &- taps / 2 &+ 1
            return Position(t: SIMD8(repeating: Float(blend[e])), row: UnsafeRawPointer(rows + 2 &* rowIndex[e] &* taps),
                            a: UnsafeRawPointer(a + first), b: UnsafeRawPointer(b + first))
        }
        /// Eight taps of one position, at byte `o` of its row and its samples.
        @inline(__always) func accumulate(_ p: Position, _ o: Int, _ accA: inout SIMD8<Float>, _ accB: inout SIMD8<Float>) {
            let h = p.row.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self)
                + p.t * p.row.loadUnaligned(fromByteOffset: o &+ d, as: SIMD8<Float>.self)
            accA += h * p.a.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self)
            accB += h * p.b.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self)
        }
        let p0 = position(0), p1 = position(1), p2 = position(2), p3 = position(3)
        var a0 = SIMD8<Float>(), b0 = SIMD8<Float>(), a1 = SIMD8<Float>(), b1 = SIMD8<Float>()
        var a2 = SIMD8<Float>(), b2 = SIMD8<Float>(), a3 = SIMD8<Float>(), b3 = SIMD8<Float>()
        var o = 0
        while o < d {
            accumulate(p0, o, &a0, &b0)
            accumulate(p1, o, &a1, &b1)
            accumulate(p2, o, &a2, &b2)
            accumulate(p3, o, &a3, &b3)
            o &+= 32
        }
        let sums = orderedSums((a0, a1, a2, a3, b0, b1, b2, b3))
        return (sums.lowHalf, sums.highHalf)
    }
}

/// Eight vectors' `sum()`s at once: lane e of the result is `v[e].sum()`, bit for bit.
///
/// `SIMD.sum()` adds the lanes in order, ((x0 + x1) + x2) + … + x7 (from −0, which changes
/// nothing), one lane at a time. Transposed, column j holds lane j of every vector, and the same
/// additions run on whole columns: c0 + c1, then + c2, …, + c7, eight sums in seven vector adds
/// instead of 56 scalar ones and their lane extractions. The transpose is three perfect
/// unshuffles of the 64 values (each rotates the six bits of the index 8e + j right by one, so
/// three make it 8j + e); one unshuffle takes the even and odd lanes of each pair of vectors
/// 2o, 2o + 1 into vectors o and 4 + o.
@inline(__always)
func orderedSums(_ v: (SIMD8<Float>, SIMD8<Float>, SIMD8<Float>, SIMD8<Float>,
                       SIMD8<Float>, SIMD8<Float>, SIMD8<Float>, SIMD8<Float>)) -> SIMD8<Float> {
    @inline(__always) func unshuffle(_ x: SIMD8<Float>, _ y: SIMD8<Float>) -> (SIMD8<Float>, SIMD8<Float>) {
        let p = SIMD16(lowHalf: x, highHalf: y)
        return (p.evenHalf, p.oddHalf)
    }
    var c = v
    for _ in 0..<3 {
        let (e0, o0) = unshuffle(c.0, c.1), (e1, o1) = unshuffle(c.2, c.3)
        let (e2, o2) = unshuffle(c.4, c.5), (e3, o3) = unshuffle(c.6, c.7)
        c = (e0, e1, e2, e3, o0, o1, o2, o3)
    }
    return ((((((c.0 + c.1) + c.2) + c.3) + c.4) + c.5) + c.6) + c.7
}

/// Σ a[i]·b[i] over `count` values (a multiple of 8), eight lanes at a time.
@inline(__always) @_noAllocation @_noLocks
func dot(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ count: Int) -> Float {
    var acc0 = SIMD8<Float>(repeating: 0), acc1 = SIMD8<Float>(repeating: 0)
    var ra = UnsafeRawPointer(a), rb = UnsafeRawPointer(b)   // stepped: no checked offsets
    let end16 = ra + 4 &* (count & ~15), end = ra + 4 &* (count & ~7)
    while ra < end16 {
        acc0 += ra.loadUnaligned(as: SIMD8<Float>.self) * rb.loadUnaligned(as: SIMD8<Float>.self)
        acc1 += ra.loadUnaligned(fromByteOffset: 32, as: SIMD8<Float>.self)
            * rb.loadUnaligned(fromByteOffset: 32, as: SIMD8<Float>.self)
        ra += 64; rb += 64
    }
    if ra < end {
        acc0 += ra.loadUnaligned(as: SIMD8<Float>.self) * rb.loadUnaligned(as: SIMD8<Float>.self)
    }
    return (acc0 + acc1).sum()
}
