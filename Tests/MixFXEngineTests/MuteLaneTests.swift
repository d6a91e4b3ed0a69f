import Foundation
import Testing
import MixFX
import TestSupport

/// Mute and solo lanes (issue #33, docs/automation.md "Mute and solo lanes"): a switch at a
/// breakpoint ramps the track's gain over 10 ms from the breakpoint's frame, the track's DSP
/// running on while it is silent; solo follows the static rule frame by frame; constant lanes
/// render the static switches' bytes; the output does not depend on the blocks; live, the
/// lanes play as offline and a hand's mute is written back as steps.
@Suite struct MuteLaneTests {
    static let rate = 48_000.0
    /// Frames of the 10 ms ramp at 48 kHz.
    static let ramp = 480

    /// The factor of the documented ramp: frame F + k of a change at frame F from `from` to
    /// `to` is from + (to − from)·(k + 1)/R for k < R − 1, and `to` from F + R − 1 on.
    static func factor(from: Double, to: Double, k: Int) -> Double {
        k + 1 >= ramp ? to : from + (to - from) * Double(k + 1) / Double(ramp)
    }

    /// A track with EQ and a pitch shift (DSP with state: a track whose DSP paused while muted
    /// would come back changed) playing noise.
    static func session(frames: Int = 96_000, tracks: Int = 1, lanes: ([Track]) -> Void = { _ in }) -> AudioEngine {
        let engine = AudioEngine()
        var made: [Track] = []
        for k in 0..<tracks {
            let t = engine.addTrack(source: MemorySource(channels: [Signals.noise(frames: frames, amplitude: 0.3, seed: UInt64(21 + k))],
                                                         sampleRate: 48_000))
            t.eq.bassGain.value = 4
            t.timePitch.pitchCents = Double(150 * (k + 1))
            made.append(t)
        }
        lanes(made)
        return engine
    }

    /// A mute lane on a track is the unmuted render times the ramp at every frame, exactly
    /// (a mono track at volume 1: its factor is its gain): 1 before the breakpoint, the ramp
    /// from the breakpoint's frame (t = 0.40001 s: frame ⌈t·rate⌉), 0 after it; unmuted at
    /// 1.2 s, the ramp up and 1 after, the signal continuing where it would have been. A mute
    /// and an unmute 4 ms apart: the second ramp starts where the first had got to.
    @Test func aMuteLaneIsTheUnmutedRenderTimesTheRamp() throws {
        let unmuted = try renderAll(Self.session(), block: 1000)[0]
        #expect(unmuted.count == 96_000)
        let lane = AutomationLane([(0, 0), (0.40001, 1), (1.2, 0), (1.5, 1), (1.504, 0)], curve: .step)
        let muted = try renderAll(Self.session { $0[0].automation[.mute] = lane }, block: 1000)[0]
        let f1 = Int((0.40001 * Self.rate).rounded(.up)), f2 = 57_600, f3 = 72_000, f4 = 72_192
        #expect(f1 == 19_201)
        // the first ramp had got to 1 − 192/480 when the unmute came
        let reached = Self.factor(from: 1, to: 0, k: f4 - f3 - 1)
        #expect(abs(reached - 0.6) < 1e-12)
        func expected(_ f: Int) -> Double {
            switch f {
            case ..<f1: 1
            case f1..<f2: Self.factor(from: 1, to: 0, k: f - f1)
            case f2..<f3: Self.factor(from: 0, to: 1, k: f - f2)
            case f3..<f4: Self.factor(from: 1, to: 0, k: f - f3)
            default: Self.factor(from: reached, to: 1, k: f - f4)
            }
        }
        var off = 0, zeros = 0, ramped = 0
        for f in 0..<96_000 {
            let g = expected(f)
            if muted[f] != Float(g) * unmuted[f] { off += 1 }
            if g == 0 { zeros += 1; if muted[f] != 0 { off += 1 } }
            if g != 0 && g != 1 { ramped += 1 }
        }
        #expect(off == 0, "\(off) frames off the unmuted render times the ramp")
        #expect(zeros == f2 - f1 - 479 && ramped == 479 + 479 + 192 + 479)
        // (the ramp's middle, as a number: frame F + 239 is 1 − 240/480)
        #expect(muted[f1 + 239] == Float(0.5) * unmuted[f1 + 239] && unmuted[f1 + 239] != 0)
        // after the unmute the signal is the unmuted one, to the bit (the DSP ran on)
        #expect(Array(muted[(f2 + 480)..<f3]) == Array(unmuted[(f2 + 480)..<f3]))
    }

    /// Solo on track 2 from t₁ to t₂ silences tracks 1 and 3 exactly there (ramped at both
    /// ends), track 2 untouched: the mix is the tracks' own renders summed with those factors.
    @Test func soloOnATrackSilencesTheOthersExactlyThere() throws {
        // each track alone (the others muted: a static mute leaves a track out of the sum)
        func alone(_ k: Int) throws -> [Float] {
            try renderAll(Self.session(tracks: 3) { ts in for (j, t) in ts.enumerated() where j != k { t.player.isMuted = true } }, block: 1024)[0]
        }
        let a = try alone(0), b = try alone(1), c = try alone(2)
        let solo = AutomationLane([(0, 0), (0.5, 1), (1.25, 0)], curve: .step)
        let y = try renderAll(Self.session(tracks: 3) { $0[1].automation[.solo] = solo }, block: 1024)[0]
        let f1 = 24_000, f2 = 60_000
        var off = 0
        for f in 0..<96_000 {
            let g: Double = f < f1 ? 1 : f < f2 ? Self.factor(from: 1, to: 0, k: f - f1) : Self.factor(from: 0, to: 1, k: f - f2)
            let e = ((0 + Float(g) * a[f]) + b[f]) + Float(g) * c[f]
            if y[f] != e { off += 1 }
        }
        #expect(off == 0, "\(off) frames off")
        // from the ramp's end to t₂: track 2 alone, exactly; before t₁ all three
        #expect(Array(y[(f1 + 479)..<f2]) == Array(b[(f1 + 479)..<f2]))
        #expect(y[100] == (a[100] + b[100]) + c[100] && y[100] != b[100])
    }

    /// Lanes whose breakpoints all have one value render the static switches' bytes: a mute
    /// lane all 1 is the static mute, all 0 no mute (over a static mute: the lane wins), a solo
    /// lane all 1 the static solo; with a moving volume lane on the track too (its per-sample
    /// path), on one thread and the pipeline's.
    @Test(arguments: [false, true])
    func constantLanesRenderTheStaticBytes(movingVolume: Bool) throws {
        func render(parallel: Bool, _ setup: ([Track]) -> Void) throws -> [[Float]] {
            let engine = Self.session(frames: 60_000, tracks: 3) { ts in
                if movingVolume { ts[0].automation[.volume] = AutomationLane([(0, 1), (1, 0.5)]) }
                setup(ts)
            }
            let kernel = try engine.makeKernel(maximumFrameCount: 1024)
            kernel.parallelTracks = parallel
            try kernel.start()
            var out: [[Float]] = .init(repeating: [], count: kernel.layout.channelCount)
            while true {
                let n = kernel.render(frameCount: 1024)
                if n == 0 { break }
                for ch in out.indices { out[ch] += UnsafeBufferPointer(start: kernel.output.channel(ch), count: n) }
            }
            return out
        }
        for parallel in [false, true] {
            let plain = try render(parallel: parallel) { _ in }
            let mutedStatic = try render(parallel: parallel) { $0[0].player.isMuted = true }
            let soloStatic = try render(parallel: parallel) { $0[2].player.isSoloed = true }
            #expect(try render(parallel: parallel) { $0[0].automation[.mute] = AutomationLane([(0, 1), (1, 1)], curve: .step) } == mutedStatic)
            #expect(try render(parallel: parallel) { $0[0].automation[.mute] = AutomationLane([(0.3, 0)]) } == plain)
            #expect(try render(parallel: parallel) { ts in
                ts[0].player.isMuted = true
                ts[0].automation[.mute] = AutomationLane([(0, 0), (2, 0)], curve: .step)
            } == plain)
            #expect(try render(parallel: parallel) { $0[2].automation[.solo] = AutomationLane([(0, 1)]) } == soloStatic)
            // (the comparisons can fail: the switches change the mix)
            #expect(mutedStatic != plain && soloStatic != plain && soloStatic != mutedStatic)
        }
    }

    /// Mute and solo lanes (ramps overlapping, a volume lane too) render the same samples in
    /// blocks of 64, 333, 1000 and 2048 frames, on one thread and the pipeline's.
    @Test func theOutputDoesNotDependOnTheBlocks() throws {
        func render(_ block: Int, parallel: Bool) throws -> [Float] {
            let engine = Self.session(tracks: 3) { ts in
                ts[0].automation[.mute] = AutomationLane([(0, 1), (0.2, 0), (0.7, 1), (0.703, 0), (1.9, 1)], curve: .step)
                ts[1].automation[.solo] = AutomationLane([(0.5, 0), (1.0, 1), (1.004, 0), (1.3, 1), (1.6, 0)], curve: .step)
                ts[2].automation[.volume] = AutomationLane([(0, 0.5), (2, 1.5)])
                ts[2].automation[.solo] = AutomationLane([(0, 0), (1.5, 1)], curve: .step)
            }
            let kernel = try engine.makeKernel(maximumFrameCount: block)
            kernel.parallelTracks = parallel
            try kernel.start()
            var out: [Float] = []
            while true {
                let n = kernel.render(frameCount: block)
                if n == 0 { break }
                out += UnsafeBufferPointer(start: kernel.output.channel(0), count: n)
            }
            return out
        }
        let reference = try render(2048, parallel: false)
        #expect(reference.count == 96_000)
        #expect(try render(64, parallel: false) == reference)
        #expect(try render(333, parallel: false) == reference)
        #expect(try render(1000, parallel: true) == reference)
        #expect(try render(2048, parallel: true) == reference)
    }

    /// A seek starts at the switches' state at its frame, without a ramp: into a muted stretch,
    /// the rest is the offline render's from there, bit for bit; into a ramp, the track is
    /// already silent (the mix is the other track's alone), live as offline.
    @Test(arguments: [RenderMode.offline, .live])
    func aSeekStartsAtTheStateOfItsFrame(mode: RenderMode) throws {
        /// The first track with the mute lane, or (`muted`) muted throughout.
        func session(muted: Bool = false) -> AudioEngine {
            let engine = AudioEngine()
            let a = engine.addTrack(source: MemorySource(channels: [Signals.noise(frames: 48_000, amplitude: 0.3, seed: 7)], sampleRate: 48_000))
            engine.addTrack(source: MemorySource(channels: [Signals.noise(frames: 48_000, amplitude: 0.2, seed: 8)], sampleRate: 48_000))
            a.eq.trebleGain.value = -4
            a.automation[.mute] = muted ? AutomationLane([(0, 1)]) : AutomationLane([(0, 0), (0.5, 1), (0.75, 0)], curve: .step)
            return engine
        }
        let offline = try renderAll(session(), block: 1000)[0]
        // the second track alone
        let other = try renderAll(session(muted: true), block: 1000)[0]
        func played(from target: Int) throws -> [Float] {
            let kernel = try session().makeKernel(maximumFrameCount: 256, mode: mode)
            try kernel.start()
            for _ in 0..<20 { _ = kernel.render(frameCount: 256) }
            try kernel.seek(toFrame: target)
            var y: [Float] = []
            while y.count < 48_000 - target {
                let n = kernel.render(frameCount: 256)
                guard n > 0 else { break }
                y += UnsafeBufferPointer(start: kernel.output.channel(0), count: n)
            }
            return y
        }
        #expect(try played(from: 30_000) == Array(offline[30_000...]))
        let y = try played(from: 24_100)
        #expect(Array(y[0..<(36_000 - 24_100)]) == Array(other[24_100..<36_000]))
        // (offline, the ramp was still sounding there)
        #expect(offline[24_100] != other[24_100])
    }

    /// Live, a kernel plays the mute and solo lanes as the offline one renders them (the same
    /// samples); a hand's mute takes over the lane until released and is recorded: the lane
    /// written back has a step at the touch's frame and at the release's, and rendered offline
    /// gives what played live, to the bit.
    @Test func aHandsMuteTakesOverTheLaneAndIsWrittenBack() throws {
        let frames = 48_000
        // a DC track (the mix is its gain) and a noise track with effects
        func session() -> (AudioEngine, Track) {
            let engine = AudioEngine()
            let t = engine.addTrack(source: MemorySource(channels: [[Float](repeating: 0.5, count: frames)], sampleRate: 48_000))
            let u = engine.addTrack(source: MemorySource(channels: [Signals.noise(frames: frames, amplitude: 0.2, seed: 5)], sampleRate: 48_000))
            u.eq.bassGain.value = 3
            t.automation[.mute] = AutomationLane([(0, 0), (0.75, 1)], curve: .step)
            u.automation[.solo] = AutomationLane([(0, 0), (0.9, 1)], curve: .step)
            return (engine, t)
        }
        func play(_ engine: AudioEngine, before: (Int) -> Void = { _ in }) throws -> [Float] {
            try playLive(engine, frames: frames, before: before)
        }
        // untouched: the offline render's samples
        let (e0, _) = session()
        let offline = try renderAll(e0, block: 1000)[0]
        let (e1, _) = session()
        #expect(try play(e1) == offline)

        // a hand mutes track 1 at frame 10 240 and lets go at 20 480 (the lane: unmuted there)
        let (engine, t) = session()
        let takes = TouchTakes(t.player.muteParameter, sampleRate: Self.rate)
        let live = try play(engine) { f in
            if f == 10_240 { t.player.muteParameter.touch(1) }
            if f == 20_480 { t.player.muteParameter.release() }
            takes.collect()
        }
        // heard: the ramp down from 10 240, silent, the ramp up from 20 480 (track 1 is 0.5 DC;
        // track 2 is in the mix too, so compare the differences with the untouched playback)
        for f in [10_240 + 479, 15_000, 20_480 + 478] { #expect(live[f] != offline[f]) }
        #expect(Array(live[0..<10_240]) == Array(offline[0..<10_240]))
        #expect(Array(live[(20_480 + 480)...]) == Array(offline[(20_480 + 480)...]))
        let written = try #require(takes.mergedLane())
        let s = { (f: Int) in Double(f) / Self.rate }
        #expect(written == AutomationLane([.init(seconds: 0, value: 0, curve: .step), .init(seconds: s(10_240), value: 1, curve: .step),
                                           .init(seconds: s(20_480), value: 0, curve: .step), .init(seconds: 0.75, value: 1, curve: .step)]))
        // rendered offline, the written lane is what played
        let (e2, t2) = session()
        t2.automation[.mute] = written
        #expect(try renderAll(e2, block: 1000)[0] == live)

        // a track without a lane: the hand's value holds after the release, and the lane
        // written starts with the value before the touch
        let (e3, t3) = session()
        let solo = t3.player.soloParameter
        let soloTakes = TouchTakes(solo, sampleRate: Self.rate)
        _ = try play(e3) { f in
            if f == 5_120 { solo.touch(1) }
            if f == 7_680 { solo.release() }
            soloTakes.collect()
        }
        #expect(try #require(soloTakes.mergedLane()) == AutomationLane([.init(seconds: 0, value: 0, curve: .step),
                                                                       .init(seconds: s(5_120), value: 1, curve: .step)]))
    }

    /// Looped (a 1 s session), a hand mutes track 1 late in pass 1 (its lane unmutes it there)
    /// and holds the mute over the seam into pass 2, releasing it at 15 488 (the lane there:
    /// unmuted; it mutes 24 000–28 800 and 44 000–46 000). Heard: pass 1 muted from the touch to
    /// the seam (its lane's 44 000 step too), pass 2 muted from its first frame to the release.
    /// The written lane holds both (later passes over earlier ones where both were held), and
    /// rendered offline it is, to the bit, what played in each span the hand held: before the
    /// fix the take was recorded as the touch alone and the release alone, so the written lane
    /// let the lane's unmute at 46 000 back in and lost the mute at the start of pass 2 (15 488
    /// frames, 0.32 s, heard muted and written unmuted).
    /// (A pass of 48 128 frames ends on a block's end: the seam between two blocks.)
    @Test(arguments: [(48_000, 15_488), (48_128, 15_360)])
    func aHandsMuteHeldOverALoopSeamIsWrittenAsHeard(frames: Int, release: Int) throws {
        // (live, the sources loop as the player's feeder loops them)
        func session(looping: Bool = false) -> (AudioEngine, Track) {
            let engine = AudioEngine()
            func source(_ v: Float) -> any AudioSource {
                let x = [Float](repeating: v, count: frames)
                return looping ? LoopingSource(x, sampleRate: 48_000) : MemorySource(channels: [x], sampleRate: 48_000)
            }
            let t = engine.addTrack(source: source(0.5))
            _ = engine.addTrack(source: source(0.25))
            t.automation[.mute] = AutomationLane([(0, 0), (0.5, 1), (0.6, 0), (44_000 / Self.rate, 1), (46_000 / Self.rate, 0)], curve: .step)
            return (engine, t)
        }
        let (engine, t) = session(looping: true)
        let mute = t.player.muteParameter
        let takes = TouchTakes(mute, sampleRate: Self.rate)
        let kernel = try engine.makeKernel(maximumFrameCount: 256, mode: .live)
        kernel.loops = true
        try kernel.start()
        var live: [Float] = []
        while live.count < 2 * frames {
            if live.count == 40_960 { mute.touch(1) }
            if live.count == frames + release { mute.release() }
            let n = kernel.render(frameCount: 256)
            live += UnsafeBufferPointer(start: kernel.output.channel(0), count: n)
            takes.collect()
        }
        let written = try #require(takes.mergedLane())
        let s = { (f: Int) in Double(f) / Self.rate }
        let (e2, t2) = session()
        t2.automation[.mute] = written
        let offline = try renderAll(e2, block: 1000)[0]
        // the spans the hand held, each against the pass it was heard in
        let pass1 = Array(live[40_960..<frames]), pass2 = Array(live[frames..<(frames + release + 480)])
        let off1 = Array(offline[40_960..<frames]), off2 = Array(offline[0..<(release + 480)])
        let differ1 = zip(pass1, off1).filter { $0 != $1 }.count, differ2 = zip(pass2, off2).filter { $0 != $1 }.count
        #expect(differ1 == 0 && differ2 == 0, "frames off the live playback: \(differ1) of pass 1's take, \(differ2) of pass 2's; written \(written.breakpoints.map { (Int(($0.seconds * Self.rate).rounded()), $0.value) })")
        #expect(written == AutomationLane([.init(seconds: 0, value: 1, curve: .step), .init(seconds: s(release), value: 0, curve: .step),
                                           .init(seconds: 0.5, value: 1, curve: .step), .init(seconds: 0.6, value: 0, curve: .step),
                                           .init(seconds: s(40_960), value: 1, curve: .step)]))
    }
}
