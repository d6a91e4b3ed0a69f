import Foundation
import Testing
import MixFX
import TestSupport

/// No silently clipped file: by default a mix that would clip integer output gets one gain that
/// brings its true peak to −1 dBTP; `--clip` clamps (counted exactly), `--strict` refuses.
@Suite struct ClipPolicyTests {
    let dir = TempDir("mixfx-clip")

    /// Four full-level tracks, summed with a bass boost, as a new user renders them.
    func fourLoudTracks() throws -> [String] {
        try (0..<4).map { k in
            let path = dir.file("t\(k).wav")
            let f = [110.0, 220.0, 330.0, 440.0][k]
            let x = Signals.sine(frequencyHz: f, sampleRate: 44_100, frames: 88_200, amplitude: 0.9)
                .map { ($0 * 32768).rounded() / 32768 }
            try AudioFiles.write([x, x], to: path, sampleRate: 44_100)
            return path
        }
    }

    func json(_ r: MixFXBinary.Result) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
    }

    @Test func theDefaultWritesNoClampedSampleAndSaysWhatItDid() throws {
        defer { dir.remove() }
        let tracks = try fourLoudTracks()
        let out = dir.file("mix.wav"), float = dir.file("mix-f32.wav")
        let r = try MixFXBinary.run(["render"] + tracks + ["--bass", "4", "-o", out, "--json", "--dither", "none"])
        #expect(r.status == 0, "\(r.stderr)")
        let s = try json(r)
        #expect(s["clippedSamples"] as? Int == 0 && s["clipPolicy"] as? String == "avoid")
        let gainDB = try #require(s["appliedGainDB"] as? Double)
        let mixPeakDB = try #require(s["mixPeakDBFS"] as? Double)
        #expect(mixPeakDB > 6 && gainDB < -7, "mix \(mixPeakDB) dBFS, gain \(gainDB) dB")
        #expect(abs((s["truePeakDBTP"] as? Double ?? 0) - -1) < 0.01)
        #expect(r.stderr.contains("a gain of") && r.stderr.contains("nothing clips"), "\(r.stderr)")
        // the file is the float mix times that one gain, rounded: nothing else changed
        #expect(try MixFXBinary.run(["render"] + tracks + ["--bass", "4", "-o", float, "--sample-format", "f32", "--quiet"]).status == 0)
        let (mix, _) = try AudioFiles.read(float), (y, fy) = try AudioFiles.read(out)
        #expect(fy.bitsPerSample == 16 && fy.frameCount == 88_200)
        #expect(abs(20 * log10(Double(mix[0].map(abs).max()!)) - mixPeakDB) < 1e-4)
        let g = pow(10, gainDB / 20)
        var worst = 0.0
        for c in 0..<2 { for i in 0..<fy.frameCount { worst = max(worst, abs(Double(y[c][i]) - Double(mix[c][i]) * g) * 32768) } }
        #expect(worst <= 0.5 + 1e-3, "off by \(worst) LSB")
        // its true peak is the ceiling: the meter on the written file reads −1 dBTP
        var meter = TruePeakMeter(channelCount: 2, maximumFrameCount: fy.frameCount)
        defer { meter.deallocate() }
        y[0].withUnsafeBufferPointer { l in y[1].withUnsafeBufferPointer { r in
            meter.process({ $0 == 0 ? l.baseAddress! : r.baseAddress! }, frameCount: fy.frameCount)
        } }
        #expect(abs(meter.peakDBTP - -1) < 0.01 && y.allSatisfy { $0.allSatisfy { abs($0) < 0.8913 } })
        // float output is never changed: it keeps the peaks and says they are over 0 dBFS
        let fr = try MixFXBinary.run(["render"] + tracks + ["--bass", "4", "-o", dir.file("f2.wav"), "--sample-format", "f32"])
        #expect(fr.stdout.contains("over 0 dBFS") && fr.stderr.contains("over 0 dBFS") && !fr.stdout.contains("gain"), "\(fr.stdout)")
    }

    /// No room for the spill (here a file-size limit, 500 KiB, between the output's size and the spill's,
    /// twice that at 16 bits): the clipping mix is rendered again, no sample clamped, the same
    /// bytes as with room (its true peak measured on a render of its own; it was brought to a
    /// sample peak of −1 dBFS, 3 dB louder than with room on a tone whose true peak lies between
    /// samples).
    @Test(.disabled(if: Sanitizer.name != nil, "a sanitizer's runtime needs files larger than the limit"))
    func withoutRoomForTheSpillTheMixIsRenderedTwice() throws {
        defer { dir.remove() }
        let tracks = try fourLoudTracks()   // 2 s stereo: 353 KB of s16 output, 706 KB of spill
        let out = dir.file("mix.wav")
        let r = try runProcess("/bin/bash", ["-c", "ulimit -f 500; exec \"$0\" \"$@\"", MixFXBinary.path, "render"] + tracks + ["--bass", "4", "-o", out, "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let s = try json(r)
        #expect(s["renderedTwice"] as? Bool == true && s["clippedSamples"] as? Int == 0)
        #expect(abs((s["truePeakDBTP"] as? Double ?? 0) - -1) < 0.01, "\(r.stdout)")
        #expect(r.stderr.contains("rendered again"), "\(r.stderr)")
        let roomy = try MixFXBinary.run(["render"] + tracks + ["--bass", "4", "-o", dir.file("roomy.wav"), "--json"])
        #expect(try json(roomy)["renderedTwice"] as? Bool == false)
        #expect(FileManager.default.contents(atPath: out) == FileManager.default.contents(atPath: dir.file("roomy.wav")))
        // (a loudness target reached through the limiter: its correcting passes render again)
        let loud = ["--normalize", "-8", "--limit", "-1"]
        let tight = try runProcess("/bin/bash", ["-c", "ulimit -f 500; exec \"$0\" \"$@\"", MixFXBinary.path, "render"] + tracks + loud + ["-o", dir.file("n1.wav"), "--json"])
        let roomyLoud = try MixFXBinary.run(["render"] + tracks + loud + ["-o", dir.file("n2.wav"), "--json"])
        #expect(tight.status == 0 && roomyLoud.status == 0, "\(tight.stderr) \(roomyLoud.stderr)")
        #expect(try json(tight)["renderedTwice"] as? Bool == true)
        #expect(FileManager.default.contents(atPath: dir.file("n1.wav")) == FileManager.default.contents(atPath: dir.file("n2.wav")))
    }

    /// Whether this process may mount a tmpfs in a mount namespace of its own (root with
    /// CAP_SYS_ADMIN; a container may refuse it).
    static let canMountPrivately: Bool = {
        guard let unshare = which("unshare") else { return false }
        return (try? runProcess(unshare, ["--mount", "--propagation", "private", "/bin/sh", "-c",
                                          "d=$(mktemp -d) && mount -t tmpfs -o size=1m none \"$d\" && umount \"$d\" && rmdir \"$d\""]))?.status == 0
    }()

    /// A disk too small for the output and the spill together (a tmpfs of 9 to 20 MB for a
    /// 7.7 MB output and its 15 MB spill): whichever write finds the disk full first, the spill
    /// gives way. A render that needs the no-clip gain is rendered again without it, one that
    /// does not is written once; both exit 0 with the whole file. (The output's write used to
    /// fail for the room the spill took.)
    @Test(.enabled(if: canMountPrivately, "cannot mount a tmpfs in a private mount namespace here (needs root with CAP_SYS_ADMIN)"),
          .disabled(if: Sanitizer.name != nil, "a sanitizer's runtime needs more room"))
    func aFullDiskTakesTheSpillNotTheRender() throws {
        defer { dir.remove() }
        let frames = 40 * 48_000
        let x = [Signals.noise(frames: frames, amplitude: 0.5, seed: 21), Signals.noise(frames: frames, amplitude: 0.5, seed: 22)]
        let input = dir.file("long.wav")
        try AudioFiles.write(x, to: input, sampleRate: 48_000)
        let mountPoint = dir.file("small")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        for megabytes in stride(from: 9.0, through: 20.0, by: 0.5) {
            for volume in ["3", "0.7"] {
                let script = "mount -t tmpfs -o size=\(Int(megabytes * 1024))k none \"$1\" && exec \"$2\" render \"$3\" --volume \"$4\" --sample-format s16 -o \"$1/o.wav\" --json"
                let r = try runProcess(which("unshare")!, ["--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh",
                                                            mountPoint, MixFXBinary.path, input, volume])
                #expect(r.status == 0, "\(megabytes) MB, volume \(volume): \(r.stderr)")
                guard r.status == 0 else { continue }
                let s = try json(r)
                #expect(s["frames"] as? Int == frames && s["clippedSamples"] as? Int == 0, "\(megabytes) MB: \(r.stdout)")
                if volume == "3" { #expect((s["appliedGainDB"] as? Double ?? 0) < -3, "\(r.stdout)") }   // (a peak near +3.5 dBFS)
            }
        }
    }

    @Test func aMixWithinFullScaleIsUntouched() throws {
        defer { dir.remove() }
        let x = Signals.noise(frames: 30_000, amplitude: 0.999, seed: 2).map { max(-1, min(32767.0 / 32768, ($0 * 32768).rounded() / 32768)) }
        let input = dir.file("full.wav")
        try AudioFiles.write([x], to: input, sampleRate: 48_000)
        let a = dir.file("a.wav"), b = dir.file("b.wav")
        let r = try MixFXBinary.run(["render", input, "-o", a, "--json"])
        #expect(try json(r)["appliedGainDB"] as? Double == 0)
        #expect(try MixFXBinary.run(["render", input, "-o", b, "--clip", "-q"]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: a)) == Data(contentsOf: URL(fileURLWithPath: input)))
        #expect(try Data(contentsOf: URL(fileURLWithPath: a)) == Data(contentsOf: URL(fileURLWithPath: b)))
    }

    /// `--clip` counts exactly the samples that were clamped, even with --quiet.
    @Test func clipCountsAreExact() throws {
        defer { dir.remove() }
        // s16 clamps x·32768 outside [−32768.5, 32767.5): 1.0, −1.00002 and 1.5 clamp; the others not
        let values: [Float] = [0.5, 1.0, -1.0, 32767.4 / 32768, -32768.4 / 32768, 1.5, -1.00002, 0.99]
        let x = (0..<1000).map { values[$0 % values.count] }   // 125 of each
        let input = dir.file("c.wav")
        try AudioFiles.write([x], to: input, sampleRate: 8000, sampleFormat: .f32)
        let r = try MixFXBinary.run(["render", input, "-o", dir.file("o.wav"), "--sample-format", "s16", "--clip", "--json", "-q"])
        #expect(try json(r)["clippedSamples"] as? Int == 375)
        #expect(r.stderr.contains("375 samples clipped"), "\(r.stderr)")
        let s24 = try MixFXBinary.run(["render", input, "-o", dir.file("o24.wav"), "--sample-format", "s24", "--clip", "--json"])
        #expect(try json(s24)["clippedSamples"] as? Int == 500)   // at 24 bits −32768.4/32768 is beyond −1 too
    }

    @Test func strictWritesNothing() throws {
        defer { dir.remove() }
        let tracks = try fourLoudTracks()
        let before = Set(try FileManager.default.contentsOfDirectory(atPath: dir.path))
        let r = try MixFXBinary.run(["render"] + tracks + ["-o", dir.file("mix.wav"), "--strict"])
        #expect(r.status == 1 && r.stderr.contains("would clip") && r.stderr.contains("--strict"), "\(r.stderr)")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: dir.path)) == before)
        let both = try MixFXBinary.run(["render"] + tracks + ["--clip", "--strict"])
        #expect(both.status == 2 && both.stderr.contains("exclude"))
        // a mix that does not clip renders under --strict
        #expect(try MixFXBinary.run(["render", tracks[0], "-o", dir.file("one.wav"), "--strict", "-q"]).status == 0)
    }
}

/// `--normalize LUFS` and `--dry-run --analyze`.
@Suite struct NormalizeTests {
    let dir = TempDir("mixfx-normalize")

    func tracks() throws -> [String] {
        try (0..<2).map { k in
            let path = dir.file("t\(k).wav")
            let x = Signals.noise(frames: 44_100 * 6, amplitude: 0.1, seed: UInt64(k + 1))
            try AudioFiles.write([x, Signals.noise(frames: 44_100 * 6, amplitude: 0.1, seed: UInt64(k + 7))], to: path, sampleRate: 44_100)
            return path
        }
    }

    func json(_ r: MixFXBinary.Result) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
    }

    @Test(arguments: [-30.0, -23.0, -18.0])
    func landsOnTheTarget(target: Double) throws {
        defer { dir.remove() }
        let t = try tracks()
        let out = dir.file("n.wav")
        let r = try MixFXBinary.run(["render"] + t + ["--bass", "3", "--normalize", "\(target)", "-o", out, "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let s = try json(r)
        #expect(abs((s["integratedLUFS"] as! Double) - target) < 1e-6)
        // measured again from the written 16-bit file, independently of the render's numbers
        let a = try json(try MixFXBinary.run(["analyze", out, "--json"]))
        let measured = ((a["files"] as! [[String: Any]])[0]["integratedLUFS"] as! Double)
        #expect(abs(measured - target) < 0.1, "\(measured) LUFS for a target of \(target)")
        #expect(s["clippedSamples"] as? Int == 0 && (s["truePeakDBTP"] as! Double) <= -1)
    }

    @Test func aTargetThatNeedsALimiterWritesNothingAndSaysWhatFits() throws {
        defer { dir.remove() }
        let t = try tracks()
        let before = Set(try FileManager.default.contentsOfDirectory(atPath: dir.path))
        let r = try MixFXBinary.run(["render"] + t + ["--normalize", "-3", "-o", dir.file("n.wav")])
        #expect(r.status == 1 && r.stderr.contains("--normalize -3") && r.stderr.contains("Add --limit") && r.stderr.contains("aim at most"), "\(r.stderr)")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: dir.path)) == before)
        let silent = dir.file("silent.wav")
        try AudioFiles.write([[Float](repeating: 0, count: 44_100)], to: silent, sampleRate: 44_100)
        let s = try MixFXBinary.run(["render", silent, "--normalize", "-23", "-o", dir.file("s.wav")])
        #expect(s.status == 1 && s.stderr.contains("silent"), "\(s.stderr)")
        #expect(try MixFXBinary.run(["render", silent, "--normalize", "5"]).status == 2)
    }

    @Test func aDryRunThatPredicts() throws {
        defer { dir.remove() }
        let t = try tracks()
        let r = try MixFXBinary.run(["render"] + t + ["--volume", "6", "--normalize", "-20", "--dry-run", "--analyze", "--json", "-o", dir.file("n.wav")])
        #expect(r.status == 0, "\(r.stderr)")
        let s = try json(r)
        let lufs = s["integratedLUFS"] as! Double, tp = s["truePeakDBTP"] as! Double
        #expect(abs((s["gainToNormalizeDB"] as! Double) - (-20 - lufs)) < 1e-9)
        #expect(abs((s["gainToAvoidClippingDB"] as! Double) - (-1 - tp)) < 1e-9 && tp > 0)   // six times louder clips
        #expect(s["normalizeFits"] as? Bool == (tp + (-20 - lufs) <= -1))
        #expect(!FileManager.default.fileExists(atPath: dir.file("n.wav")))
        // the prediction is what the render then does
        let done = try json(try MixFXBinary.run(["render"] + t + ["--volume", "6", "-o", dir.file("c.wav"), "--json"]))
        #expect(abs((done["appliedGainDB"] as! Double) - (-1 - tp)) < 1e-4)
        #expect(try MixFXBinary.run(["render"] + t + ["--analyze"]).status == 2)
    }
}
