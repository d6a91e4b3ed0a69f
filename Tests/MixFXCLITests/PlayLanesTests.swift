import Foundation
import Testing
import MixFX
import TestSupport

/// `mixfx play` plays the session's lanes (issue #33, docs/automation.md "Live"): through real
/// ALSA (the raw file tap; the paced tests through PulseAudio, see Tests/alsa), the captured
/// sound against `mixfx render` of the same session with the same lanes, bit for bit.
@Suite struct PlayLanesTests {
    let dir = TempDir("mixfx-play-lanes")

    /// Interleaved s16 of a render's planar floats (as the existing tap tests compare).
    func s16(_ x: Float) -> Int16 { Int16((x * 32768).rounded()) }

    /// Volume, pan, master volume, EQ, pitch and ceiling lanes, on a mono 44.1 kHz track and a
    /// stereo one, and tempo lanes, a time map and pitch lanes at a tempo (on the mix's
    /// timeline): what reaches ALSA is bit-exact the offline render with the same lanes (as the
    /// static settings are: `PlayTests.whatReachesALSAIsBitExactTheOfflineRender`).
    @Test(arguments: [["--automate", "1:volume=1@0,0.2@0.5", "--automate", "2:pan=-1@0,scurve,1@0.8"],
                      ["--automate", "1:volume=1@0,0.2@0.5", "--automate", "2:pan=-1@0,scurve,1@0.8", "--automate", "master-volume=1@0,step,0.6@0.3",
                       "--automate", "2:bass=0@0,9@0.6", "--automate", "1:pitch=0@0,400@0.5", "--automate", "2:pitch=-300@0.1,200@0.7"],
                      // the limiter's ceiling moving from 0 to -14 dBTP over noise peaking near -14 dBFS
                      ["--volume", "1.5", "--limit", "0", "--automate", "limit=0@0,-14@0.6,step,-8@0.7", "--automate", "1:volume=1@0,0.5@0.5"],
                      // a lane that does not move is the ceiling, not the --limit it replaces
                      ["--volume", "1.5", "--limit", "-1", "--automate", "limit=-9@0,-9@0.5"],
                      // a constant pitch lane is the pitch, not the --pitch it replaces (a fixed
                      // pitch: the render without its level match, `PlayTests`)
                      ["--pitch", "100", "--automate", "1:pitch=300@0", "--level-match", "off"],
                      // on the mix's timeline: a tempo lane, a steady tempo with pitch lanes, a time map
                      ["--automate", "1:tempo=0.8@0,1.3@0.5", "--automate", "2:volume=1@0,0.3@0.6", "--automate", "1:bass=0@0,9@0.7"],
                      ["--tempo", "1.25", "--automate", "1:pitch=0@0,300@0.5", "--automate", "2:pitch=-200@0.2,100@0.7"],
                      ["--timemap", "2:TIMEMAP", "--automate", "1:volume=1@0,0.3@0.6"],
                      // mute and solo lanes (each change a 10 ms ramp), with a moving volume lane
                      ["--automate", "1:mute=0@0,1@0.3,0@0.5", "--automate", "2:solo=0@0,1@0.6,0@0.75", "--automate", "2:volume=1@0,0.5@0.8"],
                      ["--automate", "2:mute=0@0,1@0.25,0@0.255"]])
    func lanesThroughALSAAreBitExactTheOfflineRender(lanes: [String]) throws {
        defer { dir.remove() }
        let a = dir.file("a.wav"), b = dir.file("b.flac")
        try AudioFiles.write([Signals.noise(frames: 30_000, amplitude: 0.2, seed: 3)], to: a, sampleRate: 44_100)
        try AudioFiles.write([Signals.noise(frames: 40_000, amplitude: 0.2, seed: 4), Signals.noise(frames: 40_000, amplitude: 0.2, seed: 5)],
                             to: b, sampleRate: 48_000)
        let map = dir.file("map.txt")
        try "12000 18000\n40000 30000\n".write(toFile: map, atomically: true, encoding: .utf8)
        let settings = ["--treble", "2", "--sample-format", "s16"] + lanes.map { $0.replacingOccurrences(of: "TIMEMAP", with: map) }
        let offline = dir.file("offline.wav")
        let o = try MixFXBinary.run(["render", a, b, "-o", offline, "--quiet", "--dither", "none"] + settings)
        #expect(o.status == 0, "\(o.stderr)")
        let tap = dir.file("tap.raw")
        let r = try MixFXBinary.run(["play", a, b, "--device", "mixfx_tap", "--no-ui", "--json"] + settings,
                                    environment: ALSARig.environment(tap: tap))
        #expect(r.status == 0, "\(r.stderr)")
        let captured = try ALSARig.readS16(tap)
        let (ref, format) = try AudioFiles.read(offline)
        #expect(captured.count == format.frameCount * 2, "\(captured.count / 2) frames played, \(format.frameCount) rendered")
        // (the lanes do move the sound: the render differs from one without them)
        let plain = dir.file("plain.wav")
        var unlanedSettings: [String] = []
        var k = 0
        while k < settings.count { if settings[k] == "--automate" || settings[k] == "--timemap" { k += 2 } else { unlanedSettings.append(settings[k]); k += 1 } }
        #expect(try MixFXBinary.run(["render", a, b, "-o", plain, "--quiet", "--dither", "none"] + unlanedSettings).status == 0)
        let (unlaned, _) = try AudioFiles.read(plain)
        #expect(unlaned[0] != ref[0])
        var firstDifference: Int?
        for i in 0..<min(format.frameCount, captured.count / 2) where firstDifference == nil {
            if s16(ref[0][i]) != captured[2 * i] || s16(ref[1][i]) != captured[2 * i + 1] { firstDifference = i }
        }
        #expect(firstDifference == nil, "the tap differs from the offline render with the same lanes at frame \(firstDifference ?? -1)")
    }

    /// Memoryless tracks (no effects but the gains): every frame of the mix is its lanes' gains
    /// at that frame times the input, so after a seek into the middle of the lanes the tap,
    /// past the 10 ms fade-in, is bit-exact the offline render of the whole session from the
    /// seek's frame on (the lanes' values at the new position, no jump), and after the loop's
    /// seam the lanes start again: the next pass is the offline render from frame 0.
    @Test(.enabled(if: ALSARig.pulseServer != nil, Comment(rawValue: ALSARig.pulseMissingReason)))
    func aSeekAndALoopLandInsideTheLanes() throws {
        defer { dir.remove() }
        let input = dir.file("n.wav"), length = 96_000, target = 36_000
        let x = Signals.noise(frames: length, amplitude: 0.3, seed: 11)
        try AudioFiles.write([x, x.reversed()], to: input, sampleRate: 48_000)
        // the seek (0.75 s) lands inside the volume's and the pan's ramps
        let settings = ["--automate", "volume=1@0.5,0.1@1.5", "--automate", "pan=-0.8@0,0.8@2", "--automate", "master-volume=1@0,step,0.7@1.25",
                        "--sample-format", "s16"]
        let offline = dir.file("offline.wav")
        #expect(try MixFXBinary.run(["render", input, "-o", offline, "--quiet", "--dither", "none"] + settings).status == 0)
        let (ref, format) = try AudioFiles.read(offline)
        #expect(format.frameCount == length)
        let tap = dir.file("tap.raw")
        let p = try InteractiveProcess(MixFXBinary.path, ["play", input, "--loop", "--device", "mixfx_pulse_tap", "--no-ui", "--json"] + settings,
                                       environment: ALSARig.environment(tap: tap))
        ALSARig.waitForTap(tap, frames: 24_000, bytesPerFrame: 4)
        p.send("seek 0.75")
        #expect(p.waitForLine(startingWith: "ok seek 0.75") != nil, "\(p.stderr)")
        let atSeek = try ALSARig.readS16(tap).count / 2
        // the rest of the pass and one more whole pass after the seam
        ALSARig.waitForTap(tap, frames: atSeek + (length - target) + length + 9_600, bytesPerFrame: 4)
        p.send("quit")
        #expect(p.wait() == 0, "\(p.stderr)")
        let y = try ALSARig.readS16(tap)
        // the resume point: where the render's frames from the target (after the fade-in) first
        // appear in the tap, 64 in a row (noise: nowhere else), less the fade
        let fade = 480
        let probe = (0..<64).map { s16(ref[0][target + fade + $0]) }
        var resume: Int?
        for i in max(0, atSeek - 48_000)..<(y.count / 2 - 64) where resume == nil {
            if y[2 * i] == probe[0] && (0..<64).allSatisfy({ y[2 * (i + $0)] == probe[$0] }) { resume = i - fade }
        }
        let r = try #require(resume, "the render's frames after the seek were not found in the tap")
        #expect(r + (length - target) + length <= y.count / 2, "too little played after the seek")
        // from the seek's frame to the end, then the next pass from frame 0: the render's frames
        var firstDifference: Int?
        for k in fade..<((length - target) + length) where firstDifference == nil && r + k < y.count / 2 {
            let frame = (target + k) % length
            if s16(ref[0][frame]) != y[2 * (r + k)] || s16(ref[1][frame]) != y[2 * (r + k) + 1] { firstDifference = frame }
        }
        #expect(firstDifference == nil, "after the seek to \(target) (resumed at tap frame \(r)) the tap differs from the render at its frame \(firstDifference ?? -1)")
    }

    /// A loop at a steady tempo (on the mix's timeline): each pass plays the lanes from their
    /// start at the timeline's times, the volume step after the shifter and the treble step
    /// before it (whose frames are the input's, taken to the timeline at the tempo): in each of
    /// the first two passes of a 1 s file at tempo 1.25 (0.8 s a pass), the level falls at
    /// 0.3 s and the highs at 0.6 s, within 10 ms.
    @Test(.enabled(if: ALSARig.pulseServer != nil, Comment(rawValue: ALSARig.pulseMissingReason)))
    func aLoopAtASteadyTempoPlaysTheLanesEachPass() throws {
        defer { dir.remove() }
        let input = dir.file("n.wav"), rate = 48_000
        try AudioFiles.write([Signals.noise(frames: rate, amplitude: 0.3, seed: 12), Signals.noise(frames: rate, amplitude: 0.3, seed: 13)],
                             to: input, sampleRate: rate)
        let tap = dir.file("tap.raw")
        let p = try InteractiveProcess(MixFXBinary.path, ["play", input, "--loop", "--tempo", "1.25", "--device", "mixfx_pulse_tap", "--no-ui", "--json",
                                                          "--sample-format", "s16", "--automate", "volume=1@0,step,0.3@0.3",
                                                          "--automate", "treble=0@0,step,-30@0.6", "--treble-freq", "4000"],
                                       environment: ALSARig.environment(tap: tap))
        let pass = 38_400
        ALSARig.waitForTap(tap, frames: 2 * pass + 4_800, bytesPerFrame: 4)
        p.send("quit")
        #expect(p.wait() == 0, "\(p.stderr)")
        let y = try ALSARig.readS16(tap).enumerated().filter { $0.offset % 2 == 0 }.map { Double($0.element) }
        try #require(y.count >= 2 * pass)
        // the level (RMS over 240 frames) and the highs (first differences' RMS over 240 frames)
        func rms(_ x: ArraySlice<Double>) -> Double { (x.reduce(0) { $0 + $1 * $1 } / Double(x.count)).squareRoot() }
        let d = [0] + (1..<y.count).map { y[$0] - y[$0 - 1] }
        /// The first frame from `from` where `signal`'s 240-frame RMS falls below `fraction` of
        /// its RMS over the 50 ms before `from` + 40 ms.
        func fall(_ signal: [Double], from: Int, to: Int, fraction: Double) -> Int? {
            let before = rms(signal[(from + 480)..<(from + 2_880)])
            return stride(from: from, to: to, by: 24).first { rms(signal[$0..<($0 + 240)]) < fraction * before }.map { $0 + 240 }
        }
        for k in 0..<2 {
            let start = k * pass
            // (from 50 ms into the pass: at the seam the treble comes back from -30 dB through the EQ's smoothing)
            let level = fall(y, from: start + 2_400, to: start + pass - 300, fraction: 0.5)
            #expect(level.map { abs($0 - (start + 14_400)) <= 480 } == true, "pass \(k): the volume step at \(level.map { $0 - start } ?? -1), not 14 400")
            let highs = fall(d, from: start + 14_400 + 500, to: start + pass - 300, fraction: 0.3)
            #expect(highs.map { abs($0 - (start + 28_800)) <= 480 } == true, "pass \(k): the treble step at \(highs.map { $0 - start } ?? -1), not 28 800")
        }
    }

    /// A mute lane through PulseAudio: muted at 0.3 s and unmuted at 0.6 s of a 1 s file,
    /// looped; in each of the first two passes the level falls at 0.3 s and comes back at
    /// 0.6 s, within 10 ms (the ramp is 10 ms from the breakpoint).
    @Test(.enabled(if: ALSARig.pulseServer != nil, Comment(rawValue: ALSARig.pulseMissingReason)))
    func aMuteLaneLandsWithin10msInEachPass() throws {
        defer { dir.remove() }
        let input = dir.file("n.wav"), rate = 48_000, pass = 48_000
        try AudioFiles.write([Signals.noise(frames: rate, amplitude: 0.3, seed: 14), Signals.noise(frames: rate, amplitude: 0.3, seed: 15)],
                             to: input, sampleRate: rate)
        let tap = dir.file("tap.raw")
        let p = try InteractiveProcess(MixFXBinary.path, ["play", input, "--loop", "--device", "mixfx_pulse_tap", "--no-ui", "--json",
                                                          "--sample-format", "s16", "--automate", "mute=0@0,1@0.3,0@0.6"],
                                       environment: ALSARig.environment(tap: tap))
        ALSARig.waitForTap(tap, frames: 2 * pass + 4_800, bytesPerFrame: 4)
        p.send("quit")
        #expect(p.wait() == 0, "\(p.stderr)")
        let y = try ALSARig.readS16(tap).enumerated().filter { $0.offset % 2 == 0 }.map { Double($0.element) }
        try #require(y.count >= 2 * pass)
        for k in 0..<2 {
            let start = k * pass
            // the first frame of the silence (exactly 0 from the ramp's end) and the first
            // frame heard again
            let silent = (start + 2_400..<start + pass).first { f in y[f..<(f + 240)].allSatisfy { $0 == 0 } }
            #expect(silent.map { abs($0 - (start + 14_400 + 479)) <= 480 } == true, "pass \(k): silent from \(silent.map { $0 - start } ?? -1), not 14 879")
            let heard = silent.flatMap { s in (s..<(start + pass)).first { y[$0] != 0 } }
            #expect(heard.map { abs($0 - (start + 28_800)) <= 480 } == true, "pass \(k): heard again from \(heard.map { $0 - start } ?? -1), not 28 800")
            // and loud before and after
            let before = y[(start + 12_000)..<(start + 14_000)].map { $0 * $0 }.reduce(0, +) / 2_000
            let after = y[(start + 30_000)..<(start + 32_000)].map { $0 * $0 }.reduce(0, +) / 2_000
            #expect(before > 1e6 && after > 1e6, "pass \(k): \(before) \(after)")
        }
    }

    /// A loop with a moving tempo lane: each pass plays the tempo map from its start, the
    /// source starting again where the map has the pass's end. Clicks every 0.125 s of a 1 s
    /// file under a lane from 0.8 to 1.25 over the first second (exponential, a tempo's
    /// default curve): in each of the first two passes,
    /// each click lands at its mapped time s⁻¹(x) within 1 ms (issue #33), the second pass a
    /// pass later.
    @Test(.enabled(if: ALSARig.pulseServer != nil, Comment(rawValue: ALSARig.pulseMissingReason)))
    func aLoopWithAMovingTempoLandsEachPassAtItsMappedTimes() throws {
        defer { dir.remove() }
        let rate = 48_000, r = Double(rate)
        let onsets = Array(stride(from: 3_000, to: rate, by: 6_000))
        var x = [Float](repeating: 0, count: rate)
        for o in onsets { x[o] = 0.9 }
        let input = dir.file("clicks.wav")
        try AudioFiles.write([x], to: input, sampleRate: rate)
        // (a tempo lane's segments are exponential unless told otherwise: R(u) = 0.8·k^(u/r),
        // k = 1.25/0.8, so s(u) = 0.8·r·(k^(u/r) − 1)/ln k): its inverse, and the pass (the
        // whole file)
        let k = 1.25 / 0.8
        func mapped(_ s: Double) -> Double { r * log(1 + s * log(k) / (0.8 * r)) / log(k) }
        let pass = mapped(r)
        let tap = dir.file("tap.raw")
        let p = try InteractiveProcess(MixFXBinary.path, ["play", input, "--loop", "--device", "mixfx_pulse_tap", "--no-ui", "--json",
                                                          "--sample-format", "s16", "--automate", "tempo=0.8@0,1.25@1"],
                                       environment: ALSARig.environment(tap: tap))
        ALSARig.waitForTap(tap, frames: Int(2 * pass) + 4_800, bytesPerFrame: 2)
        p.send("quit")
        #expect(p.wait() == 0, "\(p.stderr)")
        let y = try ALSARig.readS16(tap).map { Double($0) }
        try #require(y.count >= Int(2 * pass) + 960)
        var worst = 0.0, at = (pass: 0, onset: 0)
        for k in 0..<2 {
            for o in onsets {
                // (each pass starts on a whole frame of the timeline: the session's length)
                let expected = Double(k) * pass.rounded() + mapped(Double(o))
                let c = Int(expected.rounded())
                let found = (max(0, c - 960)..<min(y.count, c + 960)).max { abs(y[$0]) < abs(y[$1]) }!
                let e = abs(Double(found) - expected)
                if e > worst { worst = e; at = (k, o) }
            }
        }
        #expect(worst <= r / 1000, "pass \(at.pass): the click at source frame \(at.onset) lands \(worst) frames from its mapped time")
    }

    /// A loop with a moving pitch lane at a steady tempo ≠ 1 (its map on the input's time,
    /// repeating every s(L) input frames): a 440 Hz tone at tempo 1.25 with a step to +700
    /// cents at 0.4 s plays 440 Hz before the step and 659.3 Hz after it in each of two passes
    /// (zero crossings over 0.1 s, within 3 cents).
    @Test(.enabled(if: ALSARig.pulseServer != nil, Comment(rawValue: ALSARig.pulseMissingReason)))
    func aLoopWithAPitchLaneAtATempoStepsInEachPass() throws {
        defer { dir.remove() }
        let rate = 48_000
        let input = dir.file("tone.wav")
        try AudioFiles.write([Signals.sine(frequencyHz: 440, sampleRate: Double(rate), frames: rate, amplitude: 0.5)], to: input, sampleRate: rate)
        let tap = dir.file("tap.raw")
        let p = try InteractiveProcess(MixFXBinary.path, ["play", input, "--loop", "--tempo", "1.25", "--device", "mixfx_pulse_tap", "--no-ui",
                                                          "--json", "--sample-format", "s16", "--automate", "pitch=0@0,step,700@0.4"],
                                       environment: ALSARig.environment(tap: tap))
        let pass = 38_400
        ALSARig.waitForTap(tap, frames: 2 * pass + 4_800, bytesPerFrame: 2)
        p.send("quit")
        #expect(p.wait() == 0, "\(p.stderr)")
        let y = try ALSARig.readS16(tap).map { Double($0) }
        try #require(y.count >= 2 * pass)
        /// The frequency over 0.1 s from `start`: upward zero crossings, first to last.
        func frequency(from start: Int) -> Double {
            var ups: [Double] = []
            for i in start..<(start + 4_800) where y[i] < 0 && y[i + 1] >= 0 { ups.append(Double(i) + y[i] / (y[i] - y[i + 1])) }
            return Double(ups.count - 1) * Double(rate) / (ups.last! - ups.first!)
        }
        func cents(_ f: Double, _ g: Double) -> Double { 1_200 * log2(f / g) }
        for k in 0..<2 {
            let before = frequency(from: k * pass + 7_200), after = frequency(from: k * pass + 26_400)
            #expect(abs(cents(before, 440)) < 3, "pass \(k): \(before) Hz before the step")
            #expect(abs(cents(after, 440 * pow(2, 7 / 12))) < 3, "pass \(k): \(after) Hz after the step")
        }
    }

    /// `status` on the mix's timeline names each track's tempo where it is heard (the position
    /// moves at 1 there): a tempo lane's at the position it reports (exponential from 0.8 to
    /// 1.25 over 1.5 s, within 0.002), and a steady tempo's.
    @Test(.enabled(if: ALSARig.pulseServer != nil, Comment(rawValue: ALSARig.pulseMissingReason)))
    func statusNamesTheTracksTemposOnTheTimeline() throws {
        defer { dir.remove() }
        let a = dir.file("a.wav"), b = dir.file("b.wav")
        try AudioFiles.write([Signals.noise(frames: 96_000, amplitude: 0.2, seed: 21)], to: a, sampleRate: 48_000)
        try AudioFiles.write([Signals.noise(frames: 96_000, amplitude: 0.2, seed: 22)], to: b, sampleRate: 48_000)
        let p = try InteractiveProcess(MixFXBinary.path, ["play", a, b, "--device", "mixfx_pulse_tap", "--no-ui", "--sample-format", "s16",
                                                          "--automate", "1:tempo=0.8@0,1.25@1.5", "--track", "2:tempo=1.25"],
                                       environment: ALSARig.environment(tap: dir.file("tap.raw")))
        usleep(700_000)
        p.send("status")
        let status = try #require(p.waitForLine(startingWith: "ok position"), "\(p.stdout)")
        p.send("quit")
        #expect(p.wait() == 0, "\(p.stderr)")
        // "ok position S s of D s, played W s on the timeline, tempos T1 T2, dsp ..."
        let words = status.split(separator: " ")
        let position = try #require(Double(words[2]), "\(status)")
        let tempos = try #require(status.range(of: "on the timeline, tempos "), "\(status)").upperBound
        let values = status[tempos...].split(separator: ",")[0].split(separator: " ").compactMap { Double($0) }
        try #require(values.count == 2, "\(status)")
        let expected = 0.8 * pow(1.25 / 0.8, min(1, position / 1.5))
        #expect(position > 0.2 && abs(values[0] - expected) < 0.002, "\(status): track 1 at \(expected)")
        #expect(values[1] == 1.25, "\(status)")
    }

    /// The realtime contract with every live lane moving (volume, pan, master volume, EQ,
    /// pitch): on the raw tap the render thread allocates nothing from its first frame, warm-up
    /// included (as `PlayTests.theRenderThreadAllocatesNothingFromTheFirstFrame` without lanes).
    @Test(.disabled(if: Sanitizer.name != nil, Sanitizer.reason))
    func movingLanesAllocateNothingOnTheRenderThread() throws {
        defer { dir.remove() }
        let lib = try #require(ALSARig.allocationCounterLibrary(in: dir.path), "gcc is needed to build the allocation counter")
        let a = dir.file("a.wav"), b = dir.file("b.wav")
        try AudioFiles.write([Signals.sine(frequencyHz: 440, sampleRate: 44_100, frames: 44_100, amplitude: 0.5)], to: a, sampleRate: 44_100)
        try AudioFiles.write([Signals.sine(frequencyHz: 220, sampleRate: 48_000, frames: 48_000, amplitude: 0.5)], to: b, sampleRate: 48_000)
        var env = ALSARig.environment(tap: dir.file("t.raw"))
        env["LD_PRELOAD"] = lib
        let r = try MixFXBinary.run(["play", a, b, "--device", "mixfx_tap", "--no-ui", "--json", "--limit", "-3",
                                     "--automate", "1:volume=1@0,0.3@0.8", "--automate", "2:pan=-1@0,1@1", "--automate", "master-volume=1@0,0.5@1",
                                     "--automate", "treble=0@0,-6@1", "--automate", "1:pitch=0@0,700@0.5,step,-300@0.7"],
                                    environment: env)
        #expect(r.status == 0, "\(r.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(r.stdout[r.stdout.firstIndex(of: "{")!...].utf8)) as? [String: Any]
        #expect(report?["renderThreadWarmUpAllocations"] as? Int == 0, "\(r.stdout)")
        #expect(report?["renderThreadAllocations"] as? Int == 0, "\(r.stdout)")
    }
}
