import Foundation
import MixFX

/// The terminal mixer of `mixfx play`: raw keys in, a redrawn screen out (15 frames a second),
/// the terminal restored on every way out.
final class TerminalMixer {
    let control: LiveControl
    private var selected = 0
    private var message = "press ? for help"
    private var showHelp = false
    private var original = termios()
    private var peakHold: [(value: Float, until: Date)]
    private var masterHold: (value: Float, until: Date) = (0, .distantPast)
    private var truePeakHold: (value: Float, until: Date) = (0, .distantPast)
    /// The settings a key moved (touched), with the time of the last key on each: each is
    /// released `touchSeconds` after it, as a DAW's "touch" mode does, unless `latched`.
    private var touched: [(parameter: AudioParameter, lastKey: Date)] = []
    private var latched = false
    /// How long a touch lasts after the last key on the setting.
    static let touchSeconds = 1.0

    init(control: LiveControl) {
        self.control = control
        peakHold = Array(repeating: (0, .distantPast), count: control.tracks.count)
    }

    func run() {
        enterRawMode()
        defer { restore() }
        var lastDraw = Date.distantPast
        while !control.player.status.isFinished {
            if interruptRequested { control.player.stop(); break }
            var fds = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
            if poll(&fds, 1, 20) > 0 {
                var bytes = [UInt8](repeating: 0, count: 16)
                let n = read(0, &bytes, 16)
                if n > 0 && !handle(Array(bytes[0..<n])) {
                    control.player.stop()
                    break
                }
            }
            control.collectTouches()
            releaseExpiredTouches(now: Date())
            if Date().timeIntervalSince(lastDraw) > 1.0 / 15 {
                draw()
                lastDraw = Date()
            }
        }
        draw()
    }

    /// A key moved `parameter` by hand: it holds it (touch) until released.
    /// Whether a switch (mute, solo) is on as heard: a hand's value while touched, else what
    /// the player plays (its lane's value, or its setting).
    static func isOn(_ switch: AudioParameter) -> Bool {
        (`switch`.isTouched ? `switch`.value : `switch`.playedValue) != 0
    }

    private func touch(_ parameter: AudioParameter, _ value: Double) {
        parameter.touch(value)
        touched.removeAll { $0.parameter === parameter }
        touched.append((parameter, Date()))
    }

    /// Releases the touches whose last key is `touchSeconds` old (none while latched).
    func releaseExpiredTouches(now: Date) {
        guard !latched else { return }
        for t in touched where now.timeIntervalSince(t.lastKey) >= Self.touchSeconds { t.parameter.release() }
        touched.removeAll { now.timeIntervalSince($0.lastKey) >= Self.touchSeconds }
    }

    /// Returns false to quit.
    private func handle(_ keys: [UInt8]) -> Bool {
        let t = control.tracks[selected]
        func bump(_ id: ParameterID, _ delta: Double) {
            guard let p = t.parameter(id) else { return }
            if let problem = control.handMoveProblem(track: selected, id) {
                message = "track \(selected + 1) \(id.spec.key) \(problem)"
                return
            }
            let spec = id.spec
            // (a tempo within what live playback takes)
            let live = PitchShifterSettings.liveTempoRange
            let low = id == .tempo ? live.lowerBound : spec.minimumExcluded ? spec.minimum + 0.01 : spec.minimum
            // (a setting that follows its lane steps from what plays, not from its own value)
            let from = p.automation != nil && !p.isTouched ? p.playedValue : p.value
            var v = min(max(from + delta, low), id == .tempo ? live.upperBound : spec.maximum)
            if id == .tempo { v = (v * 100).rounded() / 100 }   // (0.9, not 0.8999…)
            touch(p, v)
            message = "track \(selected + 1) \(id.spec.key) \(fmt((p.value * 100).rounded() / 100))"
        }
        switch keys {
        case [27, 91, 65]: selected = max(0, selected - 1)          // up
        case [27, 91, 66]: selected = min(control.tracks.count - 1, selected + 1)
        case [27, 91, 68]: bump(.pan, -0.1)                          // left
        case [27, 91, 67]: bump(.pan, 0.1)                           // right
        default:
            guard let k = keys.first else { return true }
            switch Character(UnicodeScalar(k)) {
            case "q", "Q": return false
            case "1"..."9":
                let n = Int(k) - 49
                if n < control.tracks.count { selected = n }
            case "v": bump(.volume, -0.05)
            case "V": bump(.volume, 0.05)
            case "b": bump(.bassGainDB, -1)
            case "B": bump(.bassGainDB, 1)
            case "t": bump(.trebleGainDB, -1)
            case "T": bump(.trebleGainDB, 1)
            case "p": bump(.pitchCents, -100)
            case "P": bump(.pitchCents, 100)
            case ",": bump(.pitchCents, -10)
            case ".": bump(.pitchCents, 10)
            case "<": bump(.tempo, -0.05)
            case ">": bump(.tempo, 0.05)
            case "{", "}":
                // every track together: the song slower or faster, tracks kept together
                if let k = control.tracks.indices.first(where: { control.handMoveProblem(track: $0, .tempo) != nil }) {
                    message = "track \(k + 1) tempo \(control.handMoveProblem(track: k, .tempo)!)"
                    break
                }
                let live = PitchShifterSettings.liveTempoRange
                let v = min(max(control.tracks[0].timePitch.rate + (k == 123 ? -0.05 : 0.05), live.lowerBound), live.upperBound)
                let rounded = (v * 100).rounded() / 100
                for track in control.tracks { track.timePitch.rate = rounded }
                message = "all tracks tempo \(fmt(rounded))"
            case "m", "M":
                // (a touch: it takes over the track's mute lane until released, and is recorded;
                // it toggles what is heard, the lane's value where it has one)
                touch(t.player.muteParameter, Self.isOn(t.player.muteParameter) ? 0 : 1)
                message = "track \(selected + 1) \(t.player.isMuted ? "muted" : "unmuted")"
            case "s", "S":
                touch(t.player.soloParameter, Self.isOn(t.player.soloParameter) ? 0 : 1)
                message = "track \(selected + 1) solo \(t.player.isSoloed ? "on" : "off")"
            case "-", "_", "+", "=":
                let master = control.engine.mainMixer.outputVolumeParameter
                touch(master, min(max(0, master.value + (k == 45 || k == 95 ? -0.05 : 0.05)), 16))
                message = "master volume \(fmt((master.value * 100).rounded() / 100))"
            case "l", "L":
                latched.toggle()
                if !latched { touched = touched.map { ($0.parameter, Date()) } }   // (unlatched: held 1 s more)
                message = latched ? "touch latched: moves hold until r" : "touch: moves hold 1 s after the last key"
            case "r", "R":
                control.releaseAll()
                touched = []
                message = "released: the lanes play again"
            case " ":
                let paused = !control.player.status.isPaused
                control.player.pause(paused)
                message = paused ? "paused" : "playing"
            case "[", "]":
                let s = control.player.status
                try? control.player.seek(toSeconds: min(max(0, s.positionSeconds + (k == 91 ? -5 : 5)), s.durationSeconds))
                message = k == 91 ? "back 5 s" : "forward 5 s"
            case "w", "W":
                var name = "mixfx-saved.json", i = 2
                while FileSystem.exists(name) { name = "mixfx-saved-\(i).json"; i += 1 }
                do { try control.save(to: name); message = "saved \(name) (mixfx play ... --preset \(name))" } catch {
                    message = "cannot save: \(SettingFlags.text(error))"
                }
            case "?", "h": showHelp.toggle()
            default: break
            }
        }
        return true
    }

    /// The widths of a track row's stretchable columns for a terminal `columns` wide: the
    /// file name and the meter's bar. Every line fits in `columns − 1` cells (none reaches the
    /// last column, so no terminal wraps it); at 80 columns a name shows 12 characters and the
    /// bar 12 cells, and a wider terminal gives the name up to 22 and the bar up to 20.
    struct Layout: Equatable {
        var columns: Int
        var nameWidth: Int
        var meterCells: Int

        /// A track row without its name and bar: marker and number (3), gaps, vol, pan, bass,
        /// treble, pitch, tempo, M, S, then the meter's brackets and its level (55 cells).
        static let fixedWidth = 55

        init(columns: Int) {
            self.columns = columns
            let spare = max(0, columns - 1 - Layout.fixedWidth - 23)
            nameWidth = 11 + min(11, spare)
            meterCells = 12 + min(8, max(0, spare - 11))
        }

        /// The widest line a screen may have.
        var lineWidth: Int { max(columns - 1, 1) }

        /// `text` cut to the line width (a device name or a message that would not fit).
        func fit(_ text: String) -> String {
            text.count <= lineWidth ? text : String(text.prefix(lineWidth - 1)) + "…"
        }

        /// `items` joined by `gap` into lines of at most the line width, each starting with `indent`.
        func wrap(_ items: [String], indent: String = "  ", gap: String = "  ") -> [String] {
            var lines: [String] = [], line = ""
            for item in items {
                if !line.isEmpty && line.count + gap.count + item.count > lineWidth {
                    lines.append(line)
                    line = ""
                }
                line += (line.isEmpty ? indent : gap) + item
            }
            if !line.isEmpty { lines.append(line) }
            return lines.map(fit)
        }

        /// A name in its column: padded, or cut with an ellipsis.
        func name(_ text: String) -> String {
            text.count <= nameWidth ? text.padding(toLength: nameWidth, withPad: " ", startingAt: 0)
                                    : String(text.prefix(nameWidth - 1)) + "…"
        }
    }

    /// The keys, as the help lists them (short lines, for 80 columns).
    static let helpLines = [
        "  ↑/↓ or 1-9  choose a track     v/V  volume −/+     ←/→  pan −/+",
        "  b/B  bass −/+ 1 dB     t/T  treble −/+ 1 dB",
        "  p/P  pitch −/+ 100 cents     ,/.  pitch −/+ 10 cents",
        "  </>  tempo −/+ 0.05     {/}  every track's tempo −/+ 0.05",
        "  m  mute    s  solo    -/+  master volume    space  pause    [/]  seek ∓5 s",
        "  w  save the settings as a preset    ?  hide help    q  quit",
        "  a move holds the lane 1 s (touch)    l  latch it    r  release all",
    ]
    /// The keys in one line's words, wrapped to the screen.
    static let keyItems = ["keys: ↑↓ track", "v/V vol", "←→ pan", "b/B bass", "t/T treble", "p/P pitch", "</> tempo",
                           "m mute", "s solo", "space pause", "[ ] seek", "l latch", "r release", "w save", "? help", "q quit"]

    private func draw() {
        let size = Terminal.size(1) ?? (80, 24)
        let layout = Layout(columns: size.columns)
        let s = control.player.status
        var lines: [String] = []
        let state = s.isFinished ? "■" : s.isPaused ? "‖" : "▶"
        // with a tempo, song time and the time played (wall time) part
        let tempos = control.tracks.map(\.timePitch.rate)
        let wall = tempos.allSatisfy { $0 == 1 } && s.tempo == 1 ? ""
            : String(format: "   wall %@ (tempo %.2f×)", clock(s.playedSeconds), s.tempo)
        lines.append(String(format: "mixfx play  %@ %@ / %@%@", state, clock(s.positionSeconds), clock(s.durationSeconds), wall))
        lines.append(layout.fit(String(format: "DSP %4.1f%%   underruns %d   %d Hz on %@", s.dspLoad * 100, s.underruns,
                                       control.player.output.sampleRate, control.player.output.device)))
        lines.append("")
        func right(_ text: String, _ width: Int) -> String { String(repeating: " ", count: max(0, width - text.count)) + text }
        let meterColumn = 47 + layout.nameWidth
        lines.append("  #  " + layout.name("track") + " " + right("vol", 5) + " " + right("pan", 5) + " " + right("bass", 5)
                     + " " + right("treb", 5) + " " + right("pitch", 6) + " " + right("tempo", 5) + " M S level, peak dBFS")
        // the tracks that fit beside everything else, the selected one among them
        let others = 10 + (control.engine.masterLimiter == nil ? 0 : 1) + (showHelp ? Self.helpLines.count : layout.wrap(Self.keyItems).count)
        let room = max(1, size.rows - others)
        let count = control.tracks.count
        let first = count <= room ? 0 : min(max(0, selected - room / 2), count - room)
        let shown = first..<min(count, first + room)
        let now = Date()
        let anySolo = control.tracks.contains { Self.isOn($0.player.soloParameter) }
        for (i, t) in control.tracks.enumerated() {
            let peak = control.player.kernel.trackMeters[i].takePeak()
            if peak >= peakHold[i].value || now > peakHold[i].until { peakHold[i] = (peak, now + 1) }
            guard shown.contains(i) else { continue }
            let name = URL(fileURLWithPath: control.inputs[i]).lastPathComponent
            let row = String(format: "%@%2d  %@ %5.2f %+5.2f %+5.1f %+5.1f %+6.0f %5.2f %@ %@ %@",
                             i == selected ? ">" : " ", i + 1, layout.name(name),
                             t.player.volume, t.player.pan, t.eq.bassGain.value, t.eq.trebleGain.value,
                             t.timePitch.pitchCents, t.timePitch.rate, Self.isOn(t.player.muteParameter) ? "M" : ".",
                             Self.isOn(t.player.soloParameter) ? "S" : (anySolo ? "-" : "."),
                             meter(rms: control.player.kernel.trackMeters[i].rms, hold: peakHold[i].value, cells: layout.meterCells))
            lines.append(layout.fit(row))
        }
        if shown.count < count { lines.append(layout.fit("      (tracks \(shown.lowerBound + 1)-\(shown.upperBound) of \(count) shown; ↑/↓ scroll)")) }
        let mp = control.player.kernel.masterMeter.takePeak()
        if mp >= masterHold.value || now > masterHold.until { masterHold = (mp, now + 1) }
        let master = String(format: "    master volume %5.2f", control.engine.mainMixer.outputVolume)
        lines.append(layout.fit(master.padding(toLength: meterColumn, withPad: " ", startingAt: 0)
                                + meter(rms: control.player.kernel.masterMeter.rms, hold: masterHold.value, cells: layout.meterCells)))
        // the master's loudness and true peak (held 1 s), and the limiter when there is one
        let levels = control.player.kernel.masterLevels
        let tp = levels.takeTruePeak()
        if tp >= truePeakHold.value || now > truePeakHold.until { truePeakHold = (tp, now + 1) }
        let lufs = levels.shortTermLUFS
        lines.append(String(format: "    loudness %@ LUFS short-term   true peak %@ dBTP",
                            lufs.isFinite ? String(format: "%5.1f", lufs) : " -inf",
                            truePeakHold.value > 0 ? String(format: "%+5.1f", 20 * log10(Double(truePeakHold.value))) : " -inf"))
        if let limiter = control.engine.masterLimiter {
            lines.append(String(format: "    limiter ceiling %.1f dBTP, gain %5.1f dB", limiter.ceilingDBTP, levels.limiterGainDB))
        }
        lines.append("")
        lines += showHelp ? Self.helpLines.map(layout.fit) : layout.wrap(Self.keyItems)
        lines += layout.wrap(message.split(separator: " ").map(String.init), gap: " ").prefix(2)
        let screen = "\u{1B}[H" + lines.map { $0 + "\u{1B}[K" }.joined(separator: "\r\n") + "\u{1B}[J"
        Terminal.writeAll(1, screen)
    }

    /// An RMS bar with the held peak marked, `cells` cells over −60…0 dBFS, and the peak in dBFS.
    private func meter(rms: Float, hold: Float, cells count: Int) -> String {
        func cells(_ v: Float) -> Int {
            guard v > 0 else { return 0 }
            return min(count, max(0, Int(((20 * log10(v) + 60) / 60 * Float(count)).rounded())))
        }
        let r = cells(rms), h = cells(hold)
        var bar = Array(repeating: Character("-"), count: count)
        for i in 0..<r { bar[i] = "#" }
        if h > 0 { bar[h - 1] = hold >= 1 ? "!" : "|" }
        let db = hold > 0 ? String(format: "%6.1f", 20 * log10(hold)) : "  -inf"
        return "[" + String(bar) + "]" + db
    }

    private func clock(_ seconds: Double) -> String {
        let s = max(0, seconds)
        return String(format: "%d:%04.1f", Int(s) / 60, s.truncatingRemainder(dividingBy: 60))
    }

    private func enterRawMode() {
        tcgetattr(0, &original)
        var raw = original
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        raw.c_cc.6 = 0   // VMIN
        raw.c_cc.5 = 0   // VTIME
        tcsetattr(0, TCSANOW, &raw)
        Terminal.writeAll(1, "\u{1B}[?1049h\u{1B}[?25l\u{1B}[2J")
    }

    private func restore() {
        Terminal.writeAll(1, "\u{1B}[?25h\u{1B}[?1049l")
        tcsetattr(0, TCSANOW, &original)
    }
}
