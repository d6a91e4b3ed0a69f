import MixFXDSP
import Synchronization

/// How a track's input time relates to the mix's timeline when it renders offline, and its
/// tempo map when it has one (issue #33, tempo lanes).
///
/// The tempo lane is on the mix's timeline (output time, as every lane): its value at mix time t
/// is the tempo the track plays at then, and the track's input advances by it:
///
///     s(t) = D + ∫_D^t R(u) du   for t ≥ D,   s(t) = t before
///
/// D being the placement's start (its silence passes at tempo 1, so a track placed at 10 s still
/// starts at 10 s), s in frames of the placed input at the output rate (the file's frame F, with
/// trim-in I, speed v and rate conversion, is at input frame D + (F − I)/v·(out/in)). The
/// track lasts until s reaches its placed input's end: round(s⁻¹(P)) frames (`TempoMap`, held
/// every `stepFrames` output frames, integrated per frame). A track with a moving pitch lane
/// and a steady tempo R ≠ 1 gets the constant map R (the silence then stretched as without a
/// lane: `s = R·t` throughout), so that its pitch lane's times are on the timeline too.
///
/// Lanes on the track's other parameters read the timeline frame of their own position: after
/// the shifter, the output's; before it (the EQ), s⁻¹ of the input's (`inputToTimeline`).
enum TrackTempo {
    /// Output frames between two positions of a track's tempo map.
    static let stepFrames = 16

    /// The track's moving tempo lane (offline), nil when it has none or it is constant.
    static func movingLane(_ t: TrackLayout) -> AutomationLane? {
        for case let node as TimePitchNode in t.effects {
            if let lane = node.rateParameter.automation, lane.constantValue == nil { return lane }
        }
        return nil
    }

    /// Whether the track's pitch lane moves.
    static func pitchMoves(_ t: TrackLayout) -> Bool {
        t.effects.contains { ($0 as? TimePitchNode)?.pitchParameter.automation.map { $0.constantValue == nil } ?? false }
    }

    /// The track's tempo when it is steady: the lanes' constants or the parameters' values.
    static func steadyTempo(_ t: TrackLayout) -> Double {
        t.effects.compactMap { node -> Double? in
            guard let p = (node as? TimePitchNode)?.rateParameter else { return nil }
            return p.automation?.constantValue ?? p.clampedValue
        }.reduce(1, *)
    }

    /// The speed factor the placement's silence is taken at (`Placement.frames`): the speed,
    /// and a steady tempo (its silence is stretched with the track); with a moving tempo lane
    /// the speed alone (the silence passes at tempo 1).
    static func placedSpeed(_ t: TrackLayout, speed: Double) -> Double {
        movingLane(t) != nil ? speed : speed * steadyTempo(t)
    }

    /// Offline: the map of a track with a moving tempo lane, or a moving pitch lane at a steady
    /// tempo ≠ 1 (nil otherwise), and the track's length at the output rate. `inputFrames`: its
    /// placed input at the output rate (P), `silenceFrames` the part of it before the segment
    /// (D).
    static func map(_ t: TrackLayout, sampleRate: Int, inputFrames: Int, silenceFrames: Double) -> TempoMap? {
        // (a session is validated several times before it renders: the last maps are kept)
        let key = MapKey(lanes: t.effects.compactMap { ($0 as? TimePitchNode).map { [$0.rateParameter.automation, $0.pitchParameter.automation] } },
                         rates: t.effects.compactMap { ($0 as? TimePitchNode)?.rateParameter.clampedValue },
                         sampleRate: sampleRate, inputFrames: inputFrames, silenceFrames: silenceFrames)
        if let hit = recentMaps.withLock({ $0.first { $0.key == key } }) { return hit.map }
        let made = makeMap(t, sampleRate: sampleRate, inputFrames: inputFrames, silenceFrames: silenceFrames)
        recentMaps.withLock { recent in
            recent.insert((key, made), at: 0)
            if recent.count > 8 { recent.removeLast() }
        }
        return made
    }

    /// What a map is made from.
    private struct MapKey: Equatable {
        let lanes: [[AutomationLane?]]
        let rates: [Double]
        let sampleRate: Int, inputFrames: Int
        let silenceFrames: Double
    }
    private static let recentMaps = Mutex<[(key: MapKey, map: TempoMap?)]>([])

    private static func makeMap(_ t: TrackLayout, sampleRate: Int, inputFrames: Int, silenceFrames: Double) -> TempoMap? {
        let rate = Double(sampleRate)
        let nodes = t.effects.compactMap { $0 as? TimePitchNode }
        if let i = nodes.firstIndex(where: { $0.rateParameter.automation.map { $0.constantValue == nil } ?? false }),
           let lane = nodes[i].rateParameter.automation {
            let prepared = PreparedLane(lane, scale: ParameterID.tempo.spec.automation ?? .positive, sampleRate: rate)
            // (a chain of several time-pitch nodes: the others' steady tempos multiply it)
            let others = nodes.indices.filter { $0 != i }.map { k -> Double in
                let p = nodes[k].rateParameter
                return p.automation?.constantValue ?? p.clampedValue
            }.reduce(1, *)
            return TempoMap(stepFrames: stepFrames, untilPosition: Double(inputFrames)) { first, out in
                prepared.fill(out, fromFrame: first, count: stepFrames, atMidpoints: true)
                for k in 0..<stepFrames {
                    out[k] = Double(first + k) + 0.5 < silenceFrames ? 1 : out[k] * others
                }
            }
        }
        let tempo = steadyTempo(t)
        guard pitchMoves(t), tempo != 1 else { return nil }
        return TempoMap(stepFrames: stepFrames, untilPosition: Double(inputFrames)) { _ in tempo }
    }

    /// The timeline frame of input position `x` of a track (for lanes read in its input's time):
    /// s⁻¹(x) with a map, x/R at a steady tempo R.
    @inline(__always)
    static func inputToTimeline(_ x: Int, map: Unretained<TempoMap>?, tempo: Double) -> Int {
        if let map { return Int(Libm.roundedDown(map { $0.frame(atPosition: Double(x)) })) }
        return tempo == 1 ? x : Int(Libm.roundedDown(Double(x) / tempo))
    }
}
