import Foundation
import MixFX

/// mixfx(1), the man page (`mixfx --man-page`, hidden; `make install` writes it to
/// share/man/man1/mixfx.1): the help texts the commands print, `mixfx --help`'s and each
/// `mixfx COMMAND --help`'s, set in roff as they are, so the page says what the tool says.
///
///   NAME, SYNOPSIS (every command's usage lines), DESCRIPTION (`mixfx --help`'s list of
///   commands), COMMANDS (each command's help), EXIT STATUS (`mixfx --help`'s), ENVIRONMENT,
///   FILES, SEE ALSO
///
/// The help texts are laid out in columns, so they are kept as they are (no-fill, `.nf`), wrapped
/// by `HelpLayout` to fit an 80-column terminal; every
/// character that roff would change is escaped: `-` is `\-` (a hyphen otherwise), quotes and
/// backslashes are named, a line starting with `.` or `'` is guarded, anything not ASCII is
/// `\[uXXXX]`. `groff -ww -man` renders it without a warning (`InstallTests`).
enum ManPage {
    static func text() -> String {
        let top = MixFXCommand.help
        let lines = top.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // "mixfx 0.1.0: audio effects engine and mixer"
        let title = lines.first.flatMap { $0.range(of: ": ").map { String(lines[0][$0.upperBound...]) } } ?? "audio effects engine and mixer"
        let exitAt = lines.firstIndex { $0.hasPrefix("exit status") } ?? lines.count
        let overview = lines[1..<exitAt].map { $0.hasPrefix("usage: ") ? "       " + $0.dropFirst(7) : $0 }
        let exitStatus = lines[min(exitAt + 1, lines.count)...]

        var s = """
        .\\" mixfx(1). Made by `mixfx --man-page` from the help texts mixfx prints; do not edit.
        .TH MIXFX 1 "" "mixfx \(MixFXCommand.version)" "User Commands"
        .SH NAME
        mixfx \\- \(escape(title))
        .SH SYNOPSIS

        """
        s += block(CommandTable.commands.flatMap { unindentedUsage($0.usage) }.reduce(into: [String]()) { all, line in
            if !all.contains(line) { all.append(line) }   // `presets` and `preset` share theirs
        } + ["mixfx --version | --help | help [COMMAND]"])
        s += ".SH DESCRIPTION\n"
        s += "mixfx mixes tracks through a two\\-band shelf EQ and a pitch shifter into a file, live through ALSA, or in batches.\n"
        s += block(trimmed(Array(overview)))
        s += ".SH COMMANDS\n"
        for command in CommandTable.commands where command.name != "preset" {
            // `presets` and `preset show` have one help
            let name = command.name == "presets" ? "mixfx presets, mixfx preset show" : "mixfx " + command.name
            s += ".SS \"\(escape(name))\"\n"
            let helpLines = command.help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            s += block(trimmed(unindentedUsage(command.usage) + Array(helpLines.drop { !$0.isEmpty })))
        }
        s += ".SH EXIT STATUS\n"
        s += block(trimmed(Array(exitStatus)))
        s += """
        .SH ENVIRONMENT
        .TP
        .B MIXFX_PRESET_PATH
        Folders searched for presets first, separated by colons.
        .TP
        .B XDG_CONFIG_HOME
        Presets are then looked for in \\fI$XDG_CONFIG_HOME/mixfx/presets\\fR.
        .TP
        .B TMPDIR
        Where a track read from a pipe, the output for standard output and the float spill are kept while rendering.
        .TP
        .BR MIXFX_SHARD_INDEX ", " MIXFX_SHARD_COUNT ", " SLURM_ARRAY_TASK_ID ", " JOB_COMPLETION_INDEX
        The shard of \\fBmixfx batch \\-\\-shard auto\\fR.
        .SH FILES
        .TP
        .I ~/.config/mixfx/presets/NAME.json
        User presets, found by name (a user preset with a built\\-in\\(aqs name takes its place).
        .TP
        .I OUTPUT.mixfx\\-batch.json
        The sidecar \\fBmixfx batch\\fR writes beside each output, so a batch run again skips what it finished.
        .SH SEE ALSO
        .BR sox (1),
        .BR sndfile\\-info (1),
        .BR aplay (1),
        .BR parallel (1),
        .BR sbatch (1)
        .PP
        The README of mixfx: formats, the library and its C API (\\fImixfx.h\\fR, \\fIpkg\\-config mixfx\\fR), batch recipes for GNU parallel, Slurm and Kubernetes.

        """
        return s
    }

    /// Usage lines without `usage: ` (and their continuations moved left as far).
    private static func unindentedUsage(_ usage: String) -> [String] {
        usage.split(separator: "\n").map { line in
            line.hasPrefix("usage: ") ? String(line.dropFirst(7)) : line.hasPrefix("       ") ? String(line.dropFirst(7)) : String(line)
        }
    }

    /// `lines` without blank lines at either end.
    private static func trimmed(_ lines: [String]) -> [String] {
        var l = lines[...]
        while l.first?.trimmingCharacters(in: .whitespaces).isEmpty == true { l = l.dropFirst() }
        while l.last?.trimmingCharacters(in: .whitespaces).isEmpty == true { l = l.dropLast() }
        return Array(l)
    }

    /// Lines kept as they are (no filling, no adjusting, no hyphenation), but wrapped to fit
    /// 80 columns beside the page's indent, as `--help` wraps them to the terminal.
    private static func block(_ lines: [String]) -> String {
        let wrapped = HelpLayout.wrap(lines.joined(separator: "\n"), columns: columns)
        return ".nf\n" + wrapped.split(separator: "\n", omittingEmptySubsequences: false).map { $0.isEmpty ? ".sp" : escape(String($0)) }
            .joined(separator: "\n") + "\n.fi\n"
    }

    /// The width of the page's text: 80 columns less man's 7-column indent.
    static let columns = 73

    /// `text` as roff prints it literally.
    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\e"
            case "-": out += "\\-"
            case "'": out += "\\(aq"
            case "`": out += "\\(ga"
            case "^": out += "\\(ha"
            case "~": out += "\\(ti"
            case "\t": out += "        "
            default:
                if scalar.isASCII { out.unicodeScalars.append(scalar) } else { out += String(format: "\\[u%04X]", scalar.value) }
            }
        }
        // a line starting with a control character (. or ') is text, not a request
        if out.hasPrefix(".") { out = "\\&" + out }
        return out
    }
}
