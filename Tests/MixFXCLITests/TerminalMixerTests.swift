import Foundation
import Testing
import MixFX
import TestSupport

/// `mixfx play` in a tmux session of a given size: keys in (send-keys), the screen out
/// (capture-pane), the exit status and the terminal's settings before and after in files.
struct TmuxPlay {
    let dir: TempDir
    let tmux: String
    let socket = "mixfx-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"

    /// Starts `mixfx play TRACKS --device mixfx_pulse --loop EXTRA` in `dir`, `columns` × `rows`.
    init(dir: TempDir, tracks: [String], extra: [String] = [], columns: Int, rows: Int) throws {
        self.dir = dir
        tmux = try #require(which("tmux"))
        let pulse = try #require(ALSARig.pulseServer)
        let env = ProcessInfo.processInfo.environment
        let script = """
        cd \(dir.path) && stty -a > before.txt && \\
        env ALSA_CONFIG_PATH=\(ALSARig.configPath) PULSE_SERVER=\(pulse) PULSE_COOKIE=\(env["PULSE_COOKIE"] ?? "") \\
        \(MixFXBinary.path) play \((tracks + extra).joined(separator: " ")) --device mixfx_pulse --loop 2> stderr.txt; \\
        echo "exit=$?" > status.txt; stty -a > after.tmp && mv after.tmp after.txt; sleep 60
        """
        // The tmux server keeps its inherited descriptors: start it with none of our pipes.
        let quoted = script.replacingOccurrences(of: "'", with: "'\\''")
        let starter = Process()
        starter.executableURL = URL(fileURLWithPath: "/bin/bash")
        starter.arguments = ["-c", "\(tmux) -L \(socket) new-session -d -s t -x \(columns) -y \(rows) bash -c '\(quoted)' </dev/null >/dev/null 2>&1"]
        starter.standardInput = FileHandle.nullDevice
        starter.standardOutput = FileHandle.nullDevice
        starter.standardError = FileHandle.nullDevice
        try starter.run()
        let deadline = Date() + 10
        while starter.isRunning && Date() < deadline { usleep(10_000) }
    }

    func tm(_ args: [String]) throws -> String { try runProcess(tmux, ["-L", socket] + args).stdout }
    func kill() { _ = try? tm(["kill-server"]) }
    /// The screen, a line per row (trailing blanks dropped).
    func screen() throws -> String { try tm(["capture-pane", "-p", "-t", "t"]) }
    /// The screen with rows the terminal wrapped joined back into the line that was written.
    func joinedScreen() throws -> String { try tm(["capture-pane", "-p", "-J", "-t", "t"]) }
    func send(_ key: String) throws {
        _ = try tm(["send-keys", "-t", "t", key])
        usleep(120_000)
    }
    func waitFor(_ text: String, timeout: Double = 5) throws -> Bool {
        let end = Date() + timeout
        while Date() < end {
            if try screen().contains(text) { return true }
            usleep(50_000)
        }
        return false
    }
    /// Whether it started; what the screen and stderr said otherwise.
    func started() throws -> (Bool, String) {
        let ok = try waitFor("mixfx play")
        let shown = (try? screen()) ?? ""
        let errors = (try? String(contentsOfFile: dir.file("stderr.txt"), encoding: .utf8)) ?? ""
        return (ok, "screen: \(shown) stderr: \(errors)")
    }
    /// Quits with q and returns the exit line and the terminal's settings before and after.
    func quit() throws -> (status: String, before: String, after: String) {
        try send("q")
        // after.txt appears only once complete (written as after.tmp, then renamed): read as soon
        // as the shell created it, it was once empty in a full CI run
        let end = Date() + 5
        while !FileManager.default.fileExists(atPath: dir.file("after.txt")) && Date() < end { usleep(50_000) }
        return (try String(contentsOfFile: dir.file("status.txt"), encoding: .utf8),
                try String(contentsOfFile: dir.file("before.txt"), encoding: .utf8),
                try String(contentsOfFile: dir.file("after.txt"), encoding: .utf8))
    }
}

/// The terminal mixer, driven in a real pseudo-terminal through tmux (send-keys, capture-pane).
@Suite struct TerminalMixerTests {
    @Test(.enabled(if: which("tmux") != nil, "tmux is not installed (apt-get install tmux)"),
          .enabled(if: ALSARig.pulseServer != nil, Comment(rawValue: ALSARig.pulseMissingReason)))
    func keysChangeTheMixTheScreenShowsItAndTheTerminalIsRestored() throws {
        let dir = TempDir("mixfx-tui"); defer { dir.remove() }
        for (i, f) in [330.0, 220.0].enumerated() {
            try AudioFiles.write([Signals.sine(frequencyHz: f, sampleRate: 48_000, frames: 96_000, amplitude: 0.3)],
                                 to: dir.file("t\(i + 1).wav"), sampleRate: 48_000)
        }
        let play = try TmuxPlay(dir: dir, tracks: ["t1.wav", "t2.wav"], columns: 160, rows: 30)
        defer { play.kill() }
        let (started, why) = try play.started()
        #expect(started, "\(why)")
        guard started else { return }
        #expect(try play.screen().contains("t1.wav") && play.screen().contains("t2.wav"))
        // Track 2: pitch up two steps, mute; master down; every track's tempo down a step, then
        // track 2's once more.
        for key in ["2", "P", "P", "m", "-", "{", "<"] { try play.send(key) }
        #expect(try play.waitFor("  track 2 tempo 0.9"))
        let lines = try play.screen().split(separator: "\n")
        let row = lines.first { $0.contains("t2.wav") }.map(String.init) ?? ""
        #expect(row.hasPrefix(">") && row.contains("+200") && row.contains(" 0.90 ") && row.contains(" M "), "row: \(row)")
        // with a tempo the header shows the time played beside the song time
        #expect(lines.first { $0.contains("mixfx play") }?.contains("wall ") == true, "\(lines.first ?? "")")
        #expect(lines.contains { $0.contains("master volume  0.95") })
        try play.send("w")
        #expect(try play.waitFor("saved mixfx-saved.json"))
        var warnings: [String] = []
        let saved = try PresetLibrary().loadFile(dir.file("mixfx-saved.json"), warnings: &warnings)
        #expect(saved.tracks.count == 2 && saved.tracks[1][.pitchCents] == 200 && saved.tracks[1][.mute] == 1)
        #expect(saved.masterVolume == 0.95 && saved.tracks[0][.pitchCents] == 0)
        #expect(saved.tracks[0][.tempo] == 0.95 && saved.tracks[1][.tempo] == 0.9)
        let end = try play.quit()
        #expect(end.status.contains("exit=0"))
        #expect(end.before == end.after, "terminal settings changed")
        #expect(end.before.contains(" icanon") && end.before.contains(" echo"))
    }

    /// Issue #34: at 80 × 24, with four tracks (long file names), a tempo (the wall clock in the
    /// header), the limiter and the help shown, no line is longer than 79 cells and none is
    /// wrapped; every track's row and the master are on the screen, and a key still changes a
    /// value.
    @Test(.enabled(if: which("tmux") != nil, "tmux is not installed (apt-get install tmux)"),
          .enabled(if: ALSARig.pulseServer != nil, Comment(rawValue: ALSARig.pulseMissingReason)))
    func theMixerFitsEightyColumns() throws {
        let dir = TempDir("mixfx-tui-80"); defer { dir.remove() }
        let names = (1...4).map { "\($0)-a-rather-long-track-name.wav" }
        for (i, name) in names.enumerated() {
            try AudioFiles.write([Signals.sine(frequencyHz: 220 * Double(i + 1), sampleRate: 48_000, frames: 96_000, amplitude: 0.2)],
                                 to: dir.file(name), sampleRate: 48_000)
        }
        let play = try TmuxPlay(dir: dir, tracks: names, extra: ["--limit", "--track", "3:tempo=0.9,pitch=-2400,bass=-96"],
                                columns: 80, rows: 24)
        defer { play.kill() }
        let (started, why) = try play.started()
        #expect(started, "\(why)")
        guard started else { return }
        func check(_ what: String) throws -> [Substring] {
            let joined = try play.joinedScreen().split(separator: "\n", omittingEmptySubsequences: false)
            let rows = try play.screen().split(separator: "\n", omittingEmptySubsequences: false)
            for line in joined { #expect(line.count < 80, "\(what): \(line.count) cells: \(line)") }
            // nothing wrapped: joining wrapped rows left as many lines (the screen redraws
            // between the two captures, so its numbers may differ)
            #expect(joined.count == rows.count, "\(what): wrapped rows: \(joined.count) lines joined, \(rows.count) rows")
            // every track's row (its number and the start of its name) and the master
            for i in 1...4 { #expect(rows.contains { $0.dropFirst(2).hasPrefix("\(i)  \(i)-a-rather") }, "\(what): track \(i) in \(rows)") }
            #expect(rows.contains { $0.contains("master volume") } && rows.contains { $0.contains("limiter ceiling") }, "\(what)")
            #expect(rows.first?.contains("wall ") == true, "\(what): \(rows.first ?? "")")
            return rows
        }
        _ = try check("at start")
        // the help shown, track 4 chosen and its pitch up two steps
        for key in ["?", "4", "P", "P"] { try play.send(key) }
        #expect(try play.waitFor("track 4 pitch 200"))
        let rows = try check("with the help")
        let row = rows.first { $0.hasPrefix(">") }.map(String.init) ?? ""
        #expect(row.contains("4-a-rather") && row.contains("+200"), "row: \(row)")
        #expect(rows.contains { $0.contains("q  quit") }, "the help is shown")
        // the extremes of a row still fit (track 3: -2400 cents, -96 dB bass)
        #expect(rows.contains { $0.contains("-2400") && $0.contains("-96.0") }, "\(rows)")
        let end = try play.quit()
        #expect(end.status.contains("exit=0") && end.before == end.after)
    }
}
