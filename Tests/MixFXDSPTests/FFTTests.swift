import Foundation
import Testing
@testable import MixFXDSP
import TestSupport

@Suite struct FFTTests {
    @Test(arguments: [4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192])
    func forwardMatchesNaiveDFT(size: Int) {
        let x = Signals.noise(frames: size)
        let fft = RealFFT(size: size)
        var re = [Float](repeating: 0, count: size / 2 + 1), im = re
        fft.forward(x, re: &re, im: &im)
        var worst = 0.0
        for k in stride(from: 0, through: size / 2, by: max(1, size / 256)) {
            var r = 0.0, i = 0.0
            for t in 0..<size {
                let a = -2 * Double.pi * Double(k * t % size) / Double(size)
                r += Double(x[t]) * cos(a); i += Double(x[t]) * sin(a)
            }
            worst = max(worst, hypot(r - Double(re[k]), i - Double(im[k])))
        }
        #expect(worst < 1e-4 * Double(size).squareRoot())
    }

    @Test(arguments: [4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192])
    func inverseRoundTrip(n: Int) {
        let x = Signals.noise(frames: n)
        let fft = RealFFT(size: n)
        var re = [Float](repeating: 0, count: n / 2 + 1), im = re
        var y = [Float](repeating: 0, count: n)
        fft.forward(x, re: &re, im: &im)
        fft.inverse(re: re, im: im, output: &y)
        let err = zip(x, y).map { abs($0 - $1) }.max()!
        #expect(err < 1e-5)
    }

    /// The radix-4 stages two butterflies at a time in eight-lane vectors (`wideVectors`, the
    /// build's choice where the CPU has AVX2) give the very bits of one at a time, both ways,
    /// at sizes whose stages start with radix 2 (odd log2 of the lane length) and radix 4.
    @Test(arguments: [64, 128, 256, 512, 1024, 2048, 4096, 8192])
    func wideAndNarrowStagesGiveTheSameBits(n: Int) {
        let x = Signals.noise(frames: n, seed: 11)
        let narrow = RealFFT(size: n, wideVectors: false), wide = RealFFT(size: n, wideVectors: true)
        var re1 = [Float](repeating: 0, count: n / 2 + 1), im1 = re1, re2 = re1, im2 = re1
        narrow.forward(x, re: &re1, im: &im1)
        wide.forward(x, re: &re2, im: &im2)
        #expect(re1 == re2 && im1 == im2)
        var y1 = [Float](repeating: 0, count: n), y2 = y1
        narrow.inverse(re: re1, im: im1, output: &y1)
        wide.inverse(re: re1, im: im1, output: &y2)
        #expect(y1 == y2)
        // and the result is right, not merely the same
        let err = zip(x, y2).map { abs($0 - $1) }.max()!
        #expect(err < 1e-5)
    }

    /// The fused forms: windowed analysis equals the transform of the windowed input, and the
    /// overlap-add synthesis adds window × inverse to what is there.
    @Test(arguments: [16, 64, 4096])
    func windowedForwardAndAccumulatingInverse(n: Int) {
        let x = Signals.noise(frames: n)
        let w = (0..<n).map { Float(0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(n))) }
        let fft = RealFFT(size: n)
        var re1 = [Float](repeating: 0, count: n / 2 + 1), im1 = re1, re2 = re1, im2 = re1
        fft.forward(zip(x, w).map { $0 * $1 }, re: &re1, im: &im1)
        fft.forward(x, window: w, re: &re2, im: &im2)
        #expect(re1 == re2 && im1 == im2)
        let existing = Signals.noise(frames: n, seed: 7)
        var plain = [Float](repeating: 0, count: n), summed = existing
        fft.inverse(re: re1, im: im1, output: &plain)
        fft.inverse(re: re1, im: im1, window: w, addingTo: &summed)
        let worst = (0..<n).map { abs(summed[$0] - (existing[$0] + plain[$0] * w[$0])) }.max()!
        #expect(worst < 1e-6, "accumulated synthesis off by \(worst)")
    }
}
