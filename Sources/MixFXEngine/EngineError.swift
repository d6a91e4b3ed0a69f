/// What can be wrong with a graph or its settings. Thrown on the control side, before rendering.
public enum EngineError: Error, Equatable, CustomStringConvertible {
    case nodeNotAttached(node: String)
    case unconnectedNode(node: String)
    case alreadyConnected(node: String)
    case cycle(node: String)
    case noTracks
    case mixerHasOutput
    case parameterOutOfRange(node: String, parameter: ParameterID, problem: String, allowed: String)
    case unsupportedFormat(source: String, reason: String)
    /// The mix's rate is outside `AudioEngine.outputSampleRateRange`: the highest input rate
    /// (no `outputSampleRate` set), or the one set.
    case unsupportedOutputRate(rateHz: Int, isHighestInputRate: Bool)
    case sourceFailed(source: String, message: String)
    /// A placement that leaves nothing to play (a trim past the end, an end before the start).
    case unsupportedPlacement(node: String, problem: String)
    /// A setting a live kernel cannot take yet (a tempo).
    case notLive(node: String, problem: String)
    /// Looping a session of no frames (it would go round without ever playing anything).
    case nothingToLoop
    /// A session option set to a value it does not take (`outputChannelCount` 3: "channels: 3
    /// is not 1 or 2"); the problem is the registry's (`SessionOptionSpec.problem`).
    case invalidSetting(SessionOption, problem: String)
    /// An automation lane that cannot be used (`AutomationLane.validate`), or one this version
    /// does not render yet (a tempo lane; lanes in live playback).
    case invalidAutomation(AutomationError)

    /// One line naming the node, parameter, setting or source, the problem and what is allowed.
    public var description: String { description(naming: { $0 }) }

    /// `description` with each setting named by `name` (given a `SessionOptionSpec.setting`
    /// string such as `sampleRateHz`): the CLI passes its flags.
    public func description(naming name: (String) -> String) -> String {
        switch self {
        case .nodeNotAttached(let n): "node '\(n)' is not attached to the engine"
        case .unconnectedNode(let n): "node '\(n)' is attached but not connected on a path from a player to the mixer"
        case .alreadyConnected(let n): "node '\(n)' already has an output connection (a chain cannot branch)"
        case .cycle(let n): "connecting '\(n)' would make a cycle"
        case .noTracks: "the session has no tracks: connect at least one player to the mixer"
        case .mixerHasOutput: "the mixer is the end of the graph and cannot feed another node"
        case .parameterOutOfRange(let n, let p, let problem, let allowed):
            "\(n): \(p.rawValue): \(problem) (allowed: \(allowed))"
        case .unsupportedFormat(let s, let r): "\(s): \(r)"
        case .unsupportedOutputRate(let r, let fromInputs):
            "output: sample rate \(r) Hz\(fromInputs ? " (the highest input rate)" : "") (allowed: \(AudioEngine.outputSampleRateRange.lowerBound) to \(AudioEngine.outputSampleRateRange.upperBound) Hz; set \(name(SessionOption.sampleRateHz.spec.setting())))"
        case .sourceFailed(let s, let m): "\(s): \(m)"
        case .unsupportedPlacement(let n, let p): "\(n): \(p)"
        case .notLive(let n, let p): "\(n): \(p)"
        case .nothingToLoop: "the session is 0 frames long: there is nothing to loop (loop a session of at least one frame)"
        case .invalidSetting(let option, let problem): "\(name(option.spec.setting())): \(problem)"
        case .invalidAutomation(let e): e.description
        }
    }
}
