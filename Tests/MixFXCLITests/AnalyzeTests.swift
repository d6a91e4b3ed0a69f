import Foundation
import Testing
import MixFX
import TestSupport
@testable import MixFXDSP

/// `mixfx analyze` on signals whose measures are known in closed form.
@Suite struct AnalyzeTests {
    let dir = TempDir("mixfx-analyze")

    func analyze(_ channels: [[Float]], rate: Int = 48_000, format: SampleFormat = .f32) throws -> [String: Any] {
        let path = dir.file("x-\(UUID().uuidString.prefix(6)).wav")
        try AudioFiles.write(channels, to: path, sampleRate: rate, sampleFormat: format)
        let r = try MixFXBinary.run(["analyze", path, "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let obj = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        return (obj["files"] as! [[String: Any]])[0]
    }

    func sine(_ level: Double, seconds: Double = 20, rate: Int = 48_000) -> [Float] {
        (0..<Int(seconds * Double(rate))).map { Float(pow(10, level / 20) * sin(2 * Double.pi * 1000 * Double($0) / Double(rate))) }
    }

    @Test func loudnessAndPeaksOfAKnownSine() throws {
        defer { dir.remove() }
        let x = sine(-23)
        let a = try analyze([x, x])
        #expect(abs((a["integratedLUFS"] as! Double) - -23) <= 0.1)
        #expect((a["loudnessRangeLU"] as! Double) < 0.1)
        #expect(abs((a["truePeakDBTP"] as! Double) - -23) < 0.05 && abs((a["samplePeakDBFS"] as! Double) - -23) < 0.05)
        #expect(a["correlation"] as? Double ?? 0 > 0.9999 && abs(a["monoSumLossDB"] as? Double ?? 9) < 1e-6)
        #expect(a["samplesAtFullScale"] as? Int == 0 && a["frames"] as? Int == 960_000)
    }

    @Test func stereoMeasures() throws {
        defer { dir.remove() }
        let x = sine(-20, seconds: 2)
        let opposite = try analyze([x, x.map { -$0 }])
        #expect(abs((opposite["correlation"] as! Double) + 1) < 1e-6 && opposite["monoSumLossDB"] is NSNull)
        let l = Signals.noise(frames: 96_000, amplitude: 0.3, seed: 1), r = Signals.noise(frames: 96_000, amplitude: 0.3, seed: 2)
        let independent = try analyze([l, r])
        #expect(abs(independent["correlation"] as! Double) < 0.02)
        #expect(abs((independent["monoSumLossDB"] as! Double) - 3.01) < 0.1)
    }

    @Test func dcOffsetFullScaleAndSilence() throws {
        defer { dir.remove() }
        var x = sine(-20, seconds: 1).map { $0 + 0.1 }
        for i in [100, 2000, 30_000, 40_000, 47_000] { x[i] = 1 }
        x[5000] = -1
        let a = try analyze([x], format: .s16)
        #expect(abs((a["dcOffset"] as! [Double])[0] - 0.1) < 2e-4)
        #expect(a["samplesAtFullScale"] as? Int == 6)   // 1.0 clamps to 32767 in s16, -1 is -32768
        let silent = try analyze([[Float](repeating: 0, count: 48_000)])
        #expect(silent["integratedLUFS"] is NSNull && silent["samplePeakDBFS"] is NSNull && silent["truePeakDBTP"] is NSNull)
    }

    @Test func errorsAndTable() throws {
        defer { dir.remove() }
        let missing = try MixFXBinary.run(["analyze", dir.file("nope.wav")])
        #expect(missing.status == 1 && missing.stderr.contains("nope.wav"))
        #expect(try MixFXBinary.run(["analyze"]).status == 2)
        let path = dir.file("t.wav")
        try AudioFiles.write([sine(-23, seconds: 5)], to: path, sampleRate: 48_000)
        let table = try MixFXBinary.run(["analyze", path])
        let lines = table.stdout.split(separator: "\n")
        #expect(lines.count == 2 && lines[0].contains("LUFS") && lines[0].contains("dBTP") && lines[1].contains("t.wav"))
        #expect(lines[0].count == lines[1].count)   // aligned
    }

    /// `analyze` takes the sample rates `render` takes from a source and refuses the others in
    /// the same words; where it takes them, a tone at fs/10 reads the K-weighting prototype's
    /// loudness (issue #30: +1917 LUFS at 100 Hz, −∞ at 1000 Hz).
    @Test(arguments: [999, 1000, 2000, 768_000, 768_001])
    func analyzeTakesTheRatesRenderTakes(rate: Int) throws {
        defer { dir.remove() }
        #expect(LoudnessMeter.sampleRateRange == AudioEngine.sourceSampleRateRange)
        let path = dir.file("r\(rate).wav")
        let hz = Double(rate) / 10, amplitude = 0.25
        let x = (0..<rate).map { Float(amplitude * sin(2 * Double.pi * hz * Double($0) / Double(rate))) }   // 1 s
        try AudioFiles.write([x], to: path, sampleRate: rate, sampleFormat: .f32)
        let analyzed = try MixFXBinary.run(["analyze", path, "--json"])
        let rendered = try MixFXBinary.run(["render", path, "--rate", "48000", "-o", dir.file("out\(rate).wav"), "--force", "--quiet"])
        if AudioEngine.sourceSampleRateRange.contains(rate) {
            #expect(analyzed.status == 0 && rendered.status == 0, "\(analyzed.stderr) \(rendered.stderr)")
            let obj = try JSONSerialization.jsonObject(with: Data(analyzed.stdout.utf8)) as! [String: Any]
            let lufs = try #require((obj["files"] as! [[String: Any]])[0]["integratedLUFS"] as? Double)
            let expected = -0.691 + 10 * log10(amplitude * amplitude / 2) + KWeighting.prototypeDB(hz: hz)
            #expect(abs(lufs - expected) < (rate < 8000 ? 0.1 : 0.05), "\(rate) Hz: \(lufs) LUFS, expected \(expected)")
        } else {
            let words = "sample rate \(rate) Hz (allowed: 1000 to 768000)"
            #expect(analyzed.status == 1 && analyzed.stderr.contains(words), "\(analyzed.stderr)")
            #expect(rendered.status != 0 && rendered.stderr.contains(words), "\(rendered.stderr)")
            #expect(!analyzed.stdout.contains("\"files\""), "\(analyzed.stdout)")
        }
    }
}
