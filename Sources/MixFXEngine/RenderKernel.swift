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
    private let rampFrames: Int
    /// Frames of the mix rendered since `start` or the last `seek`.
    public private(set) var framesRendered = 0
    /// The sources loop the session (live): `render` has no end and `framesRendered` goes on
    /// past `layout.frameCount` (the position in the session is it modulo the length).
    public var loops = false {
        didSet { for t in tracks { t.setLoop(frames: loops ? layout.frameCount : 0) } }
    }

    /// The lanes' frame for frame `f` of the mix: `f`, or live when looping, `f` modulo the
    /// session's length (the lanes start again at every seam).
    @inline(__always)
    private func timelineFrame(_ f: Int) -> Int {
        let n = layout.frameCount
        return loops && n > 0 ? ((f % n) + n) % n : f
    }
    /// Offline: render the tracks on all the cores the process may use, ahead of the mix
    /// (default true; read by `start` and `seek`).
    public var parallelTracks = true
    private var pipeline: TrackPipeline?
    /// True when the tracks render ahead on worker threads (offline, `parallelTracks`, more
    /// than one track and core; decided by `start`/`seek`).
    public var rendersTracksInParallel: Bool { pipeline != nil }
    /// Offline, for reports: called on the render thread with each track's block as it enters
    /// the mix (its effects' output, left and right — the same pointer for a mono track — and
    /// the mixer gains it is mixed with). Set before `start`. Not called for live gain ramps.
    public var trackTap: ((_ track: Int, _ left: UnsafePointer<Float>, _ right: UnsafePointer<Float>,
                           _ gains: (left: Float, right: Float), _ frameCount: Int) -> Void)?
    private var trackPeak: [Float], trackSum: [Float]
    /// Per track, its volume and pan (parameters, constant lanes or moving ones); the master
    /// volume; whether a track's gains move (then applied per sample, `mixAutomated`); and
    /// where its gained samples go then.
    private let gainLanes: [(volume: AutomatedValue, pan: AutomatedValue)]
    private let masterVolume: AutomatedValue
    /// Live: the gains' touch and release (advanced once per block, before the mix reads them).
    private let liveGains: LiveGains?
    private let gainsMove: [Bool]
    private let gained: AudioBuffer?
    /// Room for three blocks of lane values (`mixAutomated`).
    private let laneValues: UnsafeMutablePointer<Double>
    /// The gains' schedules (`AudioParameter.schedule`): per track its volume's and pan's
    /// (slots 2k and 2k + 1), then the master volume's (slot 2·tracks); for the block being
    /// mixed, whether each is active and its values (`scheduleValues`, a block per slot).
    private let schedules: [ScheduledValue?]
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

    init(layout: EngineLayout, maximumFrameCount: Int, mode: RenderMode) {
        self.layout = layout
        self.maximumFrameCount = maximumFrameCount
        self.mode = mode
        output = AudioBuffer(channelCount: layout.channelCount, capacityFrames: maximumFrameCount)
        let failures = failures
        tracks = layout.tracks.map {
            TrackKernel(layout: $0, outputRate: layout.sampleRate, mixChannels: layout.channelCount, lfeGainDB: layout.lfeGainDB,
                        maximumFrameCount: maximumFrameCount, mode: mode, failures: failures, timelineFrames: layout.frameCount)
        }
        let rate = Double(layout.sampleRate)
        // (live: gains a hand may take over, `LiveGains`)
        let live = mode == .live ? LiveGains(layout: layout, sampleRate: rate, maximumFrameCount: maximumFrameCount) : nil
        liveGains = live
        let lanes = live?.trackValues ?? layout.tracks.map {
            (volume: AutomatedValue($0.player.volumeParameter, sampleRate: rate), pan: AutomatedValue($0.player.panParameter, sampleRate: rate))
        }
        let master = live.map { AutomatedValue.live($0.master) } ?? AutomatedValue(layout.mixer.outputVolumeParameter, sampleRate: rate)
        let moving = lanes.map { $0.volume.moves || $0.pan.moves || master.moves }
        gainLanes = lanes
        masterVolume = master
        gainsMove = moving
        // (a schedule may make any track's gains move)
        gained = AudioBuffer(channelCount: 2, capacityFrames: maximumFrameCount)
        laneValues = .allocate(capacity: 3 * maximumFrameCount)
        let scheduled = layout.tracks.flatMap { [ScheduledValue($0.player.volumeParameter), ScheduledValue($0.player.panParameter)] }
            + [ScheduledValue(layout.mixer.outputVolumeParameter)]
        schedules = scheduled
        scheduleActive = .allocate(capacity: scheduled.count)
        scheduleActive.initialize(repeating: false, count: scheduled.count)
        scheduleValues = .allocate(capacity: scheduled.count * maximumFrameCount)
        trackScheduled = .allocate(capacity: layout.tracks.count)
        trackScheduled.initialize(repeating: false, count: layout.tracks.count)
        for (k, t) in tracks.enumerated() { t.index = k }
        trackMeters = tracks.map(\.meter)
        workspace = PitchShifterWorkspace(byteCount: tracks.map(\.workspaceByteCount).max() ?? 0)
        let channelCounts = Set(tracks.map(\.channelCount))
        trackBuffers = (0...2).map { channelCounts.contains($0) ? AudioBuffer(channelCount: $0, capacityFrames: maximumFrameCount) : nil }
        largestLatencyFrames = tracks.map(\.latencyFrames).max() ?? 0
        rampFrames = max(1, layout.sampleRate / 100)
        trackPeak = [Float](repeating: 0, count: tracks.count)
        trackSum = [Float](repeating: 0, count: tracks.count)
        stage = mode == .live
            ? OutputStage(ProcessSpec(sampleRate: Double(layout.sampleRate), maximumFrameCount: maximumFrameCount,
                                      channelCount: layout.channelCount),
                          limiter: layout.masterLimiter?.settings, ceilingNode: layout.masterLimiter, meter: masterLevels)
            : nil
    }

    deinit {
        laneValues.deallocate()
        scheduleActive.deallocate()
        scheduleValues.deallocate()
        trackScheduled.deallocate()
        pipeline?.stop()
    }

    /// Per track, the source frames one frame of the mix takes (rate conversion and speed): a
    /// live player loops each source every `layout.frameCount` times this.
    public var trackSourceFramesPerFrame: [Double] { tracks.map(\.sourceFramesPerOutputFrame) }

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
        let target = min(max(0, frame), layout.frameCount)
        framesRendered = target
        stage?.reset()
        for s in schedules { s?.reset(toFrame: target) }
        for t in tracks {
            let sourceFrame = t.sourceFrame(atTimelineFrame: target)
            // (the timeline frame the track's lanes start from, before its state is reset)
            t.songBase = target
            try t.reset(toFrame: sourceFrame)
            var left = t.latencyFrames
            while left > 0 {
                let n = min(left, maximumFrameCount)
                t.render(frameCount: n, into: trackBuffers[t.channelCount]!, workspace: workspace)
                left -= n
            }
            t.setGains(targetGains(t, anySolo: anySolo()))
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
    /// largest track latency (so it can be below 0: silence first). Does not allocate.
    public func sourceFrame(track: Int, restartingAt frame: Int) -> Int {
        let t = tracks[track]
        return Int((Double(frame - largestLatencyFrames + t.latencyFrames) * t.sourceFramesPerOutputFrame).rounded())
    }

    /// The live seek without a pre-roll: clears every track's signal state and sets the position
    /// to `frame − L` (L the largest track latency), with each source already at
    /// `sourceFrames(restartingAt: frame)`. From frame `frame` on, the mix is then exactly what
    /// `seek(toFrame: frame)` gives; the L frames before it are the effects starting up (a
    /// player keeps them silent). Render side: no allocation, no lock, no file access.
    public func restartSignal(atFrame frame: Int) {
        let solo = anySolo()
        stage?.reset()
        for s in schedules { s?.reset(toFrame: frame) }
        for t in tracks {
            t.resetSignalState()
            t.songBase = frame - largestLatencyFrames + t.latencyFrames
            t.setGains(targetGains(t, anySolo: solo))
        }
        framesRendered = frame - largestLatencyFrames
    }

    /// Renders up to `frameCount` (≤ `maximumFrameCount`) frames of the mix into `output`; returns
    /// the frames rendered, fewer at the end of the mix and 0 after it (never fewer when
    /// `loops`: the sources then loop, see `StreamingSource.setLoop`). Live, through the output
    /// stage. Render thread; does not allocate, lock or throw (see `failure`).
    public func render(frameCount: Int) -> Int {
        let asked = min(frameCount, maximumFrameCount)
        guard let stage else {
            let n = mix(frameCount: min(asked, framesToEnd))
            framesRendered += n
            return n
        }
        let (block, n) = stage.render(frameCount: asked) { (m: Int) -> (AudioBuffer, Int) in
            (output, mix(frameCount: loops ? m : min(m, framesToEnd)))
        }
        if block !== output {
            for c in 0..<output.channelCount { output.channel(c).update(from: block.channel(c), count: n) }
        }
        framesRendered += n
        return n
    }

    /// Mixes the next `n` frames of every track into `output` (the mix before the output stage)
    /// and records the meters; returns `n`.
    private func mix(frameCount n: Int) -> Int {
        guard n > 0 else { return 0 }
        let outChannels = layout.channelCount
        output.clear(frameCount: n)
        let outL = output.channel(0)
        let outR = outChannels > 1 ? output.channel(1) : outL
        let solo = anySolo()
        liveGains?.advance(fromFrame: framesRendered, count: n, timeline: timelineFrame(framesRendered), period: loops ? layout.frameCount : 0)
        let scheduled = runSchedules(frameCount: n)
        if let pipeline {
            // Offline on several cores: the tracks were rendered ahead (`TrackPipeline`); mix
            // them block by block, in track order, so the result is the same as sequential.
            for (k, t) in tracks.enumerated() {
                t.setGains(targetGains(t, anySolo: solo))
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
                    if gainsMove[k] || scheduled[k] {
                        mixLaned(k, t, inL, inR, count: m, outL + done, outR + done, outChannels, atFrame: framesRendered + done,
                                 anySolo: solo, &peak, &sum)
                    } else {
                        trackTap?(k, inL, inR, (t.gainLeft, t.gainRight), m)
                        mix(t, inL, inR, count: m, outL + done, outR + done, outChannels, &peak, &sum)
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
        // One track after another: render it, mix it.
        for (k, t) in tracks.enumerated() {
            let buffer = trackBuffers[t.channelCount]!
            t.render(frameCount: n, into: buffer, workspace: workspace)
            let target = targetGains(t, anySolo: solo)
            if mode == .offline { t.setGains(target) } else { t.rampGains(to: target, frames: rampFrames) }
            let inL = buffer.channel(0)
            let inR = t.channelCount > 1 ? buffer.channel(1) : inL
            var peak: Float = 0, sum: Float = 0
            if scheduled[k] {
                // a schedule: per sample, and the gains where it left them (live: no ramp after)
                mixLaned(k, t, inL, inR, count: n, outL, outR, outChannels, atFrame: framesRendered, anySolo: solo, &peak, &sum)
                t.setGains(scheduledGains(t, last: n - 1, anySolo: solo))
            } else if gainsMove[k] {
                // lanes: per sample at their frames (live too; the gains left where the lanes
                // end the block, so a lane taken away resumes from there)
                mixLaned(k, t, inL, inR, count: n, outL, outR, outChannels, atFrame: framesRendered, anySolo: solo, &peak, &sum)
                if mode == .live { t.setGains(laneGains(t, atFrame: framesRendered + n - 1, anySolo: solo)) }
            } else if t.left.stepsLeft > 0 {
                // Linear ramp to the new gains (live changes): per sample.
                let m = min(n, t.left.stepsLeft)
                for i in 0..<m {
                    let l = t.left.next() * inL[i], r = t.right.next() * inR[i]
                    outL[i] += l
                    if outChannels > 1 { outR[i] += r }
                    peak = max(peak, abs(l), abs(r)); sum += l * l + (outChannels > 1 ? r * r : 0)
                }
                t.left.finish(steps: m)
                t.right.finish(steps: m)
                if m < n { mix(t, inL + m, inR + m, count: n - m, outL + m, outR + m, outChannels, &peak, &sum) }
            } else {
                trackTap?(k, inL, inR, (t.gainLeft, t.gainRight), n)
                mix(t, inL, inR, count: n, outL, outR, outChannels, &peak, &sum)
            }
            t.meter.record(peak: peak, rms: (sum / Float(n * outChannels)).squareRoot())
        }
        return finish(n, outChannels)
    }

    /// Frames of the mix until its end: offline, `layout.frameCount − framesRendered`; live, until
    /// the track furthest from the end of its song reaches it at the tempo it plays at now (the
    /// same while every tempo is 1).
    private var framesToEnd: Int {
        guard mode == .live else { return layout.frameCount - framesRendered }
        var most = 0.0
        for t in tracks { most = max(most, (Double(layout.frameCount) - t.songFrame) / t.tempoNow) }
        return Int(most.rounded(.up))
    }

    /// Live: where the mix is in song time (frames at the output rate, tempo 1; `layout.frameCount`
    /// long), and the tempo it moves at: the track furthest behind, as tracks at different tempos
    /// part. Offline: `framesRendered` and 1. Render thread (the player publishes it).
    public var songPosition: (frame: Double, tempo: Double) {
        guard mode == .live, let first = tracks.first else { return (Double(framesRendered), 1) }
        var position = (frame: first.songFrame, tempo: first.tempoNow)
        for t in tracks.dropFirst() where t.songFrame < position.frame { position = (t.songFrame, t.tempoNow) }
        return position
    }

    /// The mix's meter.
    private func finish(_ n: Int, _ outChannels: Int) -> Int {
        var peak: Float = 0, sumL: Float = 0, sumR: Float = 0
        dspCopy.levels(output.channel(0), outChannels > 1 ? output.channel(1) : nil, count: n, peak: &peak, sumA: &sumL, sumB: &sumR)
        masterMeter.record(peak: peak, rms: ((sumL + sumR) / Float(n * outChannels)).squareRoot())
        return n
    }

    @inline(__always)
    private func mix(_ t: TrackKernel, _ inL: UnsafeMutablePointer<Float>, _ inR: UnsafeMutablePointer<Float>,
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

    /// `mixAutomated` cut at the loop's seams (live, looping: the lanes' frames start again
    /// there).
    private func mixLaned(_ k: Int, _ t: TrackKernel, _ inL: UnsafeMutablePointer<Float>, _ inR: UnsafeMutablePointer<Float>,
                          count n: Int, _ outL: UnsafeMutablePointer<Float>, _ outR: UnsafeMutablePointer<Float>,
                          _ outChannels: Int, atFrame first: Int, anySolo: Bool, _ peak: inout Float, _ sum: inout Float) {
        var done = 0
        while done < n {
            let frame = timelineFrame(first + done)
            let m = loops && layout.frameCount > 0 ? min(n - done, layout.frameCount - frame) : n - done
            mixAutomated(k, t, inL + done, inR + done, count: m, outL + done, outR + done, outChannels, atFrame: first + done,
                         timeline: frame, anySolo: anySolo, &peak, &sum)
            done += m
        }
    }

    /// Mixes a track whose gains move (a volume, pan or master volume lane): the gains of every
    /// frame from the lanes' values at its timeline frame (`atFrame` + i), by the same formula
    /// as `targetGains`, applied per sample into `gained`, which is then summed into the mix
    /// (and tapped, with gains 1). `timeline`: the lanes' frame of `first` (`timelineFrame`).
    private func mixAutomated(_ k: Int, _ t: TrackKernel, _ inL: UnsafeMutablePointer<Float>, _ inR: UnsafeMutablePointer<Float>,
                              count n: Int, _ outL: UnsafeMutablePointer<Float>, _ outR: UnsafeMutablePointer<Float>,
                              _ outChannels: Int, atFrame first: Int, timeline: Int, anySolo: Bool,
                              _ peak: inout Float, _ sum: inout Float) {
        guard let gained else { return }
        let player = t.layout.player
        // (live, a muted track fades out first: `MuteRamp`, in its volume's values)
        guard player.muteParameter.value == 0 && (!anySolo || player.soloParameter.value != 0) || gainLanes[k].volume.isHeardLive else { return }
        let gL = gained.channel(0), gR = gained.channel(1)
        let (volume, pan) = gainLanes[k]
        let mono = t.channelCount == 1
        // the lanes' values for the block, a segment at a time (`laneValues`: volume, master,
        // pan); what does not move is one value
        let volumes = laneValues, masters = laneValues + maximumFrameCount, pans = laneValues + 2 * maximumFrameCount
        // (a schedule's values for these frames replace the lane's or parameter's)
        let offset = first - framesRendered, masterSlot = 2 * tracks.count
        if scheduleActive[2 * k] {
            volumes.update(from: scheduleValues + 2 * k * maximumFrameCount + offset, count: n)
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
        if outChannels == 1 {
            for i in 0..<n { gL[i] = Float(volumes[i]) * inL[i] }
        } else if pan.moves || scheduleActive[2 * k + 1] {
            if scheduleActive[2 * k + 1] {
                pans.update(from: scheduleValues + (2 * k + 1) * maximumFrameCount + offset, count: n)
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
        trackTap?(k, gL, outChannels > 1 ? gR : gL, (1, 1), n)
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
        let masterSlot = 2 * tracks.count
        for slot in 0..<schedules.count {
            guard let s = schedules[slot], !s.isIdle else { scheduleActive[slot] = false; continue }
            s.take()
            let active = s.isActive(fromFrame: framesRendered, count: n)
            scheduleActive[slot] = active
            guard active else { continue }
            let base: Double
            if slot == masterSlot {
                base = masterVolume.value(atFrame: framesRendered)
            } else {
                base = slot % 2 == 0 ? gainLanes[slot / 2].volume.value(atFrame: framesRendered) : gainLanes[slot / 2].pan.value(atFrame: framesRendered)
            }
            s.render(into: scheduleValues + slot * maximumFrameCount, fromFrame: framesRendered, count: n, base: base)
        }
        let master = scheduleActive[masterSlot]
        for k in 0..<tracks.count { trackScheduled[k] = master || scheduleActive[2 * k] || scheduleActive[2 * k + 1] }
        return trackScheduled
    }

    /// The gains a scheduled track ends the block at: its schedules' values at the block's
    /// frame `last` (or the lanes' and parameters'), by `targetGains`' formula.
    private func scheduledGains(_ t: TrackKernel, last: Int, anySolo: Bool) -> (left: Float, right: Float) {
        let player = t.layout.player
        guard player.muteParameter.value == 0 && (!anySolo || player.soloParameter.value != 0) else { return (0, 0) }
        let k = t.index, masterSlot = 2 * tracks.count, frame = framesRendered + last
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
        tracks.contains { $0.layout.player.soloParameter.value != 0 }
    }

    /// The mixer gains a track's settings ask for now: volume, pan law, mute/solo, master.
    private func targetGains(_ t: TrackKernel, anySolo: Bool) -> (left: Float, right: Float) {
        let player = t.layout.player
        let audible = player.muteParameter.value == 0 && (!anySolo || player.soloParameter.value != 0)
        guard audible else { return (0, 0) }
        return laneGains(t, atFrame: framesRendered, anySolo: anySolo)
    }

    /// The mixer gains of a track's volume and pan (parameters or lanes) and the master volume
    /// at frame `frame` of the mix (the lanes' `timelineFrame` of it), by `targetGains`'
    /// formula.
    private func laneGains(_ t: TrackKernel, atFrame frame: Int, anySolo: Bool) -> (left: Float, right: Float) {
        let player = t.layout.player
        guard player.muteParameter.value == 0 && (!anySolo || player.soloParameter.value != 0) else { return (0, 0) }
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
