import MixFXDSP

/// The one render entry point: renders the whole graph block by block into `output`.
///
/// Use: `start()`, then `render(frameCount:)` until it returns 0. `start()` pre-rolls each track
/// by its latency so block 0 is aligned with sample 0 of the inputs, and the mix ends after
/// exactly `layout.frameCount` frames. With fixed settings the result does not depend on the block
/// sizes, nor on the mode: a live kernel renders the same samples as an offline one.
///
/// Threading: `start`, `seek` and `render` are called from one thread at a time (the render
/// thread). Node parameters may change from any thread: a live kernel picks them up at the next
/// block and smooths them (gains over 10 ms, EQ with τ = 10 ms, pitch with τ = 20 ms).
/// `render` does not allocate, lock or throw (the sources it reads from may: a live player reads
/// from ring buffers that do neither); a source's read error is kept in `failure` and the track
/// goes silent. Live, the mix goes through the output stage (`OutputStage`: limiter, meters),
/// its latency pre-rolled, so a live kernel renders what an offline render writes.
/// `@unchecked Sendable`: one thread at a time renders (above); what other threads may read —
/// meters, `trackReplacedSamples` — are atomics.
public final class RenderKernel: @unchecked Sendable {
    /// What is rendered: tracks, rate, channels, length.
    public let layout: EngineLayout
    /// The largest block `render` takes.
    public let maximumFrameCount: Int
    /// Offline (fixed settings) or live (smoothed changes, fixed latency).
    public let mode: RenderMode
    /// The kernel's position is the mix's timeline (offline; live, a session whose lanes play
    /// at a tempo: `AudioEngine.makeKernel`): lanes, seeks and the length in its frames, each
    /// track's input where its tempo (or tempo map) puts it. Else (live) song time: frames at
    /// tempo 1, tracks moving through it at the tempos set by hand.
    public let playsOnTimeline: Bool
    /// The mix (planar, `layout.channelCount` channels) of the last `render` call.
    public let output: AudioBuffer
    /// Per-track levels after effects and mixer gains, and the mix's level.
    public let trackMeters: [Meter]
    /// The mix's level.
    public let masterMeter = Meter()
    /// The DSP copy the meters run (read here, so the render thread never takes `DSPCopy.active`'s
    /// one-time initialisation).
    private let dspCopy = DSPCopy.active
    /// Live: the master bus's short-term loudness, true peak and limiter gain (after the
    /// output stage; see `OutputStage`).
    public let masterLevels = MasterMeter()
    /// Live: the output stage (limiter, meters) the mix goes through. (Offline the renderer runs
    /// one itself, after the mix is kept: see `MixFXIO.OfflineRenderer`.)
    private let stage: OutputStage?
    /// The first error a track's source gave while rendering (the track rendered silence from
    /// then on). Offline renderers check it after each block, a live player after each period.
    public var failure: (any Error)? { failures.first }
    private let failures = RenderFailures()
    private let tracks: [TrackKernel]
    // The render side's view (see `Unretained`): what `render` reads, without reference
    // counting, so that the compiler can check it (`@_noAllocation`/`@_noLocks`).
    /// `tracks`, `trackCount` of them.
    private let trackRefs: UnsafeMutablePointer<TrackHandle>
    private let trackCount: Int
    private let outputRef: BufferRef
    private let masterMeterRef: Unretained<Meter>
    private let stageRef: Unretained<OutputStage>?
    private let rampFrames: Int
    /// Frames of the mix rendered since `start` or the last `seek`.
    public private(set) var framesRendered = 0
    /// The frame of the mix (before the output stage) that `mix` makes next: `framesRendered`
    /// offline; live, ahead of it by what the output stage has pulled for its latency (the
    /// stage's output frame f is the mix's frame f, so lanes and schedules are read at the
    /// mix's frames).
    private var mixFrame = 0
    /// The sources loop the session (live): `render` has no end and `framesRendered` goes on
    /// past `layout.frameCount` (the position in the session is it modulo the length).
    public var loops = false {
        didSet {
            for t in tracks { t.setLoop(frames: loops ? layout.frameCount : 0) }
            stage?.loopFrames = loops ? layout.frameCount : 0
        }
    }

    /// The lanes' frame for frame `f` of the mix: `f`, or live when looping, `f` modulo the
    /// session's length (the lanes start again at every seam).
    @inline(__always)
    private func timelineFrame(_ f: Int) -> Int {
        let n = layout.frameCount
        return LoopPosition.frame(f, period: loops ? n : 0)
    }
    /// Offline: render the tracks on all the cores the process may use, ahead of the mix
    /// (default true; read by `start` and `seek`).
    public var parallelTracks = true
    private var pipeline: TrackPipeline? {
        didSet { pipelined = pipeline != nil }
    }
    /// `pipeline != nil`, as the render path reads it.
    private var pipelined = false
    /// True when the tracks render ahead on worker threads (offline, `parallelTracks`, more
    /// than one track and core; decided by `start`/`seek`).
    public var rendersTracksInParallel: Bool { pipeline != nil }
    /// Offline, for reports: called on the render thread with each track's block as it enters
    /// the mix (its effects' output, left and right — the same pointer for a mono track — and
    /// the mixer gains it is mixed with). Set before `start`. Not called for live gain ramps.
    public var trackTap: ((_ track: Int, _ left: UnsafePointer<Float>, _ right: UnsafePointer<Float>,
                           _ gains: (left: Float, right: Float), _ frameCount: Int) -> Void)? {
        didSet { tapped = trackTap != nil }
    }
    /// `trackTap != nil`, as the render path reads it.
    private var tapped = false
    private var trackPeak: [Float], trackSum: [Float]
    /// Per track, its volume and pan (parameters, constant lanes or moving ones); the master
    /// volume; whether a track's gains move (then applied per sample, `mixAutomated`); and
    /// where its gained samples go then.
    private let gainLanes: UnsafeMutablePointer<(volume: AutomatedValue, pan: AutomatedValue)>
    private let masterVolume: AutomatedValue
    private let gainsMove: UnsafeMutablePointer<Bool>
    /// Live: the gains' touch and release (advanced once per block, before the mix reads them),
    /// and the same held unretained for the checked render path.
    private let liveGains: LiveGains?
    private let liveGainsRef: Unmanaged<LiveGains>?
    /// The tracks' mute and solo lanes, when any track has one (`MuteLanes`): each track's
    /// block is then mixed run by run, as its factors say; and the same held unretained, its
    /// states and factors as the render path reads them.
    private let muteLanes: MuteLanes?
    private let muteLanesRef: Unmanaged<MuteLanes>?
    private let muteStates: UnsafeMutablePointer<UInt8>?
    private let muteFactors: UnsafeMutablePointer<Double>?
    /// Live: a hand's mute and solo, recorded for `save` (`SwitchTouches`).
    private let switchTouches: SwitchTouches?
    private let switchTouchesRef: Unmanaged<SwitchTouches>?
    private let gained: AudioBuffer?
    private let gainedRef: BufferRef?
    /// Room for three blocks of lane values (`mixAutomated`).
    private let laneValues: UnsafeMutablePointer<Double>
    /// The gains' schedules (`AudioParameter.schedule`): per track its volume's and pan's
    /// (slots 2k and 2k + 1), then the master volume's (slot 2·tracks); for the block being
    /// mixed, whether each is active and its values (`scheduleValues`, a block per slot).
    private let schedules: [ScheduledValue?]
    /// `schedules`, as the render path reads them.
    private let scheduleRefs: UnsafeMutablePointer<Unretained<ScheduledValue>?>
    private let scheduleActive: UnsafeMutablePointer<Bool>
    private let scheduleValues: UnsafeMutablePointer<Double>
    /// Per track, whether its gains are scheduled in the block being mixed.
    private let trackScheduled: UnsafeMutablePointer<Bool>
    private let largestLatencyFrames: Int
    /// The scratch memory of the shifters this thread runs (the render thread's; the pipeline's
    /// workers have their own).
    private let workspace: PitchShifterWorkspace
    /// What a track renders into on this thread (one track at a time), indexed by its channel
    /// count (1 or 2).
    private let trackBuffers: [AudioBuffer?]
    /// `trackBuffers`, as the render path reads them.
    private let trackBufferRefs: UnsafeMutablePointer<BufferRef?>

    init(layout: EngineLayout, maximumFrameCount: Int, mode: RenderMode, onTimeline: Bool) {
        self.layout = layout
        self.maximumFrameCount = maximumFrameCount
        self.mode = mode
        playsOnTimeline = mode == .offline || onTimeline
        output = AudioBuffer(channelCount: layout.channelCount, capacityFrames: maximumFrameCount)
        let failures = failures
        tracks = layout.tracks.map {
            TrackKernel(layout: $0, outputRate: layout.sampleRate, mixChannels: layout.channelCount, lfeGainDB: layout.lfeGainDB,
                        maximumFrameCount: maximumFrameCount, mode: mode, onTimeline: mode == .offline || onTimeline,
                        failures: failures, timelineFrames: layout.frameCount)
        }
        let rate = Double(layout.sampleRate)
        let players = layout.tracks.map(\.player)
        let switched = MuteLanes.needed(players)
        let gate = switched ? MuteLanes(players: players, sampleRate: rate, maximumFrameCount: maximumFrameCount) : nil
        muteLanes = gate
        muteLanesRef = gate.map { .passUnretained($0) }
        muteStates = gate?.states
        muteFactors = gate?.factors
        let touches = mode == .live ? SwitchTouches(players: players, sampleRate: rate) : nil
        switchTouches = touches
        switchTouchesRef = touches.map { .passUnretained($0) }
        // (live: gains a hand may take over, `LiveGains`)
        let live = mode == .live ? LiveGains(layout: layout, sampleRate: rate, maximumFrameCount: maximumFrameCount, switchLanes: switched) : nil
        liveGains = live
        liveGainsRef = live.map { .passUnretained($0) }
        let lanes = live?.trackValues ?? layout.tracks.map {
            (volume: AutomatedValue($0.player.volumeParameter, sampleRate: rate), pan: AutomatedValue($0.player.panParameter, sampleRate: rate))
        }
        let master = live.map { AutomatedValue.live($0.master) } ?? AutomatedValue(layout.mixer.outputVolumeParameter, sampleRate: rate)
        let moving = lanes.map { $0.volume.moves || $0.pan.moves || master.moves }
        gainLanes = .allocate(capacity: max(1, lanes.count))
        gainLanes.initialize(from: lanes, count: lanes.count)
        masterVolume = master
        gainsMove = .allocate(capacity: max(1, moving.count))
        gainsMove.initialize(from: moving, count: moving.count)
        // (a schedule may make any track's gains move)
        gained = AudioBuffer(channelCount: 2, capacityFrames: maximumFrameCount)
        gainedRef = gained.map { BufferRef($0) }
        laneValues = .allocate(capacity: 3 * maximumFrameCount)
        let scheduled = layout.tracks.flatMap { [ScheduledValue($0.player.volumeParameter), ScheduledValue($0.player.panParameter)] }
            + [ScheduledValue(layout.mixer.outputVolumeParameter)]
        schedules = scheduled
        scheduleRefs = .allocate(capacity: scheduled.count)
        scheduleRefs.initialize(from: scheduled.map { $0.map { Unretained($0) } }, count: scheduled.count)
        scheduleActive = .allocate(capacity: scheduled.count)
        scheduleActive.initialize(repeating: false, count: scheduled.count)
        scheduleValues = .allocate(capacity: scheduled.count * maximumFrameCount)
        trackScheduled = .allocate(capacity: layout.tracks.count)
        trackScheduled.initialize(repeating: false, count: layout.tracks.count)
        for (k, t) in tracks.enumerated() { t.index = k }
        trackMeters = tracks.map(\.meter)
        workspace = PitchShifterWorkspace(byteCount: tracks.map(\.workspaceByteCount).max() ?? 0)
        for t in tracks { t.use(workspace) }
        let channelCounts = Set(tracks.map(\.channelCount))
        trackBuffers = (0...2).map { channelCounts.contains($0) ? AudioBuffer(channelCount: $0, capacityFrames: maximumFrameCount) : nil }
        trackBufferRefs = .allocate(capacity: 3)
        trackBufferRefs.initialize(from: trackBuffers.map { $0.map { BufferRef($0) } }, count: 3)
        trackCount = tracks.count
        trackRefs = .allocate(capacity: max(1, tracks.count))
        trackRefs.initialize(from: tracks.map { TrackHandle($0) }, count: tracks.count)
        outputRef = BufferRef(output)
        masterMeterRef = Unretained(masterMeter)
        largestLatencyFrames = tracks.map(\.latencyFrames).max() ?? 0
        rampFrames = max(1, layout.sampleRate / 100)
        trackPeak = [Float](repeating: 0, count: tracks.count)
        trackSum = [Float](repeating: 0, count: tracks.count)
        stage = mode == .live
            ? OutputStage(ProcessSpec(sampleRate: Double(layout.sampleRate), maximumFrameCount: maximumFrameCount,
                                      channelCount: layout.channelCount),
                          limiter: layout.masterLimiter?.settings, ceilingNode: layout.masterLimiter, meter: masterLevels,
                          ceilingLane: layout.masterLimiter?.ceilingParameter.automation)
            : nil
        stageRef = stage.map { Unretained($0) }
    }

    deinit {
        laneValues.deallocate()
        scheduleActive.deallocate()
        scheduleValues.deallocate()
        trackScheduled.deallocate()
        for k in 0..<trackCount { gainLanes[k].volume.release(); gainLanes[k].pan.release() }
        masterVolume.release()
        gainLanes.deinitialize(count: trackCount)
        gainLanes.deallocate()
        gainsMove.deallocate()
        scheduleRefs.deallocate()
        trackBufferRefs.deallocate()
        trackRefs.deallocate()
        pipeline?.stop()
    }

    /// Per track, the source frames one frame of the mix takes (rate conversion and speed): a
    /// live player loops each source every `layout.frameCount` times this.
    public var trackSourceFramesPerFrame: [Double] { tracks.map(\.sourceFramesPerOutputFrame) }

    /// Per track, the source frames one pass of a loop takes (live, looping: where each
    /// source starts again; with a tempo map, the input the map reaches at the session's end).
    public var trackSourceFramesPerPass: [Double] { tracks.map { $0.sourceFramesPerPass(layout.frameCount) } }

    /// The latency each track's effects add (removed by `start()`). Live kernels give every
    /// track the same latency.
    public var trackLatencyFrames: [Int] { tracks.map(\.latencyFrames) }

    /// Per track, the input samples replaced by 0 so far because they were NaN, ±∞ or beyond
    /// ±10⁶ (see `SampleGuard`). Any thread.
    public var trackReplacedSamples: [Int] { tracks.map { $0.replacedSamples.load(ordering: .relaxed) } }

    /// Rewinds every source and pre-rolls every track by its latency.
    public func start() throws { try seek(toFrame: 0) }

    /// Moves to `frame` of the mix (at the output rate) with cleared signal state, pre-rolled so
    /// the next block starts exactly there.
    public func seek(toFrame frame: Int) throws {
        pipeline?.stop()
        pipeline = nil
        // (a pipeline's threads gave the shifters theirs)
        for t in tracks { t.use(workspace) }
        let target = min(max(0, frame), layout.frameCount)
        framesRendered = target
        mixFrame = target
        stage?.reset(timelineFrame: target)
        for s in schedules { s?.reset(toFrame: target) }
        muteLanes?.restart()
        for t in tracks {
            let sourceFrame = t.sourceFrame(atTimelineFrame: target)
            // (the timeline frame the track's lanes start from, before its state is reset)
            t.songBase = target
            try t.reset(toFrame: sourceFrame)
            var left = t.latencyFrames
            while left > 0 {
                let n = min(left, maximumFrameCount)
                t.render(frameCount: n, into: trackBuffers[t.channelCount]!)
                left -= n
            }
            t.setGains(targetGains(TrackHandle(t), audible: isAudible(TrackHandle(t), anySolo: anySolo())))
        }
        let cores = TrackPipeline.availableCores()
        if mode == .offline && parallelTracks && tracks.count > 1 && cores > 1 && target < layout.frameCount {
            let p = TrackPipeline(tracks: tracks, blockFrames: maximumFrameCount,
                                  totalFrames: layout.frameCount - target, workers: cores,
                                  workspaceByteCount: workspace.byteCount)
            if p.start() { pipeline = p }   // else the tracks render in `render`, one after another
        }
    }

    /// Where track `track`'s source must be for `restartSignal(atFrame: frame)`: a source frame
    /// (at the source's rate), the track's latency ahead of the mix's frame `frame − L`, L the
    /// largest track latency (so it can be below 0: silence first); on the timeline, where the
    /// track's tempo (or map) has its input then. Does not allocate.
    public func sourceFrame(track: Int, restartingAt frame: Int) -> Int {
        let t = tracks[track]
        return t.sourceFrame(atTimelineFrame: frame - largestLatencyFrames + t.latencyFrames)
    }

    /// The live seek without a pre-roll: clears every track's signal state and sets the position
    /// to `frame − L` (L the largest track latency), with each source already at
    /// `sourceFrames(restartingAt: frame)`. From frame `frame` on, the mix is then exactly what
    /// `seek(toFrame: frame)` gives; the L frames before it are the effects starting up (a
    /// player keeps them silent). Render side: no allocation, no lock, no file access.
    public func restartSignal(atFrame frame: Int) {
        let solo = anySolo()
        stage?.reset(timelineFrame: frame - largestLatencyFrames)
        for s in schedules { s?.reset(toFrame: frame) }
        muteLanesRef?._withUnsafeGuaranteedRef { $0.restart() }
        for t in tracks {
            // (the timeline frame its lanes start from, before its state is reset: the pitch and
            // tempo maps and the EQ's lanes start there)
            t.songBase = frame - largestLatencyFrames + t.latencyFrames
            t.resetSignalState()
            t.setGains(targetGains(TrackHandle(t), audible: isAudible(TrackHandle(t), anySolo: solo)))
        }
        framesRendered = frame - largestLatencyFrames
        mixFrame = framesRendered
    }

    /// Renders up to `frameCount` (≤ `maximumFrameCount`) frames of the mix into `output`; returns
    /// the frames rendered, fewer at the end of the mix and 0 after it (never fewer when
    /// `loops`: the sources then loop, see `StreamingSource.setLoop`). Live, through the output
    /// stage. Render thread; does not allocate, lock or throw (see `failure`): the compiler
    /// checks it (`@_noAllocation`/`@_noLocks`), down through the tracks, their effects and the
    /// output stage, to the three boundaries vouched for (the sources' reads, and offline only,
    /// the report's tap and the multi-core pipeline: see docs/realtime.md).
    @_noAllocation @_noLocks
    public func render(frameCount: Int) -> Int {
        let asked = min(frameCount, maximumFrameCount)
        guard let stage = stageRef else {
            let n = mix(frameCount: min(asked, framesToEnd))
            framesRendered += n
            mixFrame += n
            return n
        }
        // (the mix in place in `output`; the closure captures values only: the kernel unretained)
        let me = Unretained(self), planes = outputRef.planes, channels = layout.channelCount
        let n = stage { $0.render(frameCount: asked, into: planes, channelCount: channels, from: { m in me { $0.mixLive(m) } }) }
        framesRendered += n
        return n
    }

    /// The live mix of up to `m` frames (fewer at the end, unless looping).
    @inline(__always)
    private func mixLive(_ m: Int) -> Int {
        let mixed = mix(frameCount: loops ? m : min(m, framesToEnd))
        mixFrame += mixed
        return mixed
    }

    /// Mixes the next `n` frames of every track into `output` (the mix before the output stage)
    /// and records the meters; returns `n`.
    private func mix(frameCount n: Int) -> Int {
        guard n > 0 else { return 0 }
        let outChannels = layout.channelCount
        let out = outputRef.planes
        for c in 0..<outChannels { out[c].update(repeating: 0, count: n) }   // (`AudioBuffer.clear`)
        let outL = out[0]
        let outR = outChannels > 1 ? out[1] : outL
        let solo = anySolo()
        if let gains = liveGainsRef {
            let first = mixFrame, timeline = timelineFrame(mixFrame), period = loops ? layout.frameCount : 0
            gains._withUnsafeGuaranteedRef { $0.advance(fromFrame: first, count: n, timeline: timeline, period: period) }
        }
        if let gate = muteLanesRef {
            let first = mixFrame, timeline = timelineFrame(mixFrame), period = loops ? layout.frameCount : 0
            gate._withUnsafeGuaranteedRef { $0.advance(fromFrame: first, count: n, timeline: timeline, period: period) }
        }
        if let touches = switchTouchesRef {
            let first = mixFrame, timeline = timelineFrame(mixFrame), period = loops ? layout.frameCount : 0
            touches._withUnsafeGuaranteedRef { $0.advance(fromFrame: first, count: n, timeline: timeline, period: period) }
        }
        let scheduled = runSchedules(frameCount: n)
        if pipelined { return mixPipelined(frameCount: n, outL, outR, outChannels, anySolo: solo, scheduled: scheduled) }
        // One track after another: render it, mix it.
        for k in 0..<trackCount {
            let t = trackRefs[k]
            let buffer = trackBufferRefs[t.channelCount]!
            t.render(frameCount: n, into: buffer)
            let planes = buffer.planes
            let inL = planes[0]
            let inR = t.channelCount > 1 ? planes[1] : inL
            var peak: Float = 0, sum: Float = 0
            if muteStates != nil {
                // mute or solo lanes: run by run (`mixGated`)
                mixGated(k, t, inL, inR, count: n, outL, outR, outChannels, blockOffset: 0, scheduled: scheduled[k], &peak, &sum)
                t.recordMeter(peak: peak, rms: Libm.squareRoot(sum / Float(n * outChannels)))
                continue
            }
            let audible = isAudible(t, anySolo: solo)
            let target = targetGains(t, audible: audible)
            if mode == .offline { t.setGains(target) } else { t.rampGains(to: target, frames: rampFrames) }
            if scheduled[k] {
                // a schedule: per sample, and the gains where it left them (live: no ramp after)
                mixLaned(k, t, inL, inR, count: n, outL, outR, outChannels, atFrame: mixFrame, audible: audible, factors: nil, &peak, &sum)
                t.setGains(scheduledGains(t, last: n - 1, audible: audible))
            } else if gainsMove[k] {
                // lanes: per sample at their frames (live too; the gains left where the lanes
                // end the block, so a lane taken away resumes from there)
                mixLaned(k, t, inL, inR, count: n, outL, outR, outChannels, atFrame: mixFrame, audible: audible, factors: nil, &peak, &sum)
                if mode == .live { t.setGains(laneGains(t, atFrame: mixFrame + n - 1, audible: audible)) }
            } else if t.left.stepsLeft > 0 {
                // Linear ramp to the new gains (live changes): per sample.
                let m = min(n, t.left.stepsLeft)
                for i in 0..<m {
                    let l = t.left.next() * inL[i], r = t.right.next() * inR[i]
                    outL[i] += l
                    if outChannels > 1 { outR[i] += r }
                    peak = max(max(peak, abs(l)), abs(r)); sum += l * l + (outChannels > 1 ? r * r : 0)
                }
                t.left.finish(steps: m)
                t.right.finish(steps: m)
                if m < n { mix(t, inL + m, inR + m, count: n - m, outL + m, outR + m, outChannels, &peak, &sum) }
            } else {
                if tapped { tap(k, inL, inR, (t.gainLeft, t.gainRight), n) }
                mix(t, inL, inR, count: n, outL, outR, outChannels, &peak, &sum)
            }
            t.recordMeter(peak: peak, rms: Libm.squareRoot(sum / Float(n * outChannels)))
        }
        return finish(n, outChannels)
    }

    /// Offline on several cores: the tracks were rendered ahead (`TrackPipeline`); mixes them
    /// block by block, in track order, so the result is the same as sequential.
    ///
    /// Vouched for (`no_performance_analysis`: the realtime check does not enter it): the
    /// pipeline waits on a mutex and condition variables for the workers' blocks. Offline
    /// only: `seek` makes a pipeline for offline kernels alone, so a live kernel never comes
    /// here.
    @_semantics("no_performance_analysis")
    private func mixPipelined(frameCount n: Int, _ outL: UnsafeMutablePointer<Float>, _ outR: UnsafeMutablePointer<Float>,
                              _ outChannels: Int, anySolo solo: Bool, scheduled: UnsafeMutablePointer<Bool>) -> Int {
        guard let pipeline else { return 0 }
        let gated = muteStates != nil
        for (k, t) in tracks.enumerated() {
            if !gated { t.setGains(targetGains(TrackHandle(t), audible: isAudible(TrackHandle(t), anySolo: solo))) }
            trackPeak[k] = 0; trackSum[k] = 0
        }
        var done = 0
        while done < n {
            let (offset, frames) = pipeline.acquire()
            let m = min(n - done, frames - offset)
            for (k, t) in tracks.enumerated() {
                let b = pipeline.buffer(track: k)
                let inL = b.channel(0) + offset, inR = b.channel(t.channelCount > 1 ? 1 : 0) + offset
                var peak = trackPeak[k], sum = trackSum[k]
                if gated {
                    mixGated(k, TrackHandle(t), inL, inR, count: m, outL + done, outR + done, outChannels, blockOffset: done,
                             scheduled: scheduled[k], &peak, &sum)
                } else if gainsMove[k] || scheduled[k] {
                    mixLaned(k, TrackHandle(t), inL, inR, count: m, outL + done, outR + done, outChannels, atFrame: mixFrame + done,
                             audible: isAudible(TrackHandle(t), anySolo: solo), factors: nil, &peak, &sum)
                } else {
                    trackTap?(k, inL, inR, (t.gainLeft, t.gainRight), m)
                    mix(TrackHandle(t), inL, inR, count: m, outL + done, outR + done, outChannels, &peak, &sum)
                }
                trackPeak[k] = peak; trackSum[k] = sum
            }
            pipeline.release(frames: m)
            done += m
        }
        for (k, t) in tracks.enumerated() {
            t.meter.record(peak: trackPeak[k], rms: (trackSum[k] / Float(n * outChannels)).squareRoot())
        }
        return finish(n, outChannels)
    }

    /// Hands a track's block to `trackTap`.
    ///
    /// Vouched for (`no_performance_analysis`): the tap is the offline report's
    /// (`MixFXIO.TrackMeasures`), a closure from above the engine that the check cannot see;
    /// live kernels never set one, and `mix` comes here only when one is set (`tapped`).
    @_semantics("no_performance_analysis")
    private func tap(_ k: Int, _ left: UnsafePointer<Float>, _ right: UnsafePointer<Float>, _ gains: (left: Float, right: Float),
                     _ frameCount: Int) {
        trackTap?(k, left, right, gains, frameCount)
    }

    /// Frames of the mix until its end: on the timeline, `layout.frameCount − mixFrame`; live in
    /// song time, until the track furthest from the end of its song reaches it at the tempo it
    /// plays at now (the same while every tempo is 1).
    private var framesToEnd: Int {
        guard !playsOnTimeline else { return layout.frameCount - mixFrame }
        var most = 0.0
        for k in 0..<trackCount {
            let t = trackRefs[k]
            most = max(most, (Double(layout.frameCount) - t.songFrame) / t.tempoNow)
        }
        return Int(Libm.roundedUp(most))
    }

    /// Live: where the mix is in song time (frames at the output rate, tempo 1; `layout.frameCount`
    /// long), and the tempo it moves at: the track furthest behind, as tracks at different tempos
    /// part. On the timeline (`playsOnTimeline`): `framesRendered` and 1. Render thread (the
    /// player publishes it).
    public var songPosition: (frame: Double, tempo: Double) {
        guard !playsOnTimeline, let first = tracks.first else { return (Double(framesRendered), 1) }
        var position = (frame: first.songFrame, tempo: first.tempoNow)
        for t in tracks.dropFirst() where t.songFrame < position.frame { position = (t.songFrame, t.tempoNow) }
        return position
    }

    /// On the timeline, each track's tempo at frame `frame` of the mix: its tempo map's there
    /// (a moving lane, a time map, or a steady tempo with a moving pitch lane), else its
    /// steady tempo; in song time none (`songPosition` has the tempo). Any thread: the maps
    /// and tempos of a timeline session do not change while it plays.
    public func trackTempos(atTimelineFrame frame: Int) -> [Double] {
        guard playsOnTimeline else { return [] }
        return tracks.map { $0.timelineTempo(atFrame: frame) }
    }

    /// The mix's meter.
    private func finish(_ n: Int, _ outChannels: Int) -> Int {
        var peak: Float = 0, sumL: Float = 0, sumR: Float = 0
        let out = outputRef.planes
        dspCopy.levels(out[0], outChannels > 1 ? out[1] : nil, count: n, peak: &peak, sumA: &sumL, sumB: &sumR)
        let rms = Libm.squareRoot((sumL + sumR) / Float(n * outChannels))
        masterMeterRef { $0.record(peak: peak, rms: rms) }
        return n
    }

    @inline(__always)
    private func mix(_ t: TrackHandle, _ inL: UnsafeMutablePointer<Float>, _ inR: UnsafeMutablePointer<Float>,
                     count: Int, _ outL: UnsafeMutablePointer<Float>, _ outR: UnsafeMutablePointer<Float>,
                     _ outChannels: Int, _ peak: inout Float, _ sum: inout Float) {
        accumulate(inL, into: outL, gain: t.gainLeft, count: count)
        if outChannels > 1 { accumulate(inR, into: outR, gain: t.gainRight, count: count) }
        // the track's contribution to each output channel: a mono track's one input feeds both
        let g = max(abs(t.gainLeft), abs(t.gainRight))
        var p: Float = 0, sa: Float = 0, sb: Float = 0
        dspCopy.levels(inL, t.channelCount > 1 ? inR : nil, count: count, peak: &p, sumA: &sa, sumB: &sb)
        if t.channelCount == 1 { sb = sa }
        peak = max(peak, p * g)
        sum += sa * t.gainLeft * t.gainLeft + (outChannels > 1 ? sb * t.gainRight * t.gainRight : 0)
    }

    /// Mixes a track's block (or its part from `blockOffset`, offline on several cores) when
    /// the session has mute or solo lanes (`MuteLanes`): run by run of its factors, frames at 1
    /// as a heard track is mixed, frames at 0 as a silent one (left out), frames between per
    /// sample, the factor times its gains (`mixAutomated`). So a track whose block is open or
    /// closed mixes exactly as with the static switch.
    private func mixGated(_ k: Int, _ t: TrackHandle, _ inL: UnsafeMutablePointer<Float>, _ inR: UnsafeMutablePointer<Float>,
                          count n: Int, _ outL: UnsafeMutablePointer<Float>, _ outR: UnsafeMutablePointer<Float>,
                          _ outChannels: Int, blockOffset o: Int, scheduled: Bool, _ peak: inout Float, _ sum: inout Float) {
        guard let states = muteStates, let all = muteFactors else { return }
        let state = states[k], f = all + k * maximumFrameCount + o
        let moves = gainsMove[k]   // (a value: the right side of `||` is a closure)
        var i = 0
        while i < n {
            // the run from frame i: its factor (1, 0, or between) and its end
            let a: Double = state == MuteLanes.mixed ? f[i] : state == MuteLanes.open ? 1 : 0
            let ramp = a != 0 && a != 1
            var j = state == MuteLanes.mixed ? i + 1 : n
            if ramp {
                while j < n && f[j] != 0 && f[j] != 1 { j += 1 }
            } else {
                while j < n && f[j] == a { j += 1 }
            }
            let m = j - i, frame = mixFrame + o + i
            if ramp {
                mixLaned(k, t, inL + i, inR + i, count: m, outL + i, outR + i, outChannels, atFrame: frame, audible: true,
                         factors: UnsafePointer(f + i), &peak, &sum)
            } else if scheduled || moves {
                mixLaned(k, t, inL + i, inR + i, count: m, outL + i, outR + i, outChannels, atFrame: frame, audible: a == 1,
                         factors: nil, &peak, &sum)
            } else {
                t.setGains(laneGains(t, atFrame: frame, audible: a == 1))
                if tapped { tap(k, inL + i, inR + i, (t.gainLeft, t.gainRight), m) }
                mix(t, inL + i, inR + i, count: m, outL + i, outR + i, outChannels, &peak, &sum)
            }
            i = j
        }
        // (the gains where the block ends, as the other paths leave them)
        // (live only: offline, each run sets its own)
        guard mode == .live else { return }
        let last: Double = state == MuteLanes.mixed ? f[n - 1] : state == MuteLanes.open ? 1 : 0
        if scheduled {
            t.setGains(scheduledGains(t, last: n - 1, audible: last != 0))
        } else if moves {
            t.setGains(laneGains(t, atFrame: mixFrame + n - 1, audible: last != 0))
        }
    }

    /// `mixAutomated` cut at the loop's seams (live, looping: the lanes' frames start again
    /// there).
    private func mixLaned(_ k: Int, _ t: TrackHandle, _ inL: UnsafeMutablePointer<Float>, _ inR: UnsafeMutablePointer<Float>,
                          count n: Int, _ outL: UnsafeMutablePointer<Float>, _ outR: UnsafeMutablePointer<Float>,
                          _ outChannels: Int, atFrame first: Int, audible: Bool, factors: UnsafePointer<Double>?,
                          _ peak: inout Float, _ sum: inout Float) {
        var done = 0
        let length = layout.frameCount, cut = loops && length > 0   // (values: the right side of `&&` is a closure)
        while done < n {
            let frame = timelineFrame(first + done)
            let m = cut ? min(n - done, layout.frameCount - frame) : n - done
            mixAutomated(k, t, inL + done, inR + done, count: m, outL + done, outR + done, outChannels, atFrame: first + done,
                         timeline: frame, audible: audible, factors: factors.map { $0 + done }, &peak, &sum)
            done += m
        }
    }

    /// Mixes a track whose gains move (a volume, pan or master volume lane): the gains of every
    /// frame from the lanes' values at its timeline frame (`atFrame` + i), by the same formula
    /// as `targetGains`, applied per sample into `gained`, which is then summed into the mix
    /// (and tapped, with gains 1). `timeline`: the lanes' frame of `first` (`timelineFrame`).
    private func mixAutomated(_ k: Int, _ t: TrackHandle, _ inL: UnsafeMutablePointer<Float>, _ inR: UnsafeMutablePointer<Float>,
                              count n: Int, _ outL: UnsafeMutablePointer<Float>, _ outR: UnsafeMutablePointer<Float>,
                              _ outChannels: Int, atFrame first: Int, timeline: Int, audible: Bool,
                              factors: UnsafePointer<Double>?, _ peak: inout Float, _ sum: inout Float) {
        guard let gained = gainedRef else { return }
        // (live, a muted track fades out first: `MuteRamp`, in its volume's values)
        let heard = gainLanes[k].volume.isHeardLive   // (a value: the right side of `||` is a closure)
        guard audible || heard else { return }
        let gL = gained.planes[0], gR = gained.planes[1]
        let (volume, pan) = gainLanes[k]
        let mono = t.channelCount == 1
        // the lanes' values for the block, a segment at a time (`laneValues`: volume, master,
        // pan); what does not move is one value
        let volumes = laneValues, masters = laneValues + maximumFrameCount, pans = laneValues + 2 * maximumFrameCount
        // (a schedule's values for these frames replace the lane's or parameter's)
        let offset = first - mixFrame, masterSlot = 2 * trackCount
        let panScheduled = scheduleActive[2 * k + 1]   // (a value: the right side of `||` is a closure)
        if scheduleActive[2 * k] {
            copyValues(scheduleValues + 2 * k * maximumFrameCount + offset, into: volumes, count: n)
        } else {
            volume.fill(volumes, fromFrame: timeline, count: n)
        }
        if scheduleActive[masterSlot] {
            let m = scheduleValues + masterSlot * maximumFrameCount + offset
            for i in 0..<n { volumes[i] *= m[i] }
        } else if masterVolume.moves {
            masterVolume.fill(masters, fromFrame: timeline, count: n)
            for i in 0..<n { volumes[i] *= masters[i] }
        } else {
            let m = masterVolume.value(atFrame: timeline)
            for i in 0..<n { volumes[i] *= m }
        }
        // (a mute or solo lane's ramp: `MuteLanes`)
        if let factors { for i in 0..<n { volumes[i] *= factors[i] } }
        if outChannels == 1 {
            for i in 0..<n { gL[i] = Float(volumes[i]) * inL[i] }
        } else if pan.moves || panScheduled {
            if panScheduled {
                copyValues(scheduleValues + (2 * k + 1) * maximumFrameCount + offset, into: pans, count: n)
            } else {
                pan.fill(pans, fromFrame: timeline, count: n)
            }
            for i in 0..<n {
                let g = mono ? PanLaw.monoGains(pan: pans[i]) : PanLaw.balanceGains(pan: pans[i])
                gL[i] = Float(volumes[i] * g.left) * inL[i]
                gR[i] = Float(volumes[i] * g.right) * inR[i]
            }
        } else {
            let p = pan.value(atFrame: timeline)
            let g = mono ? PanLaw.monoGains(pan: p) : PanLaw.balanceGains(pan: p)
            for i in 0..<n {
                gL[i] = Float(volumes[i] * g.left) * inL[i]
                gR[i] = Float(volumes[i] * g.right) * inR[i]
            }
        }
        accumulate(gL, into: outL, gain: 1, count: n)
        if outChannels > 1 { accumulate(gR, into: outR, gain: 1, count: n) }
        if tapped { tap(k, gL, outChannels > 1 ? gR : gL, (1, 1), n) }
        var p: Float = 0, sa: Float = 0, sb: Float = 0
        dspCopy.levels(gL, outChannels > 1 ? gR : nil, count: n, peak: &p, sumA: &sa, sumB: &sb)
        peak = max(peak, p)
        sum += sa + sb
    }

    /// Takes the schedules' new events and works out the values of the block's `n` frames
    /// for those active in it (`scheduleActive`, `scheduleValues`); returns per track whether
    /// its gains are scheduled in this block (its volume, pan or the master volume). Render
    /// side; no allocation (the result is a pointer into `scheduleActive`'s room).
    private func runSchedules(frameCount n: Int) -> UnsafeMutablePointer<Bool> {
        let masterSlot = 2 * trackCount, first = mixFrame, active = scheduleActive
        for slot in 0...masterSlot {
            guard let s = scheduleRefs[slot], !s({ $0.isIdle }) else { active[slot] = false; continue }
            s { $0.take() }
            let isActive = s { $0.isActive(fromFrame: first, count: n) }
            active[slot] = isActive
            guard isActive else { continue }
            let base: Double
            if slot == masterSlot {
                base = masterVolume.value(atFrame: first)
            } else {
                base = slot % 2 == 0 ? gainLanes[slot / 2].volume.value(atFrame: first) : gainLanes[slot / 2].pan.value(atFrame: first)
            }
            let values = scheduleValues + slot * maximumFrameCount
            s { $0.render(into: values, fromFrame: first, count: n, base: base) }
        }
        let master = active[masterSlot]
        for k in 0..<trackCount { trackScheduled[k] = master || active[2 * k] || active[2 * k + 1] }
        return trackScheduled
    }

    /// The gains a scheduled track ends the block at: its schedules' values at the block's
    /// frame `last` (or the lanes' and parameters'), by `targetGains`' formula.
    private func scheduledGains(_ t: TrackHandle, last: Int, audible: Bool) -> (left: Float, right: Float) {
        guard audible else { return (0, 0) }
        let k = t.index, masterSlot = 2 * trackCount, frame = mixFrame + last
        let scheduleActive = scheduleActive, scheduleValues = scheduleValues, maximumFrameCount = maximumFrameCount
        func value(_ slot: Int, _ otherwise: AutomatedValue) -> Double {
            scheduleActive[slot] ? scheduleValues[slot * maximumFrameCount + last] : otherwise.value(atFrame: frame)
        }
        let volume = value(2 * k, gainLanes[k].volume) * value(masterSlot, masterVolume)
        let pan = value(2 * k + 1, gainLanes[k].pan)
        if layout.channelCount == 1 { return (Float(volume), Float(volume)) }
        let g = t.channelCount == 1 ? PanLaw.monoGains(pan: pan) : PanLaw.balanceGains(pan: pan)
        return (Float(volume * g.left), Float(volume * g.right))
    }

    /// Whether any track is soloed (read once per block).
    private func anySolo() -> Bool {
        for k in 0..<trackCount where trackRefs[k].soloValue != 0 { return true }
        return false
    }

    /// Whether a track's switches let it be heard: not muted, and soloed when any track is
    /// (the parameters, read once per block; with mute or solo lanes, `MuteLanes` says).
    @inline(__always)
    private func isAudible(_ t: TrackHandle, anySolo: Bool) -> Bool {
        t.muteValue == 0 && (!anySolo || t.soloValue != 0)
    }

    /// The mixer gains a track's settings ask for now: volume, pan law, master; (0, 0) when
    /// not `audible` (muted, or another track soloed).
    private func targetGains(_ t: TrackHandle, audible: Bool) -> (left: Float, right: Float) {
        guard audible else { return (0, 0) }
        return laneGains(t, atFrame: mixFrame, audible: audible)
    }

    /// The mixer gains of a track's volume and pan (parameters or lanes) and the master volume
    /// at frame `frame` of the mix (the lanes' `timelineFrame` of it), by `targetGains`'
    /// formula.
    private func laneGains(_ t: TrackHandle, atFrame frame: Int, audible: Bool) -> (left: Float, right: Float) {
        guard audible else { return (0, 0) }
        let k = t.index, at = timelineFrame(frame)
        let volume = gainLanes[k].volume.value(atFrame: at) * masterVolume.value(atFrame: at)
        let pan = gainLanes[k].pan.value(atFrame: at)
        if layout.channelCount == 1 { return (Float(volume), Float(volume)) }
        let g = t.channelCount == 1 ? PanLaw.monoGains(pan: pan) : PanLaw.balanceGains(pan: pan)
        return (Float(volume * g.left), Float(volume * g.right))
    }
}

/// out[i] += gain·x[i]; a gain of exactly 1 adds the samples unchanged.
@inline(__always) @_noAllocation @_noLocks
func accumulate(_ x: UnsafePointer<Float>, into out: UnsafeMutablePointer<Float>, gain: Float, count: Int) {
    if gain == 1 {
        for i in 0..<count { out[i] += x[i] }
    } else if gain != 0 {
        for i in 0..<count { out[i] += gain * x[i] }
    }
}

/// out[i] = x[i] for `count` values: a memmove (`update(from:count:)` assigns element by element,
/// which the realtime check counts as a possible release).
@inline(__always) @_noAllocation @_noLocks
func copyValues(_ x: UnsafePointer<Double>, into out: UnsafeMutablePointer<Double>, count: Int) {
    UnsafeMutableRawPointer(out).copyMemory(from: x, byteCount: count * MemoryLayout<Double>.stride)
}
