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
            if Date().timeIntervalSince(lastDraw) > 1.0 / 15 {
                draw()
                lastDraw = Date()
            }
        }
        draw()
    }

    /// Returns false to quit.
    private func handle(_ keys: [UInt8]) -> Bool {
        let t = control.tracks[selected]
        func bump(_ id: ParameterID, _ delta: Double) {
            guard let p = t.parameter(id) else { return }
            let spec = id.spec
            // (a tempo within what live playback takes)
            let live = PitchShifterSettings.liveTempoRange
            let low = id == .tempo ? live.lowerBound : spec.minimumExcluded ? spec.minimum + 0.01 : spec.minimum
            p.value = min(max(p.value + delta, low), id == .tempo ? live.upperBound : spec.maximum)
            if id == .tempo { p.value = (p.value * 100).rounded() / 100 }   // (0.9, not 0.8999…)
            message = "track \(selected + 1) \(id.rawValue) \(fmt((p.value * 100).rounded() / 100))"
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
                let live = PitchShifterSettings.liveTempoRange
                let v = min(max(control.tracks[0].timePitch.rate + (k == 123 ? -0.05 : 0.05), live.lowerBound), live.upperBound)
                let rounded = (v * 100).rounded() / 100
                for track in control.tracks { track.timePitch.rate = rounded }
                message = "all tracks tempo \(fmt(rounded))"
            case "m", "M":
                t.player.isMuted.toggle()
                message = "track \(selected + 1) \(t.player.isMuted ? "muted" : "unmuted")"
            case "s", "S":
                t.player.isSoloed.toggle()
                message = "track \(selected + 1) solo \(t.player.isSoloed ? "on" : "off")"
            case "-", "_":
                control.engine.mainMixer.outputVolume = max(0, control.engine.mainMixer.outputVolume - 0.05)
                message = "master volume \(fmt((control.engine.mainMixer.outputVolume * 100).rounded() / 100))"
            case "+", "=":
                control.engine.mainMixer.outputVolume = min(16, control.engine.mainMixer.outputVolume + 0.05)
                message = "master volume \(fmt((control.engine.mainMixer.outputVolume * 100).rounded() / 100))"
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

    private func draw() {
        let s = control.player.status
        var lines: [String] = []
        let state = s.isFinished ? "■" : s.isPaused ? "‖" : "▶"
        // with a tempo, song time and the time played (wall time) part
        let tempos = control.tracks.map(\.timePitch.rate)
        let wall = tempos.allSatisfy { $0 == 1 } && s.tempo == 1 ? ""
            : String(format: "   wall %@ (tempo %.2f×)", clock(s.playedSeconds), s.tempo)
        lines.append(String(format: "mixfx play  %@ %@ / %@%@   DSP %4.1f%%   underruns %d   %@ %d Hz",
                            state, clock(s.positionSeconds), clock(s.durationSeconds), wall, s.dspLoad * 100, s.underruns,
                            control.player.output.device, control.player.output.sampleRate))
        lines.append("")
        lines.append("   #  track                    vol    pan    bass  treble   pitch  tempo  M S  level")
        let now = Date()
        let anySolo = control.tracks.contains { $0.player.isSoloed }
        for (i, t) in control.tracks.enumerated() {
            let peak = control.player.kernel.trackMeters[i].takePeak()
            if peak >= peakHold[i].value || now > peakHold[i].until { peakHold[i] = (peak, now + 1) }
            let name = URL(fileURLWithPath: control.inputs[i]).lastPathComponent
            let row = String(format: "%@ %2d  %@ %5.2f  %+5.2f  %+5.1f  %+5.1f  %+6.0f  %5.2f  %@ %@  %@",
                             i == selected ? ">" : " ", i + 1,
                             name.padding(toLength: 22, withPad: " ", startingAt: 0),
                             t.player.volume, t.player.pan, t.eq.bassGain.value, t.eq.trebleGain.value,
                             t.timePitch.pitchCents, t.timePitch.rate, t.player.isMuted ? "M" : ".",
                             t.player.isSoloed ? "S" : (anySolo ? "-" : "."),
                             meter(rms: control.player.kernel.trackMeters[i].rms, hold: peakHold[i].value))
            lines.append(row)
        }
        let mp = control.player.kernel.masterMeter.takePeak()
        if mp >= masterHold.value || now > masterHold.until { masterHold = (mp, now + 1) }
        lines.append(String(format: "    master volume %5.2f                                          %@",
                            control.engine.mainMixer.outputVolume,
                            meter(rms: control.player.kernel.masterMeter.rms, hold: masterHold.value)))
        // the master's loudness and true peak (held 1 s), and the limiter when there is one
        let levels = control.player.kernel.masterLevels
        let tp = levels.takeTruePeak()
        if tp >= truePeakHold.value || now > truePeakHold.until { truePeakHold = (tp, now + 1) }
        let lufs = levels.shortTermLUFS
        var loudness = String(format: "    loudness %@ LUFS short-term   true peak %@ dBTP",
                              lufs.isFinite ? String(format: "%5.1f", lufs) : " -inf",
                              truePeakHold.value > 0 ? String(format: "%+5.1f", 20 * log10(Double(truePeakHold.value))) : " -inf")
        if let limiter = control.engine.masterLimiter {
            loudness += String(format: "   limiter %.1f dBTP, gain %5.1f dB", limiter.ceilingDBTP, levels.limiterGainDB)
        }
        lines.append(loudness)
        lines.append("")
        if showHelp {
            lines += [
                "  ↑/↓ or 1-9  choose a track        v/V  volume −/+        ←/→  pan",
                "  b/B  bass −/+ 1 dB   t/T  treble −/+ 1 dB   p/P  pitch −/+ 100 cents   ,/.  ±10 cents",
                "  </>  tempo −/+ 0.05   {/}  every track's tempo −/+ 0.05 (song time and wall time then part)",
                "  m  mute   s  solo   -/+  master volume   space  pause   [/]  seek ∓5 s",
                "  w  save the settings as a preset   ?  hide help   q  quit",
            ]
        } else {
            lines.append("  keys: ↑↓ track  v/V vol  ←→ pan  b/B bass  t/T treble  p/P pitch  </> tempo  m mute  s solo  space pause  [ ] seek  w save  ? help  q quit")
        }
        lines.append("  \(message)")
        let screen = "\u{1B}[H" + lines.map { $0 + "\u{1B}[K" }.joined(separator: "\r\n") + "\u{1B}[J"
        Terminal.writeAll(1, screen)
    }

    /// An RMS bar with the held peak marked, 20 cells over −60…0 dBFS, and the peak in dB.
    private func meter(rms: Float, hold: Float) -> String {
        func cells(_ v: Float) -> Int {
            guard v > 0 else { return 0 }
            return min(20, max(0, Int(((20 * log10(v) + 60) / 3).rounded())))
        }
        let r = cells(rms), h = cells(hold)
        var bar = Array(repeating: Character("-"), count: 20)
        for i in 0..<r { bar[i] = "#" }
        if h > 0 { bar[h - 1] = hold >= 1 ? "!" : "|" }
        let db = hold > 0 ? String(format: "%6.1f dB", 20 * log10(hold)) : "   -inf dB"
        return "[" + String(bar) + "] " + db
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
