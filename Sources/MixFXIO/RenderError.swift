import Foundation
import MixFXEngine
import MixFXFiles

/// Why a render did not produce its output file. In every case nothing is left at the output
/// path (an existing file there is untouched).
public enum RenderError: Error, Equatable, CustomStringConvertible {
    /// The output path cannot be written (exists, is an input, is not a regular file, ...).
    case output(OutputFileError)
    case unsupportedOutput(path: String, reason: String)
    case engine(EngineError)
    case file(SoundFileError)
    case cancelled
    /// `ClipPolicy.fail`: the integer output would have clamped samples; nothing was written.
    case wouldClip(path: String, peakDBFS: Double, atSeconds: Double)
    /// `normalizeLUFS`: the gain that reaches the target would put the true peak above the
    /// ceiling and there is no limiter, or the mix is silent.
    case cannotNormalize(targetLUFS: Double, measuredLUFS: Double, truePeakDBTP: Double)

    /// One line naming the file or setting and the problem.
    public var description: String { description(naming: { $0 }) }

    /// `description` with each setting named by `name` (given a `SessionOptionSpec.setting`
    /// string: `normalizeLUFS`, `clipping=fail`, `overwrite=true`): the CLI passes its flags.
    public func description(naming name: (String) -> String) -> String {
        let normalize = name(SessionOption.normalizeLUFS.spec.setting()), limit = name(SessionOption.limitDBTP.spec.setting())
        return switch self {
        case .output(let e): e.description(naming: name)
        case .unsupportedOutput(let p, let r): "cannot write '\(p)': \(r)"
        case .engine(let e): e.description(naming: name)
        case .file(let e): e.description
        case .cancelled: "interrupted; no output was written"
        case .cannotNormalize(let target, let measured, let tp) where !measured.isFinite:
            "\(normalize) \(String(format: "%g", target)): the mix is silent (nothing above -70 LUFS), so it has no loudness to bring to \(String(format: "%g", target)) LUFS (true peak \(String(format: "%.1f", tp)) dBTP); nothing was written"
        case .cannotNormalize(let target, let measured, let tp):
            "\(normalize) \(String(format: "%g", target)): the mix measures \(String(format: "%.1f LUFS with a true peak of %.1f dBTP", measured, tp)); reaching \(String(format: "%g", target)) LUFS needs \(String(format: "%+.1f", target - measured)) dB, which puts the true peak at \(String(format: "%+.1f", tp + target - measured)) dBTP, above \(String(format: "%.0f", OfflineRenderer.safeCeilingDBTP)) dBTP. Add \(limit) to reach it with the limiter (peaks turned down, the rest unchanged), or aim at most \(String(format: "%.1f", measured + OfflineRenderer.safeCeilingDBTP - tp)) LUFS without one; nothing was written"
        case .wouldClip(let p, let db, let t):
            "'\(p)' would clip (the mix reaches \(String(format: "%+.2f dBFS in the block from %.2f s", db, t))) and \(name(SessionOption.clipping.spec.setting(ClipPolicy.fail.rawValue))) forbids it; nothing was written (lower \(name(SessionOption.masterVolume.spec.setting())) by at least \(String(format: "%.1f", db + 0.1)) dB; later parts of the mix may peak higher)"
        }
    }
}
