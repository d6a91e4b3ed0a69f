import Foundation
import Testing
import MixFX
import TestSupport

/// Rendering streams block by block: peak memory does not grow with the session's length.
@Suite struct MemoryTests {
    @Test(.disabled(if: Sanitizer.name != nil, Sanitizer.reason))
    func longSessionRendersInFixedMemory() throws {
        let dir = TempDir("mixfx-mem"); defer { dir.remove() }
        func session(seconds: Int, tag: String) throws -> [String] {
            try (1...4).map { i in
                let path = dir.file("\(tag)-\(i).wav")
                let frames = seconds * 44_100
                let block = Signals.noise(frames: 44_100, amplitude: 0.2, seed: UInt64(i))
                let buffer = AudioBuffer(channelCount: 2, capacityFrames: 44_100)
                for c in 0..<2 { for k in 0..<44_100 { buffer.channel(c)[k] = block[(k + c * 100) % 44_100] } }
                let w = try SoundFileWriter(path: path, format: OutputFormat(container: .wav, sampleFormat: .s16, sampleRate: 44_100, channelCount: 2))
                for _ in 0..<(frames / 44_100) { try w.write(buffer, frameCount: 44_100) }
                try w.close()
                return path
            }
        }
        func peakMB(_ inputs: [String], _ out: String) throws -> Double {
            let r = try MixFXBinary.run(["render"] + inputs + ["-o", out, "--bass", "4", "--pitch", "200", "--json"])
            #expect(r.status == 0, "\(r.stderr)")
            let s = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
            return s["peakMemoryMB"] as! Double
        }
        let short = try peakMB(try session(seconds: 5, tag: "short"), dir.file("short.wav"))
        let long = try peakMB(try session(seconds: 120, tag: "long"), dir.file("long.wav"))   // 4 × 2 min stereo
        // Usually about 30 MB. Once, in a full suite run in a fresh clone, both the short and the
        // long session peaked at about 115 MB (a constant, not growth: the check below passed);
        // not explained yet, so the absolute bound stays below the session's 170 MB of samples
        // with room for it, and the growth check is the guarantee.
        #expect(long < 150, "peak memory \(long) MB (short session: \(short) MB)")
        // Typically 0.5 MB more for 24× the length. The session's samples alone are 170 MB, so
        // buffering that grows with the input would blow far past this margin; the margin
        // absorbs what parallel worker threads add when the machine is busy (seen: 11 MB).
        #expect(long - short < 24, "peak grew from \(short) MB to \(long) MB with 24× the length")
    }
}
