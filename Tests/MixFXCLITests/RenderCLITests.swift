import Foundation
import Testing
import MixFX
import TestSupport

/// End-to-end tests of the `mixfx` executable on generated files.
@Suite struct RenderCLITests {
    let dir = TempDir("mixfx-cli")

    func makeInput(_ name: String, frames: Int = 22_050, channels: Int = 2, rate: Int = 44_100,
                   format: SampleFormat = .s16, seed: UInt64 = 1) throws -> String {
        let path = dir.file(name)
        let chans = (0..<channels).map { c in
            Signals.noise(frames: frames, amplitude: 0.25, seed: seed &+ UInt64(c) &* 7919)
                .map { ($0 * 32768).rounded() / 32768 }
        }
        try AudioFiles.write(chans, to: path, sampleRate: rate, sampleFormat: format)
        return path
    }

    @Test func rendersWithDefaultsAsABitExactMix() throws {
        defer { dir.remove() }
        let input = try makeInput("in.wav")
        let out = dir.file("out.wav")
        let r = try MixFXBinary.run(["render", input, "-o", out, "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let (a, fa) = try AudioFiles.read(input)
        let (b, fb) = try AudioFiles.read(out)
        #expect(fb.frameCount == fa.frameCount && fb.bitsPerSample == 16 && fb.sampleRate == 44_100)
        #expect(a == b)
    }

    @Test func flagsAndExactLengthAndSampleFormats() throws {
        defer { dir.remove() }
        let a = try makeInput("a.wav", frames: 30_000, channels: 1)
        let b = try makeInput("b.flac", frames: 20_000, channels: 2, rate: 48_000, format: .s24, seed: 5)
        let out = dir.file("mix.flac")
        let r = try MixFXBinary.run(["render", a, b, "-o", out, "--bass", "4", "--pitch", "200",
                                     "--track", "2:pitch=-300,volume=0.8,pan=0.5", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let (_, f) = try AudioFiles.read(out)
        #expect(f.sampleRate == 48_000 && f.channelCount == 2 && f.bitsPerSample == 24)
        #expect(f.frameCount == 32_654)   // ceil(30000 · 48000/44100)
        let summary = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        #expect(summary["frames"] as? Int == 32_654)
        #expect(summary["sampleFormat"] as? String == "s24")
        #expect(summary["clippedSamples"] as? Int == 0)
        for fmt in ["s16", "s32", "f32"] {
            let o = dir.file("x-\(fmt).wav")
            let r2 = try MixFXBinary.run(["render", a, "-o", o, "--sample-format", fmt, "--rate", "22050", "--quiet"])
            #expect(r2.status == 0, "\(r2.stderr)")
            let (_, f2) = try AudioFiles.read(o)
            #expect(f2.sampleRate == 22_050 && f2.frameCount == 15_000)
            #expect(f2.bitsPerSample == (fmt == "s16" ? 16 : fmt == "s32" ? 32 : 33))
        }
        let ogg = dir.file("x.ogg")
        #expect(try MixFXBinary.run(["render", a, "-o", ogg, "--quiet"]).status == 0)
        #expect(try AudioFiles.read(ogg).format.frameCount == 30_000)
    }

    @Test func clippingIsCountedNeverWrapped() throws {
        defer { dir.remove() }
        let input = dir.file("loud.wav")
        try AudioFiles.write([Signals.sine(frequencyHz: 100, sampleRate: 8000, frames: 8000, amplitude: 0.9)],
                             to: input, sampleRate: 8000)
        let out = dir.file("o.wav")
        let r = try MixFXBinary.run(["render", input, "-o", out, "--volume", "2", "--json", "--clip"])
        #expect(r.status == 0)
        let s = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        let clipped = s["clippedSamples"] as! Int
        #expect(clipped > 1000)
        #expect(r.stderr.contains("clipped"))
        let (y, _) = try AudioFiles.read(out)
        // Clamped: the sign follows the input everywhere (no wrap-around).
        let x = Signals.sine(frequencyHz: 100, sampleRate: 8000, frames: 8000, amplitude: 0.9)
        #expect(zip(x, y[0]).allSatisfy { ($0 >= 0) == ($1 >= 0) || abs($0) < 1e-3 })
        #expect(y[0].max()! == 32767.0 / 32768 && y[0].min()! == -1)
    }

    @Test func errorPathsExplainAndLeaveNothingBehind() throws {
        defer { dir.remove() }
        let input = try makeInput("in.wav")
        let original = try Data(contentsOf: URL(fileURLWithPath: input))
        func expectError(_ args: [String], status: Int32, mentions: [String], sourceLine: Int = #line) throws {
            let before = Set(try FileManager.default.contentsOfDirectory(atPath: dir.path))
            let r = try MixFXBinary.run(args, cwd: dir.path)
            #expect(r.status == status, "args \(args): status \(r.status), stderr \(r.stderr)")
            let line = r.stderr.split(separator: "\n").last.map(String.init) ?? ""
            #expect(line.hasPrefix("mixfx: error: "), "\(r.stderr)")
            for m in mentions { #expect(line.contains(m), "'\(line)' should mention '\(m)'") }
            let after = Set(try FileManager.default.contentsOfDirectory(atPath: dir.path))
            #expect(after == before, "files appeared: \(after.subtracting(before))")
        }
        // missing file
        try expectError(["render", dir.file("missing.wav"), "-o", "o.wav"], status: 1, mentions: ["missing.wav", "no such file"])
        // non-audio file
        let text = dir.file("readme.txt")
        try "not audio at all".write(toFile: text, atomically: true, encoding: .utf8)
        try expectError(["render", text, "-o", "o.wav"], status: 1, mentions: ["readme.txt", "not an audio file"])
        // corrupt header: a RIFF/WAVE header whose fmt chunk is garbage
        var bad = Data("RIFF".utf8) + Data([0x24, 0, 0, 0]) + Data("WAVEfmt ".utf8)
        bad += Data([16, 0, 0, 0, 0x99, 0x99, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
        bad += Data("data".utf8) + Data([0, 0, 0, 0])
        let corrupt = dir.file("corrupt.wav")
        try bad.write(to: URL(fileURLWithPath: corrupt))
        try expectError(["render", corrupt, "-o", "o.wav"], status: 1, mentions: ["corrupt.wav"])
        // bad flag values
        try expectError(["render", input, "--bass", "40"], status: 2, mentions: ["--bass", "40 is above 24", "-96"])
        try expectError(["render", input, "--pitch", "lots"], status: 2, mentions: ["--pitch", "'lots' is not a number"])
        try expectError(["render", input, "--track", "3:pitch=100"], status: 2, mentions: ["--track 3:pitch=100", "1 track"])
        try expectError(["render", input, "--track", "1:wobble=2"], status: 2, mentions: ["wobble"])
        try expectError(["render", input, "--sample-format", "s8"], status: 2, mentions: ["s8", "s16, s24, s32, f32"])
        try expectError(["render", input, "--treble-freq", "30000", "-o", "o.wav"], status: 2, mentions: ["30000 is above 24000"])
        try expectError(["render", input, "--treble-freq", "23000", "--treble", "3", "-o", "o.wav"], status: 2, mentions: ["Nyquist"])
        try expectError(["render", input, "--frobnicate"], status: 2, mentions: ["unknown option --frobnicate"])
        try expectError(["render", input, "-o", "o.mp9"], status: 2, mentions: ["o.mp9", "unknown extension"])
        try expectError(["render", input, "-o", "o.flac", "--sample-format", "f32"], status: 2, mentions: ["flac cannot hold f32"])
        try expectError(["render"], status: 2, mentions: ["no tracks"])
        try expectError(["bogus"], status: 2, mentions: ["unknown command 'bogus'"])
        // bad presets
        let badPreset = dir.file("bad.json")
        try #"{"schemaVersion": 1, "tracks": [{}, {}, {"eq": {"bass": {"gainDB": 40}}}]}"#
            .write(toFile: badPreset, atomically: true, encoding: .utf8)
        try expectError(["render", input, "--preset", badPreset], status: 2,
                        mentions: ["bad.json", "tracks[2].eq.bass.gainDB: 40 is above 24"])
        let notJSON = dir.file("broken.json")
        try "{ schemaVersion: 1".write(toFile: notJSON, atomically: true, encoding: .utf8)
        try expectError(["render", input, "--preset", notJSON], status: 2, mentions: ["broken.json", "not valid JSON"])
        try expectError(["render", input, "--preset", "no-such-preset"], status: 2, mentions: ["no-such-preset", "flat"])
        let wrongType = dir.file("type.json")
        try #"{"schemaVersion": 1, "all": {"pitch": {"cents": "high"}}}"#.write(toFile: wrongType, atomically: true, encoding: .utf8)
        try expectError(["render", input, "--preset", wrongType], status: 2, mentions: ["all.pitch.cents", "must be a number"])
        // existing output is not overwritten
        let existing = dir.file("exists.wav")
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: existing))
        try expectError(["render", input, "-o", existing], status: 2, mentions: ["exists.wav", "--force"])
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "keep me")
        // the output may never be an input, even with --force (also through another spelling of the path)
        try expectError(["render", input, "-o", input, "--force"], status: 2, mentions: ["in.wav", "is one of the inputs"])
        try expectError(["render", input, "-o", "./in.wav", "--force", "--bass", "3"], status: 2, mentions: ["is one of the inputs"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: input)) == original)
    }

    /// TPDF dither keeps a tone below the 16-bit step audible as tone, not as silence.
    @Test func ditherKeepsLowLevelDetail() throws {
        defer { dir.remove() }
        let input = dir.file("quiet.wav")
        let amplitude = 1e-5   // −100 dBFS: a third of a 16-bit step
        try AudioFiles.write([Signals.sine(frequencyHz: 1000, sampleRate: 44_100, frames: 44_100, amplitude: amplitude)],
                             to: input, sampleRate: 44_100, sampleFormat: .f32)
        let plain = dir.file("plain.wav"), dithered = dir.file("dither.wav"), again = dir.file("again.wav")
        #expect(try MixFXBinary.run(["render", input, "-o", plain, "--sample-format", "s16", "--dither", "none", "--quiet"]).status == 0)
        #expect(try MixFXBinary.run(["render", input, "-o", dithered, "--sample-format", "s16", "--dither", "tpdf", "--quiet"]).status == 0)
        #expect(try MixFXBinary.run(["render", input, "-o", again, "--sample-format", "s16", "--dither", "tpdf", "--quiet"]).status == 0)
        let p = try AudioFiles.read(plain).channels[0], d = try AudioFiles.read(dithered).channels[0]
        #expect(p.allSatisfy { $0 == 0 })   // truncated to silence
        #expect(try Data(contentsOf: URL(fileURLWithPath: dithered)) == Data(contentsOf: URL(fileURLWithPath: again)))
        let lsb = 1.0 / 32768
        let noise = Signals.rms(d[...]) / lsb
        #expect(noise > 0.4 && noise < 0.65, "dither noise \(noise) LSB rms")
        // The tone survives: its least-squares amplitude at 1 kHz is the input's.
        var c = 0.0, s = 0.0
        for (n, v) in d.enumerated() {
            c += Double(v) * cos(2 * .pi * 1000 * Double(n) / 44_100); s += Double(v) * sin(2 * .pi * 1000 * Double(n) / 44_100)
        }
        let fitted = 2 * hypot(c, s) / Double(d.count)
        #expect(abs(fitted / amplitude - 1) < 0.15, "tone at \(fitted / amplitude) of its level")
        #expect(try MixFXBinary.run(["render", input, "--dither", "red"]).status == 2)
    }

    @Test func forceOverwritesAndDryRunWritesNothing() throws {
        defer { dir.remove() }
        let input = try makeInput("in.wav")
        let out = dir.file("o.wav")
        try Data("old".utf8).write(to: URL(fileURLWithPath: out))
        let dry = try MixFXBinary.run(["render", input, "-o", out, "--dry-run", "--pitch", "-500"])
        #expect(dry.status == 0)
        #expect(dry.stdout.contains("dry run") && dry.stdout.contains("-500 cents") && dry.stdout.contains("needs --force"))
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "old")
        let r = try MixFXBinary.run(["render", input, "-o", out, "--force", "--quiet"])
        #expect(r.status == 0 && r.stdout.isEmpty)
        #expect(try AudioFiles.read(out).format.frameCount == 22_050)
    }

    @Test func helpAndVersion() throws {
        defer { dir.remove() }
        for args in [["--help"], ["render", "--help"], ["presets", "--help"], ["preset", "--help"]] {
            let r = try MixFXBinary.run(args)
            #expect(r.status == 0 && r.stdout.contains("usage: mixfx"), "\(args)")
        }
        let render = try MixFXBinary.run(["render", "--help"])
        #expect(render.stdout.contains("--bass X") && render.stdout.contains("from -96 to 24 dB"))
        for args in [["--version"], ["render", "--version"], ["play", "--version"], ["presets", "--version"], ["devices", "--version"]] {
            let v = try MixFXBinary.run(args)
            #expect(v.status == 0 && v.stdout.hasPrefix("mixfx "), "\(args)")
        }
        for args in [["play", "--help"], ["devices", "--help"]] {
            let r = try MixFXBinary.run(args)
            #expect(r.status == 0 && r.stdout.contains("usage: mixfx"), "\(args)")
        }
    }

    /// SoX's `bass`/`treble` are RBJ shelves too: the same settings must agree to −90 dB.
    @Test(.enabled(if: which("sox") != nil, "sox is not installed (apt-get install sox)"),
          arguments: [("bass", 6.0, 100.0, 1.0), ("bass", -8.0, 55.0, 0.5), ("treble", 5.0, 5800.0, 1.0), ("treble", -10.0, 3000.0, 0.7)])
    func matchesSoxShelves(band: String, gain: Double, freq: Double, slope: Double) throws {
        defer { dir.remove() }
        let sox = try #require(which("sox"))
        let input = dir.file("x.wav")
        try AudioFiles.write([Signals.noise(frames: 44_100, amplitude: 0.2)], to: input, sampleRate: 44_100, sampleFormat: .f32)
        let ours = dir.file("ours.wav"), theirs = dir.file("sox.wav")
        let r = try MixFXBinary.run(["render", input, "-o", ours, "--\(band)", "\(gain)", "--\(band)-freq", "\(freq)",
                                     "--\(band)-slope", "\(slope)", "--sample-format", "f32", "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let s = try runProcess(sox, [input, "-e", "floating-point", "-b", "32", theirs, band, "\(gain)", "\(freq)", "\(slope)s"])
        #expect(s.status == 0, "\(s.stderr)")
        let a = try AudioFiles.read(ours).channels[0], b = try AudioFiles.read(theirs).channels[0]
        #expect(a.count == b.count)
        let diff = zip(a, b).map { $0 - $1 }
        let rel = Signals.db(Signals.rms(diff[...]) / Signals.rms(b[...]))
        #expect(rel < -90, "mixfx vs sox \(band) \(gain) dB @ \(freq) Hz S=\(slope): \(rel) dB")
    }
}
