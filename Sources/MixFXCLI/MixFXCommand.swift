import Foundation
import MixFX
import CFileIO

/// The `mixfx` tool: dispatches to the subcommands. `main.swift` calls `MixFXCommand.main()`.
public enum MixFXCommand {
    /// The version `mixfx --version` prints.
    public static let version = "0.1.0"

    static let help = """
    mixfx \(version): audio effects engine and mixer

    usage: mixfx render TRACK... [-o OUT] [options]   mix tracks through EQ and pitch into a file
           mixfx batch MANIFEST [--jobs N] [--shard I/N]  many renders, safe to retry, sliceable
           mixfx play TRACK... [options]              play live through ALSA with a terminal mixer
           mixfx analyze FILE... [--json]             loudness, true peak and stereo measures of files
           mixfx eq-curve [EQ flags] [-o OUT.svg]     draw the EQ's response as an SVG picture
           mixfx devices                              list ALSA playback devices
           mixfx presets                              list presets
           mixfx preset show NAME                     print a preset
           mixfx --version | --help | help [COMMAND]

    `mixfx COMMAND --help` (or `mixfx help COMMAND`) describes each command.

    exit status (every command):
      0         done
      1         failed while working: an unreadable or bad input file, a device error, a
                write error (disk full, file-size limit), --strict and the mix would clip;
                nothing was written
      2         usage: an unknown flag or command, a value out of range, a bad preset, an
                output that may not be written (exists without --force, is an input, is not
                a regular file, too large for its container); nothing was written
      70        stopped by an internal failure (out of memory, or a bug); nothing was written
      128+N     stopped by signal N (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP, ...); nothing was
                written. (`mixfx play` stopped with Ctrl-C ends normally: 0.)
    With --json, an error is also printed on stdout as {"error": {"code": N, "message": "..."}}
    (on stderr when the audio goes to stdout: -o -).
    """

    /// The commands, as `mixfx COMMAND` names them.
    static let commands = ["render", "batch", "play", "analyze", "eq-curve", "devices", "presets", "preset"]

    /// "unknown command 'rendr' (did you mean 'render'? commands: ...; see mixfx --help)".
    static func unknownCommand(_ name: String, _ context: String = "") -> CLIError {
        let hint = NameSuggestion.text(name, among: commands + (name.hasPrefix("-") ? ["--help", "--version"] : [])).map { $0 + " " } ?? ""
        return .usage("\(context)unknown command '\(name)' (\(hint)commands: \(commands.joined(separator: ", ")); see mixfx --help)")
    }

    /// `mixfx COMMAND --help`'s text.
    static func help(of command: String) -> String? {
        switch command {
        case "render": RenderCommand.help
        case "batch": BatchCommand.help
        case "play": PlayCommand.help
        case "analyze": AnalyzeCommand.help
        case "eq-curve": EQCurveCommand.help
        case "devices": DevicesCommand.help
        case "presets", "preset": PresetsCommand.help
        default: nil
        }
    }

    /// Reads `arguments` as `run` does and does nothing with them: throws what `run` would
    /// throw before any work (an unknown flag, a bad value). The tests ask it which flags each
    /// command takes.
    static func parse(_ arguments: [String]) throws(CLIError) {
        guard let first = arguments.first else { return }
        let rest = Array(arguments.dropFirst())
        if rest.contains("--version") && commands.contains(first) { return }
        switch first {
        case "render": _ = try RenderCommand.parse(rest)
        case "batch": _ = try BatchCommand.parse(rest)
        case "play": _ = try PlayCommand.parse(rest)
        case "devices": _ = try DevicesCommand.parse(rest)
        case "analyze": _ = try AnalyzeCommand.parse(rest)
        case "eq-curve": _ = try EQCurveCommand.parse(rest)
        case "presets": _ = try PresetsCommand.parse(rest, command: "presets")
        case "preset": _ = try PresetsCommand.parse(rest, command: "preset")
        default: throw unknownCommand(first)
        }
    }

    /// Runs the tool with `arguments` (without the program name); returns the exit status.
    public static func run(_ arguments: [String]) -> Int32 {
        do throws(CLIError) {
            guard let first = arguments.first else {
                Terminal.writeError(help + "\n")
                return 2
            }
            let rest = Array(arguments.dropFirst())
            // `mixfx COMMAND --version` answers like `mixfx --version`.
            if rest.contains("--version") && commands.contains(first) {
                print("mixfx \(version)")
                return 0
            }
            // what is printed (to stdout or stderr) never lands in a file the command names or
            // reads on standard input (`analyze in.wav --json >> in.wav`, `2>> in.wav`)
            if let (stream, file) = StandardStreams.redirectedIntoAnArgument(rest) {
                guard stream == 1 else { return 2 }   // (nowhere to say so)
                OutputFile.standardOutputIsAnInput.store(true, ordering: .relaxed)
                throw .usage("standard output is redirected into \(file), which this command reads or names; send it elsewhere")
            }
            // a DSP copy forced by the environment must be one there is
            if ["render", "batch", "play", "analyze", "eq-curve"].contains(first), let forced = DSPCopy.forcedName, DSPCopy(rawValue: forced) == nil {
                throw .usage("MIXFX_DSP=\(forced.debugDescription) is not a DSP copy (allowed: baseline, avx2, or unset for the fastest this CPU runs)")
            }
            switch first {
            case "-h", "--help": HelpLayout.print(help); return 0
            case "help":
                // `mixfx help COMMAND` is `mixfx COMMAND --help`
                guard let topic = rest.first else { HelpLayout.print(help); return 0 }
                guard rest.count == 1 else { throw .usage("help: expected `mixfx help [COMMAND]`, one command at most") }
                if topic == "help" { HelpLayout.print(help); return 0 }
                guard commands.contains(topic) else { throw unknownCommand(topic, "help: ") }
                return run([topic, "--help"])
            case "--version", "-V", "version": print("mixfx \(version)"); return 0
            // hidden: what `make install` writes from the help texts and the flag tables
            case "--man-page":
                guard rest.isEmpty else { throw .usage("--man-page takes nothing more") }
                print(ManPage.text(), terminator: ""); return 0
            case "--completions":
                guard rest.count == 1, let shell = ShellCompletion.Shell(rawValue: rest[0]) else {
                    throw .usage("--completions: expected bash or zsh")
                }
                print(ShellCompletion.script(shell), terminator: ""); return 0
            case "render": return try RenderCommand.run(rest)
            case "batch": return try BatchCommand.run(rest)
            case "play": return try PlayCommand.run(rest)
            case "devices": return try DevicesCommand.run(rest)
            case "analyze": return try AnalyzeCommand.run(rest)
            case "eq-curve": return try EQCurveCommand.run(rest)
            case "presets": return try PresetsCommand.list(rest)
            case "preset": return try PresetsCommand.preset(rest)
            default: throw unknownCommand(first)
            }
        } catch {
            Terminal.printError("mixfx: error: \(error.message)")
            if arguments.contains("--json") {
                let text = jsonText(["error": ["code": Int(error.exitCode), "message": error.message] as [String: Any]])
                // (stdout is for the audio with -o -: nothing else goes there; nor where it is an input)
                let audioOnStdout = arguments.contains("--output=-") || zip(arguments, arguments.dropFirst()).contains {
                    ["-o", "--output"].contains($0.0) && $0.1 == OutputFile.standardOutputPath
                }
                if audioOnStdout || OutputFile.standardOutputIsAnInput.load(ordering: .relaxed) { Terminal.writeError(text + "\n") } else { print(text) }
            }
            return error.exitCode
        }
    }

    /// Runs the tool with the process arguments and exits with its status. Main thread.
    public static func main() -> Never {
        StandardDescriptors.secure()
        Terminal.ignoreFileSizeSignal()
        Terminal.installCrashHandlers()
        // the arguments as their bytes (a file name need not be UTF-8: see PathBytes), as the C
        // runtime passed them (Swift's CommandLine reads /proc, which a sandbox may lack)
        var count: Int32 = 0
        let saved = mixfx_process_arguments(&count)
        let argc = saved != nil ? Int(count) : Int(CommandLine.argc)
        let argv = saved ?? CommandLine.unsafeArgv
        let arguments = (1..<max(1, argc)).compactMap { i in argv[i].map { PathBytes.string(cString: $0) } }
        let status = run(arguments)
        exit(Terminal.finishStandardOutput(status))
    }
}
