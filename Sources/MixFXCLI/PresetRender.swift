import Foundation
import MixFX

/// `mixfx render TRACK... --preset PRESET -o OUTPUT [--report REPORT] [--force]` for callers
/// other than the command line (the C API's `mixfx_render_preset`): the same session building,
/// file checks, renderer settings and report, so the same bytes, with nothing printed and no
/// signal handlers installed.
public enum PresetRender {
    /// Renders `inputs` with `presetJSON` (a preset document; nil: the defaults) into
    /// `outputPath`, and the report into `reportPath` (.json or .html) when given. Errors are
    /// the CLI's (`exitCode` 2: refused before rendering; 1: failed while rendering); warnings
    /// about the preset or session come back in `warnings`.
    public static func render(presetJSON: String?, inputs: [String], outputPath: String, reportPath: String?,
                              overwrite: Bool, warnings: inout [String]) throws(CLIError) -> RenderReport {
        var command = RenderCommand()
        command.output = outputPath
        command.force = overwrite
        command.quiet = true
        guard !inputs.isEmpty else { throw .usage("render: no tracks given") }
        guard inputs.count <= Preset.maximumTracks else {
            throw .usage("\(inputs.count) tracks is more than a session may have (\(Preset.maximumTracks))")
        }
        // (`-` is the command line's name for stdin and stdout; a library has no business with
        // its host's: a file named - is ./-)
        for (what, path) in inputs.map({ ("input", $0) }) + [("output", outputPath)] where path == StandardInput.path {
            throw .usage("\(what) '-': standard input and output are the command line's; give a file path (./- for a file named -)")
        }
        command.session.inputs = inputs
        if let reportPath {
            guard RenderCommand.isReportName(reportPath) else {
                throw .usage("report: '\(reportPath)' must end in .json (the measures) or .html (a page with pictures)")
            }
            command.reportPath = reportPath
        }
        if let presetJSON {
            do throws(PresetError) {
                command.session.inlinePreset = try Preset.parse(Data(presetJSON.utf8), source: "preset_json", warnings: &warnings)
            } catch {
                throw .usage(SettingFlags.text(error))
            }
        }
        let resolved = try command.session.resolve(preset: try command.session.loadPreset(warnings: &warnings))
        warnings += resolved.warnings
        var (engine, renderer, plan) = try command.prepare(resolved, overwrite: overwrite)
        let report: RenderReport, stagedReport: OutputFile.Staged?
        do { (report, stagedReport) = try command.renderWithReport(&renderer, engine, resolved, plan.1, overwrite: overwrite) } catch {
            throw RenderCommand.map(error, resolved)
        }
        try command.commitReport(stagedReport)
        return report
    }
}
