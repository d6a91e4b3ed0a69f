import Foundation
import Testing
@testable import MixFXDSP
import TestSupport

/// The shifter's parts on their own: `InputHistory`, `TransientGate`, `TransientSplice`.
@Suite struct TransientPartsTests {
    /// Every sample of the last `capacity` is at its slot, and any span of up to `slack`
    /// samples starting in the ring is contiguous (the head is mirrored after the ring), across
    /// the wrap, for both channels.
    @Test func inputHistoryIsContiguousAcrossTheWrap() {
        let h = InputHistory(channelCount: 2, frames: 1000, slack: 16)
        #expect(h.capacity == 1024 && h.slack == 24 && h.stride == 1024 + 24)
        let x = Signals.noise(frames: 5000, seed: 3), y = Signals.noise(frames: 5000, seed: 4)
        var time = 0
        for size in [700, 333, 1024, 1, 999, 1943] {
            x.withUnsafeBufferPointer { xp in
                y.withUnsafeBufferPointer { yp in
                    h.write(left: xp.baseAddress! + time, right: yp.baseAddress! + time, frameCount: size, at: time)
                }
            }
            time += size
            guard time >= 1024 else { continue }
            // each of the last 1024 samples at its slot
            for i in (time - 1024)..<time {
                #expect(h.base[i & h.mask] == x[i] && h.base[h.stride + (i & h.mask)] == y[i])
            }
            // a read of `slack` samples from any of the last 1024 - slack, wrap included
            for from in (time - 1024)..<(time - h.slack) {
                let start = from & h.mask
                var same = true
                for k in 0..<h.slack where h.base[start + k] != x[from + k] || h.base[h.stride + start + k] != y[from + k] { same = false }
                #expect(same, "a span from \(from) (slot \(start))")
            }
        }
    }

    /// Steady material never moves the gate: the block comes out bit for bit.
    @Test func theGateLeavesSteadyMaterialAlone() {
        let rate = 48_000.0
        let gate = TransientGate(sampleRate: rate, reachFrames: 8192)
        // (a whole number of 512-frame blocks: the input is read a block at a time)
        let x = Signals.sine(frequencyHz: 440, sampleRate: rate, frames: 48_128, amplitude: 0.5)
        var wet = x
        x.withUnsafeBufferPointer { xp in
            wet.withUnsafeMutableBufferPointer { w in
                for start in stride(from: 0, to: x.count, by: 512) {
                    gate.recordInput(left: xp.baseAddress! + start, right: nil, frameCount: 512, at: start)
                    // the wet signal read 300 frames behind the input, as a shifter would
                    if start >= 1024 {
                        gate.process(left: w.baseAddress! + start - 1024, right: nil, frameCount: 512, firstTime: start - 1024)
                    }
                }
            }
        }
        let same = wet == x   // (outside #expect: no array diff)
        #expect(same)
    }

    /// The gate's eight-frame path (a vector bound on the output's envelope, the frames run one
    /// by one only where it might close) gives the values of the frame-by-frame path bit for
    /// bit: against a gate given its input times (`times`, whose blocks of eight or more gather
    /// the envelope and take the same vector path) and against one called a frame at a time
    /// (every frame through the scalar step alone); bursts against a steady wet signal at levels
    /// around the closing threshold, with silent gaps between some (the quiet runs), stereo and
    /// mono, blocks of odd sizes, across the envelope ring's wrap.
    @Test func theGatesEightFramePathMatchesFrameByFrame() {
        let rate = 44_100.0
        let frames = 40_000
        let input = (0..<frames).map { i -> Float in
            // 20 ms bursts every 100 ms, with a quieter bed between some of them
            let inBurst = i % 4410 < 882
            let bed: Float = (i / 4410) % 3 == 0 ? 0.02 : 0
            return inBurst ? 0.5 : bed
        }
        let noiseL = Signals.noise(frames: frames, amplitude: 1, seed: 21)
        let noiseR = Signals.noise(frames: frames, amplitude: 1, seed: 22)
        let inL = zip(input, noiseL).map { $0 * $1 }, inR = zip(input, noiseR).map { $0 * $1 }
        let sizes = [1, 7, 8, 13, 512, 333, 64, 9, 1000, 2048]
        var gatedFrames = 0
        for level: Float in [0.3, 0.02, 0.04, 0.0401, 0.06, 0.01] {
            for stereo in [true, false] {
                let fast = TransientGate(sampleRate: rate, reachFrames: 900)   // a ring of 1024: it wraps
                let plain = TransientGate(sampleRate: rate, reachFrames: 900)
                let single = TransientGate(sampleRate: rate, reachFrames: 900)
                var a = Signals.noise(frames: frames, amplitude: level, seed: 23)
                var b = Signals.noise(frames: frames, amplitude: level, seed: 24)
                var c = a, d = b, e = a, f = b
                let original = a
                var done = 0, n = 0
                inL.withUnsafeBufferPointer { l in inR.withUnsafeBufferPointer { r in
                    a.withUnsafeMutableBufferPointer { a in b.withUnsafeMutableBufferPointer { b in
                        c.withUnsafeMutableBufferPointer { c in d.withUnsafeMutableBufferPointer { d in
                        e.withUnsafeMutableBufferPointer { e in f.withUnsafeMutableBufferPointer { f in
                            var times = [Int](repeating: 0, count: 2048)
                            while done < frames {
                                let size = min(sizes[n % sizes.count], frames - done)
                                n += 1
                                let right = stereo ? r.baseAddress! + done : nil
                                fast.recordInput(left: l.baseAddress! + done, right: right, frameCount: size, at: done)
                                plain.recordInput(left: l.baseAddress! + done, right: right, frameCount: size, at: done)
                                single.recordInput(left: l.baseAddress! + done, right: right, frameCount: size, at: done)
                                for k in 0..<size { times[k] = done + k }
                                fast.process(left: a.baseAddress! + done, right: stereo ? b.baseAddress! + done : nil,
                                             frameCount: size, firstTime: done)
                                times.withUnsafeBufferPointer { t in
                                    plain.process(left: c.baseAddress! + done, right: stereo ? d.baseAddress! + done : nil,
                                                  frameCount: size, firstTime: 0, times: t.baseAddress!)
                                }
                                for k in done..<(done + size) {
                                    single.process(left: e.baseAddress! + k, right: stereo ? f.baseAddress! + k : nil,
                                                   frameCount: 1, firstTime: k)
                                }
                                done += size
                            }
                        } }
                        } }
                    } }
                } }
                let same = a == c && (!stereo || b == d)
                #expect(same, "level \(level), \(stereo ? "stereo" : "mono")")
                let sameAsScalar = a == e && (!stereo || b == f)
                #expect(sameAsScalar, "level \(level), \(stereo ? "stereo" : "mono"), frame by frame")
                gatedFrames += zip(a, original).filter { $0 != $1 }.count
            }
        }
        // the comparison covers gating: many frames were turned down
        #expect(gatedFrames > 20_000, "\(gatedFrames) frames gated")
    }

    /// Energy where the input held silence (a vocoder's pre-echo) is turned down to 6 dB above
    /// the input's envelope within the gate's close time.
    @Test func theGateTurnsDownWhatTheInputDidNotHold() {
        let rate = 48_000.0
        let gate = TransientGate(sampleRate: rate, reachFrames: 8192)
        let silence = [Float](repeating: 0, count: 4096)
        var wet = Signals.noise(frames: 4096, amplitude: 0.5, seed: 9)
        let before = Signals.rms(wet[2048...])
        silence.withUnsafeBufferPointer { s in gate.recordInput(left: s.baseAddress!, right: nil, frameCount: 4096, at: 0) }
        wet.withUnsafeMutableBufferPointer { w in gate.process(left: w.baseAddress!, right: nil, frameCount: 4096, firstTime: 0) }
        let after = Signals.rms(wet[2048...])   // past 5 time constants of the close
        #expect(Signals.db(after / before) < -60, "pre-echo in silence: \(Signals.db(after / before)) dB")
    }

    /// `QuietRuns` against its definition, frame by frame: u is quiet where it and the W − 1
    /// frames before it (from time 0 on) have a power under `quietPower` (a NaN is not quiet),
    /// stereo by the channels' mean. Runs of every length around W (and one channel loud),
    /// recorded in pulls of odd sizes; readers going forward by 1 and by uneven steps (a tempo's)
    /// see the same, reading up to the whole span behind the newest input.
    @Test func quietRunsFollowTheirDefinitionForAnyPulls() {
        let w = 50, frames = 30_000, quiet = TransientGate.quietPower
        var l = [Float](repeating: 0, count: frames), r = l
        var rng = SeededGenerator(seed: 7)
        var t = 0, kind = 0
        while t < frames {
            let length = [1, 7, w - 1, w, w + 1, 2 * w, 3, 300][Int.random(in: 0..<8, using: &rng)]
            for i in t..<min(frames, t + length) {
                switch kind % 5 {
                case 0: l[i] = 0; r[i] = 0                                   // silence
                case 1: l[i] = 5e-6; r[i] = -5e-6                           // −106 dBFS: quiet
                case 2: l[i] = 0.3; r[i] = 0                                 // loud on the left
                case 3: l[i] = 2e-5; r[i] = 2e-5                            // −94 dBFS: not quiet
                default: l[i] = i % 97 == 0 ? .nan : 0; r[i] = 0             // a NaN now and then
                }
            }
            t += length; kind += Int.random(in: 1...4, using: &rng)
        }
        let isQuiet = zip(l, r).map { 0.5 * ($0 * $0 + $1 * $1) < quiet }
        var expected = [Bool](repeating: false, count: frames), run = 0
        for u in 0..<frames {
            run = isQuiet[u] ? run + 1 : 0
            expected[u] = run >= w
        }
        #expect(expected.filter { $0 }.count > 2000 && expected.filter { !$0 }.count > 2000)
        let span = 4096
        var runs = QuietRuns(quietFrames: w, spanFrames: span)
        defer { runs.deallocate() }
        // two readers: one frame after another, and in uneven steps of 1 to 5 (a tempo's); each
        // reads 2000 frames behind the newest input, so up to a pull more (2048) within the span
        var steady = 0, steadyRead = 0, jumpAt = 0, jumpRead = 0, jumps = 0
        var seen = [Bool](repeating: false, count: frames), jumpSeen = [Int: Bool]()
        var done = 0, n = 0
        let sizes = [1, 13, 8, 333, 2048, 7, 1000, 64]
        l.withUnsafeBufferPointer { lp in r.withUnsafeBufferPointer { rp in
            while done < frames {
                let size = min(sizes[n % sizes.count], frames - done)
                n += 1
                runs.record(left: lp.baseAddress! + done, right: rp.baseAddress! + done, frameCount: size, at: done)
                done += size
                let upTo = done == frames ? frames : done - 2000
                let view = runs.view
                while steady < upTo {
                    let run = view.run(at: steady, read: &steadyRead)
                    seen[steady] = steady >= run.from && steady < run.end
                    steady += 1
                }
                while jumpAt < upTo {
                    let run = view.run(at: jumpAt, read: &jumpRead)
                    jumpSeen[jumpAt] = jumpAt >= run.from && jumpAt < run.end
                    jumps += 1
                    jumpAt += 1 + (jumps * 7919) % 5
                }
            }
        } }
        let same = seen == expected   // (outside #expect: no array diff)
        #expect(same)
        #expect(jumpSeen.allSatisfy { expected[$0.key] == $0.value }, "a reader going forward unevenly")
    }

    /// Where the input has been quiet for `quietSeconds` (a sound that stopped), the input's
    /// envelope falls to `quietPower` (by `quietReleaseSeconds`: 41 ms from the released −10 dB),
    /// and the wet signal (the vocoder's smear of the sound, here noise 30 dB under it) is let
    /// through at most 6 dB over it: −94 dBFS, where the released envelope alone still allows
    /// −13 dB.
    /// A dithered 16-bit floor is not quiet: the same smear over it is left alone.
    @Test(arguments: [false, true])
    func theGateClosesWhereTheInputHasBeenQuiet(dithered: Bool) {
        let rate = 48_000.0, frames = 14_400, end = 4800
        let gate = TransientGate(sampleRate: rate, reachFrames: 8192)
        var input = Signals.noise(frames: frames, amplitude: 0.5, seed: 11)
        let lsb: Float = 1.0 / 32_768
        var rng = SeededGenerator(seed: 13)
        for i in end..<frames { input[i] = dithered ? lsb * Float(Int.random(in: -1...1, using: &rng)) : 0 }
        let smear = Signals.noise(frames: frames, amplitude: 0.5 * 0.0316, seed: 12)
        var wet = smear
        input.withUnsafeBufferPointer { s in gate.recordInput(left: s.baseAddress!, right: nil, frameCount: frames, at: 0) }
        wet.withUnsafeMutableBufferPointer { w in gate.process(left: w.baseAddress!, right: nil, frameCount: frames, firstTime: 0) }
        let quietFrames = Int(TransientGate.quietSeconds * rate)
        // up to the input's end and a run's length after it: as it came
        // (the gate reads the input `lookaheadFrames` ahead)
        let quietFrom = end + quietFrames - 1 - gate.lookaheadFrames
        let before = Array(wet[..<quietFrom]) == Array(smear[..<quietFrom])
        #expect(before)
        // from 60 ms on (the release's 41 ms, and 10 of the close's time constants)
        let after = Signals.db(Signals.rms(wet[(end + quietFrames + 2880)..<(frames - gate.lookaheadFrames)]))
        if dithered {
            // (for 100 ms after the end, where the released envelope allows the smear)
            let last = end + 4800
            let same = Array(wet[end..<last]) == Array(smear[end..<last])
            #expect(same, "over a dithered floor the smear passes (\(after) dBFS)")
        } else {
            #expect(after < -94, "the smear \(after) dBFS where the input has been silent")
        }
    }

    /// An onset in the input makes the splice take over: the output is the input itself during
    /// the attack (`attackSeconds` after the onset), wherever the vocoder put the hit.
    @Test func theSpliceBringsTheAttackBackInPlace() throws {
        let rate = 48_000.0
        let table = SincTableCache.table(index: SincTableCache.index(forRatio: 0.5))
        let splice = TransientSplice(sampleRate: rate, tables: Array(repeating: table, count: SincTableCache.index(forRatio: 0.5) + 1),
                                     latencyFrames: 12_000, halfTaps: table.taps / 2)
        let gate = TransientGate(sampleRate: rate, reachFrames: 16_384)
        let history = InputHistory(channelCount: 1, frames: 16_384, slack: table.taps)
        // a 1 kHz hit (in the tables' pass band) decaying over 8 ms
        var x = [Float](repeating: 0, count: 8192)
        for i in 0..<2000 { x[4000 + i] = Float(0.8 * sin(2 * Double.pi * 1000 * Double(i) / rate) * exp(-Double(i) / 400)) }
        x.withUnsafeBufferPointer { xp in
            gate.recordInput(left: xp.baseAddress!, right: nil, frameCount: 8192, at: 0)
            history.write(left: xp.baseAddress!, right: nil, frameCount: 8192, at: 0)
        }
        var wet = [Float](repeating: 0, count: 8192)   // the vocoder lost the hit entirely
        let ratios = [Double](repeating: 0.5, count: 8192)
        let indices = [Int](repeating: SincTableCache.index(forRatio: 0.5), count: 8192)
        wet.withUnsafeMutableBufferPointer { w in
            splice.process(left: w.baseAddress!, right: nil, frameCount: 8192, firstTime: 0, ratios: ratios, tableIndices: indices,
                           gate: gate.view, input: history.view)
        }
        let attack = splice.attackFrames
        #expect(attack == 144)
        // the onset is found at the hit (within the look-ahead) and the attack is the input's own
        let onset = try #require(wet.firstIndex { $0 != 0 }, "the splice wrote nothing")
        #expect(abs(onset - 4000) <= splice.onsetLookaheadFrames, "splice starts at \(onset)")
        // (past the tables' reach of the hit's abrupt start)
        let err = (4000 + 64..<4000 + attack).map { abs(wet[$0] - x[$0]) }.max()!
        #expect(err < 1e-3, "the attack differs from the input by \(err)")
    }

    /// A hit over quiet is spliced whole; a hit over other sound only above the crossover. The
    /// same 6 kHz hit over a held 300 Hz tone 50 dB and 20 dB under it, the vocoder's output
    /// silent (so what comes out is the splice's change alone), the pitch an octave down: over
    /// the quiet tone the output carries the tone (at 150 Hz) and the hit (at 3 kHz); over the
    /// loud one the hit alike, the tone 40 dB under what it was (left to the vocoder).
    @Test func aHitOverSoundIsSplicedAboveTheCrossover() throws {
        let rate = 48_000.0
        let index = SincTableCache.index(forRatio: 0.5)
        let table = SincTableCache.table(index: index)
        /// The output's amplitude at `hz` over the hold (ratio 0.5: the input's frequencies halved).
        func run(toneDB: Double, offset: Float = 0) -> (tone: Double, hit: Double, toneIn: Double, mean: Double) {
            let splice = TransientSplice(sampleRate: rate, tables: Array(repeating: table, count: index + 1),
                                         latencyFrames: 12_000, halfTaps: table.taps / 2)
            let gate = TransientGate(sampleRate: rate, reachFrames: 16_384)
            let history = InputHistory(channelCount: 1, frames: 16_384, slack: table.taps)
            let toneAmplitude = 0.8 * pow(10, toneDB / 20)
            var x = (0..<8192).map { Float(toneAmplitude * sin(2 * Double.pi * 300 * Double($0) / rate)) + offset }
            for i in 0..<3000 { x[4000 + i] += Float(0.8 * sin(2 * Double.pi * 6000 * Double(i) / rate) * exp(-Double(i) / 1500)) }
            x.withUnsafeBufferPointer { xp in
                gate.recordInput(left: xp.baseAddress!, right: nil, frameCount: 8192, at: 0)
                history.write(left: xp.baseAddress!, right: nil, frameCount: 8192, at: 0)
            }
            var wet = [Float](repeating: 0, count: 8192)
            let ratios = [Double](repeating: 0.5, count: 8192), indices = [Int](repeating: index, count: 8192)
            wet.withUnsafeMutableBufferPointer { w in
                splice.process(left: w.baseAddress!, right: nil, frameCount: 8192, firstTime: 0, ratios: ratios, tableIndices: indices,
                               gate: gate.view, input: history.view)
            }
            func amplitude(_ hz: Double) -> Double {
                // in the hold past the attack, Hann-windowed (the hit's 3 kHz leaks nothing to 150 Hz)
                let span = 4160..<4960
                var c = 0.0, s = 0.0, sum = 0.0
                for i in span {
                    let w = 0.5 - 0.5 * cos(2 * Double.pi * Double(i - span.lowerBound) / Double(span.count))
                    c += w * Double(wet[i]) * cos(2 * Double.pi * hz * Double(i) / rate)
                    s += w * Double(wet[i]) * sin(2 * Double.pi * hz * Double(i) / rate)
                    sum += w
                }
                return 2 * hypot(c, s) / sum
            }
            return (amplitude(150), amplitude(3000), toneAmplitude, Double(wet[4160..<4960].reduce(0, +)) / 800)
        }
        let quiet = run(toneDB: -50), loud = run(toneDB: -20)
        let db = { (a: Double, b: Double) in 20 * log10(a / b) }
        #expect(abs(db(quiet.tone, quiet.toneIn)) < 1, "over quiet the tone comes out at \(db(quiet.tone, quiet.toneIn)) dB")
        #expect(db(loud.tone, loud.toneIn) < -30, "over sound the tone comes out at \(db(loud.tone, loud.toneIn)) dB")
        #expect(abs(db(loud.hit, quiet.hit)) < 1, "the hit over sound at \(db(loud.hit, quiet.hit)) dB of the hit over quiet")
        #expect(quiet.hit > 0.1, "the hit at \(quiet.hit)")
        // an offset (−26 dBFS) under the quiet tone is not sound: spliced whole, the offset with it
        let offset = run(toneDB: -50, offset: 0.05)
        #expect(abs(offset.mean - 0.05) < 0.005, "a hit over an offset: the output's mean \(offset.mean), not 0.05")
    }
    /// At a raised pitch a hit over other sound is not spliced (the vocoder's copies of it land
    /// before it, where the gates keep them down; the splice's fade back would sum two takes of
    /// the sound under it), while a hit over quiet still is. The 6 kHz hit over a 300 Hz tone
    /// 20 and 50 dB under it at ratio 1.5, the vocoder's output silent: over the loud tone the
    /// output stays silent, over the quiet one it carries the hit (at 9 kHz); at ratio 1/1.5 both
    /// are spliced.
    @Test(arguments: [1.5, 1 / 1.5])
    func aRaisedPitchDoesNotSpliceOverSound(ratio: Double) {
        let rate = 48_000.0
        let index = SincTableCache.index(forRatio: ratio)
        let table = SincTableCache.table(index: index)
        func run(toneDB: Double) -> [Float] {
            let splice = TransientSplice(sampleRate: rate, tables: Array(repeating: table, count: index + 1),
                                         latencyFrames: 12_000, halfTaps: table.taps / 2)
            let gate = TransientGate(sampleRate: rate, reachFrames: 16_384)
            let history = InputHistory(channelCount: 1, frames: 16_384, slack: table.taps)
            let toneAmplitude = 0.8 * pow(10, toneDB / 20)
            var x = (0..<8192).map { Float(toneAmplitude * sin(2 * Double.pi * 300 * Double($0) / rate)) }
            for i in 0..<3000 { x[4000 + i] += Float(0.8 * sin(2 * Double.pi * 6000 * Double(i) / rate) * exp(-Double(i) / 1500)) }
            x.withUnsafeBufferPointer { xp in
                gate.recordInput(left: xp.baseAddress!, right: nil, frameCount: 8192, at: 0)
                history.write(left: xp.baseAddress!, right: nil, frameCount: 8192, at: 0)
            }
            var wet = [Float](repeating: 0, count: 8192)
            let ratios = [Double](repeating: ratio, count: 8192), indices = [Int](repeating: index, count: 8192)
            wet.withUnsafeMutableBufferPointer { w in
                splice.process(left: w.baseAddress!, right: nil, frameCount: 8192, firstTime: 0, ratios: ratios, tableIndices: indices,
                               gate: gate.view, input: history.view)
            }
            return wet
        }
        let quiet = run(toneDB: -50), loud = run(toneDB: -20)
        let hold = 4100..<4700
        #expect(Signals.rms(quiet[hold]) > 0.1, "over quiet at ratio \(ratio): \(Signals.rms(quiet[hold]))")
        if ratio > 1 {
            // (from the hit on: the tone's own start from silence at 0 is spliced, whole)
            #expect(loud[3900...].allSatisfy { $0 == 0 }, "over sound at ratio \(ratio) the splice wrote something")
        } else {
            #expect(Signals.rms(loud[hold]) > 0.1, "over sound at ratio \(ratio): \(Signals.rms(loud[hold]))")
        }
    }
    /// Lowering the pitch, a splice over other sound starts above what sounded before the hit:
    /// the lowest crossover (1.5, 3, 6 kHz) above whose half the hit is 40 dB over that sound.
    /// The 6 kHz hit at ratio 1/1.5, the vocoder's output silent: over a 1.2 kHz tone 20 dB under
    /// it the splice starts at 6 kHz, so the tone read by the splice (at 800 Hz) is more than
    /// 25 dB down in the output (at 1.5 kHz it would be about 11 dB down); with a tone at 8 kHz
    /// too no crossover is clear and nothing is spliced.
    @Test
    func aSpliceOverSoundStartsAboveWhatSoundedBefore() {
        let rate = 48_000.0, ratio = 1 / 1.5
        let index = SincTableCache.index(forRatio: ratio)
        let table = SincTableCache.table(index: index)
        /// The splice over tones at `bed` Hz, 20 dB under the hit, and the hit; in stereo
        /// (`right`) the right channel holds `right` tones as loud and no hit.
        func run(bed: [Double], right: [Double]? = nil) -> (left: [Float], right: [Float]) {
            let splice = TransientSplice(sampleRate: rate, tables: Array(repeating: table, count: index + 1),
                                         latencyFrames: 12_000, halfTaps: table.taps / 2)
            let gate = TransientGate(sampleRate: rate, reachFrames: 16_384)
            let history = InputHistory(channelCount: right == nil ? 1 : 2, frames: 16_384, slack: table.taps)
            let bedAmplitude = 0.8 * pow(10, -20.0 / 20)
            func tones(_ hz: [Double]) -> [Float] {
                (0..<8192).map { i in Float(hz.reduce(0) { $0 + bedAmplitude * sin(2 * Double.pi * $1 * Double(i) / rate) }) }
            }
            var x = tones(bed)
            let xr = tones(right ?? [])
            for i in 0..<3000 { x[4000 + i] += Float(0.8 * sin(2 * Double.pi * 6000 * Double(i) / rate) * exp(-Double(i) / 1500)) }
            x.withUnsafeBufferPointer { xp in
                xr.withUnsafeBufferPointer { rp in
                    let r = right == nil ? nil : rp.baseAddress!
                    gate.recordInput(left: xp.baseAddress!, right: r, frameCount: 8192, at: 0)
                    history.write(left: xp.baseAddress!, right: r, frameCount: 8192, at: 0)
                }
            }
            var wet = [Float](repeating: 0, count: 8192), wetRight = wet
            let ratios = [Double](repeating: ratio, count: 8192), indices = [Int](repeating: index, count: 8192)
            wet.withUnsafeMutableBufferPointer { w in
                wetRight.withUnsafeMutableBufferPointer { wr in
                    splice.process(left: w.baseAddress!, right: right == nil ? nil : wr.baseAddress!, frameCount: 8192, firstTime: 0,
                                   ratios: ratios, tableIndices: indices, gate: gate.view, input: history.view)
                }
            }
            return (wet, wetRight)
        }
        let hold = 4200..<4900
        /// The amplitude at `hz` over `hold`, Hann-windowed.
        func amplitude(_ y: [Float], _ hz: Double) -> Double {
            var c = 0.0, s = 0.0, sum = 0.0
            for (j, i) in hold.enumerated() {
                let w = 0.5 - 0.5 * cos(2 * Double.pi * Double(j) / Double(hold.count))
                c += w * Double(y[i]) * cos(2 * Double.pi * hz * Double(i) / rate)
                s += w * Double(y[i]) * sin(2 * Double.pi * hz * Double(i) / rate)
                sum += w
            }
            return 2 * hypot(c, s) / sum
        }
        let low = run(bed: [1200]).left
        let toneDB = 20 * log10(amplitude(low, 1200 * ratio) / (0.8 * pow(10, -20.0 / 20)))
        #expect(toneDB < -30, "the 1.2 kHz tone before the hit, read by the splice: \(toneDB) dB in the output")
        #expect(Signals.rms(low[hold]) > 0.05, "the hit over the 1.2 kHz tone: \(Signals.rms(low[hold]))")
        let both = run(bed: [1200, 8000]).left
        // (from the hit on: the tones' own start from silence at 0 is spliced, whole)
        #expect(both[3900...].allSatisfy { $0 == 0 }, "over tones at 1.2 and 8 kHz the splice wrote something")
        // stereo: a 300 Hz tone 20 dB under the hit in the other channel, which has no hit (so
        // the hit is over sound), does not bar the splice above 1.5 kHz (against that channel's
        // own hit it would); tones above 1 kHz there do, as in the hit's own channel
        let low300 = run(bed: [], right: [300])
        #expect(Signals.rms(low300.left[hold]) > 0.05, "a hit with a low tone in the other channel: \(Signals.rms(low300.left[hold]))")
        let other = run(bed: [300], right: [1200, 8000])
        #expect(other.left[3900...].allSatisfy { $0 == 0 } && other.right[3900...].allSatisfy { $0 == 0 },
                "over tones 20 dB under the hit in the other channel the splice wrote something")
    }
}
