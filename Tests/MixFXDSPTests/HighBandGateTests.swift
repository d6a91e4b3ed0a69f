import Foundation
import Testing
@testable import MixFXDSP
import TestSupport

/// The gate on the highs (`HighBandGate`) on its own: the input written into an `InputHistory`,
/// a "wet" signal made from it, and the gate run over the wet signal in blocks.
@Suite struct HighBandGateTests {
    static let rate = 44_100.0

    /// Runs the gate over `wet` (stereo: `wetRight`) in blocks of `blocks` (cycled), the input
    /// `x` (stereo: `right`) at the same times, every frame at pitch ratio `ratio`. With a
    /// `tempo` R, output frame o is at input time ⌊o·R⌋ (the offline tempo path's `times`).
    static func gate(wet: [Float], wetRight: [Float]? = nil, input x: [Float], right: [Float]? = nil,
                     ratio: Double = 1, formants: Bool = false, blocks: [Int] = [512], tempo: Double? = nil) -> (left: [Float], right: [Float]?) {
        let n = wet.count
        let history = InputHistory(channelCount: right == nil ? 1 : 2, frames: x.count + 64, slack: 64)
        let times = (0..<n).map { o in tempo.map { Int((Double(o) * $0).rounded(.down)) } ?? o }
        x.withUnsafeBufferPointer { l in
            if let right {
                right.withUnsafeBufferPointer { r in history.write(left: l.baseAddress!, right: r.baseAddress!, frameCount: x.count, at: 0) }
            } else {
                history.write(left: l.baseAddress!, right: nil, frameCount: x.count, at: 0)
            }
        }
        let g = HighBandGate(sampleRate: rate)
        var outL = wet, outR = wetRight
        let ratios = [Double](repeating: ratio, count: n)
        var start = 0, b = 0
        while start < n {
            let count = min(blocks[b % blocks.count], n - start)
            outL.withUnsafeMutableBufferPointer { l in
                ratios.withUnsafeBufferPointer { rs in
                    times.withUnsafeBufferPointer { ts in
                        // (with a tempo, the block's input times as the shifter lists them)
                        let listed = tempo == nil ? nil : ts.baseAddress! + start
                        if outR != nil {
                            outR!.withUnsafeMutableBufferPointer { r in
                                g.process(left: l.baseAddress! + start, right: r.baseAddress! + start, frameCount: count, firstOutput: start,
                                          firstTime: tempo == nil ? start : 0, times: listed, ratios: rs.baseAddress! + start,
                                          formants: formants, input: history.view, inputEnd: x.count)
                            }
                        } else {
                            g.process(left: l.baseAddress! + start, right: nil, frameCount: count, firstOutput: start,
                                      firstTime: tempo == nil ? start : 0, times: listed, ratios: rs.baseAddress! + start,
                                      formants: formants, input: history.view, inputEnd: x.count)
                        }
                    }
                }
            }
            start += count
            b += 1
        }
        return (outL, outR)
    }

    /// A tone plus noise, both channels: the same signal in and out, so the two envelopes agree
    /// and every sample passes exactly.
    @Test func steadyMaterialPassesBitExact() {
        let n = 40_000
        let tone = Signals.sine(frequencyHz: 3000, sampleRate: Self.rate, frames: n, amplitude: 0.3)
        let noise = Signals.noise(frames: n, amplitude: 0.2, seed: 5)
        let l = zip(tone, noise).map { $0 + $1 }, r = zip(tone, noise.reversed()).map { $0 + $1 }
        let out = Self.gate(wet: l, wetRight: r, input: l, right: r, blocks: [37, 512, 1])
        #expect(out.left == l)
        #expect(out.right! == r)
    }

    /// A shift moves a component from f to r·f, where the detector weighs it about r² as much:
    /// a wet signal holding the input's tones at r·f, as loud, passes exactly. Without the r²
    /// scaling, r = 2.5 reads 8 dB over the input and would be gated.
    @Test(arguments: [2.5, 0.4])
    func aShiftedSignalIsNotGated(ratio: Double) {
        let n = 30_000
        var x = [Float](repeating: 0, count: n), y = x
        for f in [400.0, 1100.0, 3000.0, 7000.0] {
            let a = Signals.sine(frequencyHz: f, sampleRate: Self.rate, frames: n, amplitude: 0.1)
            let b = Signals.sine(frequencyHz: f * ratio, sampleRate: Self.rate, frames: n, amplitude: 0.1)
            for i in 0..<n { x[i] += a[i]; y[i] += b[i] }
        }
        #expect(Self.gate(wet: y, input: x, ratio: ratio).left == y)
    }

    /// A hit over a low tone, and a wet signal with the hit's highs smeared over the 25 ms
    /// before it (as the vocoder's window does, 15 dB under the hit): the smear comes down by at
    /// least 12 dB above 4 kHz, the tone under it stays within 0.2 dB, and the hit itself passes.
    /// (Not further: the detector weighs the 150 Hz tone 43 dB under a high, and lets the wet
    /// highs 6 dB over what it reads.)
    @Test func aSmearBeforeAHitComesDownAndTheLowsStay() {
        let n = 30_000, hit = 20_000, smear = Int(0.025 * Self.rate)
        let bed = Signals.sine(frequencyHz: 150, sampleRate: Self.rate, frames: n, amplitude: 0.3)
        let burst = Signals.noise(frames: 4_000, amplitude: 0.5, seed: 9)
        var x = bed
        for i in 0..<burst.count { x[hit + i] += burst[i] * Float(exp(-Double(i) / 800)) }
        var wet = x
        for i in 0..<smear { wet[hit - smear + i] += 0.18 * burst[i] * Float(i) / Float(smear) }
        let out = Self.gate(wet: wet, input: x).left
        let before = (hit - smear)..<(hit - 10)
        let highIn = Signals.preEchoAbove(wet, cutoffHz: 4000, onsets: [hit], rate: Int(Self.rate))
        let highOut = Signals.preEchoAbove(out, cutoffHz: 4000, onsets: [hit], rate: Int(Self.rate))
        #expect(highOut < highIn - 12, "smear above 4 kHz \(highIn) → \(highOut) dB")
        // the tone's level under the smear: the output less the smear's own part below the corner
        let toneIn = Signals.rms(bed[before]), toneOut = Signals.rms(Signals.butterworth(out, highPass: false, cornerHz: 1000, rate: Self.rate, sections: 2)[before])
        #expect(abs(Signals.db(toneOut / toneIn)) < 0.2, "the tone under the smear moved \(Signals.db(toneOut / toneIn)) dB")
        let after = hit..<(hit + 2_000)
        #expect(abs(Signals.db(Signals.rms(out[after]) / Signals.rms(x[after]))) < 0.5, "the hit itself changed")
    }

    /// With a tempo (frame o at input time ⌊o·R⌋, the offline tempo path's listed times): a wet
    /// signal that is the input held at those times passes exactly (at R = 1/2 every sample held
    /// twice: its detector reads at most the input's); the same with its highs 10 ms early is
    /// gated before each hit, 12 dB or more above 4 kHz, and the same for any blocks.
    @Test(arguments: [0.5, 1.5])
    func withATempoTheGateReadsTheListedTimes(tempo: Double) {
        let h = Signals.hitsOverBed(rate: Int(Self.rate))
        let n = Int(Double(h.signal.count - 2_000) / tempo)
        let held = (0..<n).map { h.signal[Int((Double($0) * tempo).rounded(.down))] }
        let onsets = h.onsets.map { Int((Double($0) / tempo).rounded()) }.filter { $0 > 2_000 && $0 < n - 2_000 }
        if tempo < 1 {
            #expect(Self.gate(wet: held, input: h.signal, tempo: tempo).left == held, "the input held at its times was gated")
        }
        let lead = 441
        let early = (0..<n).map { o in h.signal[min(h.signal.count - 1, Int((Double(o) * tempo).rounded(.down)) + lead)] }
        let reference = Self.gate(wet: early, input: h.signal, tempo: tempo).left
        let before = Signals.preEchoAbove(early, cutoffHz: 4000, onsets: onsets, rate: Int(Self.rate))
        let after = Signals.preEchoAbove(reference, cutoffHz: 4000, onsets: onsets, rate: Int(Self.rate))
        #expect(after < before - 12, "tempo \(tempo): the early highs above 4 kHz \(before) → \(after) dB")
        for blocks in [[1], [37, 1, 500], [4096]] {
            #expect(Self.gate(wet: early, input: h.signal, blocks: blocks, tempo: tempo).left == reference, "tempo \(tempo), blocks \(blocks)")
        }
    }

    /// The gate's output for any blocks, on hits over a bed where it acts: the same samples.
    @Test func theOutputDoesNotDependOnTheBlocks() {
        let h = Signals.hitsOverBed(rate: Int(Self.rate))
        // a wet signal whose highs lead the input's by 10 ms, so the gate closes before each hit
        let lead = 441
        let wet = Array(h.signal[lead...]) + [Float](repeating: 0, count: lead)
        let reference = Self.gate(wet: wet, input: h.signal, ratio: 0.8).left
        #expect(reference != wet, "the gate never acted")
        for blocks in [[1], [7], [37, 1, 500], [4096]] {
            #expect(Self.gate(wet: wet, input: h.signal, ratio: 0.8, blocks: blocks).left == reference, "blocks \(blocks)")
        }
    }
}
