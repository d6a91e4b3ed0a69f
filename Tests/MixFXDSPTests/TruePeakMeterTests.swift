import Foundation
import Testing
import MixFXDSP
import TestSupport

/// The true-peak meter against peaks known in closed form.
@Suite struct TruePeakMeterTests {
    func measure(_ x: [Float], block: Int = 1000) -> Float {
        var m = TruePeakMeter(channelCount: 1, maximumFrameCount: block)
        defer { m.deallocate() }
        var i = 0
        x.withUnsafeBufferPointer { p in
            while i < x.count {
                let n = min(block, x.count - i)
                m.process({ _ in p.baseAddress! + i }, frameCount: n)
                i += n
            }
        }
        return m.peak
    }

    /// `x` faded in and out over 2000 samples (a signal that starts from silence with a jump
    /// rings between its first samples: a true peak of its own, not the tone's).
    func faded(_ x: [Float]) -> [Float] {
        x.enumerated().map { i, v in
            let edge = min(i, x.count - 1 - i)
            return edge >= 2000 ? v : v * Float(0.5 - 0.5 * cos(Double.pi * Double(edge) / 2000))
        }
    }

    /// A sine at fs/4 sampled 45° off its crests: every sample is ±0.707, the wave reaches 1.
    @Test func quarterRateSineBetweenItsSamples() {
        let x = faded((0..<8000).map { Float(sin(Double.pi / 2 * Double($0) + Double.pi / 4)) })
        #expect(abs(x.map(abs).max()! - 0.70711) < 1e-4)
        let db = 20 * log10(Double(measure(x)))
        #expect(abs(db) < 0.05, "\(db) dBTP")
    }

    /// Tones up to 0.45·fs at awkward phases read their amplitude (the sample peak reads up to
    /// several dB less at high frequencies).
    @Test(arguments: [997.0, 5_001.0, 11_025.0, 15_003.0, 18_000.0, 19_850.0])
    func tonesReadTheirAmplitude(frequencyHz: Double) {
        let fs = 44_100.0
        for phase in [0.1, 0.77, 2.3] {
            let x = faded((0..<44_100).map { Float(0.5 * sin(2 * Double.pi * frequencyHz * Double($0) / fs + phase)) })
            let db = 20 * log10(Double(measure(x)) / 0.5)
            #expect(db < 0.05 && db > -0.15, "\(frequencyHz) Hz, phase \(phase): \(db) dB")
        }
    }

    @Test func blockSizesDoNotMatterAndResetForgets() {
        let x = Signals.noise(frames: 20_000, amplitude: 0.8, seed: 4)
        let a = measure(x, block: 4096), b = measure(x, block: 7), c = measure(x, block: 1)
        #expect(a == b && b == c)
        #expect(a >= x.map(abs).max()!)
        var m = TruePeakMeter(channelCount: 2, maximumFrameCount: 64)
        defer { m.deallocate() }
        let loud = [Float](repeating: 0.9, count: 64)
        let quiet = faded((0..<6400).map { Float(0.1 * sin(Double($0) * 0.05)) })
        loud.withUnsafeBufferPointer { p in m.process({ _ in p.baseAddress! }, frameCount: 64) }
        m.reset()
        quiet.withUnsafeBufferPointer { p in
            for b in 0..<100 { m.process({ _ in p.baseAddress! + 64 * b }, frameCount: 64) }
        }
        #expect(abs(m.peak - 0.1) < 1e-4)
    }

    /// The meter skips stretches that cannot raise its peak; the detector computes every
    /// frame. On material with loud and quiet stretches both find the same peak, exactly.
    @Test func skippingStretchesChangesNoPeak() {
        var g = SystemRandomNumberGenerator()
        for trial in 0..<6 {
            let n = 50_000
            let x: [Float] = (0..<n).map { i in
                let loud: Float = (i / 3_000 + trial) % 4 == 0 ? 1 : 0.2
                return loud * (Float(sin(Double(i) * 0.9 + Double(trial))) * 0.7 + Float.random(in: -0.3...0.3, using: &g))
            }
            var meter = TruePeakMeter(channelCount: 1, maximumFrameCount: 1000)
            var detector = TruePeakMeter(channelCount: 1, maximumFrameCount: 1000)
            let peaks = UnsafeMutablePointer<Float>.allocate(capacity: 1000)
            defer { meter.deallocate(); detector.deallocate(); peaks.deallocate() }
            var largest: Float = 0
            x.withUnsafeBufferPointer { p in
                for start in stride(from: 0, to: n, by: 1000) {
                    meter.process({ _ in p.baseAddress! + start }, frameCount: 1000)
                    detector.framePeaks({ _ in p.baseAddress! + start }, frameCount: 1000, into: peaks)
                    for i in 0..<1000 { largest = max(largest, peaks[i]) }
                }
            }
            #expect(meter.peak == detector.peak, "trial \(trial)")
            #expect(meter.peak == max(largest, x.map(abs).max()!), "trial \(trial)")
        }
    }
}
