import MixFXDSP
import MixFXEngine

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
    /// a function of the sample's position (a counter-based generator, `IntegerQuantizer.tpdf`),
    /// so output stays the same bytes whatever the block size.
    public var dither = false
    private var frameIndex = 0
    /// The DSP copy whose quantizer runs, chosen here on the control side, so a live stream's
    /// render thread never takes `DSPCopy.active`'s one-time cpuid and environment read.
    private let dspCopy = DSPCopy.active

    /// A converter for one stream (its dither sequence starts at frame 0), or for the part of
    /// one that starts at `firstFrame` (a part converted on a thread of its own: see `absorb`).
    public init(sampleFormat: SampleFormat?, channelCount: Int, dither: Bool = false, firstFrame: Int = 0) {
        self.sampleFormat = sampleFormat
        self.channelCount = channelCount
        self.dither = dither
        frameIndex = firstFrame
    }

    /// Takes in the counts of `part`, a converter that converted the frames that follow this
    /// one's (made with `firstFrame` where this one stands), and moves on past them: the counts
    /// are then those of one converter that converted it all.
    public mutating func absorb(_ part: SampleConverter, frameCount: Int) {
        peak = max(peak, part.peak)
        clippedSamples += part.clippedSamples
        offGridSamples += part.offGridSamples
        frameIndex += frameCount
    }

    /// The frame the next `convert` starts at (its dither's position).
    public var nextFrame: Int { frameIndex }

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

    /// x·scale (+ dither), rounded, clamped to [−scale, scale − 1], shifted left by `shift`
    /// (`IntegerQuantizer`, in the DSP copy this process runs: see `DSPCopy`).
    @inline(__always)
    private func convertIntegers<T: FixedWidthInteger>(_ buffer: AudioBuffer, _ frameCount: Int, _ out: UnsafeMutablePointer<T>,
                                                       scale: Double, shift: Int, _ peak: inout Float, _ clipped: inout Int,
                                                       _ offGrid: inout Int) {
        let ch = channelCount
        for c in 0..<ch {
            dspCopy.quantize(buffer.channel(c), frameCount: frameCount, into: UnsafeMutableRawPointer(out + c),
                             sampleBytes: MemoryLayout<T>.size, stride: ch, firstIndex: frameIndex &* ch &+ c,
                             scale: scale, shift: shift, dither: dither,
                             peak: &peak, clipped: &clipped, rounded: &offGrid)
        }
    }
}
