import Foundation
import MixFX

/// `mixfx analyze FILE... [--json]`: loudness, peaks and stereo measures of files on disk.
enum AnalyzeCommand {
    /// The flags.
    enum Flag: CommandFlag {
        case json, help

        var syntax: FlagSyntax {
            switch self {
            case .json: FlagSyntax(names: ["--json"])
            case .help: helpFlag
            }
        }
    }

    /// The synopsis: every flag the parser takes.
    static var usage: String {
        Synopsis.text([.init("mixfx analyze", operands: ["FILE..."], flags: Flag.allCases.filter { $0 != .help }.map(\.syntax)), Synopsis.helpForm("analyze")])
    }

    static let help = """
    \(usage)

    Measures each FILE (anything libsndfile reads) without changing it:
      integrated loudness (LUFS) and loudness range (LU), ITU-R BS.1770-4 / EBU R128 (Tech 3341,
      3342); momentary and short-term maxima; true peak (dBTP, 4x oversampled) and sample peak
      (dBFS); samples at full scale; DC offset; for two channels their correlation and the level
      lost when they are summed to mono (0 dB identical, 3 dB uncorrelated).
    Files of more than two channels are measured with every channel weighted 1.

      --json   the measures as JSON (non-finite values, such as the loudness of silence, as null)

    exit status: 0 done, 1 a file could not be read, 2 usage error
    """

    /// The files and whether to print JSON; nil when the arguments ask for help.
    static func parse(_ argv: [String]) throws(CLIError) -> (files: [String], json: Bool)? {
        var json = false
        var args = Arguments(argv)
        while let (name, _) = args.nextOption() {
            guard let flag = Flag.named(name) else { throw .unknownOption(name, command: "analyze", help: help) }
            switch flag {
            case .help: return nil
            case .json: json = true
            }
        }
        let files = args.positionals
        guard !files.isEmpty else { throw .usage("analyze: no files given (usage: mixfx analyze FILE... [--json])") }
        return (files, json)
    }

    static func run(_ argv: [String]) throws(CLIError) -> Int32 {
        guard let (files, json) = try parse(argv) else { HelpLayout.print(help); return 0 }
        var results: [(String, AudioAnalysis)] = []
        for path in files {
            do { results.append((path, try AudioAnalyzer.analyze(path: path))) } catch {
                throw .failure(SettingFlags.text(error))
            }
        }
        if json {
            let list: [[String: Any]] = results.map { path, a in
                // the measures in the same words as a render's report
                RenderReportJSON.measures(a).merging([
                    "file": path, "frames": a.frameCount, "sampleRateHz": a.sampleRate, "channels": a.channelCount,
                    "durationSeconds": Double(a.frameCount) / Double(a.sampleRate),
                ]) { $1 }
            }
            print(jsonText(["files": list]))
            return 0
        }
        let header = ["file", "length", "LUFS", "LRA", "dBTP", "peak dBFS", "at 0 dBFS", "corr", "mono loss"]
        var rows = [header]
        for (path, a) in results {
            func f(_ v: Double?, _ digits: Int = 1) -> String {
                guard let v else { return "-" }
                return v.isFinite ? String(format: "%.\(digits)f", v) : (v < 0 ? "-inf" : "inf")
            }
            rows.append([path, String(format: "%.2f s", Double(a.frameCount) / Double(a.sampleRate)),
                         f(a.integratedLUFS), f(a.loudnessRangeLU), f(a.truePeakDBTP, 2), f(a.samplePeakDBFS, 2),
                         String(a.samplesAtFullScale), f(a.correlation, 2), f(a.monoSumLossDB, 2)])
        }
        let widths = header.indices.map { c in rows.map { $0[c].count }.max()! }
        for row in rows {
            print(row.enumerated().map { c, cell in
                c == 0 ? cell.padding(toLength: widths[c], withPad: " ", startingAt: 0)
                       : String(repeating: " ", count: widths[c] - cell.count) + cell
            }.joined(separator: "  "))
        }
        return 0
    }
}
