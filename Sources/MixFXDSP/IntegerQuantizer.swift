/// The arithmetic of integer output (`SampleConverter` in MixFXIO: the last pass over every
/// sample a file or device gets) on four samples at once, in `Double` lanes, without a branch.
/// Per sample, exactly as written out one at a time:
///
///     v = x·scale;  clipped if v ≥ scale − ½ or v ≤ −scale − ½
///     v = NaN ? 0 : clamp(v, −scale, scale − 1);  rounded if v is not a whole number
///     v = clamp(v + tpdf(index), −scale, scale − 1)            (with dither)
///     y = trunc(v < 0 ? v − ½ : v + ½)                         (half away from zero)
///
/// tpdf(i) is SplitMix64 of the sample's index i, its two 24-bit halves a and b giving
/// (a + b)/2²⁴ − 1 (triangular in ±1 LSB). Whole numbers and truncation come from the magic
/// number M = 1.5·2⁵² (for |v| < 2⁵¹, (v + M) − M is v rounded to nearest, and the low 32 bits
/// of v + M's pattern are v as an `Int32` when v is whole), and the 24-bit halves become
/// `Double`s as 2⁵² + n − 2⁵²; so the values are those of `Int64` conversions, and the baseline
/// copy's SSE2 does it all in vector registers (one sample at a time it took 9 % of a two-track
/// render's CPU, in the branches of its clamps and conversions). Compiled in both DSP copies
/// (the AVX2 one runs the 64-bit lanes four to a register); `quantize(_:frameCount:…)` is the
/// entry the engine's `DSPCopy` calls.
public struct IntegerQuantizer {
    let scale: SIMD4<Double>, low: SIMD4<Double>, high: SIMD4<Double>
    let clipHigh: SIMD4<Double>, clipLow: SIMD4<Double>
    let dither: Bool

    /// One channel of a block: `frameCount` samples from `source` into `out` (every `stride`-th
    /// integer of `sampleBytes` bytes: 2 for s16, else 4), sample k's dither index
    /// `firstIndex` + k·`stride`; the largest |x| into `peak`, the counts added to `clipped` and
    /// `rounded`. Not inlinable into a caller (it must run with this copy's code).
    @inline(never)
    public static func quantize(_ source: UnsafePointer<Float>, frameCount: Int, into out: UnsafeMutableRawPointer,
                                sampleBytes: Int, stride: Int, firstIndex: Int, scale: Double, shift: Int, dither: Bool,
                                peak: inout Float, clipped: inout Int, rounded: inout Int) {
        let q = IntegerQuantizer(scale: scale, dither: dither)
        if sampleBytes == 2 {
            q.run(source, frameCount, out.assumingMemoryBound(to: Int16.self), stride, firstIndex, shift, &peak, &clipped, &rounded)
        } else {
            q.run(source, frameCount, out.assumingMemoryBound(to: Int32.self), stride, firstIndex, shift, &peak, &clipped, &rounded)
        }
    }

    @inline(__always)
    private func run<T: FixedWidthInteger>(_ source: UnsafePointer<Float>, _ frameCount: Int, _ out: UnsafeMutablePointer<T>,
                                           _ stride: Int, _ firstIndex: Int, _ shift: Int, _ peak: inout Float,
                                           _ clipped: inout Int, _ rounded: inout Int) {
        let src = UnsafeRawPointer(source)
        var peakLanes = SIMD4<Float>(repeating: peak)
        var counts = Counts()
        var o = out, index = firstIndex, i = 0
        while i &+ 4 <= frameCount {
            let x = src.loadUnaligned(fromByteOffset: 4 &* i, as: SIMD4<Float>.self)
            let indices = SIMD4<Int64>(0, 1, 2, 3) &* Int64(stride) &+ Int64(index)
            let y = quantize(x, indices: indices, peak: &peakLanes, counts: &counts)
            o[0] = T(truncatingIfNeeded: y[0]) &<< shift
            o[stride] = T(truncatingIfNeeded: y[1]) &<< shift
            o[2 &* stride] = T(truncatingIfNeeded: y[2]) &<< shift
            o[3 &* stride] = T(truncatingIfNeeded: y[3]) &<< shift
            o += 4 &* stride; index &+= 4 &* stride; i &+= 4
        }
        while i < frameCount {
            // the last frames as lane 0 of a vector (the zeros in the others count as neither
            // clipped nor rounded, and their results are dropped)
            let x = SIMD4<Float>(src.load(fromByteOffset: 4 &* i, as: Float.self), 0, 0, 0)
            var lanePeak = SIMD4<Float>(repeating: peakLanes[0])
            let y = quantize(x, indices: SIMD4(repeating: Int64(index)), peak: &lanePeak, counts: &counts)
            peakLanes[0] = lanePeak[0]
            o[0] = T(truncatingIfNeeded: y[0]) &<< shift
            o += stride; index &+= stride; i &+= 1
        }
        for lane in 0..<4 { peak = max(peak, peakLanes[lane]) }
        clipped &+= counts.clipped; rounded &+= counts.rounded
    }

    /// Samples counted so far, per lane.
    struct Counts {
        var clippedLanes = SIMD4<Int64>(), roundedLanes = SIMD4<Int64>()
        var clipped: Int { Int(clippedLanes.wrappedSum()) }
        var rounded: Int { Int(roundedLanes.wrappedSum()) }
    }

    init(scale: Double, dither: Bool) {
        self.scale = SIMD4(repeating: scale)
        low = SIMD4(repeating: -scale); high = SIMD4(repeating: scale - 1)
        clipHigh = SIMD4(repeating: scale - 0.5); clipLow = SIMD4(repeating: -scale - 0.5)
        self.dither = dither
    }

    // (computed, so constants in the code: as `static let`s they were lazy globals, and every
    // four samples went through `swift_once`)
    @inline(__always) private static var magic: SIMD4<Double> { SIMD4(repeating: 6_755_399_441_055_744) }   // 1.5·2⁵²
    @inline(__always) private static var twoTo52: SIMD4<Double> { SIMD4(repeating: 4_503_599_627_370_496) }

    /// The integers of `x` (samples `indices` of the stream, for the dither), their |x| into
    /// `peak` (a lane takes |x| when it is ≥ the lane's peak, as `max(peak, abs(x))` does: a
    /// NaN never does) and their counts into `counts`.
    @inline(__always)
    func quantize(_ x: SIMD4<Float>, indices: SIMD4<Int64>, peak: inout SIMD4<Float>, counts: inout Counts) -> SIMD4<Int32> {
        let magnitude = unsafeBitCast(unsafeBitCast(x, to: SIMD4<UInt32>.self) & 0x7FFF_FFFF, to: SIMD4<Float>.self)
        peak.replace(with: magnitude, where: magnitude .>= peak)
        var v = SIMD4<Double>(Double(x[0]), Double(x[1]), Double(x[2]), Double(x[3])) * scale
        let clips = (v .>= clipHigh) .| (v .<= clipLow)
        counts.clippedLanes &+= SIMD4<Int64>().replacing(with: 1, where: clips)
        v.replace(with: 0, where: v .!= v)
        v.replace(with: low, where: v .< low)
        v.replace(with: high, where: v .> high)
        let nearest = (v + Self.magic) - Self.magic
        counts.roundedLanes &+= SIMD4<Int64>().replacing(with: 1, where: nearest .!= v)
        if dither {
            v += Self.tpdf(indices)
            v.replace(with: low, where: v .< low)
            v.replace(with: high, where: v .> high)
        }
        var w = v + SIMD4<Double>(repeating: 0.5)
        w.replace(with: v - SIMD4<Double>(repeating: 0.5), where: v .< 0)
        // truncate: round to nearest, then one step back toward zero where that went past w
        var t = (w + Self.magic) - Self.magic
        t.replace(with: t - 1, where: (w .>= 0) .& (t .> w))
        t.replace(with: t + 1, where: (w .< 0) .& (t .< w))
        let bits = unsafeBitCast(t + Self.magic, to: SIMD4<UInt64>.self)
        return SIMD4<Int32>(truncatingIfNeeded: bits)
    }

    /// Triangular noise in (−1, 1) for four sample indices: SplitMix64 of the index, its top and
    /// bottom 24 bits a and b giving (a + b)/2²⁴ − 1.
    @inline(__always)
    static func tpdf(_ index: SIMD4<Int64>) -> SIMD4<Double> {
        var z = unsafeBitCast(index, to: SIMD4<UInt64>.self) &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z &>> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z &>> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z &>> 31
        let exponent = SIMD4<UInt64>(repeating: 0x4330_0000_0000_0000)   // 2⁵²
        let a = unsafeBitCast(exponent | (z &>> 40), to: SIMD4<Double>.self) - twoTo52
        let b = unsafeBitCast(exponent | (z & 0xFF_FFFF), to: SIMD4<Double>.self) - twoTo52
        return (a + b) * 0x1p-24 - 1
    }
}
