import Foundation
import Testing
import MixFX
import TestSupport

/// Touch (issue #33, docs/automation.md "Touch"): live, a hand move on a laned gain takes over
/// the lane with a 10 ms ramp from what played; released, the lane comes back over 250 ms (the
/// gap removed linearly); what played is recorded, thinned within the tolerance, and written
/// back into the lane, which offline renders what was heard.
@Suite struct TouchTests {
    static let rate = 48_000.0
    /// A mono DC track of 1 at 48 kHz (the mix is the gain, exactly) with a volume lane from 1
    /// to 0.5 over the 40 000 frames.
    func session(frames: Int = 40_000) -> (AudioEngine, Track, AutomationLane) {
        let engine = AudioEngine()
        let t = engine.addTrack(source: MemorySource(channels: [[Float](repeating: 1, count: frames)], sampleRate: 48_000))
        let lane = AutomationLane([(0, 1), (Double(frames) / Self.rate, 0.5)], curve: .linear)
        t.automation[.volume] = lane
        return (engine, t, lane)
    }

    /// A session of one track playing `x` (48 kHz) with `lane` on its pitch.
    static func pitchSession(_ x: [Float], _ lane: AutomationLane) -> (AudioEngine, Track) {
        let engine = AudioEngine()
        let t = engine.addTrack(source: MemorySource(channels: [x], sampleRate: 48_000))
        t.automation[.pitchCents] = lane
        return (engine, t)
    }

    /// Renders a live kernel in blocks of 256, calling `before(frame)` before each block.
    func play(_ engine: AudioEngine, frames: Int, before: (Int) -> Void) throws -> [Float] {
        try playLive(engine, frames: frames, before: before)
    }

    /// The documented values: the lane; from `touch` a ramp of 480 frames from the lane's
    /// value at touch − 1 to `hand`; from `release` the lane + gap·(1 − (k + 1)/12 000).
    func expected(_ lane: AutomationLane, frames: Int, touch: Int, hand: Double, release: Int) -> [Double] {
        func l(_ f: Int) -> Double { lane.value(at: Double(f) / Self.rate, scale: .linearGain) }
        var out = (0..<frames).map(l)
        let from = l(touch - 1)
        for f in touch..<release { out[f] = f - touch + 1 >= 480 ? hand : from + (hand - from) * Double(f - touch + 1) / 480 }
        let gap = out[release - 1] - l(release)
        for f in release..<min(frames, release + 11_999) { out[f] = l(f) + gap * (1 - Double(f - release + 1) / 12_000) }
        return out
    }

    @Test func aTouchTakesOverWithA10msRampAndTheLaneReturnsOver250ms() throws {
        let (engine, t, lane) = session()
        let touch = 10_240, release = 20_480
        let y = try play(engine, frames: 40_000) { f in
            if f == touch { t.player.volumeParameter.touch(0.25) }
            if f == release { t.player.volumeParameter.release() }
        }
        #expect(y.count == 40_000)
        let e = expected(lane, frames: y.count, touch: touch, hand: 0.25, release: release)
        var worst = 0.0, at = -1
        for i in 0..<y.count where abs(Double(y[i]) - e[i]) > worst { worst = abs(Double(y[i]) - e[i]); at = i }
        #expect(worst < 1e-6, "the live volume is \(worst) off the documented touch at frame \(at)")
        // before the touch exactly the lane; the ramp's end; the lane again after 250 ms
        #expect(y[touch - 1] == Float(lane.value(at: Double(touch - 1) / Self.rate, scale: .linearGain)))
        #expect(y[touch + 479] == 0.25 && y[release - 1] == 0.25)
        #expect(y[release + 11_999] == Float(lane.value(at: Double(release + 11_999) / Self.rate, scale: .linearGain)))
        // no click: no step between frames beyond the touch ramp's (lane − 0.25)/480 per frame
        var step: Float = 0
        for i in 1..<y.count { step = max(step, abs(y[i] - y[i - 1])) }
        let ramp = Float((e[touch - 1] - 0.25) / 480)
        #expect(step <= ramp * 1.001, "a step of \(step) between frames (the ramp's: \(ramp))")
        #expect(abs(t.player.volumeParameter.playedValue - Double(y[y.count - 1])) < 1e-6)
    }

    /// The take recorded: one, from the touch to the lane's return; written into the lane, the
    /// lane is within 0.1 dB of what played at every frame, with few breakpoints, and an
    /// offline render of it is what the live kernel played, within 0.1 dB at every frame.
    @Test func aTouchRecordedAndPlayedBack() throws {
        let (engine, t, lane) = session()
        let touch = 10_240, release = 20_480
        let takes = TouchTakes(t.player.volumeParameter, sampleRate: Self.rate)
        let y = try play(engine, frames: 40_000) { f in
            if f == touch { t.player.volumeParameter.touch(0.25) }
            if f == 15_360 { t.player.volumeParameter.touch(0.4) }
            if f == release { t.player.volumeParameter.release() }
            takes.collect()
        }
        let recorded = takes.takes
        #expect(recorded.count == 1)
        let take = try #require(recorded.first)
        #expect(abs(take.points[0].seconds - Double(touch - 1) / Self.rate) < 1e-9)
        #expect(abs(take.points[take.points.count - 1].seconds - Double(release + 11_999) / Self.rate) < 1e-9)
        let merged = try #require(takes.mergedLane())
        try merged.validate(for: .volume, lane: "track 1 volume")
        #expect(merged.breakpoints.count <= 12, "\(merged.breakpoints.count) breakpoints: \(merged.breakpoints)")
        func dB(_ v: Double) -> Double { 20 * log10(max(v, 0.001)) }
        var worst = 0.0, at = -1
        for i in 0..<y.count {
            let d = abs(dB(merged.value(at: Double(i) / Self.rate, scale: .linearGain)) - dB(Double(y[i])))
            if d > worst { worst = d; at = i }
        }
        #expect(worst <= 0.1 + 1e-6, "the written lane is \(worst) dB off what played at frame \(at)")
        // outside the take, the original lane's breakpoints and values
        #expect(merged.breakpoints.first == lane.breakpoints.first && merged.breakpoints.last == lane.breakpoints.last)
        // played back offline
        let (offline, o, _) = session()
        o.automation[.volume] = merged
        let z = try renderAll(offline, block: 1000)[0]
        #expect(z.count == y.count)
        var off = 0.0
        for i in 0..<min(z.count, y.count) { off = max(off, abs(dB(Double(z[i])) - dB(Double(y[i])))) }
        #expect(off <= 0.1 + 1e-5, "the render of the written lane is \(off) dB off the live playback")
    }

    /// A take cut by a seek ends on the last frame played before it, at the hand's value (so
    /// the written lane steps back to the lane after what was heard, not a block earlier), and
    /// the hand held on after the seek starts another take.
    @Test func aTakeCutByASeekEndsOnItsLastFrame() throws {
        let (engine, t, _) = session()
        let takes = TouchTakes(t.player.volumeParameter, sampleRate: Self.rate)
        let kernel = try engine.makeKernel(maximumFrameCount: 256, mode: .live)
        try kernel.start()
        var played = 0
        while played < 30_720 {
            if played == 10_240 { t.player.volumeParameter.touch(0.25) }
            if played == 20_480 { try kernel.seek(toFrame: 5_000) }
            let n = kernel.render(frameCount: 256)
            guard n > 0 else { break }
            played += n
            takes.collect()
        }
        let recorded = takes.takes
        #expect(recorded.count == 2, "\(recorded.map(\.points))")
        let last = try #require(recorded.first?.points.last)
        #expect(abs(last.seconds - 20_479 / Self.rate) < 1e-9 && abs(last.value - 0.25) < 1e-12, "\(last)")
    }

    /// A gain without a lane on a session with lanes (here a constant master lane) ramps a hand
    /// change in 10 ms per sample; its release keeps the value; the take becomes a lane.
    @Test func anUnlanedGainRampsAndItsTakeBecomesALane() throws {
        let engine = AudioEngine()
        let t = engine.addTrack(source: MemorySource(channels: [[Float](repeating: 1, count: 20_000)], sampleRate: 48_000))
        try engine.automate(.masterVolume, AutomationLane([(0, 1)]))
        let takes = TouchTakes(t.player.volumeParameter, sampleRate: Self.rate)
        let y = try play(engine, frames: 20_000) { f in
            if f == 5120 { t.player.volumeParameter.touch(0.5) }
            if f == 10_240 { t.player.volumeParameter.release() }
            takes.collect()
        }
        #expect(y[5119] == 1 && y[5120] == Float(1 - 0.5 / 480) && y[5120 + 239] == 0.75 && y[5120 + 479] == 0.5 && y[19_999] == 0.5)
        let lane = try #require(takes.mergedLane())
        #expect(lane.value(at: 0, scale: .linearGain) == 1 && lane.value(at: 19_999 / Self.rate, scale: .linearGain) == 0.5)
        #expect(abs(lane.value(at: Double(5120 + 239) / Self.rate, scale: .linearGain) - 0.75) < 0.01)
    }

    /// Mute and unmute of a laned track ramp in 10 ms per sample (no click): frame k of the
    /// ramp is the lane times 1 − (k + 1)/480 (down) or (k + 1)/480 (up).
    @Test func muteAndUnmuteOfALanedTrackRamp() throws {
        let (engine, t, lane) = session(frames: 20_000)
        let y = try play(engine, frames: 20_000) { f in
            if f == 5120 { t.player.isMuted = true }
            if f == 10_240 { t.player.isMuted = false }
        }
        func l(_ f: Int) -> Double { lane.value(at: Double(f) / Self.rate, scale: .linearGain) }
        var worst = 0.0
        for k in 0..<480 {
            worst = max(worst, abs(Double(y[5120 + k]) - l(5120 + k) * (1 - Double(k + 1) / 480)))
            worst = max(worst, abs(Double(y[10_240 + k]) - l(10_240 + k) * Double(k + 1) / 480))
        }
        #expect(worst < 1e-6, "the mute ramps are \(worst) off")
        #expect(y[5119] == Float(l(5119)) && y[5120] > 0.9 * y[5119] && y[5599] == 0 && y[10_239] == 0)
        #expect(y[10_719] == Float(l(10_719)) && y[19_999] == Float(l(19_999)))
    }

    /// An EQ setting touched over its lane plays the hand's value through the EQ's own
    /// smoothing, and back to the lane when released; the take written into the lane renders
    /// offline what played (the same targets at the same 32-frame cells, the same smoothing).
    @Test func anEQTouchRecordedAndPlayedBack() throws {
        let x = Signals.noise(frames: 48_000, amplitude: 0.3, seed: 9)
        func make(_ lane: AutomationLane) -> (AudioEngine, Track) {
            let engine = AudioEngine()
            let t = engine.addTrack(source: MemorySource(channels: [x], sampleRate: 48_000))
            t.automation[.bassGainDB] = lane
            return (engine, t)
        }
        let lane = AutomationLane([(0, 0), (1, 12)], curve: .linear)
        let (engine, t) = make(lane)
        let bass = try #require(t.parameter(.bassGainDB))
        let takes = TouchTakes(bass, sampleRate: Self.rate)
        let y = try play(engine, frames: 48_000) { f in
            if f == 9728 { bass.touch(-6) }
            if f == 19_200 { bass.touch(-12) }
            if f == 28_672 { bass.release() }
            takes.collect()
        }
        let recorded = takes.takes
        #expect(recorded.count == 1)
        let merged = try #require(takes.mergedLane())
        try merged.validate(for: .bassGainDB, lane: "track 1 bass")
        #expect(merged.breakpoints.count <= 10, "\(merged.breakpoints)")
        let (offline, _) = make(merged)
        let z = try renderAll(offline, block: 1000)[0]
        let (plain, _) = make(lane)
        let u = try renderAll(plain, block: 1000)[0]
        var off: Float = 0, moved: Float = 0, at = -1
        for i in 0..<min(y.count, z.count) {
            if abs(y[i] - z[i]) > off { off = abs(y[i] - z[i]); at = i }
            moved = max(moved, abs(y[i] - u[i]))
        }
        #expect(off < 1e-4, "the render of the written EQ lane is \(off) off the live playback at frame \(at) (lane \(merged.breakpoints.map { ($0.seconds * 48_000, $0.value, $0.curve.rawValue) }))")
        #expect(moved > 0.05, "the touch did not change the sound (\(moved))")
    }

    /// A hand holding the pitch over its lane (moving, or constant): a sine plays the hand's
    /// pitch within 1 cent once the vocoder's glide (τ = 20 ms) has settled, 150 ms after the
    /// touch, and the lane's again 150 ms after the release (a lane slow enough for the glide's
    /// lag to stay under 1 cent); the take recorded and written into the lane renders offline what
    /// played, within 2 cents in every settled window.
    @Test(arguments: [AutomationLane([(0, 0), (2, 60)]), AutomationLane([(0, 150)])])
    func aPitchTouchTakesOverItsLaneAndIsWrittenBack(lane: AutomationLane) throws {
        let rate = Self.rate, n = 96_000
        let x = Signals.sine(frequencyHz: 440, sampleRate: rate, frames: n, amplitude: 0.5)
        func make(_ lane: AutomationLane) -> (AudioEngine, Track) { Self.pitchSession(x, lane) }
        let (engine, t) = make(lane)
        let pitch = t.timePitch.pitchParameter
        let takes = TouchTakes(pitch, sampleRate: rate)
        let touch = 24_064, release = 57_600
        var playedBefore = Double.nan
        let y = try play(engine, frames: n) { f in
            if f == touch { playedBefore = pitch.playedValue; pitch.touch(-300) }
            if f == release { pitch.release() }
            takes.collect()
        }
        #expect(y.count == n)
        // (what plays, for a hand's next step from it: the lane's value, glided)
        #expect(abs(playedBefore - lane.value(at: Double(touch) / rate, scale: .linear)) < 2, "played \(playedBefore) before the touch")
        let w = 4096
        func cents(_ y: [Float], at centre: Int) -> Double {
            Signals.cents(Signals.frequency(y[(centre - w / 2)..<(centre + w / 2)], sampleRate: rate), 440)
        }
        func laneCents(_ frame: Int) -> Double { lane.value(at: Double(frame) / rate, scale: .linear) }
        // before, during (settled), after (settled)
        for c in stride(from: 6_000, to: touch - w / 2, by: 2_000) { #expect(abs(cents(y, at: c) - laneCents(c)) < 1, "before the touch, at \(c)") }
        for c in stride(from: touch + 7_200 + w / 2, to: release - w / 2, by: 2_000) { #expect(abs(cents(y, at: c) + 300) < 1, "held, at \(c): \(cents(y, at: c))") }
        for c in stride(from: release + 7_200 + w / 2, to: n - w, by: 2_000) { #expect(abs(cents(y, at: c) - laneCents(c)) < 1, "released, at \(c): \(cents(y, at: c))") }
        // written back: the hand's value over the take, the lane around it
        let merged = try #require(takes.mergedLane())
        try merged.validate(for: .pitchCents, lane: "track 1 pitch")
        #expect(merged.value(at: Double(touch + release) / 2 / rate, scale: .linear) == -300, "\(merged.breakpoints)")
        let (offline, _) = make(merged)
        let z = try renderAll(offline, block: 1000)[0]
        var worst = 0.0, at = -1
        for c in stride(from: 6_000, to: n - w, by: 1_000) where abs(c - touch) > 7_200 + w / 2 && abs(c - release) > 7_200 + w / 2 {
            let d = abs(cents(y, at: c) - cents(z, at: c))
            if d > worst { worst = d; at = c }
        }
        #expect(worst < 2, "the render of the written pitch lane is \(worst) cents off the live playback at frame \(at)")
        // and the moves at the frames they were heard: the pitch crosses halfway to the hand's
        // within 5 ms of where it does live, and back within 15 ms (a vocoder hop); over a
        // constant lane the release, a large step up from a lowered pitch, switches live to a
        // fresh vocoder (a 20 ms crossfade) and is recorded where the switch was heard, and the
        // written lane glides there (τ = 20 ms): back within 20 ms
        func crossing(_ y: [Float], from: Int, to: Int, above: Bool, _ level: Double) -> Int? {
            stride(from: from, to: to, by: 48).first { c in (cents(y, at: c) > level) == above }
        }
        let down = (laneCents(touch) - 300) / 2, up = (laneCents(release) - 300) / 2
        let heard = (crossing(y, from: touch, to: release, above: false, down), crossing(y, from: release, to: n - w, above: true, up))
        let written = (crossing(z, from: touch - 9_600, to: release, above: false, down), crossing(z, from: release - 9_600, to: n - w, above: true, up))
        #expect(heard.0 != nil && heard.1 != nil)
        let back = lane.constantValue == nil ? 720 : 960
        #expect(abs((heard.0 ?? 0) - (written.0 ?? -10_000)) <= 240 && abs((heard.1 ?? 0) - (written.1 ?? -10_000)) <= back,
                "the touch was heard at frames \(String(describing: heard)), the written lane plays it at \(String(describing: written)) (\(merged.breakpoints.map { ($0.seconds * rate, $0.value) }))")
    }

    /// A point that cuts back (a pitch's switch, heard at the output before the frames its
    /// take had recorded ahead) replaces the take's points from its frame on, at the value the
    /// take had there; the points after it follow.
    @Test func aPointThatCutsBackReplacesTheTakeFromItsFrame() {
        let recorded = [TouchPoint(frame: 100, value: -300, startsTake: true),
                        TouchPoint(frame: 612, value: -300, startsTake: false),
                        TouchPoint(frame: 1_124, value: -280, startsTake: false),
                        TouchPoint(frame: 1_636, value: -280, startsTake: false),
                        TouchPoint(frame: 800, value: -280, startsTake: false, cutsBack: true),
                        TouchPoint(frame: 801, value: 150, startsTake: false),
                        TouchPoint(frame: 1_313, value: 150, startsTake: false)]
        let takes = TouchTake.takes(from: recorded, sampleRate: Self.rate)
        #expect(takes.count == 1)
        let points = takes.first?.points.map { (Int(($0.seconds * Self.rate).rounded()), $0.value) } ?? []
        let expected: [(Int, Double)] = [(100, -300), (612, -300), (800, -300 + 20 * 188 / 512), (801, 150), (1_313, 150)]
        #expect(points.count == expected.count && zip(points, expected).allSatisfy { $0.0 == $1.0 && abs($0.1 - $1.1) < 1e-9 }, "\(points)")
        // (a recording that starts with a cut point: a take from it)
        let alone = TouchTake.takes(from: [TouchPoint(frame: 5, value: 1, startsTake: false, cutsBack: true)], sampleRate: Self.rate)
        #expect(alone.count == 1 && alone.first?.points.count == 1)
    }

    /// A hand moving the pitch while it holds it, over a constant lowered lane: up from the
    /// lowered pitch (a switch live, at the touch and again while held), down (a glide), and
    /// released from a raised pitch (a glide back): the written lane plays each move within
    /// 20 ms of where it was heard, and the held pitches within 2 cents of what played.
    @Test func pitchMovesWhileHeldAreWrittenWhereTheyWereHeard() throws {
        let rate = Self.rate, n = 144_000
        let x = Signals.sine(frequencyHz: 440, sampleRate: rate, frames: n, amplitude: 0.5)
        let lane = AutomationLane([(0, -300)])
        func make(_ lane: AutomationLane) -> (AudioEngine, Track) { Self.pitchSession(x, lane) }
        let (engine, t) = make(lane)
        let pitch = t.timePitch.pitchParameter
        let takes = TouchTakes(pitch, sampleRate: rate)
        // (frames of the blocks of 256; the pitch before and after each move)
        let moves: [(frame: Int, to: Double?, from: Double)] = [(24_064, 200, -300), (48_128, -500, 200), (72_192, 100, -500), (96_256, nil, 100)]
        let y = try play(engine, frames: n) { f in
            for m in moves where m.frame == f {
                if let c = m.to { pitch.touch(c) } else { pitch.release() }
            }
            takes.collect()
        }
        let merged = try #require(takes.mergedLane())
        let (offline, _) = make(merged)
        let z = try renderAll(offline, block: 1000)[0]
        let w = 4096
        func cents(_ y: [Float], at centre: Int) -> Double {
            Signals.cents(Signals.frequency(y[(centre - w / 2)..<(centre + w / 2)], sampleRate: rate), 440)
        }
        func crossing(_ y: [Float], from: Int, to: Int, above: Bool, _ level: Double) -> Int? {
            stride(from: from, to: to, by: 48).first { c in (cents(y, at: c) > level) == above }
        }
        for (i, m) in moves.enumerated() {
            let to = m.to ?? -300, half = (m.from + to) / 2, up = to > m.from
            let end = i + 1 < moves.count ? moves[i + 1].frame : n - w
            let heard = crossing(y, from: m.frame, to: end, above: up, half)
            let written = crossing(z, from: m.frame - 9_600, to: end, above: up, half)
            #expect(heard != nil && written != nil && abs(heard! - written!) <= 960,
                    "move \(i) (\(m.from) → \(to) cents at \(m.frame)): heard at \(String(describing: heard)), written at \(String(describing: written)) (\(merged.breakpoints.map { ($0.seconds * rate, $0.value) }))")
            // settled: what played, and the written lane the same within 2 cents
            for c in stride(from: m.frame + 9_600 + w / 2, to: end - w / 2, by: 4_000) {
                #expect(abs(cents(y, at: c) - to) < 1 && abs(cents(z, at: c) - to) < 2, "move \(i) settled at \(c): \(cents(y, at: c)), written \(cents(z, at: c))")
            }
        }
    }

    /// An EQ setting and a pitch without lanes, on a session with lanes, touched: the lane
    /// written for each holds the value set before the touch up to the take, the hand's after.
    @Test func anUnlanedSettingKeepsItsValueBeforeTheTake() throws {
        let engine = AudioEngine()
        let t = engine.addTrack(source: MemorySource(channels: [Signals.noise(frames: 48_000, amplitude: 0.3, seed: 4)], sampleRate: 48_000))
        t.automation[.volume] = AutomationLane([(0, 1), (1, 0.5)])
        let bass = try #require(t.parameter(.bassGainDB)), pitch = t.timePitch.pitchParameter
        bass.value = 3
        pitch.value = 100
        let takes = [TouchTakes(bass, sampleRate: Self.rate), TouchTakes(pitch, sampleRate: Self.rate)]
        _ = try play(engine, frames: 48_000) { f in
            if f == 9728 { bass.touch(-6); pitch.touch(-200) }
            if f == 28_672 { bass.release(); pitch.release() }
            for k in takes { k.collect() }
        }
        for (k, (before, hand)) in zip(takes, [(3.0, -6.0), (100, -200)]) {
            let lane = try #require(k.mergedLane())
            #expect(lane.value(at: 0.1, scale: .linear) == before && lane.value(at: 0.4, scale: .linear) == hand
                    && lane.value(at: 0.9, scale: .linear) == hand, "\(k.parameter.id): \(lane.breakpoints)")
        }
    }

    /// A touch held across a seek forward: the part skipped keeps the lane (each take ends where
    /// playback jumped and a new one starts where it went on), for the EQ and the pitch.
    @Test func aTouchHeldAcrossASeekLeavesTheSkippedPartToTheLane() throws {
        let engine = AudioEngine()
        let t = engine.addTrack(source: MemorySource(channels: [Signals.sine(frequencyHz: 440, sampleRate: Self.rate, frames: 96_000)], sampleRate: 48_000))
        t.automation[.bassGainDB] = AutomationLane([(0, 0), (2, 6)])
        t.automation[.pitchCents] = AutomationLane([(0, 0), (2, 200)])
        let bass = try #require(t.parameter(.bassGainDB)), pitch = t.timePitch.pitchParameter
        let takes = [TouchTakes(bass, sampleRate: Self.rate), TouchTakes(pitch, sampleRate: Self.rate)]
        let kernel = try engine.makeKernel(maximumFrameCount: 256, mode: .live)
        try kernel.start()
        var f = 0
        while f < 86_400 {
            if f == 9_728 { bass.touch(-12); pitch.touch(-300) }
            if f == 24_064 { try kernel.seek(toFrame: 62_464); f = 62_464 }
            if f == 72_192 { bass.release(); pitch.release() }
            f += kernel.render(frameCount: 256)
            for k in takes { k.collect() }
        }
        for (k, (lane, hand)) in zip(takes, [(6.0 * 0.5, -12.0), (200 * 0.5, -300)]) {
            let merged = try #require(k.mergedLane())
            // 1 s (frame 48 000) was skipped: the lane's value there; 0.3 s and 1.4 s were held
            let skipped = merged.value(at: 1, scale: .linear)
            #expect(abs(skipped - lane) < 0.01, "\(k.parameter.id): \(skipped) at 1 s, the lane's \(lane) (\(merged.breakpoints))")
            #expect(merged.value(at: 0.3, scale: .linear) == hand && merged.value(at: 1.4, scale: .linear) == hand, "\(merged.breakpoints)")
        }
    }

    /// Thinning keeps the curve within the tolerance of what was recorded everywhere (at the
    /// recorded points and between them, 20 times per segment) and drops what does not change
    /// the sound: a straight line becomes its two ends.
    @Test(arguments: [ParameterID.volume, .pan, .pitchCents, .bassFrequencyHz])
    func thinningStaysWithinTheTolerance(id: ParameterID) {
        var rng = SeededGenerator(seed: 7)
        let tolerance = LaneTolerance(id)
        // a wandering curve of 2000 points in the parameter's range (volume 0.001…2)
        var points: [AutomationLane.Breakpoint] = []
        var x = 0.5, slope = 0.0
        for i in 0..<2000 {
            slope = min(0.002, max(-0.002, slope + Double.random(in: -0.0002...0.0002, using: &rng)))
            x = min(1, max(0, x + slope))
            let v: Double = switch id {
            case .volume: 0.001 * pow(2000, x)
            case .pan: 2 * x - 1
            case .pitchCents: 2400 * (2 * x - 1)
            default: 20 * pow(1000, x)
            }
            points.append(.init(seconds: Double(i) * 0.005, value: v))
        }
        let thin = LaneThinning.thin(points, tolerance: tolerance)
        #expect(thin.count < points.count / 2 && thin.count > 2, "\(thin.count) of \(points.count) kept")
        #expect(thin.first == points.first && thin.last == points.last)
        func at(_ p: [AutomationLane.Breakpoint], _ t: Double) -> Double {
            let i = max(0, min(p.count - 2, (p.lastIndex { $0.seconds <= t } ?? 0)))
            let u = (t - p[i].seconds) / (p[i + 1].seconds - p[i].seconds)
            return p[i].value + (p[i + 1].value - p[i].value) * u
        }
        var worst = 0.0
        for i in 0..<(points.count - 1) {
            for k in 0..<20 {
                let t = points[i].seconds + (points[i + 1].seconds - points[i].seconds) * Double(k) / 20
                worst = max(worst, tolerance.distance(at(points, t), at(thin, t)))
            }
        }
        #expect(worst <= tolerance.amount * 1.05, "\(id.spec.key): the thinned curve is \(worst) off (tolerance \(tolerance.amount))")
        let line = (0..<100).map { AutomationLane.Breakpoint(seconds: Double($0), value: 0.2 + Double($0) * 0.001) }
        #expect(LaneThinning.thin(line, tolerance: LaneTolerance(.pan)).count == 2)
    }

    /// The tolerances: 0.1 dB on a gain (floor −60 dB), 1 cent of pitch or of a ratio, 0.01 of pan.
    @Test func tolerances() {
        #expect(LaneTolerance(.volume).distance(1, pow(10, 0.1 / 20)) - 0.1 < 1e-12)
        #expect(LaneTolerance(.volume).distance(0, 0.0001) == 0)
        #expect(LaneTolerance(.pitchCents).amount == 1 && LaneTolerance(.pan).amount == 0.01 && LaneTolerance(.bassGainDB).amount == 0.1)
        #expect(abs(LaneTolerance(.trebleFrequencyHz).distance(1000, 1000 * pow(2, 1.0 / 1200)) - 1) < 1e-9)
    }
}
