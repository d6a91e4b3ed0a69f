/// A live kernel's gains (`TouchedValue`): per track its volume and pan, and the master volume,
/// each advanced once per block before the block is mixed, so that a hand can take over a lane
/// (touch) and give it back without a click, and what it played is recorded.
///
/// When any of the gains has a lane (moving or constant), the mix reads every gain per frame
/// (`TouchedValue.perSample`): a touch, a release and a hand change of a gain without a lane
/// then all ramp per sample. A session without gain lanes reads them once per block, as
/// before (the track ramps changes in 10 ms), and plays the same samples as without this.
/// Control side makes it (with the kernel); the thread that mixes advances it.
final class LiveGains {
    /// Per track, its volume's and pan's.
    let tracks: [(volume: TouchedValue, pan: TouchedValue)]
    let master: TouchedValue

    /// `switchLanes`: a track has a mute or solo lane, which the kernel's `MuteLanes` plays
    /// (every gain is then read per frame, and no `MuteRamp` is made).
    init(layout: EngineLayout, sampleRate: Double, maximumFrameCount: Int, switchLanes: Bool = false) {
        let players = layout.tracks.map(\.player)
        let laned = switchLanes || players.contains { $0.volumeParameter.automation != nil || $0.panParameter.automation != nil }
            || layout.mixer.outputVolumeParameter.automation != nil
        func make(_ p: AudioParameter) -> TouchedValue {
            TouchedValue(p, sampleRate: sampleRate, maximumFrameCount: maximumFrameCount, perSample: laned)
        }
        tracks = players.map { (volume: make($0.volumeParameter), pan: make($0.panParameter)) }
        master = make(layout.mixer.outputVolumeParameter)
        self.players = players
        if laned && !switchLanes {
            let solo = players.contains { $0.soloParameter.value != 0 }
            for (t, p) in zip(tracks, players) {
                t.volume.mute = MuteRamp(audible: Self.audible(p, anySolo: solo), sampleRate: sampleRate, maximumFrameCount: maximumFrameCount)
            }
        }
    }

    private let players: [PlayerNode]

    /// Whether a track is heard: not muted, and soloed when any track is.
    @inline(__always)
    private static func audible(_ p: PlayerNode, anySolo: Bool) -> Bool {
        p.muteParameter.value == 0 && (!anySolo || p.soloParameter.value != 0)
    }

    /// What the mix reads for each gain.
    var trackValues: [(volume: AutomatedValue, pan: AutomatedValue)] { tracks.map { (.live($0.volume), .live($0.pan)) } }

    /// Works out every gain's values for the block of `count` frames from mix frame `first`
    /// (`timeline`: its first timeline frame; `period` > 0: the loop's length). Render side.
    /// Vouched for (`no_performance_analysis`: the realtime check does not enter it): live
    /// touch's render side reads its parameters and rings from arrays of references, which
    /// the check counts; it allocates and locks nothing (the allocation counter:
    /// `PlayTouchTests.touchesAllocateNothingOnTheRenderThread`). See docs/realtime.md.
    @_semantics("no_performance_analysis")
    func advance(fromFrame first: Int, count n: Int, timeline: Int, period: Int) {
        var solo = false
        for p in players where p.soloParameter.value != 0 { solo = true }
        for (k, t) in tracks.enumerated() {
            t.volume.mute?.advance(audible: Self.audible(players[k], anySolo: solo), count: n)
            t.volume.advance(fromFrame: first, count: n, timeline: timeline, period: period)
            t.pan.advance(fromFrame: first, count: n, timeline: timeline, period: period)
        }
        master.advance(fromFrame: first, count: n, timeline: timeline, period: period)
    }
}
