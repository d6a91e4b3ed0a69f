import Foundation
import Testing
@testable import MixFXDSP
import TestSupport

/// Offline use of the shifter: pre-roll and drain by its latency so the output is aligned and as
/// long as the input.
func shift(_ x: [Float], cents: Double, rate: Double = 44_100, overlap: Int = 8, block: Int = 512,
           preserveFormants: Bool = false, tonalityLimitHz: Double = 0) -> (out: [Float], starved: Int) {
    let ps = PitchShifter()
    ps.prepare(ProcessSpec(sampleRate: rate, maximumFrameCount: block, channelCount: 1),
               settings: PitchShifterSettings(pitchCents: cents, overlap: overlap, preserveFormants: preserveFormants,
                                              tonalityLimitHz: tonalityLimitHz))
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

/// A voice-like tone: every harmonic of `f0` below `topHz` at `amplitude(its frequency)`, the
/// k-th at phase 0.7·k².
func harmonics(f0: Double, below topHz: Double, frames n: Int, rate: Double, amplitude: (Double) -> Double) -> [Float] {
    var x = [Float](repeating: 0, count: n)
    var k = 1.0
    while k * f0 < topHz {
        let a = amplitude(k * f0), w = 2 * Double.pi * k * f0 / rate, ph = k * k * 0.7
        for i in 0..<n { x[i] += Float(a * sin(w * Double(i) + ph)) }
        k += 1
    }
    return x
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
        #expect(abs(Signals.cents(measured, expected)) < 0.01, "\(freq) Hz \(cents) ct → \(measured) Hz")
        // Everything that is not the shifted tone stays 60 dB down (measured 68–138 dB).
        let sinad = -Signals.residualDB(body, frequencyHz: measured, sampleRate: rate)
        #expect(sinad > 60, "\(freq) Hz \(cents) ct: SINAD \(sinad) dB")
        // Level kept within 1 dB
        let gain = Signals.db(Signals.rms(body) / Signals.rms(x[Int(rate * 0.3)..<Int(rate * 1.7)]))
        #expect(abs(gain) < 1, "level change \(gain) dB")
    }

    /// Stereo: both channels turn by the same phasors, so their phase relation (the image) holds.
    @Test func stereoChannelsKeepTheirPhaseRelation() {
        let rate = 44_100.0, n = 88_200
        let l = Signals.sine(frequencyHz: 500, sampleRate: rate, frames: n)
        let r = Signals.sine(frequencyHz: 500, sampleRate: rate, frames: n, amplitude: 0.3, phase: 1.0)
        let ps = PitchShifter()
        ps.prepare(ProcessSpec(sampleRate: rate, maximumFrameCount: 512, channelCount: 2),
                   settings: PitchShifterSettings(pitchCents: 300))
        let latency = ps.latencyFrames
        var a = l + [Float](repeating: 0, count: latency), b = r + [Float](repeating: 0, count: latency)
        a.withUnsafeMutableBufferPointer { ap in b.withUnsafeMutableBufferPointer { bp in
            var i = 0
            while i < ap.count {
                let k = min(512, ap.count - i)
                ps.process(left: ap.baseAddress! + i, right: bp.baseAddress! + i, frameCount: k)
                i += k
            }
        } }
        let yl = Array(a[latency...]), yr = Array(b[latency...])
        let f = 500 * pow(2, 3.0 / 12)
        // Fit both channels at the shifted frequency and compare phase difference and level ratio.
        func fit(_ y: ArraySlice<Float>) -> (amp: Double, phase: Double) {
            var c = 0.0, s = 0.0
            for (k, v) in y.enumerated() {
                let ang = 2 * Double.pi * f * Double(k) / rate
                c += Double(v) * cos(ang); s += Double(v) * sin(ang)
            }
            return (hypot(c, s), atan2(c, s))
        }
        let fl = fit(yl[22_050..<66_150]), fr = fit(yr[22_050..<66_150])
        var dphi = fr.phase - fl.phase
        while dphi > .pi { dphi -= 2 * .pi }
        while dphi < -.pi { dphi += 2 * .pi }
        #expect(abs(dphi - 1.0) < 0.01, "phase difference \(dphi), input 1.0")
        #expect(abs(Signals.db(fr.amp / fl.amp) - Signals.db(0.3 / 0.5)) < 0.05)
    }

    /// Stereo material keeps its image: the inter-channel correlation moves by ≤ 0.05 and the
    /// mono sum of the shifted stereo loses ≤ 0.5 dB against the shifted mono sum.
    @Test(arguments: [200.0, -700.0])
    func stereoImageAndMonoSumHold(cents: Double) {
        let rate = 44_100.0, n = 3 * 44_100
        // A chord panned differently per note, partly out of phase, over a little shared noise.
        var l = [Float](repeating: 0, count: n), r = l
        let noise = Signals.noise(frames: n, amplitude: 0.02)
        for (i, (f, pan, ph)) in [(220.0, -0.6, 0.0), (277.2, 0.4, 1.2), (329.6, 0.1, 2.5), (440.0, 0.8, 0.7)].enumerated() {
            let gl = Float(cos((pan + 1) * .pi / 4)), gr = Float(sin((pan + 1) * .pi / 4))
            for k in 0..<n {
                let t = Double(k) / rate
                l[k] += gl * Float(0.15 * sin(2 * .pi * f * t + Double(i)))
                r[k] += gr * Float(0.15 * sin(2 * .pi * f * t + Double(i) + ph))
            }
        }
        for k in 0..<n { l[k] += noise[k]; r[k] += noise[k] }
        func run(_ a: [Float], _ b: [Float]?) -> ([Float], [Float]) {
            let ps = PitchShifter()
            ps.prepare(ProcessSpec(sampleRate: rate, maximumFrameCount: 512, channelCount: b == nil ? 1 : 2),
                       settings: PitchShifterSettings(pitchCents: cents))
            let pad = [Float](repeating: 0, count: ps.latencyFrames)
            var x = a + pad, y = (b ?? a) + pad
            x.withUnsafeMutableBufferPointer { xp in y.withUnsafeMutableBufferPointer { yp in
                var i = 0
                while i < xp.count {
                    let m = min(512, xp.count - i)
                    ps.process(left: xp.baseAddress! + i, right: b == nil ? nil : yp.baseAddress! + i, frameCount: m)
                    i += m
                }
            } }
            return (Array(x[ps.latencyFrames...]), Array(y[ps.latencyFrames...]))
        }
        func correlation(_ a: ArraySlice<Float>, _ b: ArraySlice<Float>) -> Double {
            var ab = 0.0, aa = 0.0, bb = 0.0
            for (x, y) in zip(a, b) { ab += Double(x) * Double(y); aa += Double(x) * Double(x); bb += Double(y) * Double(y) }
            return ab / (aa * bb).squareRoot()
        }
        let body = 22_050..<(n - 22_050)
        let (sl, sr) = run(l, r)
        let change = abs(correlation(sl[body], sr[body]) - correlation(l[body], r[body]))
        #expect(change <= 0.05, "correlation moved by \(change)")
        let monoOfStereo = zip(sl, sr).map { 0.5 * ($0 + $1) }
        let (shiftedMono, _) = run(zip(l, r).map { 0.5 * ($0 + $1) }, nil)
        let loss = Signals.db(Signals.rms(shiftedMono[body]) / Signals.rms(monoOfStereo[body]))
        #expect(loss <= 0.5, "mono sum loses \(loss) dB")
    }

    /// Streaming (how `mixfx play` shifts): pitch glides without clicks or NaN, and 0 cents again
    /// is the exact input (no latency: at its own time). Raising the pitch lengthens the
    /// synthesis hop (up to a quarter frame at +2400), so the glides also cross hop changes.
    @Test(arguments: [700.0, 2400.0])
    func liveGlidesAndReturnsToExactPassthrough(peakCents: Double) {
        let rate = 48_000.0, block = 480
        let x = Signals.sine(frequencyHz: 440, sampleRate: rate, frames: Int(rate * 6))
        let ps = PitchShifter()
        ps.prepare(ProcessSpec(sampleRate: rate, maximumFrameCount: block, channelCount: 1),
                   settings: PitchShifterSettings(pitchCents: 0), mode: .streaming)
        let latency = ps.latencyFrames
        #expect(latency == 0)
        let y = ps.streamed(x, frames: x.count, blocks: [block]) { i in
            let t = Double(i) / rate
            // 0 → peak at 1 s, glide down to −500 by 2.5 s, back to 0 at 3 s
            ps.setPitchCents(t < 1 ? 0 : t < 1.5 ? peakCents : t < 2.5 ? peakCents - (t - 1.5) * (peakCents + 500) : t < 3 ? -500 : 0)
        }
        #expect(y.allSatisfy { $0.isFinite })
        #expect(ps.starvedFrames == 0)
        // no step larger than the highest pitch's own (a 440·2^(peak/1200) Hz sine at 0.5)
        let ownMax = 0.5 * 2 * Double.pi * 440 * pow(2, peakCents / 1200) / rate
        let worst = zip(y.dropFirst(), y).map { abs(Double($0 - $1)) }.max()!
        #expect(worst < ownMax * 1.1, "largest step \(worst), allowed \(ownMax * 1.1)")
        // After the return to 0 cents has passed through the latency and the crossfade: exact.
        let settled = Int(3 * rate) + latency + Int(0.2 * rate)
        #expect(Array(y[settled...]) == Array(x[(settled - latency)..<(x.count - latency)]))
    }

    /// Raising the pitch, nothing folds back: a tone that the shift would carry past Nyquist is
    /// removed (the frames are cut at 0.92/r of Nyquist before synthesis, and the short
    /// interpolator that reads them is only exact for what lies below that edge). Without the
    /// cut, 20.5 kHz at +200 cents would come back at 21.1 kHz.
    @Test(arguments: [(20_500.0, 200.0), (12_000.0, 1200.0), (6_500.0, 2400.0)])
    func raisedTonesAboveNyquistVanish(freq: Double, cents: Double) {
        let rate = 44_100.0
        let x = Signals.sine(frequencyHz: freq, sampleRate: rate, frames: Int(rate * 2), amplitude: 0.5)
        let (y, _) = shift(x, cents: cents, rate: rate)
        let level = 20 * log10(Signals.rms(y[Int(rate / 2)..<Int(rate * 3 / 2)]) / (0.5 / 2.0.squareRoot()))
        #expect(level < -85, "\(level) dB left")
    }

    /// A harmonic tone (12 partials, levels falling 3 dB per partial, random phases): every
    /// partial keeps its level within 0.1 dB, and what lies between the partials stays 50 dB
    /// down. G3 (196 Hz) and a bass A1 (55 Hz, partials 2.6 bins apart at the analysis size).
    @Test(arguments: [(196.0, 300.0), (196.0, -500.0), (196.0, 1200.0), (55.0, 300.0), (55.0, -500.0)])
    func harmonicTonesKeepTheirPartials(f0: Double, cents: Double) {
        let rate = 44_100.0, count = 12
        let levels = (0..<count).map { 0.25 * pow(10, -3 * Double($0) / 20) }
        let phases = (0..<count).map { Double($0 * $0) * 0.7 }
        var x = [Float](repeating: 0, count: Int(rate * 1.5))
        for n in x.indices {
            var v = 0.0
            for j in 0..<count { v += levels[j] * sin(2 * .pi * f0 * Double(j + 1) * Double(n) / rate + phases[j]) }
            x[n] = Float(v)
        }
        let (y, _) = shift(x, cents: cents, rate: rate)
        let r = pow(2, cents / 1200)
        let body = y[Int(rate * 0.4)..<Int(rate * 0.4 + 8192)]
        let fit = Signals.partials(body, frequenciesHz: (1...count).map { f0 * r * Double($0) }, sampleRate: rate)
        let worst = zip(fit.amplitudes, levels).map { abs(Signals.db($0 / $1)) }.max()!
        #expect(worst < 0.1, "partial levels off by up to \(worst) dB, \(f0) Hz at \(cents) cents")
        #expect(fit.residualDB < -50, "energy between partials \(fit.residualDB) dB, \(f0) Hz at \(cents) cents")
    }

    /// Attacks: the vocoder must not smear a hit into the silence before it, move it, or repeat it.
    /// Pre-echo below −82 dB: the gate closes on the smear within 1 ms, down to 6 dB over
    /// `quietPower` where the input has been silent for 20 ms (at 6 dB over the released
    /// envelope of the hit before: −77.6 dB at +1200 cents), and the splice reads a hit from
    /// silence without its interpolator's precursor (−53 dB before either) and takes the output
    /// whole 0.2 ms into its ramp, where the gate's look-ahead lets the smear's last samples in
    /// (−72.4 dB at +1200 cents with a crossfade over the whole ramp).
    @Test(arguments: [-1200.0, -500.0, 200.0, 1200.0])
    func hitsStayCleanAndInPlace(cents: Double) {
        let rate = 44_100
        let h = Signals.hits(rate: rate)
        let (y, _) = shift(h.signal, cents: cents, rate: Double(rate))
        let a = Signals.attacks(y, input: h.signal, onsets: h.onsets, rate: rate)
        #expect(a.preEchoDB < -82, "pre-echo \(a.preEchoDB) dB at \(cents) cents")
        #expect(abs(a.shiftMS) < 1, "onset moved \(a.shiftMS) ms at \(cents) cents")
        #expect(a.doubledDB < 3, "level after the attack \(a.doubledDB) dB above the input's at \(cents) cents")
    }

    /// A hit a few milliseconds into the input: nothing of it before, though the vocoder's first
    /// frames hold its smear from the output's first sample (the gate's gain moving from 1 over
    /// its close time let −25 to −56 dB of it through there).
    @Test(arguments: [(5.0, -1200.0), (12.0, 1200.0), (25.0, 200.0)])
    func aHitJustAfterTheStartHasNothingBeforeIt(leadMS: Double, cents: Double) {
        let rate = 44_100, lead = Int(leadMS / 1000 * Double(rate)), n = rate / 5
        let noise = Signals.noise(frames: n, amplitude: 0.8, seed: 17)
        var x = [Float](repeating: 0, count: lead + n + rate / 2)
        for i in 0..<n {
            let t = Double(i) / Double(rate)
            x[lead + i] = noise[i] * Float(min(1, t / 0.002) * exp(-t / 0.06))
        }
        let (y, _) = shift(x, cents: cents, rate: Double(rate))
        let before = Signals.rms(y[..<lead]), after = Signals.rms(y[lead..<(lead + rate * 3 / 100)])
        #expect(Signals.db(before / after) < -90, "\(Signals.db(before / after)) dB before a hit \(leadMS) ms in at \(cents) cents")
    }

    /// The same hits over a bed of low tones: the bed holds the whole band's envelope up, so only
    /// the gate on the highs keeps the smear of each hit's highs out of the 30 ms before it
    /// (−13 to −20 dB without it: Benchmarks/RESULTS.md, 2026-12-06 13:10).
    @Test(arguments: [(-1200.0, -35.0), (-500.0, -35.0), (200.0, -33.0), (1200.0, -24.0)])
    func hitsOverABedKeepTheirHighsClean(cents: Double, limitDB: Double) {
        let rate = 44_100
        let h = Signals.hitsOverBed(rate: rate)
        let (y, _) = shift(h.signal, cents: cents, rate: Double(rate))
        let pre = Signals.preEchoAbove(y, cutoffHz: 4000, onsets: h.onsets, rate: rate)
        #expect(pre < limitDB, "pre-echo above 4 kHz \(pre) dB at \(cents) cents")
        #expect(Signals.preEchoAbove(h.signal, cutoffHz: 4000, onsets: h.onsets, rate: rate) < -80, "the bed reaches 4 kHz")
        // the hits' highs in place: spliced above the crossover when the pitch goes down (the
        // vocoder would lay them up to 5 ms late), left to the vocoder when it goes up
        func highs(_ s: [Float]) -> [Float] { Signals.butterworth(s, highPass: true, cornerHz: 4000, rate: Double(rate), sections: 2) }
        let a = Signals.attacks(highs(y), input: highs(h.signal), onsets: h.onsets, rate: rate)
        #expect(abs(a.shiftMS) < 0.5, "the hits' highs moved \(a.shiftMS) ms at \(cents) cents")
    }

    /// A held chord (1.2, 1.8, 2.5 kHz) under hats (noise above 6 kHz) every half second or so,
    /// raised or lowered: each tone keeps its level (20 ms Hann windows every 5 ms, against the
    /// tone's level between hats) within 3 dB through each hat (windows centred from its onset to
    /// 50 ms after it) and within 9 dB before it (centred in the 20 ms before, where the gates
    /// turn the highs down against the hat's pre-echo: up to 7.7 dB for the 2.5 kHz tone at
    /// −1200 cents). A splice over the chord sums two takes of it, the vocoder's and the splice's,
    /// which cancel: up to 44 dB down at +300 cents, where no splice is made over sound, and 24 dB
    /// at −300 with the splice above a fixed 1.5 kHz (RESULTS.md, 2026-12-06 19:10 and 21:00).
    /// With a tempo (the splice placed in output time) the hats land at T/R. The chord 10 and 16 dB
    /// quieter (`chordDB`) cancels as deeply: through the hats the same bound holds (the margin
    /// a splice asks of the hit is 40 dB; at 20 dB the chord at −6 dB still dipped 16 dB); before
    /// them the gates' dip grows as the chord gets quieter under the same smear: 15 dB there
    /// (13.1 measured at −16 dB).
    @Test(arguments: [(300.0, 1.0, 0.0), (1200.0, 1.0, 0.0), (-300.0, 1.0, 0.0), (-500.0, 1.0, 0.0), (-1200.0, 1.0, 0.0),
                      (-300.0, 1.25, 0.0), (-300.0, 0.8, 0.0), (-300.0, 1.0, -10.0), (-300.0, 1.0, -16.0)])
    func aHeldChordKeepsItsLevelThroughHits(cents: Double, tempo: Double, chordDB: Double) {
        let rate = 44_100.0, n = 8 * 44_100, r = pow(2, cents / 1200)
        let tones = [1200.0, 1800.0, 2500.0]
        var x = [Float](repeating: 0, count: n)
        let level = 0.05 * pow(10, chordDB / 20)
        for f in tones { for (i, v) in Signals.sine(frequencyHz: f, sampleRate: rate, frames: n, amplitude: level).enumerated() { x[i] += v } }
        let hat = Signals.butterworth(Signals.noise(frames: n, amplitude: 1, seed: 5), highPass: true, cornerHz: 6000, rate: rate, sections: 2)
        // (spaced unevenly, so the chord's phases at the hats vary: the two takes' cancelling
        // depends on them)
        let onsets = sequence(first: 22_050) { $0 + 22_050 + 1000 * ($0 / 22_050 % 7) }.prefix { $0 < n - 22_050 }.map { $0 }
        for o in onsets {
            for i in 0..<4410 {
                let s = Double(i) / rate
                x[o + i] += Float(0.6 * min(1, s / 0.001) * exp(-s / 0.03)) * hat[o + i]
            }
        }
        let y = tempo == 1 ? shift(x, cents: cents, rate: rate).out : stretch([x], tempo: tempo, cents: cents, rate: rate).out[0]
        let landed = onsets.map { Int((Double($0) / tempo).rounded()) }
        /// The amplitude at `hz` of the 20 ms from `start`, Hann-windowed.
        func amplitude(_ hz: Double, at start: Int) -> Double {
            var c = 0.0, si = 0.0, sum = 0.0
            for i in 0..<882 {
                let w = 0.5 - 0.5 * cos(2 * Double.pi * Double(i) / 882)
                let phase = 2 * Double.pi * hz * Double(start + i) / rate
                c += w * Double(y[start + i]) * cos(phase); si += w * Double(y[start + i]) * sin(phase); sum += w
            }
            return 2 * hypot(c, si) / sum
        }
        for f in tones {
            let steady = amplitude(f * r, at: landed[0] - 11_025)
            var before = 0.0, through = 0.0
            for o in landed {
                for start in stride(from: o - 882, through: o + 1764, by: 220) {
                    let off = abs(20 * log10(amplitude(f * r, at: start) / steady))
                    if start + 441 < o { before = max(before, off) } else { through = max(through, off) }
                }
            }
            #expect(through < 3, "the \(f) Hz tone (\(chordDB) dB) at \(cents) cents, tempo \(tempo): \(through) dB off its level through the hats")
            #expect(before < (chordDB == 0 ? 9 : 15), "the \(f) Hz tone (\(chordDB) dB) at \(cents) cents, tempo \(tempo): \(before) dB off its level before the hats")
        }
    }

    /// A synthetic vowel (harmonics of 100 Hz under three formants): with formant preservation the
    /// formant peaks stay within 5 % of where they were; without it they move with the pitch.
    @Test(arguments: [700.0, -700.0])
    func formantsStayWherePreserved(cents: Double) {
        let rate = 44_100.0, f0 = 100.0
        let formants = [700.0, 1500.0, 2600.0]
        func envelope(_ f: Double) -> Double {
            formants.reduce(0.02) { $0 + exp(-pow((f - $1) / 150, 2) / 2) }   // troughs −34 dB
        }
        let x = harmonics(f0: f0, below: 8000, frames: Int(rate * 3), rate: rate) { 0.05 * envelope($0) }
        /// Formant peak frequencies from the harmonic amplitudes (parabola through the dB values
        /// of the three harmonics around each maximum).
        func peaks(_ y: ArraySlice<Float>, f0: Double) -> [Double] {
            func amplitude(_ f: Double) -> Double {
                var c = 0.0, s = 0.0
                for (i, v) in y.enumerated() {
                    let ang = 2 * Double.pi * f * Double(i) / rate
                    c += Double(v) * cos(ang); s += Double(v) * sin(ang)
                }
                return 2 * hypot(c, s) / Double(y.count)
            }
            return formants.map { formant in
                let ks = Array(Int((0.7 * formant / f0).rounded(.up))...Int(1.3 * formant / f0))
                let amps = ks.map { 20 * log10(amplitude(Double($0) * f0) + 1e-12) }
                let m = amps.indices.max { amps[$0] < amps[$1] }!
                guard m > 0 && m < amps.count - 1 else { return Double(ks[m]) * f0 }
                let d = 0.5 * (amps[m - 1] - amps[m + 1]) / (amps[m - 1] - 2 * amps[m] + amps[m + 1])
                return (Double(ks[m]) + d) * f0
            }
        }
        let body = Int(rate)..<Int(rate) + 8192
        let inputPeaks = peaks(x[body], f0: f0)
        for (p, f) in zip(inputPeaks, formants) { #expect(abs(p / f - 1) < 0.02, "measure: \(p) for \(f)") }
        let ratio = pow(2, cents / 1200)
        func run(_ keep: Bool) -> [Double] {
            peaks(shift(x, cents: cents, rate: rate, preserveFormants: keep).out[body], f0: f0 * ratio)
        }
        let kept = run(true), moved = run(false)
        for (p, f) in zip(kept, formants) { #expect(abs(p / f - 1) < 0.05, "formant \(f) Hz came out at \(p) Hz at \(cents) cents") }
        // Without the option the envelope moves with the pitch (so this test can tell them apart).
        #expect(zip(moved, formants).contains { abs($0 / $1 - 1) > 0.15 }, "\(moved)")
    }

    /// Formant preservation keeps the plain shift's level: a voice (harmonics of 120 Hz under
    /// three formants) raised or lowered, the voice over a DC offset, and white noise, come out
    /// within 0.3 dB of the same shift without it (the envelope alone lost level raising and
    /// gained it lowering).
    @Test(arguments: [900.0, 500.0, -500.0])
    func formantPreservationKeepsTheLevel(cents: Double) {
        let rate = 44_100.0, f0 = 120.0, n = Int(rate * 2)
        func envelope(_ f: Double) -> Double {
            [(700.0, 1.0), (1200.0, 0.5), (2600.0, 0.25)].reduce(0.01) { $0 + $1.1 * exp(-pow((f - $1.0) / 130, 2) / 2) }
        }
        let voice = harmonics(f0: f0, below: 10_000, frames: n, rate: rate) { 0.1 * envelope($0) }
        let noise = Signals.noise(frames: n).map { $0 * 0.2 }
        func level(_ x: [Float], keep: Bool) -> Double {
            // (less its mean: the level of what sounds, a DC offset aside)
            let body = shift(x, cents: cents, rate: rate, preserveFormants: keep).out[Int(rate / 2)..<Int(rate * 3 / 2)]
            let mean = body.reduce(0, +) / Float(body.count)
            return Signals.db(Signals.rms(body.map { $0 - mean }[...]))
        }
        let offset = voice.map { $0 + 0.3 }
        for (name, x) in [("voice", voice), ("noise", noise), ("voice over DC", offset)] {
            let change = level(x, keep: true) - level(x, keep: false)
            #expect(abs(change) < 0.3, "\(name) at \(cents) cents: the formant mode's level is \(change) dB off the plain shift's")
        }
    }

    @Test func zeroCentsIsBitExactPassthrough() {
        let x = Signals.noise(frames: 10_000)
        let (y, _) = shift(x, cents: 0)
        #expect(y == x)
    }

    /// A slow tone burst keeps its place: the centre of its energy, Σ t·y²/Σ y², moves by less
    /// than one sample (measured: under 0.1). (The peak of a windowed RMS was too coarse a
    /// measure: the tone's ripple in the RMS moved it by ±150 samples.)
    @Test(arguments: [-1200.0, 300.0, 1900.0])
    func alignedAtSampleZero(cents: Double) {
        let rate = 44_100.0, n = 88_200, centre = 40_000.0
        let x = (0..<n).map { i in
            Float(0.5 * exp(-pow((Double(i) - centre) / 6000, 2)) * sin(2 * .pi * 500 * Double(i) / rate))
        }
        let (y, _) = shift(x, cents: cents, rate: rate)
        func energyCentre(_ s: [Float]) -> Double {
            var moment = 0.0, total = 0.0
            for (i, v) in s.enumerated() { moment += Double(i) * Double(v * v); total += Double(v * v) }
            return moment / total
        }
        let offset = energyCentre(y) - energyCentre(x)
        #expect(abs(offset) < 1, "offset \(offset) samples")
    }

    /// Any block size, a multiple of 8 or not (on hits the gate and splice act: the input's
    /// envelope is scanned in groups of eight aligned to input time, not to the blocks).
    @Test func blockSizeDoesNotChangeOutput() {
        let x = Signals.noise(frames: 30_000)
        #expect(shift(x, cents: 350, block: 37).out == shift(x, cents: 350, block: 512).out)
        let hits = StreamingBlockTests.hits(frames: 60_000)
        let reference = shift(hits, cents: -700, block: 512).out
        #expect(shift(hits, cents: -700, block: 37).out == reference)
        #expect(shift(hits, cents: -700, block: 1001).out == reference)
        // hits over low tones and a 2 kHz one: splices over sound whose crossover is chosen per hit
        var bed = Signals.hitsOverBed(rate: 44_100).signal
        for (i, v) in Signals.sine(frequencyHz: 2000, sampleRate: 44_100, frames: bed.count, amplitude: 0.02).enumerated() { bed[i] += v }
        let overBed = shift(bed, cents: -500, block: 512).out
        #expect(shift(bed, cents: -500, block: 37).out == overBed)
        #expect(shift(bed, cents: -500, block: 1001).out == overBed)
    }
}
