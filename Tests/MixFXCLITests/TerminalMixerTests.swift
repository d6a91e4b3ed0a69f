import Foundation
import Testing
import MixFX
import TestSupport

/// The terminal mixer, driven in a real pseudo-terminal through tmux (send-keys, capture-pane).
@Suite struct TerminalMixerTests {
    @Test(.enabled(if: which("tmux") != nil, "tmux is not installed (apt-get install tmux)"),
          .enabled(if: ALSARig.pulseServer != nil, Comment(rawValue: ALSARig.pulseMissingReason)))
    func keysChangeTheMixTheScreenShowsItAndTheTerminalIsRestored() throws {
        let dir = TempDir("mixfx-tui"); defer { dir.remove() }
        let tmux = try #require(which("tmux"))
        let pulse = try #require(ALSARig.pulseServer)
        for (i, f) in [330.0, 220.0].enumerated() {
            try AudioFiles.write([Signals.sine(frequencyHz: f, sampleRate: 48_000, frames: 96_000, amplitude: 0.3)],
                                 to: dir.file("t\(i + 1).wav"), sampleRate: 48_000)
        }
        let socket = "mixfx-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        func tm(_ args: [String]) throws -> String {
            try runProcess(tmux, ["-L", socket] + args).stdout
        }
        let env = ProcessInfo.processInfo.environment
        let script = """
        cd \(dir.path) && stty -a > before.txt && \
        env ALSA_CONFIG_PATH=\(ALSARig.configPath) PULSE_SERVER=\(pulse) PULSE_COOKIE=\(env["PULSE_COOKIE"] ?? "") \
        \(MixFXBinary.path) play t1.wav t2.wav --device mixfx_pulse --loop 2> stderr.txt; \
        echo "exit=$?" > status.txt; stty -a > after.tmp && mv after.tmp after.txt; sleep 60
        """
        // The tmux server keeps its inherited descriptors: start it with none of our pipes.
        let quoted = script.replacingOccurrences(of: "'", with: "'\\''")
        let starter = Process()
        starter.executableURL = URL(fileURLWithPath: "/bin/bash")
        starter.arguments = ["-c", "\(tmux) -L \(socket) new-session -d -s t -x 160 -y 30 bash -c '\(quoted)' </dev/null >/dev/null 2>&1"]
        starter.standardInput = FileHandle.nullDevice
        starter.standardOutput = FileHandle.nullDevice
        starter.standardError = FileHandle.nullDevice
        try starter.run()
        let deadline = Date() + 10
        while starter.isRunning && Date() < deadline { usleep(10_000) }
        defer { _ = try? tm(["kill-server"]) }
        func screen() throws -> String { try tm(["capture-pane", "-p", "-t", "t"]) }
        func waitFor(_ text: String, timeout: Double = 5) throws -> Bool {
            let end = Date() + timeout
            while Date() < end {
                if try screen().contains(text) { return true }
                usleep(50_000)
            }
            return false
        }
        let started = try waitFor("mixfx play")
        let shown = (try? screen()) ?? ""
        let errors = (try? String(contentsOfFile: dir.file("stderr.txt"), encoding: .utf8)) ?? ""
        #expect(started, "screen: \(shown) stderr: \(errors)")
        guard started else { return }
        #expect(try screen().contains("t1.wav") && screen().contains("t2.wav"))
        // Track 2: pitch up two steps, mute; master down; every track's tempo down a step, then
        // track 2's once more.
        for key in ["2", "P", "P", "m", "-", "{", "<"] {
            _ = try tm(["send-keys", "-t", "t", key])
            usleep(120_000)
        }
        #expect(try waitFor("  track 2 tempo 0.9"))
        let lines = try screen().split(separator: "\n")
        let row = lines.first { $0.contains("t2.wav") }.map(String.init) ?? ""
        #expect(row.hasPrefix(">") && row.contains("+200") && row.contains(" 0.90 ") && row.contains(" M "), "row: \(row)")
        // with a tempo the header shows the time played beside the song time
        #expect(lines.first { $0.contains("mixfx play") }?.contains("wall ") == true, "\(lines.first ?? "")")
        #expect(lines.contains { $0.contains("master volume  0.95") })
        _ = try tm(["send-keys", "-t", "t", "w"])
        #expect(try waitFor("saved mixfx-saved.json"))
        var warnings: [String] = []
        let saved = try PresetLibrary().loadFile(dir.file("mixfx-saved.json"), warnings: &warnings)
        #expect(saved.tracks.count == 2 && saved.tracks[1][.pitchCents] == 200 && saved.tracks[1][.mute] == 1)
        #expect(saved.masterVolume == 0.95 && saved.tracks[0][.pitchCents] == 0)
        #expect(saved.tracks[0][.tempo] == 0.95 && saved.tracks[1][.tempo] == 0.9)
        _ = try tm(["send-keys", "-t", "t", "q"])
        // after.txt appears only once complete (written as after.tmp, then renamed): read as soon
        // as the shell created it, it was once empty in a full CI run
        let end = Date() + 5
        while !FileManager.default.fileExists(atPath: dir.file("after.txt")) && Date() < end { usleep(50_000) }
        #expect(try String(contentsOfFile: dir.file("status.txt"), encoding: .utf8).contains("exit=0"))
        let before = try String(contentsOfFile: dir.file("before.txt"), encoding: .utf8)
        let after = try String(contentsOfFile: dir.file("after.txt"), encoding: .utf8)
        #expect(before == after, "terminal settings changed")
        #expect(before.contains(" icanon") && before.contains(" echo"))
    }
}
