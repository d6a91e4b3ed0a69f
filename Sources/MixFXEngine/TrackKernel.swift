import MixFXDSP
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// How a kernel will be driven.
public enum RenderMode: Sendable {
    /// Settings are fixed for the whole render: no smoothing, least latency.
    case offline
    /// Settings change while rendering: changes are smoothed (≈ 10–30 ms) and every track has the
    /// same fixed latency, so the mix stays aligned whatever the pitch.
    case live
}

/// The render-side state of one effect node.
enum EffectKernel {
    case eq(node: ShelfEQNode, kernel: EQKernel)
    /// `cents`: the pitch it renders at (the node's, a constant lane's, or a moving lane's,
    /// which the shifter reads through its `PitchMap`).
    case pitch(node: TimePitchNode, shifter: any PitchShifting, cents: AutomatedValue)
}

/// A `ShelfEQ` with render-side smoothing toward the node's settings.
final class EQKernel {
    var eq = ShelfEQ()
    let smooth: Bool
    let sampleRate: Double
    /// Frames between two coefficient updates while smoothing, or following a moving lane.
    static let subBlock = 32
    /// The node's lanes (nil: none), and the timeline frame of the next input frame (before a
    /// shifter that changes the tempo: the input position, which `inputMap`/`inputTempo` take
    /// to the timeline, `TrackTempo.inputToTimeline`).
    var lanes: EQLanes?
    var position = 0
    var inputMap: TempoMap?
    var inputTempo = 1.0
    var readsInput = false
    /// Live looped playback: the timeline's length (0: no loop); position p is then the
    /// timeline's frame p mod `loopFrames`, so the lanes start again at every seam.
    var loopFrames = 0

    /// The timeline frame of position `p`.
    @inline(__always)
    func timelineFrame(_ p: Int) -> Int {
        if loopFrames > 0 { return ((p % loopFrames) + loopFrames) % loopFrames }
        return readsInput ? TrackTempo.inputToTimeline(p, map: inputMap, tempo: inputTempo) : p
    }

    init(smooth: Bool, sampleRate: Double) {
        self.smooth = smooth
        self.sampleRate = sampleRate
    }

    /// A bypassed band is a 0 dB band: both are skipped, and smoothing then fades a bypass.
    static func effective(_ s: ShelfEQSettings) -> ShelfEQSettings {
        var e = s
        if e.bass.bypass { e.bass.gainDB = 0; e.bass.bypass = false }
        if e.treble.bypass { e.treble.gainDB = 0; e.treble.bypass = false }
        return e
    }

    /// The settings `node` asks for at the next input frame: its parameters', with its lanes'
    /// values there.
    func target(_ node: ShelfEQNode) -> ShelfEQSettings {
        lanes.map { $0.settings(node.settings, atFrame: timelineFrame(position)) } ?? node.settings
    }

    /// Runs `frameCount` frames in place with `node`'s settings (and lanes).
    func process(node: ShelfEQNode, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?, frameCount: Int) {
        if let lanes, lanes.moves {
            processAutomated(node, lanes, left: left, right: right, frameCount: frameCount)
        } else {
            process(target: target(node), left: left, right: right, frameCount: frameCount)
        }
        position += frameCount
    }

    /// A moving lane: at the start of every `subBlock` cell of the timeline (the same cells
    /// whatever the blocks) a step of the smoothing toward the lanes' values there (one-pole,
    /// τ = 10 ms, as live changes), and the coefficients recomputed; so EQ lanes move at
    /// 48000/32 = 1500 updates a second at 48 kHz.
    private func processAutomated(_ node: ShelfEQNode, _ lanes: EQLanes, left: UnsafeMutablePointer<Float>,
                                  right: UnsafeMutablePointer<Float>?, frameCount: Int) {
        let base = node.settings
        let cell = EQKernel.subBlock
        var done = 0
        while done < frameCount {
            // (looped: the cells of the timeline's frame, each loop cut at its seam)
            let p = loopFrames > 0 ? timelineFrame(position + done) : position + done
            let phase = ((p % cell) + cell) % cell
            if phase == 0 {
                var s = eq.settings
                EQKernel.approach(&s, EQKernel.effective(lanes.settings(base, atFrame: timelineFrame(p))), alpha: smoothingAlpha)
                eq.update(s)
            }
            let n = min(cell - phase, frameCount - done, loopFrames > 0 ? loopFrames - p : Int.max)
            eq.process(left: left + done, right: right.map { $0 + done }, frameCount: n)
            done += n
        }
    }

    /// The one-pole's coefficient per `subBlock` frames (τ = 10 ms).
    private var smoothingAlpha: Double { 1 - exp(-Double(EQKernel.subBlock) / (0.01 * sampleRate)) }

    /// One smoothing step of every setting toward `target` (gains and slopes linearly, corners
    /// in log frequency).
    static func approach(_ s: inout ShelfEQSettings, _ target: ShelfEQSettings, alpha: Double) {
        func approach(_ x: inout Double, _ t: Double, _ eps: Double) {
            Smoother.onePole(&x, toward: t, coefficient: alpha, snap: eps)
        }
        func approachLog(_ x: inout Double, _ t: Double) {
            Smoother.onePoleLog(&x, toward: t, coefficient: alpha, snapRatio: 1e-4)
        }
        approach(&s.bass.gainDB, target.bass.gainDB, 0.005)
        approach(&s.treble.gainDB, target.treble.gainDB, 0.005)
        approach(&s.globalGainDB, target.globalGainDB, 0.005)
        approach(&s.bass.slope, target.bass.slope, 1e-4)
        approach(&s.treble.slope, target.treble.slope, 1e-4)
        approachLog(&s.bass.frequencyHz, target.bass.frequencyHz)
        approachLog(&s.treble.frequencyHz, target.treble.frequencyHz)
    }

    func process(target raw: ShelfEQSettings, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?,
                 frameCount: Int) {
        let target = EQKernel.effective(raw)
        if target == eq.settings {
            eq.process(left: left, right: right, frameCount: frameCount)
            return
        }
        guard smooth else {
            eq.update(target)
            eq.process(left: left, right: right, frameCount: frameCount)
            return
        }
        // Move a step toward the target every 32 frames (one-pole, τ = 10 ms) and recompute the
        // coefficients: no zipper noise, no jump.
        let alpha = 1 - exp(-Double(EQKernel.subBlock) / (0.01 * sampleRate))
        var done = 0
        while done < frameCount {
            let n = min(EQKernel.subBlock, frameCount - done)
            var s = eq.settings
            EQKernel.approach(&s, target, alpha: alpha)
            eq.update(s)
            eq.process(left: left + done, right: right.map { $0 + done }, frameCount: n)
            done += n
        }
    }
}

/// The render-side state of one track: reads its source (mixing its channels down to the mix's
/// when it has more, and converting the rate when needed) and runs its effects into `buffer`.
/// `@unchecked Sendable`: a track kernel is used by one thread at a time (offline blocks may
/// render different tracks on different threads).
final class TrackKernel: @unchecked Sendable {
    let layout: TrackLayout
    /// Its index among the kernel's tracks (set by the kernel).
    var index = 0
    let source: any AudioSource
    /// The track's channels from the downmix on: 1 for a mono source, else the mix's.
    let channelCount: Int
    let meter = Meter()
    /// Samples of the source replaced by 0 because they were NaN, ±∞ or beyond ±10⁶
    /// (`SampleGuard`). Written by the rendering thread, read by any.
    let replacedSamples = Atomic<Int>(0)
    /// Where a read error of the source is recorded (the kernel's; see `render`).
    private let failures: RenderFailures
    /// The DSP copy that guards the samples (read here, not on the render thread).
    private let dspCopy = DSPCopy.active
    /// With a resampler: the source's frames before it.
    private let readBuffer: AudioBuffer?
    /// Sources with more channels than the track: the matrix, and the source's channels before it.
    private let downmix: Downmix?
    private let sourceBuffer: AudioBuffer?
    private let resampler: Resampler?
    private var effects: [EffectKernel] = []
    let latencyFrames: Int
    /// Source frames per output frame: the rate conversion, the speed (`Varispeed`) and the tempo.
    let sourceFramesPerOutputFrame: Double
    /// The effect that changes the tempo (a time-pitch node at a rate ≠ 1), and the buffer its
    /// input is pulled into.
    private var tempoEffect: Int?
    private let tempoInput: AudioBuffer?
    // Mixer gains into the left and right of the mix (ramped when live).
    var left = LinearRamp(0), right = LinearRamp(0)
    var gainLeft: Float { left.value }
    var gainRight: Float { right.value }

    /// Jumps to `gains` (start, seek, and every offline block).
    func setGains(_ gains: (left: Float, right: Float)) {
        left.jump(to: gains.left)
        right.jump(to: gains.right)
    }

    /// Heads for `gains` over `frames` frames from wherever the gains are now, unless already
    /// heading there.
    func rampGains(to gains: (left: Float, right: Float), frames: Int) {
        guard gains != (left.target, right.target) || (left.stepsLeft == 0 && (gainLeft, gainRight) != gains) else { return }
        left.ramp(to: gains.left, steps: frames)
        right.ramp(to: gains.right, steps: frames)
    }

    /// Offline, a pitch lane that moves: its map (the shifter is a streaming one, reading it),
    /// and the fixed chunks the shifter renders in, whatever the blocks asked of the track, so
    /// that the output does not depend on them (`pitchChunkFrames`; the chunk buffer and what
    /// is left of it).
    private let pitchMap: PitchMap?
    /// Offline, a moving tempo lane's map, or a steady tempo's with a moving pitch lane
    /// (`TrackTempo`): the shifter is then a streaming one reading it, in the same chunks.
    private let tempoMap: TempoMap?
    private let chunk: AudioBuffer?
    private var chunkPosition = 0, chunkAvailable = 0
    /// Live looped playback: the lanes' timeline is `frames` long and starts again at each
    /// seam (the EQ's lanes and a pitch lane's map read the frame modulo it). Control side,
    /// before rendering.
    func setLoop(frames: Int) {
        pitchMap?.periodFrames = frames
        for e in effects { if case .eq(_, let k) = e { k.loopFrames = frames } }
    }

    /// Frames a moving pitch lane's shifter renders at a time.
    static let pitchChunkFrames = 256
    /// Frames of the timeline between two samples of a pitch lane's map.
    static let pitchMapStepFrames = 32

    /// `timelineFrames`: the mix's length (how far a pitch lane's map reaches).
    init(layout: TrackLayout, outputRate: Int, mixChannels: Int, lfeGainDB: Double?, maximumFrameCount: Int, mode: RenderMode,
         failures: RenderFailures, timelineFrames: Int = 0) {
        self.failures = failures
        self.layout = layout
        // the placement is read where the source is read: inside a read-ahead source's feeder,
        // else by a `PlacedSource` in front of the source
        let placement = layout.player.placement
        let speed = layout.player.speedParameter.clampedValue
        // (the placement's silence, in the mix's time; live, in song time, as the tempo may change)
        let placedSpeed = mode == .live ? speed : TrackTempo.placedSpeed(layout, speed: speed)
        if let placing = layout.player.source as? any PlacingSource {
            placing.place(placement, speed: placedSpeed)
            source = placing
        } else {
            source = placement.isNeutral ? layout.player.source : PlacedSource(layout.player.source, placement: placement, speed: placedSpeed)
        }
        let f = source.format
        let rates = Varispeed.ratePair(sourceRate: f.sampleRate, outputRate: outputRate, speed: speed)
        channelCount = f.channelCount == 1 ? 1 : mixChannels
        let matrix = Downmix(layout: f.channelLayout, outputChannels: channelCount, lfeGainDB: lfeGainDB)
        downmix = matrix.isIdentity ? nil : matrix
        sourceBuffer = matrix.isIdentity ? nil : AudioBuffer(channelCount: f.channelCount, capacityFrames: maximumFrameCount)
        resampler = rates.inRate == rates.outRate ? nil
            : Resampler(inRate: rates.inRate, outRate: rates.outRate, channelCount: channelCount,
                        maxWriteFrames: maximumFrameCount)
        readBuffer = resampler == nil ? nil : AudioBuffer(channelCount: channelCount, capacityFrames: maximumFrameCount)
        let spec = ProcessSpec(sampleRate: Double(outputRate), maximumFrameCount: maximumFrameCount,
                               channelCount: channelCount)
        var latency = 0
        var map: PitchMap?
        let rate = Double(outputRate)
        let timeMap = mode == .offline ? layout.tempoMap : nil
        var beforeShifter = true
        for node in layout.effects {
            if let eqNode = node as? ShelfEQNode {
                let k = EQKernel(smooth: mode == .live, sampleRate: rate)
                k.lanes = EQLanes(eqNode, sampleRate: rate)
                // (before the shifter its frames are the input's: lanes read s⁻¹ of them)
                k.readsInput = mode == .offline && beforeShifter && (timeMap != nil || layout.tempo != 1)
                k.inputMap = timeMap
                k.inputTempo = layout.tempo
                // (its timeline position: an effect after a shifter sees its input that much late)
                k.position = -latency
                k.eq.prepare(spec)
                k.eq.update(EQKernel.effective(k.target(eqNode)))
                effects.append(.eq(node: eqNode, kernel: k))
            } else if let pitchNode = node as? TimePitchNode {
                let shifter = DSPCopy.active.makePitchShifter()
                let cents = AutomatedValue(pitchNode.pitchParameter, sampleRate: rate)
                var settings = pitchNode.settings
                settings.pitchCents = cents.value(atFrame: 0)
                if let c = pitchNode.rateParameter.automation?.constantValue { settings.tempo = c }
                if (cents.moves || timeMap != nil) && beforeShifter {
                    // a moving pitch or tempo: a streaming shifter reading the lanes' maps, in
                    // fixed chunks (the pitch map on the input's time: with a tempo, sample k
                    // is the lane's value at s⁻¹(k·step))
                    let step = TrackKernel.pitchMapStepFrames
                    if case .lane(let lane) = cents {
                        if let timeMap {
                            let inputEnd = Int(timeMap.position(atFrame: timelineFrames).rounded(.up))
                            map = PitchMap(stepFrames: step, count: inputEnd / step + 2) {
                                lane.value(at: timeMap.frame(atPosition: Double($0 * step)) / rate)
                            }
                        } else {
                            map = PitchMap(stepFrames: step, count: timelineFrames / step + 2) { lane.value(atFrame: $0 * step) }
                        }
                    }
                    if timeMap != nil {
                        let live = PitchShifterSettings.liveTempoRange
                        settings.tempo = min(max(settings.tempo, live.lowerBound), live.upperBound)
                    }
                    let chunkSpec = ProcessSpec(sampleRate: rate, maximumFrameCount: max(maximumFrameCount, TrackKernel.pitchChunkFrames),
                                                channelCount: channelCount)
                    shifter.prepare(chunkSpec, settings: settings, mode: .streaming, sharesWorkspace: true)
                    tempoEffect = effects.count
                } else {
                    // live: a streaming shifter (no latency; its input is read ahead as it needs it)
                    shifter.prepare(spec, settings: settings, mode: mode == .live ? .streaming : .offline,
                                    sharesWorkspace: true)
                    if shifter.settings.changesTempo || mode == .live { tempoEffect = effects.count }
                }
                latency += shifter.latencyFrames
                beforeShifter = false
                effects.append(.pitch(node: pitchNode, shifter: shifter, cents: cents))
            }
        }
        latencyFrames = latency
        pitchMap = map
        tempoMap = tempoEffect == nil ? nil : timeMap
        let chunked = map != nil || tempoMap != nil
        chunk = chunked ? AudioBuffer(channelCount: channelCount, capacityFrames: TrackKernel.pitchChunkFrames) : nil
        tempoInput = tempoEffect == nil ? nil
            : AudioBuffer(channelCount: channelCount, capacityFrames: max(maximumFrameCount, chunked ? TrackKernel.pitchChunkFrames : 0))
        let tempo = mode == .live || TrackTempo.movingLane(layout) != nil ? 1 : layout.tempo
        sourceFramesPerOutputFrame = Double(rates.inRate) / Double(rates.outRate) * tempo
        inputFramesPerOutputRateFrame = Double(rates.inRate) / Double(rates.outRate)
    }

    /// Source frames per frame of the track's input at the output rate (the rate conversion
    /// and the speed).
    private let inputFramesPerOutputRateFrame: Double

    /// The placed source's frame at timeline frame `frame` (offline seeks): with a tempo map
    /// its position there, else `frame` times `sourceFramesPerOutputFrame`.
    func sourceFrame(atTimelineFrame frame: Int) -> Int {
        if let tempoMap { return Int((tempoMap.position(atFrame: frame) * inputFramesPerOutputRateFrame).rounded()) }
        return Int((Double(frame) * sourceFramesPerOutputFrame).rounded())
    }

    /// Live: the source's position, in frames of the mix at tempo 1, that the track's own time
    /// counts from (set by the kernel at every seek and restart).
    var songBase = 0
    private var framesSinceReset = 0

    /// Live: the live shifter, whose input time is the track's own time.
    private var liveShifter: (any PitchShifting)? {
        guard let k = tempoEffect, case .pitch(_, let s, _) = effects[k], s.mode != .offline else { return nil }
        return s
    }

    /// Live: where the track is in its own (song) time, frames of the mix at tempo 1: at tempo 1
    /// the mix's position; a tempo R moves it R frames per frame of the mix.
    var songFrame: Double {
        // (a pitch lane's shifter renders chunks ahead: the frames of its chunk not yet given
        // out are ahead of the track, at tempo 1, as lanes play live)
        if let s = liveShifter { return Double(songBase) + s.inputTime - Double(chunk == nil ? 0 : chunkAvailable) }
        return Double(songBase + framesSinceReset - latencyFrames)
    }

    /// Live: the tempo the track plays at now (1 without a shifter).
    var tempoNow: Double { liveShifter?.currentTempo ?? 1 }

    /// Back to `frame` of the source with clear filter state and the current settings.
    func reset(toFrame frame: Int = 0) throws {
        try source.seek(toFrame: frame)
        resetSignalState()
    }

    /// Clear filter, resampler and shifter state with the current settings, the source left
    /// where it is. Render side: does not allocate.
    func resetSignalState() {
        resampler?.reset()
        framesSinceReset = 0
        chunkAvailable = 0
        var latency = 0
        for e in effects {
            switch e {
            case .eq(let node, let k):
                // (reading the input: its position at the timeline's `songBase`)
                k.position = !k.readsInput ? songBase - latency
                    : Int((tempoMap?.position(atFrame: songBase) ?? Double(songBase) * k.inputTempo).rounded())
                k.eq.update(EQKernel.effective(k.target(node)))
                k.eq.reset()
            case .pitch(let node, let s, let cents):
                if let pitchMap, cents.moves {
                    s.setPitchMap(pitchMap, originFrame: songBase)
                } else {
                    s.setPitchCents(cents.value(atFrame: songBase))
                }
                s.setTempo(node.rateParameter.clampedValue)
                if let tempoMap, s.mode == .streaming { s.setTempoMap(tempoMap, originFrame: songBase) }
                s.reset()
                latency += s.latencyFrames
            }
        }
    }

    /// A rough relative cost of rendering a block, for spreading tracks over cores: a shifter
    /// costs about ten times the rest of the chain.
    var renderCost: Int {
        1 + (resampler == nil ? 0 : 2) + (downmix == nil ? 0 : 1) + effects.reduce(0) { cost, e in
            if case .pitch(_, let s, _) = e, s.latencyFrames > 0 || s.mode != .offline { return cost + 10 }
            return cost
        }
    }

    /// The scratch memory its shifters need from the thread that renders it (`render`).
    var workspaceByteCount: Int {
        effects.reduce(0) { bytes, e in
            if case .pitch(_, let s, _) = e { return max(bytes, s.workspaceByteCount) }
            return bytes
        }
    }

    /// Renders the next `frameCount` frames of this track into `buffer` (`channelCount`
    /// channels; silence after the end), its shifters working in `workspace` (the rendering
    /// thread's, of at least `workspaceByteCount` bytes). Does not throw: a source that cannot be
    /// read is recorded in the kernel's `RenderFailures` and the track goes silent.
    func render(frameCount: Int, into buffer: AudioBuffer, workspace: PitchShifterWorkspace) {
        for e in effects { if case .pitch(_, let s, _) = e { s.use(workspace) } }
        let left = buffer.channel(0)
        let right: UnsafeMutablePointer<Float>? = channelCount > 1 ? buffer.channel(1) : nil
        framesSinceReset += frameCount
        if let k = tempoEffect, let input = tempoInput, case .pitch(let node, let shifter, _) = effects[k] {
            // A tempo (or live, where one may come): the shifter asks for its input as it needs
            // it (R frames per output frame); the effects before it run on that input, those after
            // it on the output.
            func pullInput(_ n: Int) -> (UnsafePointer<Float>, UnsafePointer<Float>?) {
                pull(frameCount: n, into: input)
                let inL = input.channel(0), inR: UnsafeMutablePointer<Float>? = channelCount > 1 ? input.channel(1) : nil
                runEffects(0..<k, left: inL, right: inR, frameCount: n)
                return (UnsafePointer(inL), inR.map { UnsafePointer($0) })
            }
            if let chunk {
                // a moving pitch lane: the shifter renders fixed chunks (see `pitchMap`)
                var done = 0
                while done < frameCount {
                    if chunkAvailable == 0 {
                        let cL = chunk.channel(0), cR: UnsafeMutablePointer<Float>? = channelCount > 1 ? chunk.channel(1) : nil
                        shifter.process(live: cL, cR, frameCount: chunk.capacityFrames, maximumPull: TrackKernel.pitchChunkFrames,
                                        pull: pullInput)
                        chunkPosition = 0
                        chunkAvailable = chunk.capacityFrames
                    }
                    let m = min(chunkAvailable, frameCount - done)
                    for c in 0..<channelCount {
                        (buffer.channel(c) + done).update(from: chunk.channel(c) + chunkPosition, count: m)
                    }
                    chunkPosition += m
                    chunkAvailable -= m
                    done += m
                }
            } else if shifter.mode != .offline {
                shifter.setPitchCents(node.pitchParameter.clampedValue)
                shifter.setPreserveFormants(node.formantParameter.value != 0)
                shifter.setTempo(node.rateParameter.clampedValue)
                shifter.process(live: left, right, frameCount: frameCount, maximumPull: input.capacityFrames, pull: pullInput)
            } else {
                shifter.process(into: left, right, frameCount: frameCount, maximumPull: input.capacityFrames, pull: pullInput)
            }
            runEffects((k + 1)..<effects.count, left: left, right: right, frameCount: frameCount)
            return
        }
        pull(frameCount: frameCount, into: buffer)
        runEffects(effects.indices, left: left, right: right, frameCount: frameCount)
    }

    /// Runs `effects[range]` in place on `frameCount` frames.
    @inline(__always)
    private func runEffects(_ range: Range<Int>, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?,
                            frameCount: Int) {
        for e in effects[range] {
            switch e {
            case .eq(let node, let k):
                k.process(node: node, left: left, right: right, frameCount: frameCount)
            case .pitch(let node, let shifter, _):
                if shifter.mode != .offline {
                    shifter.setPitchCents(node.pitchParameter.clampedValue)
                    shifter.setPreserveFormants(node.formantParameter.value != 0)
                }
                shifter.process(left: left, right: right, frameCount: frameCount)
            }
        }
    }

    private func pull(frameCount: Int, into buffer: AudioBuffer) {
        var done = 0
        if let resampler, let readBuffer {
            while done < frameCount {
                done += resampler.read(into: { buffer.channel($0) }, offset: done, maxFrames: frameCount - done)
                guard done < frameCount else { break }
                if resampler.isDrained { break }
                if resampler.needsInput {
                    let n = readSource(into: readBuffer, offset: 0, frameCount: readBuffer.capacityFrames)
                    if n == 0 {
                        resampler.finish()
                    } else {
                        resampler.write(frameCount: n) { UnsafePointer(readBuffer.channel($0)) }
                    }
                }
            }
        } else {
            while done < frameCount {
                let n = readSource(into: buffer, offset: done, frameCount: frameCount - done)
                if n == 0 { break }
                done += n
            }
        }
        if done < frameCount {
            for c in 0..<channelCount { (buffer.channel(c) + done).update(repeating: 0, count: frameCount - done) }
        }
    }

    /// Reads up to `frameCount` source frames into `out` at `offset` (the track's channels:
    /// downmixed when the source has more), sanitised; 0 at the end, and after a read error
    /// (recorded in `failures`).
    @inline(__always)
    private func readSource(into out: AudioBuffer, offset: Int, frameCount: Int) -> Int {
        guard let downmix, let sourceBuffer else {
            let n = read(into: out, offset: offset, frameCount: frameCount)
            guardSamples(out, offset: offset, count: n)
            return n
        }
        let n = read(into: sourceBuffer, offset: 0, frameCount: min(frameCount, sourceBuffer.capacityFrames))
        guardSamples(sourceBuffer, offset: 0, count: n)
        downmix.process(input: { UnsafePointer(sourceBuffer.channel($0)) }, output: { out.channel($0) + offset }, frameCount: n)
        return n
    }

    /// The source's next frames; 0 after a read error, which is recorded.
    @inline(__always)
    private func read(into buffer: AudioBuffer, offset: Int, frameCount: Int) -> Int {
        do {
            return try source.read(into: buffer, offset: offset, frameCount: frameCount)
        } catch {
            failures.record(error)
            return 0
        }
    }

    /// Replaces what no node may see (NaN, ±∞, |x| > 10⁶) by 0, counting it.
    @inline(__always)
    private func guardSamples(_ buffer: AudioBuffer, offset: Int, count: Int) {
        var replaced = 0
        for c in 0..<buffer.channelCount { replaced += dspCopy.sanitize(buffer.channel(c) + offset, count: count) }
        if replaced > 0 { replacedSamples.add(replaced, ordering: .relaxed) }
    }
}
