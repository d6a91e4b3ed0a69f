import MixFXDSP

/// When offline rendering dithers integer output.
public enum DitherMode: String, Sendable, CaseIterable {
    /// TPDF on output of 16 bits or fewer whenever converting would round a sample (a gain, EQ,
    /// pitch, resampling, a deeper source); none when every sample of the mix is already a
    /// value of the format (a pass-through, a plain sum of 16-bit tracks), so those stay
    /// bit-exact. Never on 24-bit, 32-bit or float output, whose rounding error lies below
    /// any converter's noise.
    case auto
    /// TPDF on any integer output.
    case tpdf
    /// Plain rounding.
    case none
}

/// Converts planar float blocks into interleaved integer or float samples, the one way mixfx
/// does it for files and devices alike: x·2^(bits−1) rounded to nearest, clamped (never
/// wrapped), and every clamped sample counted. So a live stream and an offline file of the same
/// session hold the same samples.
public struct SampleConverter {
    /// Target encoding; nil means floats for a lossy encoder.
    public let sampleFormat: SampleFormat?   // nil: floats for a lossy encoder
    /// Channels interleaved.
    public let channelCount: Int
    /// Samples outside the integer range (or beyond ±1.0 for float output), so far.
    public private(set) var clippedSamples = 0
    /// The largest absolute value seen (before clamping).
    public private(set) var peak: Float = 0
    /// Integer output: samples that were not already a value of the format (x·2^(bits−1) not
    /// a whole number), so converting them rounds; 0 means the samples passed through exactly
    /// (what `DitherMode.auto` asks).
    public private(set) var offGridSamples = 0

    /// TPDF dither on integer output: before rounding, add the sum of two independent uniform
    /// values in ±½ LSB (triangular, ±1 LSB), as SoX does when reducing to 16 bits. The noise is
    /// a function of the sample's position (a counter-based generator), so output stays the same
    /// bytes whatever the block size.
    public var dither = false
    private var frameIndex = 0

    /// A converter for one stream (its dither sequence starts at frame 0).
    public init(sampleFormat: SampleFormat?, channelCount: Int, dither: Bool = false) {
        self.sampleFormat = sampleFormat
        self.channelCount = channelCount
        self.dither = dither
    }

    /// Triangular noise in (−1, 1) for sample `index` (splitmix64 of the index). (The two
    /// 24-bit halves go to `Double` through `Int64`: one signed conversion each, where a
    /// `UInt64` takes a branch and several instructions on x86-64; the same values.)
    @inline(__always)
    static func tpdf(_ index: Int) -> Double {
        var z = UInt64(bitPattern: Int64(index)) &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        let a = Double(Int64(bitPattern: z >> 40)), b = Double(Int64(bitPattern: z & 0xFF_FFFF))
        return (a + b) * 0x1p-24 - 1
    }

    /// Bytes per converted sample (2 for s16, else 4).
    public var bytesPerSample: Int {
        switch sampleFormat { case .s16?: 2; default: 4 }
    }

    /// Writes `frameCount` interleaved frames to `destination` (which holds at least
    /// frameCount·channelCount·bytesPerSample bytes).
    public mutating func convert(_ buffer: AudioBuffer, frameCount: Int, to destination: UnsafeMutableRawPointer) {
        var peakHere = peak
        var clipped = 0
        var offGrid = 0
        switch sampleFormat {
        case .s16?:
            convertIntegers(buffer, frameCount, destination.assumingMemoryBound(to: Int16.self),
                            scale: 32768, shift: 0, &peakHere, &clipped, &offGrid)
        case .s24?:
            // left-justified in 32 bits (libsndfile's int convention); devices taking S24_LE
            // get it shifted right by the caller
            convertIntegers(buffer, frameCount, destination.assumingMemoryBound(to: Int32.self),
                            scale: 8_388_608, shift: 8, &peakHere, &clipped, &offGrid)
        case .s32?:
            convertIntegers(buffer, frameCount, destination.assumingMemoryBound(to: Int32.self),
                            scale: 2_147_483_648, shift: 0, &peakHere, &clipped, &offGrid)
        case .f32?, nil:
            let out = destination.assumingMemoryBound(to: Float.self)
            let ch = channelCount
            for c in 0..<ch {
                let src = buffer.channel(c)
                for i in 0..<frameCount {
                    let x = src[i]
                    peakHere = max(peakHere, abs(x))
                    if abs(x) > 1 { clipped += 1 }
                    out[i * ch + c] = x.isFinite ? x : 0   // never a NaN or ∞ to a file or device
                }
            }
        }
        peak = peakHere
        clippedSamples += clipped
        offGridSamples += offGrid
        frameIndex += frameCount
    }

    /// x·scale (+ dither), rounded, clamped to [−scale, scale − 1], shifted left by `shift`.
    /// Clipping is judged on the signal before dither: dither's own ±1 LSB at full scale is
    /// clamped without being counted (the sample itself fitted).
    ///
    /// Four frames of a channel at a time (`convertFour`), the rest one by one (`convertOne`):
    /// the same operations on every sample, so the same values. This is the rendering's last pass
    /// over every sample; written one sample at a time it took 9 % of a two-track render's CPU,
    /// mostly in the branches of its clamps and conversions.
    @inline(__always)
    private func convertIntegers<T: FixedWidthInteger>(_ buffer: AudioBuffer, _ frameCount: Int, _ out: UnsafeMutablePointer<T>,
                                                       scale: Double, shift: Int, _ peak: inout Float, _ clipped: inout Int,
                                                       _ offGrid: inout Int) {
        let ch = channelCount
        let q = IntegerQuantizer(scale: scale, dither: dither)
        var peakLanes = SIMD4<Float>(repeating: peak)
        var counts = IntegerQuantizer.Counts()
        for c in 0..<ch {
            let src = UnsafeRawPointer(buffer.channel(c))
            var o = out + c
            var index = frameIndex &* ch &+ c
            var i = 0
            while i &+ 4 <= frameCount {
                let x = src.loadUnaligned(fromByteOffset: 4 &* i, as: SIMD4<Float>.self)
                let indices = SIMD4<Int64>(0, 1, 2, 3) &* Int64(ch) &+ Int64(index)
                let y = q.quantize(x, indices: indices, peak: &peakLanes, counts: &counts)
                o[0] = T(truncatingIfNeeded: y[0]) &<< shift
                o[ch] = T(truncatingIfNeeded: y[1]) &<< shift
                o[2 &* ch] = T(truncatingIfNeeded: y[2]) &<< shift
                o[3 &* ch] = T(truncatingIfNeeded: y[3]) &<< shift
                o += 4 &* ch; index &+= 4 &* ch; i &+= 4
            }
            while i < frameCount {
                // the last frames as lane 0 of a vector (the zeros in the others count as
                // neither clipped nor rounded, and their results are dropped)
                let x = SIMD4<Float>(src.load(fromByteOffset: 4 &* i, as: Float.self), 0, 0, 0)
                var lanePeak = SIMD4<Float>(repeating: peakLanes[0])
                let y = q.quantize(x, indices: SIMD4(repeating: Int64(index)), peak: &lanePeak, counts: &counts)
                peakLanes[0] = lanePeak[0]
                o[0] = T(truncatingIfNeeded: y[0]) &<< shift
                o += ch; index &+= ch; i &+= 1
            }
        }
        for lane in 0..<4 { peak = max(peak, peakLanes[lane]) }
        clipped &+= counts.clipped; offGrid &+= counts.rounded
    }
}

/// The arithmetic of `SampleConverter`'s integer output on four samples at once, in `Double`
/// lanes, without a branch. Per sample, exactly as written out one at a time:
///
///     v = x·scale;  clipped if v ≥ scale − ½ or v ≤ −scale − ½
///     v = NaN ? 0 : clamp(v, −scale, scale − 1);  rounded if v is not a whole number
///     v = clamp(v + tpdf(index), −scale, scale − 1)            (with dither)
///     y = trunc(v < 0 ? v − ½ : v + ½)                         (half away from zero)
///
/// Whole numbers and truncation come from the magic number M = 1.5·2⁵² (for |v| < 2⁵¹,
/// (v + M) − M is v rounded to nearest, and the low 32 bits of v + M's pattern are v as an
/// `Int32` when v is whole), and `tpdf`'s 24-bit halves become `Double`s as 2⁵² + n − 2⁵²; so the
/// values are the same as through `Int64` conversions, and x86-64's baseline SSE2 does it all in
/// vector registers.
struct IntegerQuantizer {
    let scale: SIMD4<Double>, low: SIMD4<Double>, high: SIMD4<Double>
    let clipHigh: SIMD4<Double>, clipLow: SIMD4<Double>
    let dither: Bool

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

    private static let magic = SIMD4<Double>(repeating: 6_755_399_441_055_744)   // 1.5·2⁵²
    private static let twoTo52 = SIMD4<Double>(repeating: 4_503_599_627_370_496)

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

    /// `SampleConverter.tpdf` of four indices.
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
