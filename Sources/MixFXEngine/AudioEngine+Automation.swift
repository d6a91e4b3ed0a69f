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

    /// What this version renders of the lanes (the model's validation is `validate`'s): lanes
    /// render offline only; not yet on the tempo or the limiter's ceiling; a lane that moves not
    /// on a track whose tempo is not 1 (its timeline would need the tempo map).
    static func checkAutomation(_ layout: EngineLayout, mode: RenderMode) throws(EngineError) {
        var laned: [(node: AudioNode, parameter: AudioParameter, tempo: Double)] = []
        for t in layout.tracks {
            for node in [t.player as AudioNode] + t.effects {
                for p in node.parameters where p.automation != nil { laned.append((node, p, t.tempo)) }
            }
        }
        for node in [layout.mixer as AudioNode] + (layout.masterLimiter.map { [$0] } ?? []) {
            for p in node.parameters where p.automation != nil { laned.append((node, p, 1)) }
        }
        for (node, p, tempo) in laned {
            func refuse(_ problem: String, _ allowed: String) -> EngineError {
                .invalidAutomation(AutomationError(lane: "\(node.name) \(p.id.spec.key)", breakpoint: nil, problem: problem, allowed: allowed))
            }
            if mode == .live {
                throw refuse("lanes are not played live yet", "lanes in offline renders (mixfx render, OfflineRenderer)")
            }
            if p.id == .tempo || p.id == .limiterCeilingDBTP {
                throw refuse("\(p.id.spec.key) lanes are not rendered yet", "lanes for volume, pan, the EQ, pitch and the master volume")
            }
            if tempo != 1, p.automation?.constantValue == nil {
                throw refuse("a lane that moves on a track at tempo \(format(tempo)) is not rendered yet", "lanes on tracks at tempo 1")
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
