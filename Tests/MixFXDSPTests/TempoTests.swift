import Foundation
import Testing
@testable import MixFXDSP
import TestSupport

/// Tempo (`PitchShifterSettings.tempo`): the output lasts 1/R of the input, the pitch kept or
/// moved by the cents, the time map exact (input time n·R at output frame n).
/// `blocks`: the output blocks' sizes, repeated (default: `block`); `pull`: the most input asked
/// for at a time (default: `block`). The shifter is prepared for blocks of `block`;
/// `levelMatch` false: without a `LevelMatch` even where the stretch is below 1; `shifter`:
/// one already prepared for these settings, reset and used again.
func stretch(_ x: [[Float]], tempo: Double, cents: Double = 0, rate: Double = 48_000, block: Int = 512, blocks: [Int]? = nil,
             pull: Int? = nil, levelMatch: Bool = true, shifter: PitchShifter? = nil) -> (out: [[Float]], starved: Int) {
    let ps = shifter ?? PitchShifter()
    let channels = x.count
    if shifter == nil {
        ps.prepare(ProcessSpec(sampleRate: rate, maximumFrameCount: block, channelCount: channels),
                   settings: PitchShifterSettings(pitchCents: cents, tempo: tempo, levelMatch: levelMatch))
    } else {
        ps.reset()
    }
    let frames = Int((Double(x[0].count) / tempo).rounded())
    let sizes = blocks ?? [block], most = pull ?? block
    var out = [[Float]](repeating: [Float](repeating: 0, count: frames), count: channels)
    var scratch = [[Float]](repeating: [Float](repeating: 0, count: block), count: channels)
    var consumed = 0
    var done = 0, b = 0
    while done < frames {
        let n = min(sizes[b % sizes.count], frames - done)
        b += 1
        var l = [Float](repeating: 0, count: n), r = [Float](repeating: 0, count: n)
        l.withUnsafeMutableBufferPointer { lp in
            r.withUnsafeMutableBufferPointer { rp in
                ps.process(into: lp.baseAddress!, channels > 1 ? rp.baseAddress! : nil, frameCount: n, maximumPull: most) { k in
                    for c in 0..<channels {
                        for i in 0..<k { scratch[c][i] = consumed + i < x[c].count ? x[c][consumed + i] : 0 }
                    }
                    consumed += k
                    return scratch[0].withUnsafeBufferPointer { p0 in
                        scratch[channels - 1].withUnsafeBufferPointer { p1 in (p0.baseAddress!, channels > 1 ? p1.baseAddress! : nil) }
                    }
                }
            }
        }
        out[0].replaceSubrange(done..<(done + n), with: l)
        if channels > 1 { out[1].replaceSubrange(done..<(done + n), with: r) }
        done += n
    }
    return (out, ps.starvedFrames)
}

@Suite struct TempoTests {
    /// A steady tone keeps its pitch at every tempo (or moves by the cents given), measured to
    /// 0.1 cent; nothing else rises above −40 dB; the reader never starves.
    @Test(arguments: [(0.5, 0.0), (0.8, 0.0), (1.25, 0.0), (2.0, 0.0), (0.75, -200.0), (1.5, 700.0), (0.25, 0.0), (4.0, 0.0)])
    func steadyTonesKeepTheirPitch(tempo: Double, cents: Double) {
        let rate = 48_000.0
        let x = Signals.sine(frequencyHz: 440, sampleRate: rate, frames: 96_000)
        let (y, starved) = stretch([x, x], tempo: tempo, cents: cents, block: 1024)
        #expect(starved == 0)
        #expect(y[0].count == Int((96_000 / tempo).rounded()))
        let body = y[0][Int(0.2 * rate)..<(y[0].count - Int(0.2 * rate))]
        let expected = 440 * pow(2, cents / 1200)
        let measured = Signals.frequency(body, sampleRate: rate)
        #expect(abs(Signals.cents(measured, expected)) < 0.1, "tempo \(tempo), \(cents) ct: \(measured) Hz, expected \(expected)")
        let sinad = -Signals.residualDB(body, frequencyHz: measured, sampleRate: rate)
        #expect(sinad > 40, "tempo \(tempo), \(cents) ct: SINAD \(sinad) dB")
        #expect(abs(Signals.rms(body) - 0.5 / 2.0.squareRoot()) < 0.01, "the level is kept: \(Signals.rms(body))")
        #expect(y[0] == y[1], "a centred stereo source stays centred")
    }

    /// Attacks land at t/R: each hit's half-peak time in the output, less its input time over R,
    /// within 1 ms; and no pre-echo above −86 dB in the silence before a hit, up to a sample
    /// before T/R (−71.7 dB at tempo 0.5 with the splice's ramp crossfading from the vocoder's
    /// output, whose smear the gate's look-ahead lets into its last samples; −77.7 at 1.25 with a
    /// hit's onset a frame late, where the probes stepped over its first sample; −83.9 at 0.8
    /// with the gate allowing 6 dB over the input's released envelope in silence).
    @Test(arguments: [0.5, 0.8, 1.25, 2.0])
    func attacksLandAtTheirTimeOverTheTempo(tempo: Double) {
        let rate = 48_000
        let (x, onsets) = Signals.hits(rate: rate)
        let (y, starved) = stretch([x], tempo: tempo, block: 512)
        #expect(starved == 0)
        let ms = rate / 1000, w = 30 * ms
        func halfPeak(_ s: [Float], around o: Int) -> Int? {
            guard o - w >= 0 && o + w + ms <= s.count else { return nil }
            let env = (o - w..<o + w).map { i in Signals.rms(s[i..<(i + ms)]) }
            let peak = env.max() ?? 0
            return env.firstIndex { $0 > peak / 2 }.map { $0 + o - w }
        }
        var worst = 0.0, worstPre = -200.0
        for o in onsets {
            let target = Int((Double(o) / tempo).rounded())
            guard let a = halfPeak(y[0], around: target), let b = halfPeak(x, around: o) else { continue }
            // the output's attack, against the input's moved to output time
            let shift = (Double(a) - Double(b) / tempo) / Double(ms)
            worst = max(worst, abs(shift))
            // (up to the last frame a whole sample or more before T/R, where the attack may be read
            // in part)
            let before = Int((Double(o) / tempo).rounded(.down))
            let pre = Signals.db(Signals.rms(y[0][(target - w)..<before]) / Signals.rms(y[0][target..<(target + w)]))
            worstPre = max(worstPre, pre)
        }
        #expect(worst < 1, "tempo \(tempo): an attack is \(worst) ms off t/R")
        #expect(worstPre < -86, "tempo \(tempo): pre-echo \(worstPre) dB")
    }

    /// A tempo alone reads the stretched signal at its own rate, through a fractional delay
    /// with its cutoff at Nyquist (`SincTableCache.unitIndex`): tones at 0.8 and 0.9 of Nyquist
    /// keep their level within 0.1 dB and their pitch. (The table for lowered pitches, cut at
    /// 0.92 of Nyquist, took 2.5 dB off a 0.9-Nyquist tone at tempo 0.8.)
    @Test(arguments: [0.5, 0.8, 1.25, 2.0])
    func aTempoAloneKeepsTheWholeBand(tempo: Double) {
        let rate = 48_000.0
        for fraction in [0.8, 0.9] {
            let hz = fraction * rate / 2
            // (2 s of output, so the phase-slope regression has several segments)
            let x = Signals.sine(frequencyHz: hz, sampleRate: rate, frames: Int(96_000 * tempo))
            let (y, starved) = stretch([x], tempo: tempo, block: 512)
            #expect(starved == 0)
            let body = y[0][Int(0.2 * rate)..<(y[0].count - Int(0.2 * rate))]
            let levelDB = Signals.db(Signals.rms(body) / (0.5 / 2.0.squareRoot()))
            #expect(abs(levelDB) < 0.1, "tempo \(tempo), \(hz) Hz: level \(levelDB) dB")
            let measured = Signals.frequency(body, sampleRate: rate)
            #expect(abs(Signals.cents(measured, hz)) < 0.1, "tempo \(tempo), \(hz) Hz: \(measured) Hz")
        }
    }

    /// The same samples whatever the output blocks and input pulls, on hits over a bed of tones
    /// (stereo, the right channel the left with hiss), where the gates and the splice act; at
    /// the ends of the tempo range and where a splice reads furthest from the output's input
    /// time: ahead of it at tempo 1/4 raised two octaves (once the input past what was pulled,
    /// so what it read followed the pulls), behind it at tempo 32 (once input the history no
    /// longer held). The signal and sizes once told them apart by up to 0.5 at 32 and 0.3 at 1/4.
    @Test(arguments: [(44_100.0, 32.0, 0.0), (22_050.0, 0.25, 2_400.0), (48_000.0, 4.0, -2_400.0), (44_100.0, 1.0 / 32, 0.0),
                      (96_000.0, 1.7, -700.0)])
    func theOutputDoesNotDependOnTheBlocksOrPulls(rate: Double, tempo: Double, cents: Double) {
        let (bed, _) = Signals.hitsOverBed(rate: Int(rate))
        let hiss = Signals.noise(frames: bed.count, amplitude: 0.01, seed: 3)
        // (at tempo 1/32 the first 0.4 s: 12.8 s out)
        let x = [Array(bed.prefix(tempo < 0.1 ? Int(0.4 * rate) : bed.count)), (0..<bed.count).map { 0.7 * bed[$0] + hiss[$0] }]
        let input = [x[0], Array(x[1].prefix(x[0].count))]
        let (reference, starved) = stretch(input, tempo: tempo, cents: cents, rate: rate, block: 1024, blocks: [512], pull: 512)
        #expect(starved == 0)
        #expect(reference[0].allSatisfy { $0.isFinite } && reference[0].map { abs($0) }.max()! > 0.2)
        for (blocks, pull) in [([1024], 1024), ([1], 1), ([7, 1024, 13], 100), ([8, 9, 300], 64)] {
            let (y, _) = stretch(input, tempo: tempo, cents: cents, rate: rate, block: 1024, blocks: blocks, pull: pull)
            let differing = zip(y, reference).map { zip($0, $1).filter { $0 != $1 }.count }.reduce(0, +)
            #expect(differing == 0, "tempo \(tempo), \(cents) ct at \(rate) Hz, blocks \(blocks), pulls of \(pull): \(differing) samples differ")
        }
    }

    /// Hits over sound spaced so that each splice starts while the last one's high-pass still
    /// rings (every 66 ms of input at tempo 2: 33 ms of output, where a splice lasts 30 and its
    /// ring 5 more), so it keeps that crossover (`TransientSplice.chooseKind`; a check placed
    /// there fired on this signal): the same samples for any blocks, and the attacks' highs
    /// come out.
    @Test func splicesWhileTheLastOneRingsAreTheSameForAnyBlocks() {
        let rate = 44_100.0, n = Int(rate)
        var x = [Float](repeating: 0, count: n)
        for (f, a) in [(55.0, 0.08), (220.0, 0.03)] {
            for (i, v) in Signals.sine(frequencyHz: f, sampleRate: rate, frames: n, amplitude: a).enumerated() { x[i] += v }
        }
        let noise = Signals.noise(frames: n, amplitude: 0.8, seed: 11)
        for onset in stride(from: 4410, to: n - 2000, by: 2910) {
            for i in 0..<660 { x[onset + i] += noise[onset + i] * Float(exp(-Double(i) / (0.003 * rate))) }
        }
        let (reference, starved) = stretch([x], tempo: 2, cents: -300, rate: rate, block: 1024, blocks: [512], pull: 512)
        #expect(starved == 0)
        let highs = Signals.butterworth(reference[0], highPass: true, cornerHz: 4000, rate: rate, sections: 2)
        #expect(Signals.rms(highs[5000...]) > 0.05, "the attacks' highs: \(Signals.rms(highs[5000...]))")
        for (blocks, pull) in [([1], 1), ([7, 1024, 13], 100)] {
            let (y, _) = stretch([x], tempo: 2, cents: -300, rate: rate, block: 1024, blocks: blocks, pull: pull)
            let differing = zip(y[0], reference[0]).filter { $0 != $1 }.count
            #expect(differing == 0, "blocks \(blocks), pulls of \(pull): \(differing) samples differ")
        }
    }

    /// The grid: a stretch σ = r/R times R counts as r = 1 even when it is not 1 to the last bit;
    /// lowered and raised ratios keep their tables.
    @Test func theUnitRatioHasItsOwnTable() {
        for tempo in [0.8, 0.3, 1.7, 1.0 / 3] {
            let r = (1 / tempo) * tempo
            #expect(SincTableCache.index(forRatio: r) == SincTableCache.unitIndex, "tempo \(tempo): r − 1 = \(r - 1)")
        }
        #expect(SincTableCache.index(forRatio: 0.999) == SincTableCache.loweredIndex)
        #expect(SincTableCache.index(forRatio: 0.5) == SincTableCache.loweredIndex)
        #expect(SincTableCache.index(forRatio: PitchShifterSettings.ratio(cents: 1)) == SincTableCache.firstRaisedIndex)
        #expect(SincTableCache.index(forRatio: PitchShifterSettings.ratio(cents: 100)) == SincTableCache.firstRaisedIndex)
        #expect(SincTableCache.index(forRatio: PitchShifterSettings.ratio(cents: 101)) == SincTableCache.firstRaisedIndex + 1)
        #expect(SincTableCache.index(forRatio: 4) == SincTableCache.firstRaisedIndex + 23)
        // the unit table is exact at whole samples; the lowered one is not (it cuts the band)
        let x = (0..<256).map { Float(sin(Double($0) * 2.9)) }
        x.withUnsafeBufferPointer { p in
            let unit = SincTableCache.table(index: SincTableCache.unitIndex)
            let lowered = SincTableCache.table(index: SincTableCache.loweredIndex)
            let exact = abs(unit.interpolate(p.baseAddress!, index: 128, fraction: 0) - x[128])
            let cut = abs(lowered.interpolate(p.baseAddress!, index: 128, fraction: 0) - x[128])
            #expect(exact < 1e-6 && cut > 1e-3, "at a whole sample: unit off by \(exact), lowered by \(cut)")
        }
    }
}
