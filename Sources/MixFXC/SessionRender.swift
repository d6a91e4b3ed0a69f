import CMixFX
import MixFX
import MixFXCLI

// mixfx_render_preset of mixfx.h: `mixfx render` with a preset, through the CLI's own path
// (`PresetRender`), so the file is the same bytes.

@_cdecl("mixfx_render_preset")
public func mixfx_render_preset(_ presetJSON: UnsafePointer<CChar>?, _ inputs: UnsafePointer<UnsafePointer<CChar>?>?,
                                _ trackCount: Int, _ outputPath: UnsafePointer<CChar>?, _ reportPath: UnsafePointer<CChar>?,
                                _ overwrite: Int32, _ summary: UnsafeMutablePointer<mixfx_render_summary>?) -> Int32 {
    cCall(#function) { () throws(CAPIError) in
        guard let outputPath else { throw .null("output_path") }
        guard trackCount >= 1 && trackCount <= Preset.maximumTracks else {
            throw .range("track_count: \(UInt(bitPattern: trackCount)) (allowed: from 1 to \(Preset.maximumTracks))")
        }
        guard let inputs else { throw .null("inputs") }
        var paths: [String] = []
        for i in 0..<trackCount {
            guard let p = inputs[i] else { throw .null("inputs[\(i)]") }
            paths.append(String(cString: p))
        }
        let preset = presetJSON.map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
        var warnings: [String] = []
        let report: RenderReport
        do throws(CLIError) {
            report = try PresetRender.render(presetJSON: preset, inputs: paths, outputPath: String(cString: outputPath),
                                             reportPath: reportPath.map { String(cString: $0) }, overwrite: overwrite != 0,
                                             warnings: &warnings)
        } catch {
            throw CAPIError(error.exitCode == 2 ? MIXFX_ERR_INVALID : MIXFX_ERR_FAILED, error.message)
        }
        if let summary {
            summary.pointee = mixfx_render_summary(
                frames: Int64(report.frameCount), sample_rate_hz: Int32(report.format.sampleRate),
                channels: Int32(report.format.channelCount), peak_dbfs: report.peak > 0 ? report.peakDBFS : -.infinity,
                clipped_samples: Int64(report.clippedSamples), applied_gain_db: report.appliedGainDB,
                elapsed_seconds: report.elapsedSeconds)
        }
    }
}
