import Foundation
import Testing
@testable import MixFXDSP
import TestSupport

func resample(_ x: [Float], from inRate: Int, to outRate: Int, block: Int = 1000) -> [Float] {
    let r = Resampler(inRate: inRate, outRate: outRate, channelCount: 1, maxWriteFrames: block)
    var out = [Float](repeating: 0, count: Resampler.outputFrameCount(inputFrames: x.count, inRate: inRate, outRate: outRate))
    var written = 0, read = 0
    out.withUnsafeMutableBufferPointer { op in
        x.withUnsafeBufferPointer { xp in
            while !r.isDrained {
                if r.needsInput {
                    if written < x.count {
                        let n = min(block, x.count - written)
                        r.write([xp.baseAddress! + written], frameCount: n)
                        written += n
                    } else { r.finish() }
                }
                read += r.read(into: { _ in op.baseAddress! }, offset: read, maxFrames: op.count - read)
            }
        }
    }
    #expect(read == out.count)
    return out
}

@Suite struct ResamplerTests {
    @Test func exactLengthAndPassband() {
        let x = Signals.sine(frequencyHz: 1000, sampleRate: 44_100, frames: 44_100)
        let y = resample(x, from: 44_100, to: 48_000)
        #expect(y.count == 48_000)
        let mid = y[8000..<40000]
        #expect(abs(Signals.db(Signals.rms(mid) * 2.squareRoot() / 0.5)) < 0.01)
        #expect(abs(Signals.cents(Signals.frequency(mid, sampleRate: 48_000), 1000)) < 0.01)
        #expect(Signals.residualDB(mid, frequencyHz: 1000, sampleRate: 48_000) < -90)
    }

    @Test func alignedAtSampleZero() {
        // A slow Gaussian bump keeps its centre through 48k → 44.1k.
        let n = 48_000
        let x = (0..<n).map { i in Float(exp(-pow((Double(i) - 24_000) / 2000, 2))) }
        let y = resample(x, from: 48_000, to: 44_100)
        let peak = y.indices.max { y[$0] < y[$1] }!
        #expect(abs(Double(peak) - 24_000 * 44_100 / 48_000) <= 1)
    }

    /// Downsampling: a tone above the output Nyquist frequency must not fold back.
    @Test func aliasingBelowMinus90dB() {
        let x = Signals.sine(frequencyHz: 22_500, sampleRate: 48_000, frames: 48_000, amplitude: 1)
        let y = resample(x, from: 48_000, to: 44_100)
        let level = Signals.db(Signals.rms(y[4000..<40000]) * 2.squareRoot())
        #expect(level < -90, "alias level \(level) dB")
    }

    /// Upsampling: a 20 kHz tone must not leave an image at 44.1 − 20 kHz.
    @Test func imagingBelowMinus90dB() {
        let x = Signals.sine(frequencyHz: 19_000, sampleRate: 44_100, frames: 44_100, amplitude: 1)
        let y = resample(x, from: 44_100, to: 96_000)
        let r = Signals.residualDB(y[8000..<80000], frequencyHz: 19_000, sampleRate: 96_000)
        #expect(r < -90, "image/residual \(r) dB")
    }

    @Test func blockSizeDoesNotChangeOutput() {
        let x = Signals.noise(frames: 20_000)
        #expect(resample(x, from: 44_100, to: 48_000, block: 64) == resample(x, from: 44_100, to: 48_000, block: 4096))
    }
}
