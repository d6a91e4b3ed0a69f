import Foundation
import Testing
@testable import MixFXDSP
import TestSupport

/// `LevelMatch`: on its own (the gain it works out, its delay, its limits, any blocks), in the
/// offline tempo path where the stretch is below 1 (noise keeps its level, a steady tone passes
/// to the bit, the gaps between sounds are not filled); `PitchLevelMatch` in the fixed-latency
/// path of a fixed pitch (the same, raised noise keeping the band below the vocoder's edge, the
/// delay in the latency).
@Suite struct LevelMatchTests {
    /// Runs `input` (recorded at input times n·`tempo`) and `output` through a level match in
    /// blocks of `blocks` (repeated), stereo when given two channels; what `pop` hands out.
    static func matched(input: [[Float]], output: [[Float]], tempo: Double, blocks: [Int], rate: Double = 48_000) -> [[Float]] {
        let most = blocks.max()!, channels = output.count
        let match = LevelMatch(sampleRate: rate, channels: channels, tempo: tempo, maximumFrameCount: most, inputAheadFrames: 64)
        let frames = output[0].count - match.delayFrames
        var out = [[Float]](repeating: [], count: channels)
        var recorded = 0, pushed = 0, popped = 0, b = 0
        func record(upTo t: Int) {
            while recorded < min(t, input[0].count) {
                let n = min(most, min(t, input[0].count) - recorded)
                input[0].withUnsafeBufferPointer { l in
                    input[channels - 1].withUnsafeBufferPointer { r in
                        match.recordInput(left: l.baseAddress! + recorded, right: channels > 1 ? r.baseAddress! + recorded : nil,
                                          frameCount: n, at: recorded)
                    }
                }
                recorded += n
            }
        }
        while popped < frames {
            let n = min(blocks[b % blocks.count], frames - popped)
            b += 1
            while pushed < popped + n + match.delayFrames {
                let k = min(most, popped + n + match.delayFrames - pushed)
                record(upTo: Int(Double(pushed + k) * tempo) + 64)
                output[0].withUnsafeBufferPointer { l in
                    output[channels - 1].withUnsafeBufferPointer { r in
                        match.push(left: l.baseAddress! + pushed, right: channels > 1 ? r.baseAddress! + pushed : nil, frameCount: k)
                    }
                }
                pushed += k
            }
            var l = [Float](repeating: 0, count: n), r = [Float](repeating: 0, count: n)
            l.withUnsafeMutableBufferPointer { lp in
                r.withUnsafeMutableBufferPointer { rp in match.pop(into: lp.baseAddress!, channels > 1 ? rp.baseAddress! : nil, frameCount: n) }
            }
            out[0] += l
            if channels > 1 { out[1] += r }
            popped += n
        }
        return out
    }

    /// An output at a steady fraction a of the input's level (the input itself, scaled: the
    /// same instantaneous power, a² of it) is scaled by 1/a less the dead zone, within the
    /// range, frame for frame in place (so the delay is right), the same for mono and stereo:
    /// a = 0.8 gives 1.25 − 0.005; a = 0.6, beyond +3 dB, gives 1.41254 − 0.005; a = 1.1 gives
    /// 1/1.1 + 0.005; a = 0.998, within the dead zone, is left exactly as it was.
    @Test(arguments: [(0.8, 1.245), (0.6, LevelMatch.highestGain - 0.005), (1.1, 1 / 1.1 + 0.005), (0.998, 1.0)])
    func aSteadyLevelIsBroughtBackWithinItsLimits(a: Double, expected: Double) {
        let n = 24_000
        let x = [Signals.noise(frames: n, amplitude: 0.3, seed: 7), Signals.noise(frames: n, amplitude: 0.3, seed: 8)]
        for channels in [1, 2] {
            let input = Array(x.prefix(channels))
            let output = input.map { $0.map { Float(a) * $0 } }
            let z = Self.matched(input: input, output: output, tempo: 1, blocks: [512])
            // (past the first window and smoothing, where the gains before frame 0 count as 1)
            var worst = 0.0
            for c in 0..<channels {
                for i in 2_000..<z[c].count where abs(output[c][i]) > 1e-3 {
                    worst = max(worst, abs(Double(z[c][i]) / Double(output[c][i]) - expected))
                }
            }
            #expect(worst < 2e-6, "a \(a), \(channels) channel(s): the gain is off \(expected) by up to \(worst)")
            if a == 0.998 { #expect(z[0][2_000...] == output[0][2_000..<z[0].count], "within the dead zone the samples are untouched") }
        }
    }

    /// At a tempo R the input's window is the output window's input times, R times as long:
    /// an output that holds every R-th input sample at half level (R = 2, white noise: the
    /// same power per sample, a quarter of it) is brought up as far as the range allows, and
    /// where the input falls silent (input time n, output frame n/2) turned down as far. The
    /// turn lies where the windows put it: the gain is still the highest at n/2 − S − 60 (its
    /// windows reach input times up to n − 120 + 2h, most of them loud) and already the lowest at
    /// n/2 + h + S + 60; input windows off by h either way would move one of them.
    @Test func theInputWindowIsTheOutputWindowsInputTimes() {
        let n = 48_000
        var x = Signals.noise(frames: 2 * n, amplitude: 0.3, seed: 3)
        for i in n..<(2 * n) { x[i] = 0 }   // the input silent from input time n: output frame n/2
        let all = Signals.noise(frames: 2 * n, amplitude: 0.3, seed: 3)
        let decimated = (0..<n).map { 0.5 * all[2 * $0] }
        let z = Self.matched(input: [x], output: [decimated], tempo: 2, blocks: [700])[0]
        let rate = 48_000.0
        let h = Int(LevelMatch.windowSeconds * rate / 2), s = Int(LevelMatch.smoothingSeconds * rate)
        func gain(_ i: Int) -> Double { Double(z[i]) / Double(decimated[i]) }
        #expect(abs(gain(n / 2 - s - 60) - (LevelMatch.highestGain - 0.005)) < 1e-6, "\(gain(n / 2 - s - 60))")
        #expect(abs(gain(n / 2 + h + s + 60) - (LevelMatch.lowestGain + 0.005)) < 1e-6, "\(gain(n / 2 + h + s + 60))")
        let early = Signals.db(Signals.rms(z[4_000..<20_000]) / Signals.rms(decimated[4_000..<20_000]))
        let late = Signals.db(Signals.rms(z[26_000..<z.count]) / Signals.rms(decimated[26_000..<z.count]))
        // (white noise decimated by 2 keeps its power: the gain wanted is 2, beyond the range)
        #expect(abs(early - Signals.db(LevelMatch.highestGain - 0.005)) < 0.05, "\(early) dB while the input sounds")
        #expect(abs(late - Signals.db(LevelMatch.lowestGain + 0.005)) < 0.01, "\(late) dB once it is silent")
    }

    /// The same output whatever the blocks pushed and popped (every sum is per frame; the
    /// gains' are exact).
    @Test func theSameForAnyBlocks() {
        let n = 30_000
        let x = [Signals.noise(frames: 2 * n, amplitude: 0.3, seed: 11), Signals.noise(frames: 2 * n, amplitude: 0.3, seed: 12)]
        // an output whose level moves: noise under a slow swell
        func swell(_ i: Int) -> Float { Float(0.2 + 0.8 * abs(sin(Double(i) / 3000))) }
        let y: [[Float]] = (0..<2).map { c in (0..<n).map { i in swell(i) * x[c][2 * i + 1] } }
        let reference = Self.matched(input: x, output: y, tempo: 2, blocks: [4096])
        for blocks in [[1], [333, 17, 1024], [4096, 5]] {
            let z = Self.matched(input: x, output: y, tempo: 2, blocks: blocks)
            #expect(z == reference, "blocks \(blocks)")
        }
        #expect(reference[0] != Array(y[0].prefix(reference[0].count)), "the gains moved")
    }

    /// Which offline shifters have one: with a tempo above 1, those whose stretch σ = r/R is below
    /// 1 (`LevelMatch`); with a tempo below 1, those without a pitch (`BandLevelMatch`: none at
    /// 0.5 and −1400 cents); without a tempo, any pitch (`PitchLevelMatch`). Never streaming.
    @Test(arguments: [(2.0, 0.0, true), (1.25, 0.0, true), (1.5, -400.0, true), (0.8, 0.0, true), (1.25, 700.0, false),
                      (1.0, -400.0, true), (1.0, -1.0, true), (1.0, 300.0, true), (1.0, 2400.0, true), (0.5, -1400.0, false)])
    func whichShiftersMatchTheLevel(tempo: Double, cents: Double, matches: Bool) {
        let ps = PitchShifter()
        ps.prepare(ProcessSpec(sampleRate: 48_000, maximumFrameCount: 512, channelCount: 2),
                   settings: PitchShifterSettings(pitchCents: cents, tempo: tempo))
        #expect(ps.matchesLevel == matches)
        if tempo <= PitchShifterSettings.liveTempoRange.upperBound && tempo >= PitchShifterSettings.liveTempoRange.lowerBound {
            ps.prepare(ProcessSpec(sampleRate: 48_000, maximumFrameCount: 512, channelCount: 2),
                       settings: PitchShifterSettings(pitchCents: cents, tempo: tempo), mode: .streaming)
            #expect(!ps.matchesLevel, "streaming")
        }
    }

    /// White noise keeps its level at a faster tempo (the middle two thirds within 0.15 dB),
    /// where without the level match it loses 0.5 dB or more.
    @Test(arguments: [(1.25, 0.0), (2.0, 0.0), (3.0, 0.0), (1.5, -400.0)])
    func whiteNoiseKeepsItsLevel(tempo: Double, cents: Double) {
        let x = [Signals.noise(frames: 96_000, amplitude: 0.3, seed: 21), Signals.noise(frames: 96_000, amplitude: 0.3, seed: 22)]
        func level(_ on: Bool) -> Double {
            let y = stretch(x, tempo: tempo, cents: cents, block: 1024, levelMatch: on).out
            let m = y[0].count
            return Signals.db(Signals.rms(y[0][(m / 6)..<(5 * m / 6)] + y[1][(m / 6)..<(5 * m / 6)])
                              / Signals.rms(x[0][...] + x[1][...]))
        }
        let matched = level(true), unmatched = level(false)
        #expect(abs(matched) < 0.15, "tempo \(tempo), \(cents) ct: \(matched) dB")
        #expect(unmatched < -0.5, "tempo \(tempo), \(cents) ct: \(unmatched) dB without the level match")
    }

    /// A steady tone, whose level the vocoder keeps, comes out the same to the bit past its first
    /// and last 0.1 s (where the input starts and stops at full level).
    @Test(arguments: [1.25, 2.0, 3.0])
    func aSteadyToneIsUntouched(tempo: Double) {
        let x = Signals.sine(frequencyHz: 440, sampleRate: 48_000, frames: 96_000, amplitude: 0.5)
        let matched = stretch([x, x], tempo: tempo, block: 1024).out[0]
        let plain = stretch([x, x], tempo: tempo, block: 1024, levelMatch: false).out[0]
        let body = 4_800..<(matched.count - 4_800)
        let differing = body.filter { matched[$0] != plain[$0] }.count
        #expect(differing == 0, "tempo \(tempo): \(differing) samples differ")
    }

    /// Loud and quiet in turn (noise bursts of 0.2 s over a bed 40 dB under, 0.2 s apart) at
    /// tempo 2: the bursts keep their level (within 0.3 dB; without the match they lose over
    /// 1 dB), and the bed between them, which the gates keep under the input's, comes closer to
    /// it but not above it (the middle halves).
    @Test func burstsKeepTheirLevelAndTheBedBetweenIsNotFilled() {
        let rate = 48_000, period = 19_200, burst = 9_600
        let noise = Signals.noise(frames: 8 * period, amplitude: 0.3, seed: 31)
        let x = (0..<(8 * period)).map { $0 % period < burst ? noise[$0] : 0.01 * noise[$0] }
        let quarter = burst / 4
        var inputBed: [Float] = []
        for p in 1..<7 { inputBed += x[(p * period + burst + quarter)..<(p * period + burst + 3 * quarter)] }
        func levels(_ on: Bool) -> (bed: Double, burst: Double) {
            let y = stretch([x], tempo: 2, rate: Double(rate), block: 1024, levelMatch: on).out[0]
            var beds: [Float] = [], bursts: [Float] = []
            for p in 1..<7 {
                let start: Int = p * period / 2
                let burstStart: Int = start + quarter / 2, bedStart: Int = start + burst / 2 + quarter / 2
                bursts += y[burstStart..<(burstStart + quarter)]
                beds += y[bedStart..<(bedStart + quarter)]
            }
            return (Signals.db(Signals.rms(beds[...]) / Signals.rms(inputBed[...])),
                    Signals.db(Signals.rms(bursts[...]) / Signals.rms(noise[0..<burst])))
        }
        let matched = levels(true), plain = levels(false)
        #expect(abs(matched.burst) < 0.3, "the bursts: \(matched.burst) dB against the input's")
        #expect(plain.burst < -1, "without the match the bursts: \(plain.burst) dB")
        #expect(matched.bed < 0 && matched.bed > plain.bed,
                "the bed between them: \(matched.bed) dB against the input's, \(plain.bed) dB without")
    }

    /// `reset` clears the match too: the same shifter run again gives the same samples.
    @Test func aResetShifterGivesTheSameOutput() {
        let x = [Signals.noise(frames: 40_000, amplitude: 0.3, seed: 41), Signals.noise(frames: 40_000, amplitude: 0.3, seed: 42)]
        let ps = PitchShifter()
        ps.prepare(ProcessSpec(sampleRate: 48_000, maximumFrameCount: 512, channelCount: 2),
                   settings: PitchShifterSettings(pitchCents: -200, tempo: 1.6))
        #expect(ps.matchesLevel)
        let first = stretch(x, tempo: 1.6, cents: -200, block: 512, shifter: ps).out
        let second = stretch(x, tempo: 1.6, cents: -200, block: 512, shifter: ps).out
        #expect(first == second)
    }

    /// A NaN in the input clears the detector instead of poisoning it: an output at 0.8 of the
    /// input's level is brought back by 1.25 − 0.005 once the detector has settled again (its
    /// slowest section's time constant is 800 samples: 20 000 frames on).
    @Test func aNaNDoesNotStopTheMatch() {
        let n = 48_000
        var x = Signals.noise(frames: n, amplitude: 0.3, seed: 51)
        let y = x.map { 0.8 * $0 }
        x[1_000] = .nan
        let z = Self.matched(input: [x], output: [y], tempo: 1, blocks: [512])[0]
        var worst = 0.0
        for i in 20_000..<z.count where abs(y[i]) > 1e-3 { worst = max(worst, abs(Double(z[i]) / Double(y[i]) - 1.245)) }
        #expect(worst < 2e-6, "the gain is off 1.245 by up to \(worst) after the NaN")
    }

    // MARK: - A fixed pitch (the fixed-latency path, `PitchLevelMatch`)

    /// White noise lowered keeps its level (the middle two thirds within 0.15 dB), where without
    /// the match it loses 0.5 dB or more; stereo, mono, and with a tonality limit (its highs
    /// moved outside the vocoder, so lost less: 0.2 dB or more without; the match is on the lows,
    /// the split's crossover as it was: within 0.25 dB).
    @Test(arguments: [(-400.0, 2, 0.0, -0.5, 0.15), (-100.0, 2, 0.0, -0.5, 0.15), (-1200.0, 1, 0.0, -0.5, 0.15),
                      (-300.0, 1, 8_000.0, -0.2, 0.25)])
    func loweredWhiteNoiseKeepsItsLevel(cents: Double, channels: Int, limitHz: Double, unmatchedBelow: Double, within: Double) {
        let x = (0..<channels).map { Signals.noise(frames: 96_000, amplitude: 0.3, seed: 61 + UInt64($0)) }
        func level(_ on: Bool) -> Double {
            let y = Self.shifted(x, cents: cents, limitHz: limitHz, levelMatch: on)
            let m = y[0].count, mid = (m / 6)..<(5 * m / 6)
            return Signals.db(Signals.rms(ArraySlice(y.flatMap { $0[mid] })) / Signals.rms(ArraySlice(x.flatMap { $0[mid] })))
        }
        let matched = level(true), unmatched = level(false)
        #expect(abs(matched) < within, "\(cents) ct, \(channels) channels, limit \(limitHz): \(matched) dB")
        #expect(unmatched < unmatchedBelow, "\(cents) ct: \(unmatched) dB without the level match")
    }

    /// White noise raised keeps the level a raised white noise has: the input's band below the
    /// vocoder's edge (where it cuts what would alias) moved up by r, so its spectrum r times
    /// wider and its density 1/r of the input's. Measured as the density of the output's
    /// 1–8 kHz against the input's whole band: within 0.15 dB of −10·log₁₀ r (without the match
    /// 0.3 dB or more under it), so the match neither keeps the vocoder's loss nor makes up for
    /// the band the edge must take.
    @Test(arguments: [(400.0, 2), (1200.0, 1), (100.0, 2)])
    func raisedWhiteNoiseKeepsTheDensityOfItsBand(cents: Double, channels: Int) {
        let x = (0..<channels).map { Signals.noise(frames: 96_000, amplitude: 0.3, seed: 91 + UInt64($0)) }
        let ideal = -10 * log10(PitchShifterSettings.ratio(cents: cents))
        func density(_ on: Bool) -> Double {
            let y = Self.shifted(x, cents: cents, levelMatch: on)
            let mid = 16_000..<(16_000 + 65_536)
            var outBand = 0.0, inWhole = 0.0
            for c in 0..<channels {
                let (yp, xp) = (Self.powerSpectrum(Array(y[c][mid])), Self.powerSpectrum(Array(x[c][mid])))
                let low = 1_000 * 65_536 / 48_000, high = 8_000 * 65_536 / 48_000
                let band: Double = yp[low..<high].reduce(0, +), whole: Double = xp[1..<(xp.count - 1)].reduce(0, +)
                outBand += band / Double(high - low)
                inWhole += whole / Double(xp.count - 2)
            }
            return 10 * log10(outBand / inWhole)
        }
        let matched = density(true), unmatched = density(false)
        #expect(abs(matched - ideal) < 0.15, "+\(cents) ct: \(matched) dB, a raised white noise's \(ideal)")
        #expect(unmatched < ideal - 0.3, "+\(cents) ct: \(unmatched) dB without the match")
    }

    /// The largest raise at the smallest overlap with the largest blocks the C API takes: the
    /// analysis frames then lie N/(3·4) apart and one block's input runs about 200 of them, which
    /// the match's ring of their band shares holds (sized by N/overlap alone it held 128 and
    /// stopped the process), and the output is on time.
    @Test func aLargeRaiseInLargeBlocksKeepsEveryFramesBandShare() {
        let block = 65_536, x = Signals.noise(frames: 3 * block, amplitude: 0.3, seed: 95)
        let ps = PitchShifter()
        ps.prepare(ProcessSpec(sampleRate: 48_000, maximumFrameCount: block, channelCount: 1),
                   settings: PitchShifterSettings(pitchCents: 2_400, overlap: 3))
        #expect(ps.matchesLevel)
        var y = x
        y.withUnsafeMutableBufferPointer { p in
            for i in stride(from: 0, to: p.count, by: block) { ps.process(left: p.baseAddress! + i, right: nil, frameCount: block) }
        }
        #expect(ps.starvedFrames == 0)
        let tail = y[(2 * block)...]
        #expect(Signals.rms(tail) > 0.05, "the output's last block: \(Signals.rms(tail))")
    }

    /// A steady tone lowered or raised comes out the same to the bit as without the match (past the first
    /// and last 0.1 s), D frames later inside the shifter: the latency removed, at the same
    /// frames. Any blocks give the same output.
    @Test(arguments: [-500.0, 500.0])
    func aShiftedSteadyToneIsUntouchedAndAligned(cents: Double) {
        let x = [Signals.sine(frequencyHz: 330, sampleRate: 48_000, frames: 72_000, amplitude: 0.5)]
        let matched = Self.shifted(x, cents: cents, levelMatch: true)[0]
        let plain = Self.shifted(x, cents: cents, levelMatch: false)[0]
        #expect(matched.count == plain.count)
        let body = 4_800..<(matched.count - 4_800)
        let differing = body.filter { matched[$0] != plain[$0] }.count
        #expect(differing == 0, "\(differing) samples differ")
        let odd = Self.shifted(x, cents: cents, levelMatch: true, blocks: [1, 333, 4_096, 17])[0]
        #expect(odd == matched)
    }

    /// Noise bursts lowered or raised by 700 cents keep their place and level: the match's delay
    /// is in the latency, so each burst's onset is where the unmatched shifter's is (its
    /// envelope's 50 % point within 1 ms), and its level within 0.3 dB of the input's (raised,
    /// of the input's band below the edge, `raisedWhiteNoiseKeepsTheDensityOfItsBand`).
    @Test(arguments: [-700.0, 700.0])
    func shiftedBurstsKeepTheirPlaceAndLevel(cents: Double) {
        let period = 24_000, burst = 9_600
        let noise = Signals.noise(frames: 4 * period, amplitude: 0.3, seed: 71)
        let x = [(0..<(4 * period)).map { $0 % period < burst && $0 >= period ? noise[$0] : 0 }]
        let matched = Self.shifted(x, cents: cents, levelMatch: true)[0]
        let plain = Self.shifted(x, cents: cents, levelMatch: false)[0]
        // (raised, the band the edge keeps: 0.92/r of the input's, white)
        let expected = cents > 0 ? 10 * log10(0.92 / PitchShifterSettings.ratio(cents: cents)) : 0
        func onset(_ y: [Float], after start: Int) -> Int {
            var e = 0.0
            let level = Signals.rms(y[(start + 2_400)..<(start + burst - 2_400)])
            for i in (start - 2_400)..<(start + 2_400) {
                e = 0.99 * e + 0.01 * Double(y[i] * y[i])
                if e.squareRoot() > 0.5 * Double(level) { return i }
            }
            return -1
        }
        for p in 1..<4 {
            let start = p * period
            #expect(abs(onset(matched, after: start) - onset(plain, after: start)) <= 48, "burst \(p)")
            let level = Signals.db(Signals.rms(matched[(start + 2_400)..<(start + burst - 2_400)])
                                   / Signals.rms(noise[(start + 2_400)..<(start + burst - 2_400)]))
            #expect(abs(level - expected) < 0.3, "burst \(p): \(level) dB, \(expected) expected")
        }
    }

    /// What live playback relies on for `mixfx play` to be `mixfx render` less the match: a
    /// streaming shifter at a fixed pitch gives the offline shifter's samples without its level
    /// match, to the bit (the offline latency removed), and with it they differ. (Up to the last
    /// 10 000 frames: there this harness's streaming shifter, asked for no more output than the
    /// input's length, differs from the offline drain; `PlayTests` compare whole sessions.)
    @Test(arguments: [-300.0, 300.0])
    func aStreamingShifterIsTheOfflineShifterWithoutTheMatch(cents: Double) {
        let x = Signals.noise(frames: 60_000, amplitude: 0.3, seed: 81)
        let offline = Self.shifted([x], cents: cents, levelMatch: false)[0]
        let matched = Self.shifted([x], cents: cents, levelMatch: true)[0]
        let ps = PitchShifter()
        ps.prepare(ProcessSpec(sampleRate: 48_000, maximumFrameCount: 1_024, channelCount: 1),
                   settings: PitchShifterSettings(pitchCents: cents), mode: .streaming)
        #expect(!ps.matchesLevel)
        let live = ps.streamed(x, frames: x.count, blocks: [256])
        let differing = live.indices.dropLast(10_000).filter { live[$0] != offline[$0] }
        #expect(differing.isEmpty, "\(differing.count) differ, the first at \(differing.first ?? -1), the last at \(differing.last ?? -1) of \(live.count)")
        #expect(live[..<50_000] != matched[..<50_000])
    }

    /// |X_k|² of `x` (a power of two long), k = 0 … N/2.
    static func powerSpectrum(_ x: [Float]) -> [Double] {
        var re = [Float](repeating: 0, count: x.count / 2 + 1), im = re
        RealFFT(size: x.count).forward(x, re: &re, im: &im)
        return (0..<re.count).map { k -> Double in
            let r = Double(re[k]), i = Double(im[k])
            return r * r + i * i
        }
    }

    /// `x` shifted through an offline shifter at 48 kHz, blocks of `blocks` (repeated), its
    /// latency pre-rolled and drained: as long as `x`.
    static func shifted(_ x: [[Float]], cents: Double, limitHz: Double = 0, levelMatch: Bool, blocks: [Int] = [1_024]) -> [[Float]] {
        let ps = PitchShifter()
        ps.prepare(ProcessSpec(sampleRate: 48_000, maximumFrameCount: blocks.max()!, channelCount: x.count),
                   settings: PitchShifterSettings(pitchCents: cents, tonalityLimitHz: limitHz, levelMatch: levelMatch))
        #expect(ps.matchesLevel == levelMatch)
        let l = ps.latencyFrames
        let zeros = [Float](repeating: 0, count: l)
        var left = x[0] + zeros, right = x.count > 1 ? x[1] + zeros : []
        let total = left.count
        var i = 0, b = 0
        while i < total {
            let n = min(blocks[b % blocks.count], total - i)
            b += 1
            left.withUnsafeMutableBufferPointer { lp in
                right.withUnsafeMutableBufferPointer { rp in
                    ps.process(left: lp.baseAddress! + i, right: x.count > 1 ? rp.baseAddress! + i : nil, frameCount: n)
                }
            }
            i += n
        }
        #expect(ps.starvedFrames == 0)
        return (x.count > 1 ? [left, right] : [left]).map { Array($0[l...]) }
    }
}
