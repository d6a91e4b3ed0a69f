import Foundation
import Testing
import MixFX
import TestSupport

/// The two compiled copies of the DSP kernels (`DSPCopy`): the portable one and the AVX2/FMA
/// one write the same bytes, the choice follows the CPU, and on an emulated pre-AVX CPU the
/// portable copy runs.
@Suite struct DSPCopyTests {
    let dir = TempDir("mixfx-dspcopy")

    /// The environment of this process with `MIXFX_DSP` set (or removed).
    func environment(dsp: String?) -> [String: String] {
        var e = ProcessInfo.processInfo.environment
        e["MIXFX_DSP"] = dsp
        return e
    }

    /// Two seconds of stereo: tones under noise, and hits (so the splice and gate run too).
    func input() throws -> String {
        let path = dir.file("in.wav")
        let rate = 48_000
        let hits = Signals.hits(rate: rate).signal
        let tone = Signals.sine(frequencyHz: 330, sampleRate: Double(rate), frames: 2 * rate, amplitude: 0.3)
        let noise = Signals.noise(frames: 2 * rate, amplitude: 0.05, seed: 9)
        let left = (0..<(2 * rate)).map { tone[$0] + noise[$0] + 0.5 * hits[$0] }
        let right = (0..<(2 * rate)).map { 0.7 * tone[$0] - noise[$0] + 0.5 * hits[$0 + rate] }
        try AudioFiles.write([left, right], to: path, sampleRate: rate)
        return path
    }

    static let sessions: [[String]] = [
        ["--pitch", "200", "--bass", "4"],
        ["--pitch", "-1200", "--formant", "on"],
        ["--pitch", "-300", "--tempo", "0.8"],
        ["--pitch", "700", "--overlap", "4", "--rate", "44100"],
    ]

    @Test(.enabled(if: DSPCopy.cpuHasAVX2, "this CPU lacks AVX2 or FMA: only the portable copy can run here"),
          arguments: sessions)
    func bothCopiesWriteTheSameBytes(settings: [String]) throws {
        defer { dir.remove() }
        let x = try input()
        var outputs: [Data] = []
        for copy in ["baseline", "avx2"] {
            let out = dir.file("\(copy).wav")
            let plan = try MixFXBinary.run(["render", x, "-o", out, "--dry-run", "--json"] + settings, environment: environment(dsp: copy))
            #expect(plan.stdout.contains("\"dspKernels\" : \"\(copy)\"") || plan.stdout.contains("\"dspKernels\":\"\(copy)\""), "\(plan.stdout)")
            let r = try MixFXBinary.run(["render", x, "-o", out, "--sample-format", "f32", "--quiet"] + settings, environment: environment(dsp: copy))
            #expect(r.status == 0, "\(r.stderr)")
            outputs.append(try Data(contentsOf: URL(fileURLWithPath: out)))
        }
        #expect(outputs[0].count > 100_000)
        #expect(outputs[0] == outputs[1], "the AVX2 copy's output differs from the portable copy's")
    }

    /// A `MIXFX_DSP` that names no copy is refused by name before anything runs (it was
    /// ignored: a test or a cluster job meant to pin the portable copy ran the other).
    @Test func anUnknownForcedCopyIsRefused() throws {
        defer { dir.remove() }
        let x = try input()
        let r = try MixFXBinary.run(["render", x, "-o", dir.file("o.wav"), "-q"], environment: environment(dsp: "portable"))
        #expect(r.status == 2 && r.stderr.contains("MIXFX_DSP=\"portable\" is not a DSP copy (allowed: baseline, avx2"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("o.wav")))
        #expect(try MixFXBinary.run(["render", x, "-o", dir.file("o.wav"), "-q"], environment: environment(dsp: "")).status == 0)
    }

    /// The meters' levels and the sample guard, which the engine calls through `DSPCopy` too: the
    /// same peak and sums (bit for bit) and the same replaced samples from both copies, on noise
    /// with hostile values, over lengths that end mid-vector.
    @Test(.enabled(if: DSPCopy.cpuHasAVX2, "this CPU lacks AVX2 or FMA: only the portable copy can run here"))
    func bothCopiesMeterAndGuardAlike() {
        var a = Signals.noise(frames: 4099, amplitude: 0.9, seed: 31), b = Signals.noise(frames: 4099, amplitude: 0.4, seed: 32)
        for (i, v) in [(7, Float.nan), (100, .infinity), (2048, -Float.infinity), (4097, 2e6), (3001, -1e7)] { a[i] = v; b[i] = v * 2 }
        for count in [0, 1, 7, 8, 9, 1000, 4099] {
            var results: [[UInt32]] = []
            for copy in [DSPCopy.baseline, .avx2] {
                var x = a, y = b
                var peak: Float = 0, sumA: Float = 0, sumB: Float = 0
                let replaced = x.withUnsafeMutableBufferPointer { xp in y.withUnsafeMutableBufferPointer { yp in
                    let r = copy.sanitize(xp.baseAddress!, count: count) + copy.sanitize(yp.baseAddress!, count: count)
                    copy.levels(xp.baseAddress!, yp.baseAddress!, count: count, peak: &peak, sumA: &sumA, sumB: &sumB)
                    return r
                } }
                results.append([UInt32(replaced), peak.bitPattern, sumA.bitPattern, sumB.bitPattern]
                               + x.prefix(count).map(\.bitPattern) + y.prefix(count).map(\.bitPattern))
            }
            let same = results[0] == results[1]   // (outside #expect: no array diff)
            #expect(same, "\(count) samples: replaced, peak, sums \(results.map { $0.prefix(4).map { $0 } })")
            #expect(count < 4099 || results[0][0] == 10, "all ten hostile samples replaced: \(results[0][0])")
        }
    }

    @Test func theCopyFollowsTheCPU() throws {
        defer { dir.remove() }
        let plan = try MixFXBinary.run(["render", try input(), "-o", dir.file("o.wav"), "--dry-run"], environment: environment(dsp: nil))
        let line = plan.stdout.split(separator: "\n").first { $0.hasPrefix("dsp") }.map(String.init) ?? ""
        #expect(line.contains(DSPCopy.cpuHasAVX2 ? "avx2 kernels (the CPU has AVX2 and FMA" : "baseline kernels (the CPU lacks"), "\(line)")
    }

    #if MIXFX_HOST_BUILD
    static let hostBuild = true
    #else
    static let hostBuild = false
    #endif

    @Test(.enabled(if: which("qemu-x86_64") != nil, "qemu-x86_64 is not installed (apt-get install qemu-user)"),
          .disabled(if: hostBuild, "this build is for this machine's CPU (CPU=native): only a portable build runs on an older one"),
          .disabled(if: Sanitizer.name != nil, "a sanitizer's runtime does not start under qemu-user"))
    func onAnEmulatedPreAVXCPUThePortableCopyRunsAndWritesTheSameBytes() throws {
        defer { dir.remove() }
        let qemu = try #require(which("qemu-x86_64"))
        let x = dir.file("short.wav")
        try AudioFiles.write([Signals.sine(frequencyHz: 440, sampleRate: 48_000, frames: 24_000, amplitude: 0.4)], to: x, sampleRate: 48_000)
        let settings = ["--pitch", "200", "--tempo", "0.9", "--sample-format", "f32", "--quiet"]
        // Nehalem: SSE4.2, no AVX; even asked for the AVX2 copy, mixfx must not run it
        let plan = try runProcess(qemu, ["-cpu", "Nehalem", MixFXBinary.path, "render", x, "-o", dir.file("p.wav"), "--dry-run"],
                                  environment: environment(dsp: "avx2"))
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(plan.stdout.contains("dsp      baseline kernels (the CPU lacks AVX2 or FMA"), "\(plan.stdout)")
        let emulated = try runProcess(qemu, ["-cpu", "Nehalem", MixFXBinary.path, "render", x, "-o", dir.file("q.wav")] + settings,
                                      environment: environment(dsp: "avx2"))
        #expect(emulated.status == 0, "\(emulated.stderr)")
        let native = try MixFXBinary.run(["render", x, "-o", dir.file("n.wav")] + settings, environment: environment(dsp: nil))
        #expect(native.status == 0)
        let a = try Data(contentsOf: URL(fileURLWithPath: dir.file("q.wav"))), b = try Data(contentsOf: URL(fileURLWithPath: dir.file("n.wav")))
        #expect(a.count > 100_000 && a == b, "the emulated render differs from the native one")
    }
}
