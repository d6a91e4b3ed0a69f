import Testing
@testable import MixFXIO
import MixFXDSP
import MixFXEngine
import TestSupport

/// `SampleConverter`'s integer output (`IntegerQuantizer`, four samples at a time in vector
/// lanes, in each DSP copy) against the plain loop it replaced (written out below one sample at a
/// time, with `Int64` conversions and branches): the same integers, clip and rounding counts and
/// peak, for every format, with and without dither, on hostile values and on block lengths that
/// are not multiples of four.
@Suite struct SampleConverterTests {
    /// The reference: the converter's arithmetic, one sample at a time.
    struct Reference {
        var peak: Float = 0, clipped = 0, offGrid = 0, frameIndex = 0

        mutating func convert(_ channels: [[Float]], scale: Double, shift: Int, dither: Bool) -> [Int64] {
            let ch = channels.count, n = channels[0].count
            var out = [Int64](repeating: 0, count: n * ch)
            for c in 0..<ch {
                for i in 0..<n {
                    let x = channels[c][i]
                    peak = max(peak, abs(x))
                    var v = Double(x) * scale
                    if v >= scale - 0.5 || v <= -scale - 0.5 { clipped += 1 }
                    v = v.isNaN ? 0 : (v < -scale ? -scale : (v > scale - 1 ? scale - 1 : v))
                    if Double(Int(v)) != v { offGrid += 1 }
                    if dither {
                        let index = (frameIndex + i) * ch + c
                        var z = UInt64(bitPattern: Int64(index)) &+ 0x9E37_79B9_7F4A_7C15
                        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                        z ^= z >> 31
                        v += Double(z >> 40) / Double(1 << 24) + Double(z & 0xFF_FFFF) / Double(1 << 24) - 1
                        v = v < -scale ? -scale : (v > scale - 1 ? scale - 1 : v)
                    }
                    out[i * ch + c] = Int64(Int(v < 0 ? v - 0.5 : v + 0.5) << shift)
                }
            }
            frameIndex += n
            return out
        }
    }

    /// Values that probe every branch: the clip thresholds either side, exact halves (ties round
    /// away from zero), whole numbers, NaN, ±∞, signed zeros, subnormals and the format's ends.
    static func hostile(scale: Double) -> [Float] {
        let lsb = Float(1 / scale)
        var v: [Float] = [0, -0, 1, -1, 0.5, -0.5, .nan, -.nan, .infinity, -.infinity, .leastNonzeroMagnitude,
                          -.leastNonzeroMagnitude, .ulpOfOne, 1 - lsb, 1 - lsb / 2, 1 - lsb / 4, -1 - lsb / 2,
                          -1 - lsb / 4, -1 + lsb / 2, 2, -2, 1e-30, -1e-30]
        for k in [-3, -2, -1, 0, 1, 2, 3] {
            v.append(Float(k) * lsb + lsb / 2)        // a tie
            v.append(Float(k) * lsb)                  // a whole number
            v.append(Float(k) * lsb + lsb / 3)
        }
        return v
    }

    @Test(arguments: [SampleFormat.s16, .s24, .s32], [false, true])
    func theLanesGiveThePlainLoopsValues(format: SampleFormat, dither: Bool) {
        let (scale, shift): (Double, Int) = switch format {
        case .s16: (32768, 0)
        case .s24: (8_388_608, 8)
        default: (2_147_483_648, 0)
        }
        var generator = SeededGenerator(seed: 7)
        let converter = SampleConverter(sampleFormat: format, channelCount: 2, dither: dither)
        var lanes = converter, reference = Reference()
        var checked = 0
        // block lengths 1…9 and a long one, so the four-frame loop's tail runs at every offset
        for frames in [1, 2, 3, 4, 5, 6, 7, 8, 9, 333] {
            var channels: [[Float]] = [[], []]
            let specials = Self.hostile(scale: scale)
            for _ in 0..<frames {
                for c in 0..<2 {
                    let pick = generator.next() % 4
                    channels[c].append(pick == 0 ? specials[Int(generator.next() % UInt64(specials.count))]
                                       : Float(Double(generator.next() % 2_000_001) / 1_000_000 - 1) * 1.1)
                }
            }
            let buffer = AudioBuffer(channelCount: 2, capacityFrames: frames)
            for c in 0..<2 { buffer.channel(c).update(from: channels[c], count: frames) }
            let expected = reference.convert(channels, scale: scale, shift: shift, dither: dither)
            let got: [Int64]
            if format == .s16 {
                var out = [Int16](repeating: 0, count: frames * 2)
                out.withUnsafeMutableBytes { lanes.convert(buffer, frameCount: frames, to: $0.baseAddress!) }
                got = out.map { Int64($0) }
            } else {
                var out = [Int32](repeating: 0, count: frames * 2)
                out.withUnsafeMutableBytes { lanes.convert(buffer, frameCount: frames, to: $0.baseAddress!) }
                got = out.map { Int64($0) }
            }
            // the reference computes in Int and shifts; the format keeps the low bits
            let kept = expected.map { format == .s16 ? Int64(Int16(truncatingIfNeeded: $0)) : Int64(Int32(truncatingIfNeeded: $0)) }
            #expect(got == kept, "\(format), dither \(dither), \(frames) frames")
            checked += frames * 2
        }
        #expect(lanes.clippedSamples == reference.clipped)
        #expect(lanes.offGridSamples == reference.offGrid)
        #expect(lanes.peak == reference.peak)
        // the probes did reach the branches they are for (a float times 2³¹ is mostly whole)
        #expect(reference.clipped > 20 && reference.offGrid > (format == .s32 ? 0 : 100) && checked == 2 * 378)
    }

    /// Each DSP copy's `IntegerQuantizer` (the renders run the active one; `MIXFX_DSP` picks)
    /// gives the plain loop's values: one channel, s16 and s32, with dither, hostile values.
    @Test func theBaselineCopyGivesThePlainLoopsValues() { check(.baseline) }

    @Test(.enabled(if: DSPCopy.cpuHasAVX2, "this CPU cannot run the AVX2 copy"))
    func theAVX2CopyGivesThePlainLoopsValues() { check(.avx2) }

    func check(_ copy: DSPCopy) {
        var generator = SeededGenerator(seed: 11)
        let specials = Self.hostile(scale: 32768)
        let x: [Float] = (0..<1003).map { _ in
            generator.next() % 3 == 0 ? specials[Int(generator.next() % UInt64(specials.count))]
                                      : Float(Double(generator.next() % 2_000_001) / 1_000_000 - 1) * 1.1
        }
        for (bytes, scale) in [(2, 32768.0), (4, 2_147_483_648.0)] {
            var reference = Reference()
            let expected = reference.convert([x], scale: scale, shift: 0, dither: true)
            var out = [Int32](repeating: 0, count: x.count)
            var peak: Float = 0, clipped = 0, rounded = 0
            out.withUnsafeMutableBytes { raw in
                x.withUnsafeBufferPointer { src in
                    copy.quantize(src.baseAddress!, frameCount: x.count, into: raw.baseAddress!, sampleBytes: bytes, stride: 1,
                                  firstIndex: 0, scale: scale, shift: 0, dither: true,
                                  peak: &peak, clipped: &clipped, rounded: &rounded)
                }
            }
            let got: [Int64] = bytes == 2
                ? out.withUnsafeBytes { Array($0.bindMemory(to: Int16.self).prefix(x.count)) }.map { Int64($0) }
                : out.map { Int64($0) }
            let kept = expected.map { bytes == 2 ? Int64(Int16(truncatingIfNeeded: $0)) : Int64(Int32(truncatingIfNeeded: $0)) }
            #expect(got == kept, "\(copy), \(bytes * 8) bits")
            #expect(clipped == reference.clipped && rounded == reference.offGrid && peak == reference.peak)
        }
    }

    /// A whole block of values already on the grid: none counted as rounded (what
    /// `--dither auto` reads to leave a pass-through undithered), none clipped.
    @Test func valuesOnTheGridAreNotCountedAsRounded() {
        let frames = 1001
        let buffer = AudioBuffer(channelCount: 1, capacityFrames: frames)
        for i in 0..<frames { buffer.channel(0)[i] = Float(i - 500) / 32768 }
        var converter = SampleConverter(sampleFormat: .s16, channelCount: 1)
        var out = [Int16](repeating: 0, count: frames)
        out.withUnsafeMutableBytes { converter.convert(buffer, frameCount: frames, to: $0.baseAddress!) }
        #expect(out == (0..<frames).map { Int16($0 - 500) })
        #expect(converter.offGridSamples == 0 && converter.clippedSamples == 0)
        #expect(converter.peak == Float(500) / 32768)
    }
}
