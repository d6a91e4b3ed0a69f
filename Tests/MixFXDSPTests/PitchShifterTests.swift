import Foundation
import Testing
@testable import MixFXDSP
import TestSupport

/// Offline use of the shifter: pre-roll and drain by its latency so the output is aligned and as
/// long as the input.
func shift(_ x: [Float], cents: Double, rate: Double = 44_100, overlap: Int = 8, block: Int = 512) -> (out: [Float], starved: Int) {
    let ps = PitchShifter()
    ps.prepare(ProcessSpec(sampleRate: rate, maximumFrameCount: block, channelCount: 1),
               settings: PitchShifterSettings(pitchCents: cents, overlap: overlap))
    let l = ps.latencyFrames
    var padded = x + [Float](repeating: 0, count: l)
    var i = 0
    padded.withUnsafeMutableBufferPointer { p in
        while i < p.count {
            let n = min(block, p.count - i)
            ps.process(left: p.baseAddress! + i, right: nil, frameCount: n)
            i += n
        }
    }
    return (Array(padded[l...]), ps.starvedFrames)
}

@Suite struct PitchShifterTests {
    @Test(arguments: [(110.0, -1200.0), (440.0, 200.0), (440.0, -700.0), (1000.0, 2400.0),
                      (2000.0, -2400.0), (5000.0, 700.0), (60.0, 1200.0), (8000.0, -300.0)])
    func sineComesOutAtExpectedFrequency(freq: Double, cents: Double) {
        let rate = 44_100.0
        let x = Signals.sine(frequencyHz: freq, sampleRate: rate, frames: Int(rate * 2))
        let (y, starved) = shift(x, cents: cents, rate: rate)
        #expect(y.count == x.count)
        #expect(starved == 0)
        let expected = freq * pow(2, cents / 1200)
        let body = y[Int(rate * 0.3)..<Int(rate * 1.7)]
        let measured = Signals.frequency(body, sampleRate: rate)
        #expect(abs(Signals.cents(measured, expected)) < 1, "\(freq) Hz \(cents) ct → \(measured) Hz")
        // Level kept within 1 dB
        let gain = Signals.db(Signals.rms(body) / Signals.rms(x[Int(rate * 0.3)..<Int(rate * 1.7)]))
        #expect(abs(gain) < 1, "level change \(gain) dB")
    }

    @Test func zeroCentsIsBitExactPassthrough() {
        let x = Signals.noise(frames: 10_000)
        let (y, _) = shift(x, cents: 0)
        #expect(y == x)
    }

    /// The amplitude envelope of a slow tone burst peaks at the same instant after shifting.
    @Test(arguments: [-1200.0, 300.0, 1900.0])
    func alignedAtSampleZero(cents: Double) {
        let rate = 44_100.0, n = 88_200, centre = 40_000.0
        let x = (0..<n).map { i in
            Float(0.5 * exp(-pow((Double(i) - centre) / 6000, 2)) * sin(2 * .pi * 500 * Double(i) / rate))
        }
        let (y, _) = shift(x, cents: cents, rate: rate)
        // envelope: RMS over 441-sample windows
        func peakTime(_ s: [Float]) -> Double {
            var best = 0.0, at = 0
            for start in stride(from: 0, to: s.count - 441, by: 49) {
                let e = Signals.rms(s[start..<start + 441])
                if e > best { best = e; at = start + 220 }
            }
            return Double(at)
        }
        #expect(abs(peakTime(y) - peakTime(x)) < 0.002 * rate, "offset \(peakTime(y) - peakTime(x)) samples")
    }

    @Test func blockSizeDoesNotChangeOutput() {
        let x = Signals.noise(frames: 30_000)
        #expect(shift(x, cents: 350, block: 37).out == shift(x, cents: 350, block: 512).out)
    }
}
