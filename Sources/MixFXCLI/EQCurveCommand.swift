import Foundation
import MixFX

/// `mixfx eq-curve [EQ flags] [--rate HZ] -o curve.svg`: the EQ's response as a picture.
enum EQCurveCommand {
    /// The flags of its own (besides the EQ's settings, `sessionFlags`).
    enum Flag: CommandFlag {
        case output, force, help

        var syntax: FlagSyntax {
            switch self {
            case .output: FlagSyntax(names: ["-o", "--output"], value: "OUT.svg")
            case .force: FlagSyntax(names: ["--force"])
            case .help: helpFlag
            }
        }
    }

    /// The session's flags it takes: the preset, the EQ's parameters (those a preset keeps
    /// under "eq") and the rate.
    static var sessionFlags: [FlagSyntax] {
        [SessionOptions.Flag.preset.syntax] + SessionOptions.parameterFlags.filter { $0.spec.presetPath.first == "eq" }.map(SessionOptions.syntax)
            + [SessionOptions.syntax(.sampleRateHz)]
    }

    /// The synopsis: every flag the parser takes.
    static var usage: String {
        Synopsis.text([.init("mixfx eq-curve", flags: Flag.allCases.filter { $0 != .help }.map(\.syntax) + sessionFlags),
                       Synopsis.helpForm("eq-curve")])
    }

    static let help = """
    \(usage)

    Draws the shelf EQ's magnitude response (the RBJ biquads mixfx runs, at --rate, default 48000)
    from 20 Hz to 20 kHz as a self-contained SVG (default eq-curve.svg): a logarithmic frequency
    axis, dB on the other, the settings in the title.
    """

    /// The session (its EQ settings, preset and rate), the output and `--force`; nil when the
    /// arguments ask for help.
    static func parse(_ argv: [String]) throws(CLIError) -> (session: SessionOptions, output: String, force: Bool)? {
        var session = SessionOptions()
        var output = "eq-curve.svg", force = false
        var args = Arguments(argv)
        let takes = Set(sessionFlags.flatMap(\.names))
        while let (name, inline) = args.nextOption() {
            guard let flag = Flag.named(name) else {
                guard takes.contains(name), try session.parse(name, inline: inline, &args) else {
                    throw .unknownOption(name, command: "eq-curve", help: help)
                }
                continue
            }
            switch flag {
            case .help: return nil
            case .output: output = try args.value(for: name, inline: inline)
            case .force: force = true
            }
        }
        guard args.positionals.isEmpty else { throw .usage("eq-curve: unexpected argument '\(args.positionals[0])'") }
        guard output.lowercased().hasSuffix(".svg") else { throw .usage("-o: '\(output)' is not an .svg file") }
        return (session, output, force)
    }

    static func run(_ argv: [String]) throws(CLIError) -> Int32 {
        guard let (session, output, force) = try parse(argv) else { HelpLayout.print(help); return 0 }
        var warnings: [String] = []
        let preset = try session.loadPreset(warnings: &warnings)
        for w in warnings { Terminal.printError("mixfx: warning: \(w)") }
        var v = preset.values(forTrack: 0)
        v.merge(session.globalValues) { $1 }
        let settings = eqSettings(v)
        let rate = session.sampleRate ?? preset.sampleRateHz ?? 48_000
        // the rule render applies, in its words: a corner render refuses is not drawn
        if let p = AudioEngine.nyquistProblem(settings, sampleRate: rate) {
            throw ResolvedSession.parameterError(node: nil, id: p.parameter, problem: p.problem, allowed: p.allowed,
                                                 isDefault: v[p.parameter] == p.parameter.spec.defaultValue, hasTracks: false)
        }
        let svg = eqCurveSVG(settings, sampleRate: Double(rate))
        do { try OutputFile.write(Data(svg.utf8), to: output, inputs: session.presetFiles, overwrite: force) } catch {
            switch error {
            case .appeared, .cannotCreate: throw .failure(SettingFlags.text(error))
            default: throw .usage(SettingFlags.text(error))
            }
        }
        print("wrote    \(PathBytes.shown(output))")
        return 0
    }

    /// A track's EQ settings from its resolved values.
    static func eqSettings(_ v: [ParameterID: Double]) -> ShelfEQSettings {
        ShelfEQSettings(
            bass: .init(frequencyHz: v[.bassFrequencyHz]!, gainDB: v[.bassGainDB]!, slope: v[.bassSlope]!, bypass: v[.bassBypass]! != 0),
            treble: .init(frequencyHz: v[.trebleFrequencyHz]!, gainDB: v[.trebleGainDB]!, slope: v[.trebleSlope]!, bypass: v[.trebleBypass]! != 0),
            globalGainDB: v[.eqGlobalGainDB]!)
    }

    /// The response of `settings` as an SVG document. The plot area carries its mapping as
    /// data- attributes (frequency and dB ranges, position), so the points can be read back.
    static func eqCurveSVG(_ settings: ShelfEQSettings, sampleRate: Double) -> String {
        let width = 760.0, height = 380.0, left = 64.0, top = 40.0, plotW = 660.0, plotH = 290.0
        let fMin = 20.0, fMax = min(20_000, sampleRate / 2 * 0.999)
        let n = 300
        let freqs = (0..<n).map { fMin * pow(fMax / fMin, Double($0) / Double(n - 1)) }
        let dbs = freqs.map { settings.responseDB(atHz: $0, sampleRate: sampleRate) }
        // (every setting in range gives a finite response: `ShelfBandSettings.slopeRange`)
        precondition(dbs.allSatisfy(\.isFinite), "a non-finite EQ response for \(settings) at \(sampleRate) Hz")
        let extreme = max(6, (dbs.map(abs).max() ?? 0) + 0.5)
        let dbMax = (extreme / 6).rounded(.up) * 6, dbMin = -dbMax
        func x(_ f: Double) -> Double { left + plotW * log10(f / fMin) / log10(fMax / fMin) }
        func y(_ db: Double) -> Double { top + plotH * (dbMax - db) / (dbMax - dbMin) }
        func n2(_ v: Double) -> String { String(format: "%.2f", v) }
        var out = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="12">
        <title>EQ response</title>
        <rect width="100%" height="100%" fill="white"/>

        """
        let b = settings.bass, t = settings.treble
        let caption = "bass \(b.isNeutral ? "off" : "\(fmt(b.gainDB)) dB @ \(fmt(b.frequencyHz)) Hz, S \(fmt(b.slope))")"
            + " · treble \(t.isNeutral ? "off" : "\(fmt(t.gainDB)) dB @ \(fmt(t.frequencyHz)) Hz, S \(fmt(t.slope))")"
            + " · gain \(fmt(settings.globalGainDB)) dB · \(fmt(sampleRate)) Hz"
        out += "<text x=\"\(n2(left))\" y=\"24\" font-size=\"14\">Shelf EQ response: \(caption)</text>\n"
        out += "<g id=\"plot\" data-fmin=\"\(fMin)\" data-fmax=\"\(fMax)\" data-dbmin=\"\(dbMin)\" data-dbmax=\"\(dbMax)\" data-left=\"\(left)\" data-top=\"\(top)\" data-width=\"\(plotW)\" data-height=\"\(plotH)\">\n"
        out += "<rect x=\"\(n2(left))\" y=\"\(n2(top))\" width=\"\(n2(plotW))\" height=\"\(n2(plotH))\" fill=\"none\" stroke=\"#888\"/>\n"
        for f in [20.0, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000] where f <= fMax {
            out += "<line x1=\"\(n2(x(f)))\" y1=\"\(n2(top))\" x2=\"\(n2(x(f)))\" y2=\"\(n2(top + plotH))\" stroke=\"#ddd\"/>"
            out += "<text x=\"\(n2(x(f)))\" y=\"\(n2(top + plotH + 16))\" text-anchor=\"middle\">\(f >= 1000 ? "\(fmt(f / 1000))k" : fmt(f))</text>\n"
        }
        for db in stride(from: dbMin, through: dbMax, by: dbMax / 2) {
            out += "<line x1=\"\(n2(left))\" y1=\"\(n2(y(db)))\" x2=\"\(n2(left + plotW))\" y2=\"\(n2(y(db)))\" stroke=\"\(db == 0 ? "#999" : "#ddd")\"/>"
            out += "<text x=\"\(n2(left - 6))\" y=\"\(n2(y(db) + 4))\" text-anchor=\"end\">\(db > 0 ? "+" : "")\(fmt(db))</text>\n"
        }
        out += "<text x=\"\(n2(left + plotW / 2))\" y=\"\(n2(height - 8))\" text-anchor=\"middle\">frequency (Hz)</text>\n"
        out += "<text x=\"16\" y=\"\(n2(top + plotH / 2))\" text-anchor=\"middle\" transform=\"rotate(-90 16 \(n2(top + plotH / 2)))\">gain (dB)</text>\n"
        let points = zip(freqs, dbs).map { "\(n2(x($0))),\(n2(y($1)))" }.joined(separator: " ")
        out += "<polyline id=\"response\" fill=\"none\" stroke=\"#1f6fd0\" stroke-width=\"2\" points=\"\(points)\"/>\n</g>\n</svg>\n"
        return out
    }
}
