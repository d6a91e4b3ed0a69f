import Foundation
import MixFX

/// `mixfx render`: mixes the tracks through their EQ and pitch shifter into one file.
struct RenderCommand {
    /// Whether `path` names a report: it ends in .json (the measures) or .html (a page), in any
    /// case (a hidden `.json` too: as for any output, the name is the user's).
    static func isReportName(_ path: String) -> Bool {
        let name = path.lowercased()
        return name.hasSuffix(".json") || name.hasSuffix(".html")
    }

    /// The flags of a render's own (the session's are `SessionOptions`'), in synopsis order.
    enum Flag: CommandFlag {
        case output, type, force, dryRun, analyze, report, printPreset, quiet, json, reportSchema, help

        var syntax: FlagSyntax {
            switch self {
            case .output: FlagSyntax(names: ["-o", "--output"], value: "OUT")
            case .type: FlagSyntax(names: ["-t", "--type"], value: "TYPE")
            case .force: FlagSyntax(names: ["--force"])
            case .dryRun: FlagSyntax(names: ["--dry-run"])
            case .analyze: FlagSyntax(names: ["--analyze"])
            case .report: FlagSyntax(names: ["--report"], value: "FILE.json|FILE.html")
            case .printPreset: FlagSyntax(names: ["--print-preset"])
            case .quiet: FlagSyntax(names: ["-q", "--quiet"])
            case .json: FlagSyntax(names: ["--json"])
            case .reportSchema: FlagSyntax(names: ["--report-schema"])
            case .help: helpFlag
            }
        }
    }

    /// The synopsis: every flag the parser takes (`Flag`, `SessionOptions.flagSyntaxes`).
    static var usage: String {
        // the output first, then the settings, then the rest
        let own = Flag.allCases.filter { $0 != .help && $0 != .reportSchema }
        let first: Set<Flag> = [.output, .type, .force]
        return Synopsis.text([
            .init("mixfx render", operands: ["TRACK..."], flags: own.filter(first.contains).map(\.syntax)
                  + SessionOptions.flagSyntaxes(renderOptions: true) + own.filter { !first.contains($0) }.map(\.syntax)),
            .init("mixfx render", Flag.reportSchema.syntax.names),
            Synopsis.helpForm("render"),
        ])
    }

    static let help = """
    \(usage)

    Renders each TRACK (any file libsndfile reads: WAV, FLAC, Ogg/Vorbis, Opus, MP3, AIFF, CAF,
    W64, RF64, AU, ...; - reads one from stdin, even a pipe: it is kept in $TMPDIR first) through
    player -> shelf EQ -> pitch shifter -> mixer into OUT, faster than real time. The mix is as
    long as the longest track, aligned at sample 0; the mixer is a plain sum (no hidden 1/N).

    output (a preset's "output" and "master" first, then these flags):
      -o, --output OUT        output file (default mix.wav); the extension picks the container:
                              \(Container.extensionsText); - writes to stdout (needs --type),
                              once the render has succeeded, complete (a WAV with its length)
      -t, --type TYPE         the container, whatever OUT's name (as sox -t): one of the above
    \(outputHelp())
      --force                 overwrite OUT if it exists (never allowed when OUT is an input)

    settings (for every track; a preset first, then these flags, then --track):
    \(settingsHelp())
    \(SettingFlags.help(.masterVolume))
      --preset NAME|FILE      start from a preset (see `mixfx presets`)
      --bpm FROM:TO           the tempo TO/FROM (e.g. 120:96 is --tempo 0.8; bpm=FROM:TO per track)
      --trim IN..OUT          the segment of every file played (trim=IN..OUT per track); times are
                              seconds or mm:ss.s, either side optional (30..1:15, ..45)
      --track N:key=value,... settings for track N (1-based); keys: \(ParameterID.trackKeysText), trim, bpm
                              e.g. --track 2:pitch=-300,volume=0.8
                              --track 3:start=2.5,trim=1:00..1:30,fade-in=0.5,fade-out=2
      --automate [N:]KEY=VALUE@TIME,...
                              an automation lane (repeatable, one per flag): KEY's value at each
                              TIME (seconds or mm:ss.s on the mix's timeline), on track N (without
                              N:, every track; master-volume and limit take none). Keys:
                              \(ParameterID.automatable.map(\.spec.key).joined(separator: ", ")).
                              A CURVE written between two breakpoints (0@0,scurve,1@2) shapes that segment (\(AutomationCurve.namesText));
                              default db for gains, exp for frequencies, slopes and tempo, linear
                              otherwise. Values in the units below. Before the first breakpoint
                              its value holds, after the last the last; the lane replaces the
                              setting. e.g. --automate 2:pitch=0@0,200@4 (a sweep up 2 semitones
                              over 4 s), --automate volume=0dB@1:00,-60dB@1:10 (a fade)
      --pitchmap [N:]FILE     Rubber Band's pitch map (lines FRAME SEMITONES, FRAME a frame of the
                              track's file): the pitch steps there to the track's --pitch plus
                              SEMITONES; on every track, or track N (docs/automation.md)
      --timemap [N:]FILE      Rubber Band's time map (lines SOURCEFRAME TARGETFRAME, frames of the
                              file): track N's tempo (every track's without N) moves so that each
                              source frame lands on its target frame; a last line at the file's
                              end gives the length (docs/automation.md)
      units                   --pitch in cents (200 or 200c) or semitones (2st, -0.5st); --volume and
                              --master-volume linear (0.5, 50%) or in dB (-6dB = 10^(-6/20)); dB gains
                              with or without dB (4dB); the same in --track (pitch=-3st,volume=-6dB)

    reporting:
      --dry-run               print the resolved session and write nothing
      --analyze               with --dry-run: render the mix and print its loudness, peaks and the
                              gains that would avoid clipping or reach --normalize
      --report FILE           FILE.json: each track's and the mix's loudness, loudness range,
                              true and sample peak, DC offset, correlation, mono loss, also over
                              time, and every step applied (`mixfx render --report-schema` prints
                              its JSON Schema); FILE.html: the same as one self-contained page
                              of plots. Same rules as -o; checked before rendering
      --print-preset          print the effective settings as a preset (JSON) and write nothing;
                              `--preset that.json` renders the same mix again
      --quiet                 no progress bar and no summary
      --json                  print the summary (or the dry run) as JSON on stdout

    exit status: 0 done, 1 failed, 2 usage error, 128+N stopped by signal N (nothing is written
    unless the status is 0; see mixfx --help)
    """

    /// The output options' lines: the registry's summary, range or choices and default
    /// (`SettingFlags.help`), then what a render does with them.
    static func outputHelp() -> String {
        let ceiling = fmt(SessionOption.safeCeilingDBTP), clip = SessionOption.clipping.spec.choiceFlags
        let clamp = clip.first { $0.choice == ClipPolicy.clamp.rawValue }!.flag, fail = clip.first { $0.choice == ClipPolicy.fail.rawValue }!.flag
        let limit = SettingFlags.name(SessionOption.limitDBTP.spec.setting()), lfe = SettingFlags.name(SessionOption.lfeGainDB.spec.setting())
        return [
            SettingFlags.help(.sampleFormat, "FLAC holds s16/s24; Ogg/Vorbis, Opus and MP3 are lossy (they store no sample format). Integer output never wraps and by default is never clamped either (see \(clamp))"),
            SettingFlags.help(.sampleRateHz, "Other rates are converted with a band-limited resampler"),
            SettingFlags.help(.channels, "Tracks of up to 8 channels (3.0, quad, 5.0, 5.1, 6.1, 7.1, ambisonic B-format; the file's declared layout, else the usual order for the count) are downmixed to it before their EQ with ITU-R BS.775's coefficients: L = FL + 0.707 FC + 0.707 (BL|SL), R likewise; mono = 0.707 (L + R). The LFE is dropped unless \(lfe) is given"),
            SettingFlags.help(.lfeGainDB),
            SettingFlags.help(.dither, "TPDF is ±1 LSB, triangular. auto: on 16-bit output whenever a sample needs rounding (gain, EQ, pitch, resampling, a deeper source); off when every sample already fits (a pass-through stays bit-exact) and on 24/32-bit"),
            SettingFlags.entry(clamp, "integer output: clamp samples beyond full scale (counted; lossy output: the encoder gets them as they are). Without it (clipping \(ClipPolicy.avoid.rawValue), the default), a mix that would clip gets one gain for the whole mix that brings its true peak to \(ceiling) dBTP (reported); a mix within full scale is written untouched. The same for lossy output (ogg, opus, mp3); float output is never changed."),
            SettingFlags.entry(fail, "integer and lossy output: a mix that would clip is an error; nothing is written"),
            SettingFlags.help(.normalizeLUFS, "Measured while rendering; without \(limit), an error if the true peak would then pass \(ceiling) dBTP"),
            SettingFlags.help(.limitDBTP, "\(fmt(SessionOption.limiterLookaheadMs)) ms attack, a release that lengthens under sustained limiting; the mix is untouched where it stays below the ceiling (its delay is removed offline)"),
        ].joined(separator: "\n")
    }

    static func settingsHelp() -> String {
        ParameterID.trackParameters.filter(\.spec.hasGlobalFlag).map { id in
            let spec = id.spec
            let left = "  --\(spec.key) \(spec.isBoolean ? "on|off" : spec.isTime ? "T" : "X")"
            return left.padding(toLength: 26, withPad: " ", startingAt: 0)
                + "\(spec.summary) (\(spec.allowedText); default \(spec.isBoolean ? (spec.defaultValue != 0 ? "on" : "off") : fmt(spec.defaultValue)))"
        }.joined(separator: "\n")
    }

    var session = SessionOptions()
    var output = "mix.wav"
    /// `--type`: the container, whatever the output's name (nil: from its extension).
    var container: Container?
    /// The output is standard output (`-o -`).
    var writesStandardOutput: Bool { output == OutputFile.standardOutputPath }
    /// The file the output is: with `-o -`, what standard output is open on.
    var outputIdentity: FileIdentity? { writesStandardOutput ? FileIdentity(descriptor: 1) : FileIdentity(path: output) }
    var force = false, dryRun = false, quiet = false, json = false, printPreset = false, analyze = false
    /// `--report-schema`: print the report's JSON Schema, nothing else.
    var reportSchema = false
    /// `--report FILE.json|FILE.html`.
    var reportPath: String?
    /// Files read besides the tracks and the preset (a batch's manifest, every job's inputs and
    /// presets): no file this render writes may be one of them. (A set shared by a batch's
    /// jobs, so it is made once.)
    var otherInputs = FileIdentitySet()
    /// With overwriting allowed, only these files may be replaced (a batch's own earlier output
    /// and report, as its sidecar recorded them); nil: any that is not an input.
    var outputOnlyReplacing: FileIdentity?, reportOnlyReplacing: FileIdentity?
    /// And only while they are still these versions of those files (a batch's sidecar's).
    var outputOnlyReplacingVersion: FileVersion?, reportOnlyReplacingVersion: FileVersion?

    static func run(_ argv: [String]) throws(CLIError) -> Int32 {
        guard let cmd = try parse(argv) else { HelpLayout.print(help); return 0 }
        if cmd.reportSchema { print(ReportSchema.json); return 0 }
        return try cmd.execute()
    }

    /// The command the arguments describe, checked as far as it can be without opening a file;
    /// nil when they ask for help.
    static func parse(_ argv: [String]) throws(CLIError) -> RenderCommand? {
        var cmd = RenderCommand()
        var args = Arguments(argv)
        while let (name, inline) = args.nextOption() {
            guard let flag = Flag.named(name) else {
                if try !cmd.session.parse(name, inline: inline, &args, renderOptions: true) {
                    throw .unknownOption(name, command: "render", help: help)
                }
                continue
            }
            switch flag {
            case .help: return nil
            case .output: cmd.output = try args.value(for: name, inline: inline)
            case .type:
                let value = try args.value(for: name, inline: inline)
                guard value.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }), let c = Container.named(value.lowercased()) else {
                    throw .usage("\(name) \(value): not a container mixfx writes (allowed: \(Container.extensionsText))")
                }
                cmd.container = c
            case .force: cmd.force = true
            case .dryRun: cmd.dryRun = true
            case .analyze: cmd.analyze = true
            case .report:
                let path = try args.value(for: name, inline: inline)
                guard RenderCommand.isReportName(path) else {
                    throw .usage("--report: '\(path)' must end in .json (the measures) or .html (a page with pictures)")
                }
                cmd.reportPath = path
            case .quiet: cmd.quiet = true
            case .json: cmd.json = true
            case .printPreset: cmd.printPreset = true
            case .reportSchema: cmd.reportSchema = true
            }
        }
        if cmd.reportSchema {
            guard argv.count == 1 else { throw .usage("--report-schema prints the report's JSON Schema and takes nothing else (usage: mixfx render --report-schema)") }
            return cmd
        }
        cmd.session.inputs = args.positionals
        if cmd.session.inputs.filter({ $0 == StandardInput.path }).count > 1 {
            throw .usage("render: - (stdin) is given more than once; standard input holds one file")
        }
        guard !cmd.session.inputs.isEmpty else { throw .usage("render: no tracks given (usage: mixfx render TRACK... [-o OUT])") }
        if cmd.analyze && !cmd.dryRun { throw .usage("--analyze goes with --dry-run (it renders the mix to measure it and writes nothing)") }
        guard cmd.session.inputs.count <= Preset.maximumTracks else {
            throw .usage("\(cmd.session.inputs.count) tracks is more than a session may have (\(Preset.maximumTracks))")
        }
        return cmd
    }

    func execute() throws(CLIError) -> Int32 {
        let resolved = try session.resolveAll()
        if printPreset || dryRun {
            // the text printed (a preset, a dry run, an analysis) must not land in an input
            var reads = otherInputs
            for p in resolved.inputs + presetFiles where p != StandardInput.path { reads.insert(p) }
            do throws(OutputFileError) { try OutputFile.checkStandardOutputText(beside: reads) } catch {
                throw RenderCommand.map(.output(error), resolved)
            }
        }
        if printPreset {
            print(String(decoding: resolved.effectivePreset().jsonData(), as: UTF8.self))
            return 0
        }
        let outputExists = !writesStandardOutput && FileSystem.exists(output)
        // (a dry run reports an existing output instead)
        var (engine, renderer, plan) = try prepare(resolved, overwrite: force || dryRun)
        if plan.0.storedSampleFormat == nil, let f = resolved.sampleFormat {
            Terminal.printError("mixfx: warning: \(plan.0.container.rawValue) is lossy and stores no sample format: --sample-format \(f.rawValue) is ignored")
        }
        if resolved.dither == .tpdf && plan.0.storedSampleFormat?.isInteger != true {
            Terminal.printError("mixfx: warning: --dither tpdf applies to integer output only; \(plan.0.storedSampleFormat?.rawValue ?? plan.0.container.rawValue) output is not dithered")
        }
        if dryRun && analyze {
            let bar = !quiet && Terminal.isTerminal(2) ? ProgressBar() : nil
            renderer.progress = { done, total in bar?.update(done: done, total: total) }
            Terminal.installStopHandlers()
            renderer.isCancelled = { interruptRequested }
            let a: AudioAnalysis
            do { a = try renderer.analyze(engine) } catch { bar?.finish(); throw RenderCommand.map(error, resolved) }
            bar?.finish()
            printAnalysis(a, format: plan.0, normalizeLUFS: resolved.normalizeLUFS)
            return 0
        }
        if dryRun {
            // what the engine does not render yet is refused as the render would refuse it
            if !resolved.lanes.isEmpty {
                do { _ = try engine.makeKernel(maximumFrameCount: 64) } catch { throw resolved.explain(error) }
            }
            printDryRun(resolved, format: plan.0, layout: plan.1, outputExists: outputExists && !force)
            return 0
        }
        renderer.overwrite = force
        // what killed renders (SIGKILL, power loss) left beside the output
        if !writesStandardOutput {
            var reads = otherInputs
            for p in resolved.inputs + presetFiles where p != StandardInput.path { reads.insert(p) }
            OutputFile.removeStaleTemporaries(besides: output, inputs: reads)
        }
        let bar = !quiet && Terminal.isTerminal(2) ? ProgressBar() : nil
        renderer.progress = { done, total in bar?.update(done: done, total: total) }
        Terminal.installStopHandlers()
        renderer.isCancelled = { interruptRequested }
        let report: RenderReport, stagedReport: OutputFile.Staged?
        do { (report, stagedReport) = try renderWithReport(&renderer, engine, resolved, plan.1, overwrite: force) } catch {
            bar?.finish()
            let signal = stopSignal.load(ordering: .relaxed)
            if error == .cancelled && signal != 0 {
                throw CLIError(message: "interrupted by \(Terminal.signalName(signal)); no output was written", exitCode: 128 + signal)
            }
            throw RenderCommand.map(error, resolved)
        }
        bar?.finish()
        try commitReport(stagedReport)
        // (with -o - the audio is on stdout: the summary goes to stderr)
        // (its lines already show names escaped: `PathBytes.shown`)
        let say: (String) -> Void = writesStandardOutput ? { Terminal.writeError($0 + "\n") } : { print($0) }
        if json {
            say(summaryJSON(report))
        } else if !quiet {
            say(summaryText(report))
        }
        for (i, n) in report.trackReplacedSamples.enumerated() where n > 0 {
            Terminal.printError("mixfx: warning: track \(i + 1) (\(resolved.inputs[i])): \(n) input sample\(n == 1 ? "" : "s") that were NaN, infinite or beyond ±10⁶ were replaced by silence")
        }
        // What changed the user's levels, or would be heard as clipping, is said even with --quiet.
        if report.appliedGainDB != 0 && report.measuredLUFS == nil && (quiet || json) {
            Terminal.printError(String(format: "mixfx: note: the mix peaked at %+.2f dBFS; a gain of %.2f dB was applied to all of it so nothing clips (%@; --clip clamps instead, --strict refuses)",
                                       20 * log10(Double(report.mixPeak)), report.appliedGainDB, RenderCommand.ceilingText(report)))
        }
        if report.clippedSamples > 0 {
            let cut = report.peakDBFS + 0.1
            let advice = String(format: "lower the level by at least %.1f dB (e.g. --master-volume %.3g)", cut, resolved.masterVolume * pow(10, -cut / 20))
            if report.format.storedSampleFormat?.isInteger == true {
                Terminal.printError("mixfx: warning: \(report.clippedSamples) samples clipped (clamped to full scale); \(advice)")
            } else if report.format.container.isLossy {
                Terminal.printError("mixfx: warning: \(report.clippedSamples) samples are over 0 dBFS (given to the \(report.format.container.rawValue) encoder as they are; its decoders clip them); \(advice)")
            } else {
                Terminal.printError("mixfx: warning: \(report.clippedSamples) samples are over 0 dBFS (kept in the float file; a player may clip them); \(advice)")
            }
        }
        return 0
    }

    /// Everything before rendering, without printing: the inputs exist, the engine is built,
    /// the renderer set up, the report path and the output checked. (`execute`, `mixfx batch`.)
    /// `overwriteReport` (default: `overwrite`) allows replacing an existing report.
    func prepare(_ resolved: ResolvedSession, overwrite: Bool, overwriteReport: Bool? = nil) throws(CLIError) -> (AudioEngine, OfflineRenderer, (OutputFormat, EngineLayout)) {
        if writesStandardOutput && container == nil {
            throw .usage("-o -: standard output has no extension to pick the container; give --type (\(Container.extensionsText))")
        }
        if let named = container, let byName = Container.from(path: output), byName != named {
            throw .usage("--type \(named.rawValue) and the output '\(output)', whose extension says \(byName.rawValue): give one container")
        }
        // every file read: the tracks and a preset file (never written over, by identity)
        // (standard input, `-`, by what it is: `OfflineRenderer.plan` checks the opened tracks)
        let filesRead = resolved.inputs.filter { $0 != StandardInput.path } + presetFiles
        let (engine, _) = try resolved.makeEngine()
        var renderer = OfflineRenderer(outputPath: output, sampleFormat: resolved.sampleFormat)
        renderer.container = container
        renderer.otherInputs = otherInputs
        if !dryRun {
            // checked before rendering: a folder that is missing or not writable loses no work
            do throws(OutputFileError) {
                _ = try OutputFile(path: output, inputs: otherInputs, alsoInputs: filesRead, overwrite: overwrite, onlyReplacing: outputOnlyReplacing,
                                   onlyReplacingVersion: outputOnlyReplacingVersion)
            } catch {
                throw RenderCommand.map(.output(error), resolved)
            }
        }
        renderer.dither = resolved.dither
        renderer.clipPolicy = resolved.clipPolicy
        renderer.normalizeLUFS = resolved.normalizeLUFS
        renderer.measuresTracks = reportPath != nil
        renderer.overwrite = overwrite
        renderer.onlyReplacing = outputOnlyReplacing
        renderer.onlyReplacingVersion = outputOnlyReplacingVersion
        renderer.presetFiles = presetFiles
        // the same session into the same file is the same bytes, Ogg's stream serial included,
        // whichever folder it runs from and however the paths are spelled (by the files' names
        // and sizes: a render and a batch of one job, relative or absolute paths, a linked
        // folder; songs of one layout, `s1/drums.wav` and `s2/drums.wav`, differ by their sizes)
        renderer.streamIdentity = String(decoding: resolved.effectivePreset().jsonData(), as: UTF8.self)
            + "\u{1F}" + resolved.inputs.map { FileIdentity.name(of: $0) + " " + String(FileSystem.status($0)?.st_size ?? -1) }.joined(separator: "\u{1F}")
            + "\u{1F}" + FileIdentity.name(of: output)
        // the container's rate limits in the command line's words (`plan` checks them too, in
        // the library's)
        if let container = container ?? Container.from(path: output), let layout = try? engine.validate(),
           let problem = container.sampleRateProblem(layout.sampleRate, naming: SettingFlags.name) {
            throw RenderCommand.map(.unsupportedOutput(path: output, reason: problem), resolved)
        }
        let plan: (OutputFormat, EngineLayout)
        do { plan = try renderer.plan(engine) } catch { throw RenderCommand.map(error, resolved) }
        if let reportPath, !dryRun {
            // checked before rendering: a report that cannot be written loses no render; the
            // tracks by the identity of the files opened (not their paths resolved again)
            guard FileIdentity(path: reportPath) != outputIdentity && (writesStandardOutput || !FileSystem.mayBeOneName(reportPath, output)) else {
                throw .usage("--report: '\(reportPath)' is the output file (-o\(writesStandardOutput ? " -: standard output goes there" : "")); give the report its own name")
            }
            let (read, paths) = renderer.filesRead(plan.1)
            do throws(OutputFileError) {
                _ = try OutputFile(path: reportPath, inputs: read, alsoInputs: paths, overwrite: overwriteReport ?? overwrite,
                                   onlyReplacing: reportOnlyReplacing, onlyReplacingVersion: reportOnlyReplacingVersion)
            } catch {
                throw .usage("--report: \(SettingFlags.text(error))")
            }
        }
        return (engine, renderer, plan)
    }

    /// The bytes of `--report` for a finished render (a page for `.html`, else JSON); nil when
    /// no report is asked for.
    func reportData(_ report: RenderReport, _ resolved: ResolvedSession, _ layout: EngineLayout) -> Data? {
        guard let reportPath else { return nil }
        let obj = RenderReportJSON.object(report, session: resolved, layout: layout)
        if reportPath.lowercased().hasSuffix(".html") {
            return Data(ReportPage.html(obj, session: resolved, sampleRate: Double(report.format.sampleRate)).utf8)
        }
        return Data(jsonText(obj).utf8)
    }

    /// Writes `--report` (if asked) for a finished render whose mix is in place. `beforeRename`
    /// (`mixfx batch`) is given the finished temporary file just before it is renamed into place.
    func writeReport(_ report: RenderReport, _ resolved: ResolvedSession, _ layout: EngineLayout, overwrite: Bool,
                     beforeRename: ((TemporaryOutput) throws(OutputFileError) -> Void)? = nil) throws(CLIError) {
        do throws(OutputFileError) {
            guard let staged = try stageReport(report, resolved, layout, overwrite: overwrite) else { return }
            try beforeRename?(staged.temporary)
            try staged.commit()
        } catch {
            throw .failure("--report: \(SettingFlags.text(error)) (the mix was written to \(output))")
        }
    }

    /// `--report` (if asked) written to its temporary file, not yet named (`OutputFile.stage`):
    /// before the mix is committed, so a report that cannot be written leaves no mix either.
    func stageReport(_ report: RenderReport, _ resolved: ResolvedSession, _ layout: EngineLayout,
                     overwrite: Bool) throws(OutputFileError) -> OutputFile.Staged? {
        guard let reportPath, let data = reportData(report, resolved, layout) else { return nil }
        guard FileIdentity(path: reportPath) != outputIdentity else {
            throw .badPath(path: reportPath, reason: "--report: it is now the output file; give the report its own name")
        }
        var renderer = OfflineRenderer(outputPath: output, sampleFormat: nil)
        renderer.otherInputs = otherInputs
        renderer.presetFiles = presetFiles
        let (read, paths) = renderer.filesRead(layout)
        return try OutputFile.stage(data, to: reportPath, inputs: read, alsoInputs: paths, overwrite: overwrite,
                                    onlyReplacing: reportOnlyReplacing, onlyReplacingVersion: reportOnlyReplacingVersion)
    }

    /// Renders with the report written before the mix is committed (`stageReport`) and named
    /// after it: a report that cannot be written (a full disk) fails the render with nothing
    /// written. Control side.
    func renderWithReport(_ renderer: inout OfflineRenderer, _ engine: AudioEngine, _ resolved: ResolvedSession,
                          _ layout: EngineLayout, overwrite: Bool) throws(RenderError) -> (RenderReport, OutputFile.Staged?) {
        var staged: OutputFile.Staged?
        let command = self
        renderer.beforeCommitWithReport = { (report: RenderReport) throws(OutputFileError) in
            staged = try command.stageReport(report, resolved, layout, overwrite: overwrite)
        }
        let report = try renderer.render(engine)
        return (report, staged)
    }

    /// Names a report staged by `renderWithReport` (the mix is in place).
    func commitReport(_ staged: OutputFile.Staged?) throws(CLIError) {
        do throws(OutputFileError) { try staged?.commit() } catch {
            throw .failure("--report: \(SettingFlags.text(error)) (the mix was written to \(output))")
        }
    }

    /// The preset file the session was read from, if it is a file.
    var presetFiles: [String] { session.presetFiles }

    static func map(_ error: RenderError, _ resolved: ResolvedSession) -> CLIError {
        if case .engine(let e) = error { return resolved.explain(e) }
        return switch error {
        case .output(.appeared), .output(.cannotCreate): .failure(SettingFlags.text(error))
        case .output, .unsupportedOutput: .usage(SettingFlags.text(error))
        default: .failure(SettingFlags.text(error))
        }
    }

    /// How a track's channels reach the mix, when they are downmixed ("downmix 5.1 → stereo
    /// (ITU-R BS.775), LFE dropped"); nil when they are not.
    private func downmixText(_ f: SourceFormat, mixChannels: Int, lfeGainDB: Double?) -> String? {
        guard f.channelCount > 1 && f.channelCount > mixChannels || f.channelCount > 2 else { return nil }
        let hasLFE = f.channelLayout.speakers.contains(.lfe)
        let lfe = hasLFE ? (lfeGainDB.map { ", LFE at \(fmt($0)) dB" } ?? ", LFE dropped") : ""
        let declared = f.channelLayout.isDeclared ? "" : " (layout assumed)"
        return "downmix \(f.channelLayout.name)\(declared) → \(mixChannels == 1 ? "mono" : "stereo") (ITU-R BS.775)\(lfe)"
    }

    /// A track's placement in one line ("starts at 1.5 s | plays 0.5..3 s of the file (2.5 s) |
    /// fade in 0.2 s, out 0.5 s"); nil when it plays whole from 0.
    private func placementText(_ p: Placement, _ f: SourceFormat) -> String? {
        guard !p.isNeutral else { return nil }
        let frames = p.frames(sampleRate: f.sampleRate, frameCount: f.frameCount)
        let rate = Double(f.sampleRate)
        var parts: [String] = []
        if p.startSeconds > 0 { parts.append("starts at \(fmt(p.startSeconds)) s") }
        if p.trimInSeconds > 0 || p.trimOutSeconds > 0 {
            parts.append("plays \(fmt(p.trimInSeconds))..\(p.trimOutSeconds > 0 ? fmt(p.trimOutSeconds) : "end") s of the file (\(seconds(frames.length, f.sampleRate)))")
        }
        if frames.fadeIn > 0 || frames.fadeOut > 0 {
            parts.append("fade in \(fmt(Double(frames.fadeIn) / rate)) s, out \(fmt(Double(frames.fadeOut) / rate)) s (equal power)")
        }
        return parts.joined(separator: " | ")
    }

    private func printDryRun(_ r: ResolvedSession, format: OutputFormat, layout: EngineLayout, outputExists: Bool) {
        if json {
            var tracks: [[String: Any]] = []
            for (i, t) in layout.tracks.enumerated() {
                let f = t.player.source.format
                var settings: [String: Any] = [:]
                for (id, v) in r.tracks[i] { settings[id.rawValue] = id.spec.isBoolean ? (v != 0) as Any : v as Any }
                tracks.append(["input": r.inputs[i], "sampleRateHz": f.sampleRate, "channels": f.channelCount,
                               "channelLayout": f.channelLayout.speakerList, "layoutDeclared": f.channelLayout.isDeclared,
                               "downmix": downmixText(f, mixChannels: layout.channelCount, lfeGainDB: layout.lfeGainDB) as Any? ?? NSNull(),
                               "frames": f.frameCount, "settings": settings])
            }
            let obj: [String: Any] = [
                "dryRun": true, "dspKernels": DSPCopy.active.rawValue, "output": output, "container": format.container.rawValue,
                "sampleFormat": format.storedSampleFormat?.rawValue ?? "lossy",
                "sampleRateHz": format.sampleRate, "channels": format.channelCount,
                "frames": layout.frameCount, "durationSeconds": Double(layout.frameCount) / Double(format.sampleRate),
                "masterVolume": r.masterVolume, "tracks": tracks, "outputExists": outputExists,
                "dither": ditherPlan(r.dither, format),
                "clipPolicy": format.storedSampleFormat?.isInteger == true ? r.clipPolicy.rawValue : "untouched (float)",
                "limitCeilingDBTP": jsonNumber(r.limitDBTP), "normalizeLUFS": jsonNumber(r.normalizeLUFS),
                "automation": r.lanes.map(AutomationFlags.json),
            ]
            printJSON(obj)
            return
        }
        var lines = ["dry run: nothing written"]
        lines.append("output   \(output)  (\(describe(format)), \(seconds(layout.frameCount, format.sampleRate)), \(layout.frameCount) frames)")
        lines.append("master   volume \(fmt(r.masterVolume))"
                     + (r.normalizeLUFS.map { "; normalize to \(fmt($0)) LUFS" } ?? "")
                     + (r.limitDBTP.map { "; limiter, ceiling \(fmt($0)) dBTP (true peak, \(fmt(SessionOption.limiterLookaheadMs)) ms look-ahead)" } ?? ""))
        if format.storedSampleFormat?.isInteger == true {
            let clip = switch r.clipPolicy {
            case .avoid: "if the mix would clip, one gain brings its true peak to \(fmt(SessionOption.safeCeilingDBTP)) dBTP"
            case .clamp: "clipped samples are clamped (\(SettingFlags.name(SessionOption.clipping.spec.setting(ClipPolicy.clamp.rawValue))))"
            case .fail: "clipping is an error (\(SettingFlags.name(SessionOption.clipping.spec.setting(ClipPolicy.fail.rawValue))))"
            }
            lines.append("convert  dither \(ditherPlan(r.dither, format)); \(clip)")
        }
        lines.append("dsp      \(DSPCopy.active.rawValue) kernels (\(DSPCopy.cpuHasAVX2 ? "the CPU has AVX2 and FMA" : "the CPU lacks AVX2 or FMA"); MIXFX_DSP=baseline forces the portable copy)")
        for (i, t) in layout.tracks.enumerated() {
            let f = t.player.source.format
            let v = r.tracks[i]
            lines.append("track \(i + 1)  \(r.inputs[i])  (\(f.sampleRate) Hz, \(f.channelLayout.name), \(seconds(f.frameCount, f.sampleRate))\(f.sampleRate != format.sampleRate ? ", resampled to \(format.sampleRate) Hz" : ""))")
            if let downmix = downmixText(f, mixChannels: layout.channelCount, lfeGainDB: layout.lfeGainDB) {
                lines.append("         \(downmix)")
            }
            if let placed = placementText(t.player.placement, f) { lines.append("         \(placed)") }
            lines.append("         bass \(db(v[.bassGainDB]!)) @ \(fmt(v[.bassFrequencyHz]!)) Hz S=\(fmt(v[.bassSlope]!))\(v[.bassBypass]! != 0 ? " (bypassed)" : "")"
                         + " | treble \(db(v[.trebleGainDB]!)) @ \(fmt(v[.trebleFrequencyHz]!)) Hz S=\(fmt(v[.trebleSlope]!))\(v[.trebleBypass]! != 0 ? " (bypassed)" : "")"
                         + " | eq gain \(db(v[.eqGlobalGainDB]!))")
            lines.append("         pitch \(v[.pitchCents]! > 0 ? "+" : "")\(fmt(v[.pitchCents]!)) cents (overlap \(Int(v[.pitchOverlap]!))\(v[.preserveFormants]! != 0 ? ", formants kept" : "")\(v[.tonalityLimitHz]! > 0 ? ", tonality limit \(fmt(v[.tonalityLimitHz]!)) Hz" : ""))"
                         + (v[.tempo]! != 1 ? " | tempo \(fmt(v[.tempo]!))× (lasts \(fmt((1 / v[.tempo]! * 1000).rounded() / 1000))× as long)" : "")
                         + (v[.speed]! != 1 ? " | speed \(fmt(v[.speed]!))× (pitch and tempo together)" : "")
                         + " | volume \(fmt(v[.volume]!)) | pan \(fmt(v[.pan]!))"
                         + (v[.mute]! != 0 ? " | muted" : "") + (v[.solo]! != 0 ? " | solo" : ""))
        }
        for lane in r.lanes { lines.append("lane     \(AutomationFlags.listing(lane))") }
        if outputExists { lines.append("note     \(output) exists: the render needs --force") }
        print(lines.joined(separator: "\n"))
    }

    private func summaryText(_ r: RenderReport) -> String {
        var peak = "peak     " + (r.peak > 0 ? String(format: "%.2f dBFS", r.peakDBFS) : "silent")
        if r.appliedGainDB != 0 && r.measuredLUFS == nil {
            peak += String(format: " (the mix peaked at %+.2f dBFS; gain %.2f dB applied, %@)",
                           20 * log10(Double(r.mixPeak)), r.appliedGainDB, RenderCommand.ceilingText(r))
        }
        let wrote = r.outputPath == OutputFile.standardOutputPath ? "standard output" : PathBytes.shown(r.outputPath)
        var lines = ["wrote    \(wrote)  (\(describe(r.format)))",
                     "duration \(seconds(r.frameCount, r.format.sampleRate))  (\(r.frameCount) frames)",
                     peak,
                     r.format.storedSampleFormat?.isInteger == true ? "clipped  \(r.clippedSamples) samples"
                                                                    : "over 0 dBFS \(r.clippedSamples) samples" + (r.format.container.isLossy ? " (the mix, before encoding)" : "")]
        if let measured = r.measuredLUFS {
            lines.append(String(format: "loudness %.2f LUFS (normalized: the mix measured %.2f LUFS, gain %+.2f dB; true peak %.1f dBTP)",
                                r.integratedLUFS ?? 0, measured, r.appliedGainDB, r.truePeakDBTP ?? 0))
        }
        if let ceiling = r.limiterCeilingDBTP {
            lines.append(r.limiterFramesLimited == 0
                ? "limiter  ceiling \(fmt(ceiling)) dBTP: never needed (the mix is unchanged by it)"
                : String(format: "limiter  ceiling %@ dBTP: up to %.2f dB of gain reduction, %.2f s of %.2f s limited",
                         fmt(ceiling), r.limiterMaximumReductionDB,
                         Double(r.limiterFramesLimited) / Double(r.format.sampleRate), r.durationSeconds))
        }
        lines.append(String(format: "speed    %.1f× real time (%.2f s)", r.speedTimesRealTime, r.elapsedSeconds))
        return lines.joined(separator: "\n")
    }

    private func summaryJSON(_ r: RenderReport) -> String {
        let obj: [String: Any] = [
            "output": r.outputPath, "container": r.format.container.rawValue,
            "sampleFormat": r.format.storedSampleFormat?.rawValue ?? "lossy",
            "sampleRateHz": r.format.sampleRate, "channels": r.format.channelCount,
            "frames": r.frameCount, "durationSeconds": r.durationSeconds,
            "peak": Double(r.peak), "peakDBFS": r.peak > 0 ? r.peakDBFS as Any : NSNull(),
            "clippedSamples": r.clippedSamples, "elapsedSeconds": r.elapsedSeconds,
            "dither": (r.ditherApplied ? DitherMode.tpdf : .none).rawValue,
            "speedTimesRealTime": r.speedTimesRealTime.isFinite ? r.speedTimesRealTime : 0,
            "trackLatencyFrames": r.trackLatencyFrames,
            "trackReplacedSamples": r.trackReplacedSamples,
            "clipPolicy": r.clipPolicy.rawValue, "appliedGainDB": r.appliedGainDB,
            "mixPeakDBFS": r.mixPeak > 0 ? 20 * log10(Double(r.mixPeak)) as Any : NSNull(),
            "truePeakDBTP": r.truePeakDBTP as Any? ?? NSNull(), "renderedTwice": r.renderedTwice,
            "measuredLUFS": r.measuredLUFS as Any? ?? NSNull(), "integratedLUFS": r.integratedLUFS as Any? ?? NSNull(),
            "peakMemoryMB": peakMemoryMB(),
            "limiter": r.limiterCeilingDBTP.map { c -> Any in
                ["ceilingDBTP": c, "maximumGainReductionDB": r.limiterMaximumReductionDB,
                 "secondsLimited": Double(r.limiterFramesLimited) / Double(r.format.sampleRate)]
            } ?? NSNull(),
        ]
        return jsonText(obj)
    }

    /// `--dry-run --analyze`: the mix's measures and the gains that would avoid clipping or reach
    /// the `--normalize` target.
    private func printAnalysis(_ a: AudioAnalysis, format: OutputFormat, normalizeLUFS: Double?) {
        let ceiling = SessionOption.safeCeilingDBTP
        let clipGain: Double? = format.storedSampleFormat?.isInteger == true && a.samplePeakDBFS > 20 * log10(32767.0 / 32768)
            ? ceiling - a.truePeakDBTP : nil
        let normalizeGain = normalizeLUFS.map { $0 - a.integratedLUFS }
        if json {
            printJSON(["dryRun": true, "analyzed": true, "frames": a.frameCount, "sampleRateHz": a.sampleRate,
                       "integratedLUFS": jsonNumber(a.integratedLUFS), "loudnessRangeLU": a.loudnessRangeLU,
                       "truePeakDBTP": jsonNumber(a.truePeakDBTP), "samplePeakDBFS": jsonNumber(a.samplePeakDBFS),
                       "gainToAvoidClippingDB": jsonNumber(clipGain), "normalizeTargetLUFS": jsonNumber(normalizeLUFS),
                       "gainToNormalizeDB": jsonNumber(normalizeGain),
                       "normalizeFits": normalizeGain.map { a.truePeakDBTP + $0 <= ceiling } as Any? ?? NSNull()])
            return
        }
        func f(_ v: Double, _ unit: String) -> String { v.isFinite ? String(format: "%.2f %@", v, unit) : "-inf \(unit)" }
        var lines = ["dry run with analysis: the mix was rendered and measured, nothing written",
                     "loudness \(f(a.integratedLUFS, "LUFS")) integrated, range \(String(format: "%.1f", a.loudnessRangeLU)) LU",
                     "peaks    \(f(a.truePeakDBTP, "dBTP")) true, \(f(a.samplePeakDBFS, "dBFS")) sample"]
        if let clipGain {
            lines.append(String(format: "clipping the %@ output would clip: the default applies %.2f dB (true peak to %.0f dBTP)",
                                format.storedSampleFormat!.rawValue, clipGain, ceiling))
        } else {
            lines.append("clipping none")
        }
        if let target = normalizeLUFS, let g = normalizeGain {
            let fits = a.truePeakDBTP + g <= ceiling
            lines.append(String(format: "normalize %@ LUFS needs %+.2f dB: %@", fmt(target), g,
                                fits ? "fits (true peak \(String(format: "%.1f", a.truePeakDBTP + g)) dBTP)"
                                     : "the true peak would reach \(String(format: "%+.1f", a.truePeakDBTP + g)) dBTP; the loudest target without a limiter is \(String(format: "%.1f", a.integratedLUFS + ceiling - a.truePeakDBTP)) LUFS"))
        }
        print(lines.joined(separator: "\n"))
    }

    /// What `--dither` will do to `format`'s output, in words.
    private func ditherPlan(_ mode: DitherMode, _ format: OutputFormat) -> String {
        guard let sf = format.storedSampleFormat, sf.isInteger else { return DitherMode.none.rawValue }
        return switch mode {
        case .none, .tpdf: mode.rawValue
        case .auto: sf.bits <= 16 ? "auto (tpdf where a sample needs rounding to \(sf.rawValue); none for a pass-through)" : "auto (none at \(sf.rawValue))"
        }
    }

    /// Where the gain that avoided clipping brought the mix.
    static func ceilingText(_ r: RenderReport) -> String {
        let tp = String(format: "true peak now %.1f dBTP", r.truePeakDBTP ?? r.peakDBFS)
        return r.renderedTwice ? tp + " (no room beside the output to keep the mix: it was rendered again)" : tp
    }

    private func describe(_ f: OutputFormat) -> String {
        "\(f.container.rawValue), \(f.storedSampleFormat?.rawValue ?? "lossy"), \(f.sampleRate) Hz, \(f.channelCount == 1 ? "mono" : "stereo")"
    }
}

/// The process's own peak resident memory so far, in MiB: VmHWM of /proc/self/status (the
/// high-water mark of this program's address space). Not getrusage's ru_maxrss: Linux carries
/// that across fork and exec, so a mixfx started by a large process reported the parent's size
/// (seen: 107 MB for every render started by the test runner). ru_maxrss only where /proc is
/// not mounted.
func peakMemoryMB() -> Double {
    if let status = procStatus(),
       let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
       let kB = Double(line.dropFirst("VmHWM:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") {
        return kB / 1024
    }
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024
}

/// /proc/self/status read to its end (its size reads as 0, so Foundation's file readers return
/// nothing), or nil.
private func procStatus() -> String? {
    let fd = open("/proc/self/status", O_RDONLY)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, 4096) }
        if n <= 0 { break }
        bytes += chunk[..<n]
    }
    return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
}

func printJSON(_ obj: [String: Any]) { print(jsonText(obj)) }

func jsonText(_ obj: [String: Any]) -> String {
    let data = (try? JSONSerialization.data(withJSONObject: obj, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? Data()
    return String(decoding: data, as: UTF8.self)
}

/// A number for JSON: null when absent or not finite (the loudness of silence, say).
func jsonNumber(_ v: Double?) -> Any { v.map { $0.isFinite ? $0 as Any : NSNull() } ?? NSNull() }

func fmt(_ v: Double) -> String {
    v.rounded() == v && abs(v) < 1e12 ? String(Int(v)) : String(format: "%g", v)
}

func db(_ v: Double) -> String { (v > 0 ? "+" : "") + fmt(v) + " dB" }

func seconds(_ frames: Int, _ rate: Int) -> String { String(format: "%.3f s", Double(frames) / Double(rate)) }

