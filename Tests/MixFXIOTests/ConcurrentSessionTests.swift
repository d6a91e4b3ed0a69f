import Foundation
import Testing
import MixFX
import TestSupport

/// Many sessions through the library in one process at once (16 on this 2-core machine, each
/// with its own track threads): every mix is bit-identical to rendering it alone, and the
/// process keeps no file descriptor on any file the sessions read or wrote.
@Suite struct ConcurrentSessionTests {
    /// The process's open descriptors on files under `directory` (other tests run in this
    /// process at the same time, so only these are this test's).
    static func openDescriptors(under directory: String) -> [String] {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0) }
            .filter { $0.hasPrefix(directory) }
    }

    @Test func sixteenSessionsAtOnceMatchOneAtATime() throws {
        let dir = TempDir("mixfx-concurrent"); defer { dir.remove() }
        var paths: [String] = []
        for k in 0..<4 {
            let path = dir.file("t\(k).wav")
            try AudioFiles.write([Signals.noise(frames: 44_100 * 3, amplitude: 0.2, seed: UInt64(k + 1)),
                                  Signals.noise(frames: 44_100 * 3, amplitude: 0.2, seed: UInt64(k + 11))], to: path, sampleRate: 44_100)
            paths.append(path)
        }
        let inputs = paths
        // 16 at once on this 2-core machine; under a sanitizer (10× slower) 4 show the same races
        let sessions = Sanitizer.name == nil ? 16 : 4
        @Sendable func render(_ s: Int) throws -> Data {
            let engine = AudioEngine()
            for (k, path) in inputs.enumerated() {
                let t = engine.addTrack(source: try SoundFileReader(path: path))
                t.eq.bassGain.value = Double(s % 5)
                t.timePitch.pitchCents = Double((s * 100 + k * 37) % 700) - 300
                t.player.pan = Double(k) / 3 - 0.5
            }
            engine.mainMixer.outputVolume = 0.5
            let out = dir.file("session\(s)-\(UUID().uuidString.prefix(6)).wav")
            _ = try OfflineRenderer(outputPath: out, sampleFormat: .f32).render(engine)
            defer { unlink(out) }
            return try Data(contentsOf: URL(fileURLWithPath: out))
        }
        let alone = try (0..<sessions).map(render)
        nonisolated(unsafe) var together = [Data?](repeating: nil, count: sessions)
        nonisolated(unsafe) var failures: [String] = []
        let lock = NSLock()
        DispatchQueue.concurrentPerform(iterations: sessions) { s in
            do {
                let d = try render(s)
                lock.withLock { together[s] = d }
            } catch {
                lock.withLock { failures.append("session \(s): \(error)") }
            }
        }
        #expect(failures.isEmpty, "\(failures)")
        for s in 0..<sessions { #expect(together[s] == alone[s], "session \(s) differs when rendered beside \(sessions - 1) others") }
        #expect(Set(alone).count == sessions)   // the sessions differ from each other
        #expect(ConcurrentSessionTests.openDescriptors(under: dir.path).isEmpty)
    }
}
