import MixFXDSP

/// One track of a compiled graph: a player and the effect nodes between it and the mixer.
public struct TrackLayout: Sendable {
    /// The track's player.
    public let player: PlayerNode
    /// The effect nodes from the player to the mixer, in order.
    public let effects: [AudioNode]

    /// The track's tempo: its time-pitch nodes' rates (1 without one). The track lasts 1/tempo
    /// as long, and the silence a placement puts before it is taken that much longer, so that
    /// it stays in the mix's time.
    /// (A constant tempo lane is that tempo; a moving one is in `tempoMap`.)
    public var tempo: Double {
        effects.compactMap { node -> Double? in
            guard let p = (node as? TimePitchNode)?.rateParameter else { return nil }
            return p.automation?.constantValue ?? p.clampedValue
        }.reduce(1, *)
    }

    /// The lane on a time-pitch node's tempo, if one has one.
    public var tempoLane: AutomationLane? {
        effects.lazy.compactMap { ($0 as? TimePitchNode)?.rateParameter.automation }.first
    }

    /// A moving tempo lane's map (or a steady tempo's, with a moving pitch lane): see
    /// `TrackTempo`. Set by `validate` for a render on the timeline (offline, and live when
    /// `RenderKernel.playsOnTimeline`).
    public internal(set) var tempoMap: TempoMap?
}

/// The graph after validation: what will be rendered, at what rate and channel count.
public struct EngineLayout: Sendable {
    /// The tracks, in attach order of their players.
    public let tracks: [TrackLayout]
    /// The mixer every track ends at.
    public let mixer: MixerNode
    /// The output rate: `AudioEngine.outputSampleRate`, or the highest input rate.
    public let sampleRate: Int
    /// `AudioEngine.outputChannelCount`, or 2 when any input has two or more channels, else 1.
    public let channelCount: Int
    /// Frames of the mix at the output rate: as long as the longest track.
    public let frameCount: Int
    /// Per track, frames at the output rate.
    public let trackFrameCounts: [Int]
    /// The master bus's limiter, if it has one.
    public var masterLimiter: LimiterNode? = nil
    /// The LFE's gain in a downmix, dB (nil: dropped); see `Downmix`.
    public var lfeGainDB: Double? = nil
}

/// The nodes of a classic track, as made by `AudioEngine.addTrack(source:)`.
public struct Track: Sendable {
    /// The track's player.
    public let player: PlayerNode
    /// The track's shelf EQ.
    public let eq: ShelfEQNode
    /// The track's pitch shifter.
    public let timePitch: TimePitchNode
}

/// A graph of nodes in AVAudioEngine's spirit: attach nodes, connect them into chains that start
/// at a player and end at `mainMixer`, validate, then render (`makeKernel`, or
/// `MixFXIO.OfflineRenderer`).
///
/// Control side: use one engine from one thread (or serialise access yourself). Node parameters
/// are atomics and may be set from any thread at any time.
public final class AudioEngine {
    /// The sample rates a source may have, Hz (a length at any output rate then fits an Int:
    /// 2^40 frames · 768000 < 2^63).
    /// `mixfx analyze` takes the same (`LoudnessMeter.sampleRateRange` is this range).
    public static let sourceSampleRateRange = 1000...768_000
    /// Why a source at `rate` Hz is refused (nil: it is not), in the words both `render` and
    /// `analyze` use.
    public static func sourceSampleRateProblem(_ rate: Int) -> String? {
        let rates = sourceSampleRateRange
        return rates.contains(rate) ? nil : "sample rate \(rate) Hz (allowed: \(rates.lowerBound) to \(rates.upperBound))"
    }
    /// The sample rates a mix may be rendered at, Hz (`SessionOption.sampleRateHz`).
    public static let outputSampleRateRange = 8000...384_000

    /// The mixer every chain ends at.
    public let mainMixer = MixerNode()
    /// The output sample rate; nil means the highest rate among the inputs.
    public var outputSampleRate: Int?
    /// The mix's channels, 1 or 2; nil means 2 when any input has two or more channels, else 1.
    /// Sources with more channels than the mix are downmixed (`Downmix`, ITU-R BS.775) before
    /// their effects.
    public var outputChannelCount: Int?
    /// The LFE's gain when a source with an LFE channel is downmixed, dB; nil (the default)
    /// drops it, as BS.775 does.
    public var lfeGainDB: Double?
    /// The LFE gains allowed, dB (`SessionOption.lfeGainDB`).
    public static let lfeGainRange = -60.0...20.0
    /// The master bus after the main mixer: a true-peak limiter when set (nil: none). Like
    /// AVAudioEngine's main mixer → output node, the master section is not attached or
    /// connected: it is where every chain ends.
    public var masterLimiter: LimiterNode?

    private var nodes: [AudioNode] = []
    private var outputOf: [ObjectIdentifier: AudioNode] = [:]

    /// An engine holding only its main mixer. Control side.
    public init() { nodes.append(mainMixer) }

    /// The attached nodes, in attach order.
    public var attachedNodes: [AudioNode] { nodes }

    /// Adds a node to the graph (once). Control side.
    public func attach(_ node: AudioNode) {
        if !isAttached(node) { nodes.append(node) }
    }

    /// Whether `node` is in the graph.
    public func isAttached(_ node: AudioNode) -> Bool { nodes.contains { $0 === node } }

    /// Feeds `source`'s output into `destination`. A node has one output; effect nodes take one
    /// input; the mixer takes any number.
    public func connect(_ source: AudioNode, to destination: AudioNode) throws(EngineError) {
        guard isAttached(source) else { throw .nodeNotAttached(node: source.name) }
        guard isAttached(destination) else { throw .nodeNotAttached(node: destination.name) }
        if source === mainMixer { throw .mixerHasOutput }
        if outputOf[ObjectIdentifier(source)] != nil { throw .alreadyConnected(node: source.name) }
        if !(destination is MixerNode) && outputOf.values.contains(where: { $0 === destination }) {
            throw .alreadyConnected(node: destination.name)
        }
        // No cycles: walking from destination must not reach source.
        var walk: AudioNode? = destination
        while let n = walk {
            if n === source { throw .cycle(node: source.name) }
            walk = outputOf[ObjectIdentifier(n)]
        }
        outputOf[ObjectIdentifier(source)] = destination
    }

    /// `player` and the nodes its output goes through before the mixer, in order.
    func chain(of player: PlayerNode) -> [AudioNode] {
        var nodes: [AudioNode] = [player]
        var walk = outputOf[ObjectIdentifier(player)]
        while let n = walk, !(n is MixerNode), !nodes.contains(where: { $0 === n }) {
            nodes.append(n)
            walk = outputOf[ObjectIdentifier(n)]
        }
        return nodes
    }

    /// Removes `node`'s output connection. Control side.
    public func disconnectOutput(of node: AudioNode) {
        outputOf[ObjectIdentifier(node)] = nil
    }

    /// Attaches and connects player → EQ → time-pitch → mixer for `source`.
    @discardableResult
    public func addTrack(source: any AudioSource, name: String? = nil) -> Track {
        let label = name ?? source.name
        let track = Track(player: PlayerNode(source: source, name: label),
                          eq: ShelfEQNode(name: "\(label) EQ"),
                          timePitch: TimePitchNode(name: "\(label) time-pitch"))
        attach(track.player); attach(track.eq); attach(track.timePitch)
        // These connections are between fresh nodes and cannot fail.
        try? connect(track.player, to: track.eq)
        try? connect(track.eq, to: track.timePitch)
        try? connect(track.timePitch, to: mainMixer)
        return track
    }

    /// Checks the graph and every parameter, and works out the output format.
    public func validate() throws(EngineError) -> EngineLayout { try validate(tempoSetsLength: true) }

    /// `validate()`; with `tempoSetsLength` false (live: the tempo may change while playing)
    /// the lengths are the tracks' own, in song time, whatever their tempo.
    func validate(tempoSetsLength: Bool) throws(EngineError) -> EngineLayout {
        var tracks: [TrackLayout] = []
        var onPath = Set<ObjectIdentifier>([ObjectIdentifier(mainMixer)])
        for case let player as PlayerNode in nodes {
            var effects: [AudioNode] = []
            var walk = outputOf[ObjectIdentifier(player)]
            onPath.insert(ObjectIdentifier(player))
            while let n = walk, !(n is MixerNode) {
                effects.append(n)
                onPath.insert(ObjectIdentifier(n))
                walk = outputOf[ObjectIdentifier(n)]
            }
            guard walk != nil else { throw .unconnectedNode(node: (effects.last ?? player).name) }
            tracks.append(TrackLayout(player: player, effects: effects))
        }
        if let stray = nodes.first(where: { !onPath.contains(ObjectIdentifier($0)) }) {
            throw .unconnectedNode(node: stray.name)
        }
        guard !tracks.isEmpty else { throw .noTracks }
        for node in nodes + (masterLimiter.map { [$0] } ?? []) {
            for p in node.parameters {
                if let problem = p.id.spec.problem(with: p.value) {
                    throw .parameterOutOfRange(node: node.name, parameter: p.id, problem: problem,
                                               allowed: p.id.spec.allowedText)
                }
                if let lane = p.automation {
                    do { try lane.validate(for: p.id, lane: "\(node.name) \(p.id.spec.key)") } catch { throw .invalidAutomation(error) }
                }
            }
        }
        for t in tracks {
            let f = AudioEngine.unplacedFormat(t.player.source)
            guard f.channelCount >= 1 && f.channelCount <= SourceFormat.maximumChannelCount else {
                throw .unsupportedFormat(source: t.player.source.name,
                                         reason: "\(f.channelCount) channels (allowed: 1 to \(SourceFormat.maximumChannelCount), mono to 7.1)")
            }
            if let problem = AudioEngine.sourceSampleRateProblem(f.sampleRate) {
                throw .unsupportedFormat(source: t.player.source.name, reason: problem)
            }
            // (so the length at any output rate fits in an Int: 2^40 frames · 768000 < 2^63)
            guard f.frameCount >= 0 && f.frameCount <= SourceFormat.maximumFrameCount else {
                throw .unsupportedFormat(source: t.player.source.name,
                                         reason: "a length of \(f.frameCount) frames (allowed: up to 2^40, 265 days at 48 kHz; a stream of unknown length is not supported)")
            }
        }
        let rate = outputSampleRate ?? tracks.map { $0.player.source.format.sampleRate }.max()!
        guard AudioEngine.outputSampleRateRange.contains(rate) else {
            throw .unsupportedOutputRate(rateHz: rate, isHighestInputRate: outputSampleRate == nil)
        }
        for t in tracks {
            for case let eq as ShelfEQNode in t.effects {
                if let p = AudioEngine.nyquistProblem(eq.settings, sampleRate: rate) {
                    throw .parameterOutOfRange(node: eq.name, parameter: p.parameter, problem: p.problem, allowed: p.allowed)
                }
            }
        }
        for t in tracks {
            let f = AudioEngine.unplacedFormat(t.player.source)
            if let problem = t.player.placement.problem(sampleRate: f.sampleRate, frameCount: f.frameCount) {
                throw .unsupportedPlacement(node: t.player.name, problem: problem)
            }
        }
        // a track lasts its placed length: the silence before it, then its segment
        // (a tempo R makes it round(n/R) of the n frames at the output rate; the silence before
        // it is taken R times longer, so that it stays `start` seconds)
        // (a moving tempo lane: round(s⁻¹(n)), the silence at tempo 1; see `TrackTempo`)
        let lengths = tracks.indices.map { i in
            let t = tracks[i]
            let f = AudioEngine.unplacedFormat(t.player.source)
            let speed = t.player.speedParameter.clampedValue, tempo = tempoSetsLength ? t.tempo : 1
            let placedSpeed = tempoSetsLength ? TrackTempo.placedSpeed(t, speed: speed) : speed
            let placed = t.player.placement.frames(sampleRate: f.sampleRate, frameCount: f.frameCount, speed: placedSpeed)
            let rates = Varispeed.ratePair(sourceRate: f.sampleRate, outputRate: rate, speed: speed)
            let n = Resampler.outputFrameCount(inputFrames: placed.total, inRate: rates.inRate, outRate: rates.outRate)
            if tempoSetsLength {
                let silence = Double(placed.silence) * Double(rates.outRate) / Double(rates.inRate)
                tracks[i].tempoMap = TrackTempo.map(t, sampleRate: rate, inputFrames: n, silenceFrames: silence)
                if let map = tracks[i].tempoMap, TrackTempo.movingLane(t) != nil {
                    return Int(map.frame(atPosition: Double(n)).rounded())
                }
            }
            return tempo == 1 ? n : Int((Double(n) / tempo).rounded())
        }
        if let c = outputChannelCount, let problem = SessionOption.channels.spec.problem(with: Double(c)) {
            throw .invalidSetting(.channels, problem: problem)
        }
        if let g = lfeGainDB, let problem = SessionOption.lfeGainDB.spec.problem(with: g) {
            throw .invalidSetting(.lfeGainDB, problem: problem)
        }
        let channels = outputChannelCount ?? (tracks.contains { $0.player.source.format.channelCount >= 2 } ? 2 : 1)
        let layout = EngineLayout(tracks: tracks, mixer: mainMixer, sampleRate: rate, channelCount: channels,
                                  frameCount: lengths.max() ?? 0, trackFrameCounts: lengths, masterLimiter: masterLimiter,
                                  lfeGainDB: lfeGainDB)
        try AudioEngine.checkTonalityLimit(layout, sampleRate: rate)
        return layout
    }

    /// Why `settings` cannot run at `sampleRate` (the parameter, the problem, what is allowed), nil
    /// when they can: an active band's corner must be below the Nyquist frequency (a flat 5800 Hz
    /// treble shelf on an 8 kHz file is no error). Rendering and `mixfx eq-curve` both apply it.
    public static func nyquistProblem(_ settings: ShelfEQSettings, sampleRate: Int) -> (parameter: ParameterID, problem: String, allowed: String)? {
        let nyquist = Double(sampleRate) / 2
        for (id, band) in [(ParameterID.bassFrequencyHz, settings.bass), (.trebleFrequencyHz, settings.treble)]
        where !band.isNeutral && band.frequencyHz >= nyquist {
            return (id, "\(format(band.frequencyHz)) Hz is not below the Nyquist frequency \(format(nyquist)) Hz of \(sampleRate) Hz",
                    "20 Hz up to below half the output sample rate")
        }
        return nil
    }

    /// A source's format before placement (a `PlacingSource` may already hold one).
    static func unplacedFormat(_ source: any AudioSource) -> SourceFormat {
        (source as? any PlacingSource)?.unplacedFormat ?? source.format
    }

    /// Validates and builds the render kernel (allocates everything it will need). `.live`
    /// prepares for parameters that change while rendering: every track gets the same, fixed
    /// latency, and changes are smoothed.
    ///
    /// Live, a session plays in song time (its tempos may change by hand, tracks at different
    /// tempos part), unless it has lanes and a track plays at a tempo ≠ 1 or follows a tempo
    /// lane: it then plays on the mix's timeline, as an offline render does (`playsOnTimeline`):
    /// the lanes, seeks and length are in the timeline's frames, and tempos follow the session.
    public func makeKernel(maximumFrameCount: Int = 4096, mode: RenderMode = .offline) throws(EngineError) -> RenderKernel {
        var layout = try validate(tempoSetsLength: mode == .offline)
        let timeline = mode == .offline || AudioEngine.playsOnTimeline(layout)
        if mode == .live && timeline { layout = try validate(tempoSetsLength: true) }
        let live = PitchShifterSettings.liveTempoRange
        if mode == .live, let t = layout.tracks.first(where: { !live.contains($0.tempo) }) {
            throw .notLive(node: t.player.name, problem: "tempo \(t.tempo): live playback takes tempos from \(live.lowerBound) to \(live.upperBound) (render the session for tempos beyond)")
        }
        try AudioEngine.checkAutomation(layout)
        if mode == .live { try AudioEngine.checkNoTonalityLimit(layout) }
        return RenderKernel(layout: layout, maximumFrameCount: maximumFrameCount, mode: mode, onTimeline: timeline)
    }

    /// A tonality limit is for an offline render at a fixed pitch and tempo 1 (the frequency
    /// shift of the highs keeps the duration, and its split is made for one ratio), and at least
    /// `TonalityLimit`'s floor for its pitch (below it the split's band-pass reaches 0 Hz). Each
    /// time-pitch node with a limit is checked on its own settings and lanes, and on the track's
    /// time map; live playback is refused in `makeKernel`.
    static func checkTonalityLimit(_ layout: EngineLayout, sampleRate: Int) throws(EngineError) {
        for t in layout.tracks {
            for case let node as TimePitchNode in t.effects where node.tonalityParameter.clampedValue > 0 {
                let limit = node.tonalityParameter.clampedValue
                let ownTempo = node.rateParameter.automation?.constantValue ?? node.rateParameter.clampedValue
                func moves(_ p: AudioParameter) -> Bool { p.automation.map { $0.constantValue == nil } ?? false }
                let tempoLane = moves(node.rateParameter) || (t.tempoLane.map { $0.constantValue == nil } ?? false)
                let cents = node.pitchParameter.automation?.constantValue ?? node.pitchParameter.clampedValue
                let floor = PitchShifterSettings.tonalityLimitFloorHz(cents: cents)
                let problem: String? = ownTempo != 1 ? "with a tempo (\(format(ownTempo)))"
                    : tempoLane ? "with a tempo lane" : moves(node.pitchParameter) ? "with a pitch lane"
                    : limit < floor ? "at \(format(cents)) cents, under \(format(floor)) Hz" : nil
                if let problem {
                    throw .parameterOutOfRange(node: node.name, parameter: .tonalityLimitHz,
                                               problem: "\(format(limit)) Hz \(problem): the limit moves the highs by a constant frequency, which keeps the duration, is made for one pitch and needs 1 kHz of band either side of its split",
                                               allowed: "0 (off); a limit at a fixed pitch and tempo 1, at least 1000·max(√r, 1/√r) Hz (\(format(floor)) at \(format(cents)) cents)")
                }
            }
        }
    }

    /// Live playback has no tonality limit.
    static func checkNoTonalityLimit(_ layout: EngineLayout) throws(EngineError) {
        for t in layout.tracks {
            for case let node as TimePitchNode in t.effects where node.tonalityParameter.clampedValue > 0 {
                throw .notLive(node: node.name, problem: "tonality-limit \(format(node.tonalityParameter.clampedValue)) Hz: live playback has no tonality limit (render the session, or set it to 0)")
            }
        }
    }

    /// Whether a live session plays on the mix's timeline (see `makeKernel`): it has a lane, and
    /// a track at a tempo ≠ 1 or with a moving tempo lane (a constant one is its tempo).
    public static func playsOnTimeline(_ layout: EngineLayout) -> Bool {
        let nodes = layout.tracks.flatMap { [$0.player as AudioNode] + $0.effects } + [layout.mixer as AudioNode]
            + (layout.masterLimiter.map { [$0 as AudioNode] } ?? [])
        guard nodes.contains(where: { $0.parameters.contains { $0.automation != nil } }) else { return false }
        return layout.tracks.contains { $0.tempo != 1 || $0.tempoLane.map { $0.constantValue == nil } ?? false }
    }
}

extension Track {
    /// The node parameter a track-level `ParameterID` controls (nil for `.masterVolume`).
    public func parameter(_ id: ParameterID) -> AudioParameter? { id.spec.node.map { self[keyPath: $0] } }

    /// Sets every value in `values` on this track's nodes. Any thread.
    public func apply(_ values: [ParameterID: Double]) {
        for (id, v) in values { parameter(id)?.value = v }
    }
}
