import Foundation
import MixFX

/// `mixfx play`: plays a session live through ALSA with a terminal mixer or a control script.
struct PlayCommand {
    /// The flags of playing's own (the session's are `SessionOptions`'), in synopsis order.
    enum Flag: CommandFlag {
        case device, bufferMs, periodMs, loop, start, force, noUI, quiet, json, help

        var syntax: FlagSyntax {
            switch self {
            case .device: FlagSyntax(names: ["--device"], value: "NAME")
            case .bufferMs: FlagSyntax(names: ["--buffer-ms"], value: "MS")
            case .periodMs: FlagSyntax(names: ["--period-ms"], value: "MS")
            case .loop: FlagSyntax(names: ["--loop"])
            case .start: FlagSyntax(names: ["--start"], value: "SECONDS")
            case .force: FlagSyntax(names: ["--force"])
            case .noUI: FlagSyntax(names: ["--no-ui"])
            case .quiet: FlagSyntax(names: ["-q", "--quiet"])
            case .json: FlagSyntax(names: ["--json"])
            case .help: helpFlag
            }
        }
    }

    /// The synopsis: every flag the parser takes (`Flag`, `SessionOptions.flagSyntaxes`).
    static var usage: String {
        Synopsis.text([
            .init("mixfx play", operands: ["TRACK..."],
                  flags: Flag.allCases.filter { $0 != .help }.map(\.syntax) + SessionOptions.flagSyntaxes(renderOptions: false)),
            Synopsis.helpForm("play"),
        ])
    }

    static let help = """
    \(usage)

    Plays the session through ALSA on a real-time render thread while you change the mix. It
    takes the settings of `mixfx render` (--preset, --track, --bass, --pitch, ..., see mixfx
    render --help) and:

      --device NAME       ALSA PCM (default "default"; `mixfx devices` lists them). A file the
                          device string names for writing, at any depth (file:'out.raw',raw,
                          tee:default,'out.raw',raw, plug:'file:out.raw') may not be an input, a
                          link, or an existing file without --force; a name with % (ALSA fills
                          in the rate, channels...) or a |command is refused
      --buffer-ms MS      device buffer (default 50): the control-to-sound latency
      --period-ms MS      render block (default a quarter of the buffer)
    \(SettingFlags.entry(SettingFlags.placeholder(.sampleFormat, column: 20), "ask the device for \(SessionOption.sampleFormat.spec.choices.joined(separator: ", ")) (default \(SampleFormat.f32.rawValue), or what it takes)", column: 20))
    \(SettingFlags.entry(SettingFlags.placeholder(.sampleRateHz, column: 20), "session rate (\(SessionOption.sampleRateHz.spec.allowedText); default \(SessionOption.sampleRateHz.spec.defaultText); the device's nearest is used)", column: 20))
    \(SettingFlags.entry(SettingFlags.placeholder(.channels, column: 20), "\(SessionOption.channels.spec.summary) (see mixfx render --help)", column: 20))
    \(SettingFlags.entry(SettingFlags.placeholder(.lfeGainDB, column: 20), "keep the LFE of downmixed tracks at DB (\(SessionOption.lfeGainDB.spec.allowedText))", column: 20))
      --loop              start again at the end
      --start SECONDS     start position
    \(SettingFlags.entry(SettingFlags.placeholder(.limitDBTP, column: 20), "the master limiter (true peak, default \(fmt(SessionOption.limitDBTP.spec.defaultValue!)) dBTP; adds \(limiterLatencyText) of latency)", column: 20))
      --force             a device that writes a file may replace one that exists (never an
                          input, never through a link)
      --no-ui             no terminal mixer: read control commands from stdin
      -q, --quiet         no closing line on stderr
      --json              print the closing report as JSON

    On a terminal, the mixer: ↑/↓ or 1-9 pick a track; v/V volume, ←/→ pan, b/B bass, t/T treble,
    p/P pitch (±100 cents; , and . for ±10), m mute, s solo, -/+ master volume, space pause,
    [/] seek ∓5 s, w save the settings as a preset, ? help, q quit. A volume, pan, EQ, pitch
    or master move holds a lane by hand (touch) until 1 s after the last key on it; l latches
    (held until r, which releases all). It shows each track's level, the
    master's level, short-term loudness and true peak, and the limiter's gain.

    Otherwise (or with --no-ui), one command per line on stdin:
      track N KEY VALUE   e.g. track 2 pitch -300, track 1 mute on, track 3 volume 0.5 (values
                          as in --track: track 2 pitch -3st, track 3 volume -6dB); a setting
                          with a lane is then held by hand (touch) until released
      master volume V     master limit CEILING (with --limit); V linear or in dB (-6dB)
      track N KEY release | track all KEY release | master volume release | release (all)
                          the lane takes over again (over 250 ms, no jump)
      seek SECONDS | seek +S | seek -S     pause | resume
      save FILE.json [--force]   the settings and lanes, touches written into the lanes (never
                          over an input; over an existing file only with --force)
      status      quit
    Each accepted command is acknowledged on stdout with the frame it applies from; a bad one
    gets a message on stderr and playback goes on. Underruns are counted and reported at exit.
    """

    /// The latency the master limiter adds live, in words: its look-ahead and the frames its
    /// true-peak detector and interpolator add (23 at any rate: about 0.5 ms at 48 kHz).
    static var limiterLatencyText: String {
        var limiter = Limiter()
        limiter.prepare(ProcessSpec(sampleRate: 48_000, maximumFrameCount: 64, channelCount: 2), settings: LimiterSettings())
        defer { limiter.deallocate() }
        return String(format: "%.1f ms", Double(limiter.latencyFrames) / 48)
    }

    var session = SessionOptions()
    var options = LiveOptions()
    var noUI = false, json = false, quiet = false
    /// `--force`: a device may write over a file that exists (never an input).
    var force = false

    static func run(_ argv: [String]) throws(CLIError) -> Int32 {
        guard let cmd = try parse(argv) else { HelpLayout.print(help); return 0 }
        return try cmd.execute()
    }

    /// The command the arguments describe, checked as far as it can be without opening a file;
    /// nil when they ask for help.
    static func parse(_ argv: [String]) throws(CLIError) -> PlayCommand? {
        var cmd = PlayCommand()
        var args = Arguments(argv)
        while let (name, inline) = args.nextOption() {
            guard let flag = Flag.named(name) else {
                if try !cmd.session.parse(name, inline: inline, &args) {
                    throw .unknownOption(name, command: "play", help: help)
                }
                continue
            }
            switch flag {
            case .help: return nil
            case .device: cmd.options.device = try args.value(for: name, inline: inline)
            case .bufferMs:
                let v = try parseNumber(try args.value(for: name, inline: inline), flag: name)
                guard v >= 5 && v <= 2000 else { throw .usage("--buffer-ms: \(fmt(v)) is not from 5 to 2000") }
                cmd.options.bufferMilliseconds = v
            case .periodMs:
                let v = try parseNumber(try args.value(for: name, inline: inline), flag: name)
                guard v >= 1 && v <= 1000 else { throw .usage("--period-ms: \(fmt(v)) is not from 1 to 1000") }
                cmd.options.periodMilliseconds = v
            case .start:
                let v = try parseNumber(try args.value(for: name, inline: inline), flag: name)
                guard v >= 0 else { throw .usage("--start: \(fmt(v)) is below 0") }
                cmd.options.startSeconds = v
            case .loop: cmd.options.loop = true
            case .force: cmd.force = true
            case .noUI: cmd.noUI = true
            case .json: cmd.json = true
            case .quiet: cmd.quiet = true
            }
        }
        cmd.session.inputs = args.positionals
        guard !cmd.session.inputs.isEmpty else { throw .usage("play: no tracks given (usage: mixfx play TRACK...)") }
        if cmd.session.inputs.contains(StandardInput.path) {
            throw .usage("play: - (stdin) cannot be a track: play reads its control commands there (save the stream to a file, or render it: mixfx render - ...)")
        }
        guard cmd.session.inputs.count <= Preset.maximumTracks else {
            throw .usage("\(cmd.session.inputs.count) tracks is more than a session may have (\(Preset.maximumTracks))")
        }
        if let period = cmd.options.periodMilliseconds, period * 2 > cmd.options.bufferMilliseconds {
            throw .usage("--period-ms: \(fmt(period)) is more than half of the buffer (\(fmt(cmd.options.bufferMilliseconds)) ms); the buffer must hold at least two periods")
        }
        return cmd
    }

    func execute() throws(CLIError) -> Int32 {
        let resolved = try session.resolveAll()
        var reads = FileIdentitySet(resolved.inputs + session.presetFiles)
        // (standard input's file too: control lines read from `< cmds.txt`)
        if let id = StandardInput.fileIdentity { reads.insert(id, spelling: "standard input") }
        let deviceFiles = try DeviceFileCheck.check(device: options.device, reads: reads, force: force)
        var opts = options
        opts.sampleFormat = resolved.sampleFormat
        var sources: [StreamingSource] = []
        let (engine, tracks) = try resolved.makeEngine { reader in
            let source = StreamingSource(reader: reader)
            sources.append(source)
            return source
        }
        for s in sources { do { try s.seek(toFrame: 0) } catch { throw .failure(SettingFlags.text(error)) } }
        let player: LivePlayer
        do {
            player = try LivePlayer(engine: engine, sources: sources, options: opts)
        } catch let e as EngineError {
            throw resolved.explain(e)
        } catch {
            throw .failure(SettingFlags.text(error))
        }
        if opts.startSeconds > 0 && opts.startSeconds >= player.durationSeconds {
            throw .usage(String(format: "--start: %@ s is past the end of the session (%.3f s)", fmt(opts.startSeconds), player.durationSeconds))
        }
        let control = LiveControl(player: player, engine: engine, tracks: tracks, inputs: resolved.inputs,
                                  sampleFormat: resolved.sampleFormat, sampleRate: resolved.sampleRate)
        control.presetFiles = session.presetFiles
        control.deviceFiles = deviceFiles
        let interactive = !noUI && Terminal.isTerminal(0) && Terminal.isTerminal(1)
        Terminal.installStopHandlers()
        player.start()
        if interactive {
            let ui = TerminalMixer(control: control)
            ui.run()
        } else {
            runScript(control)
        }
        player.waitUntilFinished()
        return report(player, interactive: interactive)
    }

    /// Reads commands from stdin on a background thread until the session ends, Ctrl-C, or quit.
    private func runScript(_ control: LiveControl) {
        let player = control.player
        let reader = Thread {
            while let line = readLine() {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
                do throws(LiveControl.CommandError) {
                    switch try control.execute(trimmed) {
                    case .quit:
                        player.stop()
                        return
                    case .ok(let text):
                        let ack = PathBytes.shown("ok \(text) @ frame \(player.status.framesRendered)") + "\n"
                        Terminal.writeAll(1, ack)
                    }
                } catch {
                    Terminal.printError("mixfx: control: \(error.message)")
                }
            }
        }
        reader.start()
        while !player.status.isFinished {
            if interruptRequested { player.stop(); break }
            control.collectTouches()
            usleep(10_000)
        }
    }

    private func report(_ player: LivePlayer, interactive: Bool) -> Int32 {
        let s = player.status
        if let error = player.error {
            Terminal.printError("mixfx: error: \(SettingFlags.text(error))")
            return 1
        }
        if json {
            var obj: [String: Any] = [
                "device": player.output.device, "sampleRateHz": player.output.sampleRate,
                "sampleFormat": player.output.sampleFormat.rawValue, "channels": player.output.channelCount,
                "bufferFrames": player.output.bufferFrames, "periodFrames": player.output.periodFrames,
                "framesPlayed": s.framesRendered, "durationSeconds": s.durationSeconds,
                "underruns": s.underruns, "diskUnderflowFrames": s.diskUnderflowFrames,
                "maxDSPLoad": s.maxDSPLoad, "meanDSPLoad": s.meanDSPLoad, "clippedSamples": s.clippedSamples,
                "latencyFrames": player.kernel.trackLatencyFrames.max() ?? 0,
                "trackReplacedSamples": player.kernel.trackReplacedSamples,
                "wallSeconds": player.playbackWallSeconds,
                "playedSeconds": s.playedSeconds, "positionSeconds": s.positionSeconds,
            ]
            if let a = player.renderThreadAllocations { obj["renderThreadAllocations"] = a }
            if let a = player.renderThreadWarmUpAllocations { obj["renderThreadWarmUpAllocations"] = a }
            printJSON(obj)
        }
        for (i, n) in player.kernel.trackReplacedSamples.enumerated() where n > 0 {
            Terminal.printError("mixfx: warning: track \(i + 1): \(n) input sample\(n == 1 ? "" : "s") that were NaN, infinite or beyond ±10⁶ were replaced by silence")
        }
        if !json && !quiet {
            Terminal.printError(String(format: "played %.2f s on %@ (%@, %d Hz, buffer %d frames), underruns: %d, max DSP load %.1f%%",
                                       Double(s.framesRendered) / Double(player.output.sampleRate), player.output.device,
                                       player.output.sampleFormat.rawValue, player.output.sampleRate,
                                       player.output.bufferFrames, s.underruns, s.maxDSPLoad * 100))
        }
        // Ctrl-C is how a listener ends playing (0); any other stop signal is 128 + N, as for
        // every command
        let signal = stopSignal.load(ordering: .relaxed)
        return signal != 0 && signal != SIGINT ? 128 + signal : 0
    }
}

/// `mixfx devices`
enum DevicesCommand {
    /// The flags.
    enum Flag: CommandFlag {
        case help
        var syntax: FlagSyntax { helpFlag }
    }

    static var help: String {
        Synopsis.text([.init("mixfx devices", flags: []), Synopsis.helpForm("devices")])
            + "\n\nLists the ALSA playback devices: the PCM names `mixfx play --device` takes."
    }

    /// False when the arguments ask for help.
    static func parse(_ argv: [String]) throws(CLIError) -> Bool {
        var args = Arguments(argv)
        while let (name, _) = args.nextOption() {
            guard let flag = Flag.named(name) else { throw .unknownOption(name, command: "devices", help: help) }
            switch flag {
            case .help: return false
            }
        }
        if let extra = args.positionals.first { throw .usage("devices: unexpected argument '\(extra)'") }
        return true
    }

    static func run(_ argv: [String]) throws(CLIError) -> Int32 {
        guard try parse(argv) else { HelpLayout.print(help); return 0 }
        let devices = ALSAOutput.devices()
        if devices.isEmpty {
            print("no ALSA devices listed; `--device default` uses ALSA's default")
        }
        let width = (devices.map(\.name.count).max() ?? 0) + 2
        for d in devices { print(d.name.padding(toLength: width, withPad: " ", startingAt: 0) + d.description) }
        return 0
    }
}
