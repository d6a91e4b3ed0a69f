import Foundation
import Testing
import MixFXDSP
import TestSupport

/// The loudness meter against EBU Tech 3341 and 3342's minimum-requirement signals, generated
/// from their definitions: stereo 1 kHz sines at the stated levels (dBFS of the sine's peak, the
/// same on both channels), at 48 and 44.1 kHz.
@Suite struct LoudnessMeterTests {
    /// Measures a stereo sequence of (level dBFS, seconds) segments of a 1 kHz sine.
    func measure(_ segments: [(Double, Double)], rate: Double) -> LoudnessMeter {
        var meter = LoudnessMeter(sampleRate: rate, channelCount: 2)
        var phase = 0.0
        let step = 2 * Double.pi * 1000 / rate
        var block = [Float](repeating: 0, count: 4800)
        for (level, seconds) in segments {
            let amplitude = pow(10, level / 20)
            var left = Int((seconds * rate).rounded())
            while left > 0 {
                let n = min(left, block.count)
                for i in 0..<n { block[i] = Float(amplitude * sin(phase)); phase += step }
                phase = phase.truncatingRemainder(dividingBy: 2 * Double.pi)
                block.withUnsafeBufferPointer { p in meter.measure({ _ in p.baseAddress! }, frameCount: n) }
                left -= n
            }
        }
        return meter
    }

    /// Tech 3341 tests 1–5: integrated loudness within ±0.1 LU (and 1–2 their momentary and
    /// short-term maxima).
    @Test(arguments: [48_000.0, 44_100.0])
    func tech3341(rate: Double) {
        let cases: [([(Double, Double)], Double)] = [
            ([(-23, 20)], -23),
            ([(-33, 20)], -33),
            ([(-36, 10), (-23, 60), (-36, 10)], -23),
            ([(-72, 10), (-36, 10), (-23, 60), (-36, 10), (-72, 10)], -23),
            ([(-26, 20), (-20, 20.1), (-26, 20)], -23),
        ]
        for (k, (segments, expected)) in cases.enumerated() {
            let m = measure(segments, rate: rate)
            #expect(abs(m.integratedLUFS - expected) <= 0.1, "test \(k + 1) at \(rate) Hz: I = \(m.integratedLUFS) LUFS")
            if k < 2 {
                #expect(abs(m.momentaryMaxLUFS - expected) <= 0.1 && abs(m.shortTermMaxLUFS - expected) <= 0.1,
                        "test \(k + 1): M max \(m.momentaryMaxLUFS), S max \(m.shortTermMaxLUFS)")
            }
        }
    }

    /// Tech 3342 tests 1–4: loudness range within ±1 LU.
    @Test(arguments: [48_000.0, 44_100.0])
    func tech3342(rate: Double) {
        let cases: [([(Double, Double)], Double)] = [
            ([(-20, 20), (-30, 20)], 10),
            ([(-20, 20), (-15, 20)], 5),
            ([(-40, 20), (-20, 20)], 20),
            ([(-50, 20), (-35, 20), (-20, 20), (-35, 20), (-50, 20)], 15),
        ]
        for (k, (segments, expected)) in cases.enumerated() {
            let lra = measure(segments, rate: rate).loudnessRangeLU
            #expect(abs(lra - expected) <= 1, "test \(k + 1) at \(rate) Hz: LRA = \(lra) LU")
        }
    }

    /// Silence has no loudness; one channel of a stereo pair counts half the energy (−3.01 LU).
    @Test func silenceAndChannelWeights() {
        var silent = LoudnessMeter(sampleRate: 48_000, channelCount: 2)
        let zeros = [Float](repeating: 0, count: 48_000)
        zeros.withUnsafeBufferPointer { p in silent.measure({ _ in p.baseAddress! }, frameCount: 48_000) }
        #expect(silent.integratedLUFS == -.infinity && silent.loudnessRangeLU == 0)
        let x = (0..<96_000).map { Float(0.1 * sin(2 * Double.pi * 1000 * Double($0) / 48_000)) }
        var both = LoudnessMeter(sampleRate: 48_000, channelCount: 2), one = LoudnessMeter(sampleRate: 48_000, channelCount: 2)
        x.withUnsafeBufferPointer { p in
            zeros.withUnsafeBufferPointer { z in
                both.measure({ _ in p.baseAddress! }, frameCount: 48_000)
                one.measure({ $0 == 0 ? p.baseAddress! : z.baseAddress! }, frameCount: 48_000)
            }
        }
        #expect(abs(both.integratedLUFS - one.integratedLUFS - 3.0103) < 0.01)
    }
}

/// The meter against an independent implementation, pyloudnorm (PyPI), on the demo session's
/// tracks and on pink-ish noise: integrated loudness within 0.1 LU.
@Suite struct LoudnessOracleTests {
    static var python: String? {
        guard let p = which("python3"), (try? runProcess(p, ["-c", "import pyloudnorm, numpy"]))?.status == 0 else { return nil }
        return p
    }

    @Test(.enabled(if: python != nil, "python3 with pyloudnorm is not installed (pip install pyloudnorm)"))
    func agreesWithPyloudnorm() throws {
        let python = try #require(LoudnessOracleTests.python)
        let dir = TempDir("mixfx-loudness"); defer { dir.remove() }
        let demo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Demo")
        var signals: [(String, [[Float]], Int)] = []
        for name in (try FileManager.default.contentsOfDirectory(atPath: demo.path)).sorted() where name.hasSuffix(".flac") {
            let (channels, format) = try AudioFiles.read(demo.appendingPathComponent(name).path)
            signals.append((name, channels, format.sampleRate))
        }
        #expect(signals.count >= 4)
        var brown: Float = 0
        let noise = Signals.noise(frames: 44_100 * 20, amplitude: 0.5, seed: 9).map { x -> Float in brown = 0.98 * brown + 0.2 * x; return brown }
        signals.append(("noise", [noise], 44_100))
        for (name, channels, rate) in signals {
            var meter = LoudnessMeter(sampleRate: Double(rate), channelCount: channels.count)
            let frames = channels[0].count
            for c in 0..<channels.count { #expect(channels[c].count == frames) }
            var raw = Data()
            for i in 0..<frames { for c in 0..<channels.count { withUnsafeBytes(of: channels[c][i]) { raw.append(contentsOf: $0) } } }
            var offset = 0
            while offset < frames {
                let n = min(4096, frames - offset)
                let pointers = channels.map { $0.withUnsafeBufferPointer { $0.baseAddress! } }
                meter.measure({ pointers[$0] + offset }, frameCount: n)
                offset += n
            }
            let path = dir.file("\(name).f32")
            try raw.write(to: URL(fileURLWithPath: path))
            let script = "import numpy, pyloudnorm, sys; x = numpy.fromfile(sys.argv[1], dtype='<f4').reshape(-1, \(channels.count)).astype(numpy.float64); print(pyloudnorm.Meter(\(rate)).integrated_loudness(x))"
            let r = try runProcess(python, ["-c", script, path])
            let theirs = try #require(Double(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(r.stderr)")
            #expect(abs(meter.integratedLUFS - theirs) <= 0.1, "\(name): mixfx \(meter.integratedLUFS) LUFS, pyloudnorm \(theirs) LUFS")
        }
    }
}
