import Foundation
import Testing
import MixFX
import TestSupport

/// The master section on the command line: `--limit` (true-peak limiter, delay removed),
/// `--normalize` with it, and `--dither auto`.
@Suite struct MasterSectionTests {
    let dir = TempDir("mixfx-master")

    /// Four full-level 16-bit tracks with a square-ish buzz (inter-sample peaks) and tones.
    func fourLoudTracks(seconds: Double = 3) throws -> [String] {
        let frames = Int(seconds * 44_100)
        return try (0..<4).map { k in
            let path = dir.file("t\(k).wav")
            let f = [110.0, 220.0, 330.0, 440.0][k]
            let x = Signals.sine(frequencyHz: f, sampleRate: 44_100, frames: frames, amplitude: 0.9)
                .enumerated().map { i, v in k == 3 ? (v > 0 ? 0.9 : -0.9) * Float(i % 11_025 < 4_000 ? 1 : 0.3) : v }
                .map { ($0 * 32768).rounded() / 32768 }
            try AudioFiles.write([x, x], to: path, sampleRate: 44_100)
            return path
        }
    }

    func json(_ r: MixFXBinary.Result) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
    }

    func truePeakDBTP(_ channels: [[Float]]) -> Double {
        var meter = TruePeakMeter(channelCount: channels.count, maximumFrameCount: channels[0].count)
        defer { meter.deallocate() }
        channels[0].withUnsafeBufferPointer { l in channels[channels.count - 1].withUnsafeBufferPointer { r in
            meter.process({ $0 == 0 ? l.baseAddress! : r.baseAddress! }, frameCount: channels[0].count)
        } }
        return meter.peakDBTP
    }

    /// Four summed full-level tracks (+12 dB over full scale): the limited file's true peak is at
    /// the ceiling, not above, nothing is clamped, and the length is exact (the delay removed).
    @Test(arguments: [-1.0, -3.0])
    func theLimiterHoldsItsCeilingOnFourLoudTracks(ceilingDBTP: Double) throws {
        defer { dir.remove() }
        let tracks = try fourLoudTracks()
        let out = dir.file("mix.wav")
        let r = try MixFXBinary.run(["render"] + tracks + ["--bass", "4", "--limit", String(ceilingDBTP), "-o", out, "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let s = try json(r)
        let limiter = try #require(s["limiter"] as? [String: Any])
        #expect(limiter["ceilingDBTP"] as? Double == ceilingDBTP)
        let reduction = try #require(limiter["maximumGainReductionDB"] as? Double)
        #expect(reduction > 8, "\(reduction) dB")
        #expect((limiter["secondsLimited"] as? Double ?? 0) > 1)
        #expect(s["clippedSamples"] as? Int == 0 && s["appliedGainDB"] as? Double == 0)
        let (y, f) = try AudioFiles.read(out)
        #expect(f.frameCount == 3 * 44_100)
        let tp = truePeakDBTP(y)
        // (16-bit rounding and dither add up to 1.5 LSB: 0.0004 dB at -1 dBFS)
        #expect(tp <= ceilingDBTP + 0.005 && tp > ceilingDBTP - 0.1, "\(tp) dBTP")
    }

    /// Where the mix never reaches the ceiling, `--limit` changes nothing: the same bytes as
    /// without it (its delay is removed exactly), and it says it was not needed.
    @Test func theLimiterIsBitExactWhereItNeverActs() throws {
        defer { dir.remove() }
        let x = Signals.sine(frequencyHz: 997, sampleRate: 48_000, frames: 100_000, amplitude: 0.5)
        let input = dir.file("quiet.wav")
        try AudioFiles.write([x, x.map { -$0 * 0.5 }], to: input, sampleRate: 48_000, sampleFormat: .f32)
        for format in ["s16", "s24", "f32"] {
            let a = dir.file("a-\(format).wav"), b = dir.file("b-\(format).wav")
            let plain = try MixFXBinary.run(["render", input, "--pitch", "300", "--bass", "3", "-o", a, "--sample-format", format, "--quiet"])
            let limited = try MixFXBinary.run(["render", input, "--pitch", "300", "--bass", "3", "-o", b, "--sample-format", format, "--limit"])
            #expect(plain.status == 0 && limited.status == 0, "\(plain.stderr) \(limited.stderr)")
            #expect(limited.stdout.contains("never needed"), "\(limited.stdout)")
            let same = try Data(contentsOf: URL(fileURLWithPath: a)) == Data(contentsOf: URL(fileURLWithPath: b))
            #expect(same, "\(format): --limit changed a mix that never reached its ceiling")
        }
    }

    /// `--normalize` louder than the true peak allows: an error without `--limit` (suggesting
    /// it), and with it the file lands within 0.1 LU of the target with its true peak at or
    /// below the ceiling.
    @Test func normalizeWithTheLimiterLandsOnTheTarget() throws {
        defer { dir.remove() }
        let tracks = try fourLoudTracks(seconds: 6)
        let out = dir.file("loud.wav")
        let refused = try MixFXBinary.run(["render"] + tracks + ["--volume", "0.1", "--normalize", "-7", "-o", out])
        #expect(refused.status != 0 && refused.stderr.contains("--limit"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
        let r = try MixFXBinary.run(["render"] + tracks + ["--volume", "0.1", "--normalize", "-7", "--limit", "-o", out, "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let s = try json(r)
        #expect(((s["limiter"] as? [String: Any])?["maximumGainReductionDB"] as? Double ?? 0) > 1)
        let a = try MixFXBinary.run(["analyze", out, "--json"])
        let files = (try JSONSerialization.jsonObject(with: Data(a.stdout.utf8)) as? [String: Any])?["files"] as? [[String: Any]]
        let measured = try #require(files?.first, "\(a.stdout)")
        let lufs = try #require(measured["integratedLUFS"] as? Double)
        let tp = try #require(measured["truePeakDBTP"] as? Double)
        #expect(abs(lufs - -7) < 0.1, "\(lufs) LUFS")
        #expect(tp <= -1 + 0.005, "\(tp) dBTP")
    }

    /// `--dither auto`: a pass-through of a 16-bit file and a plain sum of two are written
    /// bit-exact (no sample needed rounding); a processed mix is dithered with TPDF of the
    /// expected level (rounding plus triangular noise: 0.5 LSB rms), white (first differences
    /// carry twice the power) and independent of the signal; 24-bit output is never dithered.
    @Test func ditherAutoDithersOnlyWhatIsRounded() throws {
        defer { dir.remove() }
        let a = Signals.noise(frames: 48_000, amplitude: 0.4, seed: 4).map { ($0 * 32768).rounded() / 32768 }
        let b = Signals.sine(frequencyHz: 313, sampleRate: 48_000, frames: 48_000, amplitude: 0.4).map { ($0 * 32768).rounded() / 32768 }
        let ta = dir.file("a.wav"), tb = dir.file("b.wav")
        try AudioFiles.write([a], to: ta, sampleRate: 48_000)
        try AudioFiles.write([b], to: tb, sampleRate: 48_000)
        // a pass-through: the input's samples, bit for bit
        let pass = dir.file("pass.wav")
        let p = try MixFXBinary.run(["render", ta, "-o", pass, "--json"])
        let pj = try json(p)
        #expect(p.status == 0 && pj["dither"] as? String == "none", "\(p.stdout)")
        let passed = try AudioFiles.read(pass).channels[0] == a   // (outside #expect: no array diff)
        #expect(passed)
        // a plain sum of two 16-bit tracks is itself 16-bit: exact
        let sum = dir.file("sum.wav")
        let q = try MixFXBinary.run(["render", ta, tb, "-o", sum, "--json"])
        let qj = try json(q)
        #expect(q.status == 0 && qj["dither"] as? String == "none")
        let exactSum = try AudioFiles.read(sum).channels[0] == zip(a, b).map { $0 + $1 }
        #expect(exactSum)
        // processed: dithered, and the error against the float mix is TPDF + rounding
        let s16 = dir.file("eq.wav"), f32 = dir.file("eq-f32.wav"), s24 = dir.file("eq-24.wav"), s24none = dir.file("eq-24n.wav")
        let r = try MixFXBinary.run(["render", ta, tb, "--treble", "-3", "-o", s16, "--json"])
        let rj = try json(r)
        #expect(r.status == 0 && rj["dither"] as? String == "tpdf", "\(r.stdout)")
        #expect(try MixFXBinary.run(["render", ta, tb, "--treble", "-3", "-o", f32, "--sample-format", "f32", "--quiet"]).status == 0)
        let y = try AudioFiles.read(s16).channels[0], x = try AudioFiles.read(f32).channels[0]
        let e = zip(y, x).map { Double($0) * 32768 - Double($1) * 32768 }
        let power = e.map { $0 * $0 }.reduce(0, +) / Double(e.count)
        let mean = e.reduce(0, +) / Double(e.count)
        let diffPower = zip(e.dropFirst(), e).map { ($0 - $1) * ($0 - $1) }.reduce(0, +) / Double(e.count - 1)
        let xs = x.map(Double.init), xMean = xs.reduce(0, +) / Double(xs.count)
        let cov = zip(e, xs).map { ($0 - mean) * ($1 - xMean) }.reduce(0, +)
        let corr = cov / (sqrt(e.map { ($0 - mean) * ($0 - mean) }.reduce(0, +)) * sqrt(xs.map { ($0 - xMean) * ($0 - xMean) }.reduce(0, +)))
        #expect(abs(power.squareRoot() - 0.5) < 0.02, "error \(power.squareRoot()) LSB rms")
        #expect(abs(mean) < 0.01, "mean error \(mean) LSB")
        #expect(abs(diffPower / power - 2) < 0.05, "difference/level power \(diffPower / power) (2 for white noise)")
        #expect(abs(corr) < 0.02, "correlation with the signal \(corr)")
        #expect(e.allSatisfy { abs($0) <= 1.5 + 1e-6 })
        // 24-bit: auto does not dither (the same bytes as --dither none)
        #expect(try MixFXBinary.run(["render", ta, tb, "--treble", "-3", "-o", s24, "--sample-format", "s24", "--quiet"]).status == 0)
        #expect(try MixFXBinary.run(["render", ta, tb, "--treble", "-3", "-o", s24none, "--sample-format", "s24", "--dither", "none", "--quiet"]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: s24)) == Data(contentsOf: URL(fileURLWithPath: s24none)))
    }
}
