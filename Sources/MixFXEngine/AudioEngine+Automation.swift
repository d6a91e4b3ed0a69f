import MixFXDSP

/// Automation lanes in the library: on any parameter (`AudioParameter.automation`), on a
/// track's by its id (`track.automation[.volume]`), or through the engine (`automate`).
extension AudioEngine {
    /// Sets (or with nil removes) the lane of parameter `id` of track `track` (0-based, in attach
    /// order of the players), or of the master bus for `.masterVolume` and `.limiterCeilingDBTP`
    /// (`track` is then ignored). Control side; checked when a kernel is made.
    public func automate(_ id: ParameterID, track: Int? = nil, _ lane: AutomationLane?) throws(EngineError) {
        let parameter: AudioParameter?
        switch id {
        case .masterVolume: parameter = mainMixer.outputVolumeParameter
        case .limiterCeilingDBTP: parameter = masterLimiter?.ceilingParameter
        default:
            let players = attachedNodes.compactMap { $0 as? PlayerNode }
            guard let track, players.indices.contains(track) else {
                throw .invalidAutomation(AutomationError(lane: "track \(track.map { String($0 + 1) } ?? "?") \(id.spec.key)", breakpoint: nil,
                                                         problem: "there is no such track", allowed: "tracks 1 to \(players.count)"))
            }
            parameter = chain(of: players[track]).lazy.flatMap(\.parameters).first { $0.id == id }
        }
        guard let parameter else {
            throw .invalidAutomation(AutomationError(lane: id.spec.key, breakpoint: nil, problem: "the session has no such parameter",
                                                     allowed: id == .limiterCeilingDBTP ? "a lane on the ceiling of a master limiter that is set" : "a parameter of a node in the graph"))
        }
        parameter.automation = lane
    }

    /// What this version renders of the lanes (the model's validation is `validate`'s). A
    /// moving tempo lane, or a moving pitch lane on a track at a steady tempo ≠ 1, renders
    /// through a streaming shifter reading the track's `TempoMap`, which takes the live tempos at
    /// most: its tempos must lie in `PitchShifterSettings.liveTempoRange`. Live, a session
    /// with lanes at a tempo plays on the timeline as offline (`makeKernel`), with the same check.
    static func checkAutomation(_ layout: EngineLayout) throws(EngineError) {
        var laned: [(node: AudioNode, parameter: AudioParameter, track: TrackLayout?)] = []
        for t in layout.tracks {
            for node in [t.player as AudioNode] + t.effects {
                for p in node.parameters where p.automation != nil { laned.append((node, p, t)) }
            }
        }
        for node in [layout.mixer as AudioNode] + (layout.masterLimiter.map { [$0] } ?? []) {
            for p in node.parameters where p.automation != nil { laned.append((node, p, nil)) }
        }
        let live = PitchShifterSettings.liveTempoRange
        for (node, p, track) in laned {
            func refuse(_ problem: String, _ allowed: String) -> EngineError {
                .invalidAutomation(AutomationError(lane: "\(node.name) \(p.id.spec.key)", breakpoint: nil, problem: problem, allowed: allowed))
            }
            guard let track, let lane = p.automation, lane.constantValue == nil, let map = track.tempoMap else { continue }
            if p.id == .tempo || p.id == .pitchCents {
                // (the lane's own values, and the map's cells: its values times the chain's
                // other tempos, as far as the track reaches)
                let values = p.id == .tempo ? lane.breakpoints.map(\.value) : []
                let lo = min(map.minimumTempo, values.min() ?? map.minimumTempo), hi = max(map.maximumTempo, values.max() ?? map.maximumTempo)
                // (within a rounding of the map's sums: a lane that reaches 4 exactly is at 4)
                let slack = 1e-9
                for (tempo, side) in [(lo, "slowest"), (hi, "fastest")]
                where tempo < live.lowerBound * (1 - slack) || tempo > live.upperBound * (1 + slack) {
                    throw refuse("a moving \(p.id.spec.key) lane on a track whose \(side) tempo is \(format(tempo)) is not rendered",
                                 "tempos from \(format(live.lowerBound)) to \(format(live.upperBound)) on a track with a moving tempo or pitch lane")
                }
            }
        }
    }
}

extension Track {
    /// The lanes of this track's parameters by id: `track.automation[.pitchCents] = lane` (nil
    /// removes it). Control side.
    public var automation: TrackAutomation { TrackAutomation(track: self) }
}

/// A track's lanes, by parameter (`Track.automation`).
public struct TrackAutomation {
    let track: Track

    public subscript(id: ParameterID) -> AutomationLane? {
        get { track.parameter(id)?.automation }
        nonmutating set { track.parameter(id)?.automation = newValue }
    }
}
