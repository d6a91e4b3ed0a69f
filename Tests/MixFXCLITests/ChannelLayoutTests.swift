import Foundation
import Testing
import MixFX
import TestSupport

/// Multichannel files on the command line: declared layouts (WAV channel masks) are followed,
/// undeclared ones are taken in the usual order with a warning naming it, and `--channels`,
/// `--lfe-gain` and their preset keys reach the render.
@Suite struct ChannelLayoutTests {
    let dir = TempDir("mixfx-layout")

    /// Four channels of distinct, exactly representable noise.
    func fourChannels() -> [[Float]] {
        (0..<4).map { c in Signals.noise(frames: 8000, amplitude: 0.2, seed: UInt64(50 + c)).map { ($0 * 32768).rounded() / 32768 } }
    }

    func renderFloat(_ input: String, _ extra: [String] = []) throws -> (channels: [[Float]], stderr: String) {
        let out = dir.file("out-\(UUID().uuidString).wav")
        let r = try MixFXBinary.run(["render", input, "-o", out, "--sample-format", "f32", "--quiet"] + extra)
        #expect(r.status == 0, "\(r.stderr)")
        return (try AudioFiles.read(out).channels, r.stderr)
    }

    @Test func aDeclaredMaskIsFollowedAndAnUndeclaredLayoutIsNamed() throws {
        defer { dir.remove() }
        let x = fourChannels()
        let h = Float(0.70710678)
        // declared FL FR FC LFE (mask 0xF): the centre to both sides, the LFE dropped
        let declared = dir.file("fl-fr-fc-lfe.wav")
        try AudioFiles.writeWAV16(x, to: declared, sampleRate: 48_000, channelMask: 0xF)
        let (a, warnA) = try renderFloat(declared)
        #expect(!warnA.contains("warning"), "\(warnA)")
        let wantA = [(0..<8000).map { x[0][$0] + h * x[2][$0] }, (0..<8000).map { x[1][$0] + h * x[2][$0] }]
        // undeclared four channels: quad (FL FR BL BR), with a warning that says so
        let undeclared = dir.file("four.wav")
        try AudioFiles.writeWAV16(x, to: undeclared, sampleRate: 48_000, channelMask: nil)
        let (b, warnB) = try renderFloat(undeclared)
        #expect(warnB.contains("\(undeclared): 4 channels and no declared layout: taken as quad (FL FR BL BR)"), "\(warnB)")
        let wantB = [(0..<8000).map { x[0][$0] + h * x[2][$0] }, (0..<8000).map { x[1][$0] + h * x[3][$0] }]
        for (got, want, what) in [(a, wantA, "declared"), (b, wantB, "undeclared")] {
            #expect(got.count == 2 && got[0].count == 8000, "\(what)")
            let err = (0..<2).map { c in zip(got[c], want[c]).map { abs($0 - $1) }.max()! }.max()!
            #expect(err < 1e-6, "\(what): largest difference \(err)")
        }
        // a mono mix, and the LFE kept at 0 dB: M = 0.7071 (FL + FR) + FC + 1.4142 LFE
        let (m, _) = try renderFloat(declared, ["--channels", "1", "--lfe-gain", "0"])
        #expect(m.count == 1)
        let wantM = (0..<8000).map { h * (x[0][$0] + x[1][$0]) + x[2][$0] + 2 * h * x[3][$0] }
        let errM = zip(m[0], wantM).map { abs($0 - $1) }.max()!
        #expect(errM < 1e-6, "mono: largest difference \(errM)")
    }

    @Test func dryRunPresetsAndErrorsSpeakOfLayouts() throws {
        defer { dir.remove() }
        let six = dir.file("six.wav")
        try AudioFiles.writeWAV16((0..<6).map { _ in [Float](repeating: 0.1, count: 100) }, to: six, sampleRate: 48_000, channelMask: nil)
        let dry = try MixFXBinary.run(["render", six, "--dry-run", "--lfe-gain", "-10"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("downmix 5.1 (layout assumed) → stereo (ITU-R BS.775), LFE at -10 dB"), "\(dry.stdout)")
        #expect(dry.stderr.contains("6 channels and no declared layout: taken as 5.1 (FL FR FC LFE BL BR)"))
        // --print-preset carries --channels and --lfe-gain, and the preset renders the same
        let p = try MixFXBinary.run(["render", six, "--channels", "1", "--lfe-gain", "-10", "--print-preset"])
        #expect(p.status == 0)
        let presetPath = dir.file("p.json")
        try p.stdout.write(toFile: presetPath, atomically: true, encoding: .utf8)
        let obj = try JSONSerialization.jsonObject(with: Data(p.stdout.utf8)) as? [String: Any]
        let output = obj?["output"] as? [String: Any]
        #expect(output?["channels"] as? Int == 1 && output?["lfeGainDB"] as? Double == -10, "\(p.stdout)")
        let viaPreset = try MixFXBinary.run(["render", six, "--preset", presetPath, "--dry-run", "--json"])
        let d = try JSONSerialization.jsonObject(with: Data(viaPreset.stdout.utf8)) as? [String: Any]
        #expect(d?["channels"] as? Int == 1, "\(viaPreset.stdout)\(viaPreset.stderr)")
        // bad values name the flag and what is allowed
        let bad = try MixFXBinary.run(["render", six, "--channels", "6"])
        #expect(bad.status == 2 && bad.stderr.contains("--channels: '6' is not 1 or 2"), "\(bad.stderr)")
        let badLFE = try MixFXBinary.run(["render", six, "--lfe-gain", "30"])
        #expect(badLFE.status == 2 && badLFE.stderr.contains("--lfe-gain: 30 is not from -60 to 20 dB"), "\(badLFE.stderr)")
        // nine channels: refused before anything is written
        let nine = dir.file("nine.wav")
        try AudioFiles.writeWAV16((0..<9).map { _ in [Float](repeating: 0, count: 10) }, to: nine, sampleRate: 48_000, channelMask: nil)
        let out = dir.file("nine-out.wav")
        let r9 = try MixFXBinary.run(["render", nine, "-o", out])
        #expect(r9.status != 0 && r9.stderr.contains("9 channels (allowed: 1 to 8"), "\(r9.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }
}
