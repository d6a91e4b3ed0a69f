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
/// Render side (`process`) it reads the node's parameters through `ParameterRef`s (the node is
/// kept alive by the track's layout), so that the checked render path counts no references.
final class EQKernel {
    var eq = ShelfEQ()
    let smooth: Bool
    let sampleRate: Double
    /// Frames between two coefficient updates while smoothing, or following a moving lane.
    static let subBlock = 32
    /// The node's lanes (nil: none), and the timeline frame of the next input frame (before a
    /// shifter that changes the tempo: the input position, which `inputMap`/`inputTempo` take
    /// to the timeline, `TrackTempo.inputToTimeline`).
    var lanes: EQLanes? {
        didSet {
            oldValue?.release()
            lanes?.setLoop(frames: loopFrames)
        }
    }
    var position = 0
    var inputMap: TempoMap? {
        didSet { inputMapRef = inputMap.map { Unretained($0) } }
    }
    /// `inputMap`, as the render path reads it.
    private var inputMapRef: Unretained<TempoMap>?
    var inputTempo = 1.0
    var readsInput = false
    /// Live looped playback: the timeline's length (0: no loop); position p is then the
    /// timeline's frame (before a shifter at a steady tempo R, p/R) mod `loopFrames`, so the
    /// lanes start again at every seam (a hand's take held over it too: `SmoothedTouch`).
    var loopFrames = 0 {
        didSet { lanes?.setLoop(frames: loopFrames) }
    }
    /// The node's parameters (nil: no node, the settings are given to `process(target:…)`).
    private let parameters: NodeParameters?
    private struct NodeParameters {
        let bassFrequency, bassGain, bassSlope, bassBypass: ParameterRef
        let trebleFrequency, trebleGain, trebleSlope, trebleBypass, globalGain: ParameterRef
    }

    /// The timeline frame of position `p`.
    @inline(__always)
    func timelineFrame(_ p: Int) -> Int {
        let t = readsInput ? TrackTempo.inputToTimeline(p, map: inputMapRef, tempo: inputTempo) : p
        return LoopPosition.frame(t, period: loopFrames)
    }

    /// `node`: whose parameters it follows (nil: none, see `parameters`).
    init(node: ShelfEQNode? = nil, smooth: Bool, sampleRate: Double) {
        self.smooth = smooth
        self.sampleRate = sampleRate
        parameters = node.map {
            NodeParameters(bassFrequency: ParameterRef($0.bassFrequency), bassGain: ParameterRef($0.bassGain),
                           bassSlope: ParameterRef($0.bassSlopeParameter), bassBypass: ParameterRef($0.bassBypassParameter),
                           trebleFrequency: ParameterRef($0.trebleFrequency), trebleGain: ParameterRef($0.trebleGain),
                           trebleSlope: ParameterRef($0.trebleSlopeParameter), trebleBypass: ParameterRef($0.trebleBypassParameter),
                           globalGain: ParameterRef($0.globalGain))
        }
    }

    deinit { lanes?.release() }

    /// The node's settings now (`ShelfEQNode.settings`, field by field into the ones held).
    @inline(__always)
    private var nodeSettings: ShelfEQSettings {
        var s = eq.settings
        guard let p = parameters else { return s }
        s.bass.frequencyHz = p.bassFrequency.clampedValue
        s.bass.gainDB = p.bassGain.clampedValue
        s.bass.slope = p.bassSlope.clampedValue
        s.bass.bypass = p.bassBypass.value != 0
        s.treble.frequencyHz = p.trebleFrequency.clampedValue
        s.treble.gainDB = p.trebleGain.clampedValue
        s.treble.slope = p.trebleSlope.clampedValue
        s.treble.bypass = p.trebleBypass.value != 0
        s.globalGainDB = p.globalGain.clampedValue
        return s
    }

    /// A bypassed band is a 0 dB band: both are skipped, and smoothing then fades a bypass.
    /// (An instance method: a class's static one is refused on the checked path.)
    @inline(__always)
    func effective(_ s: ShelfEQSettings) -> ShelfEQSettings {
        var e = s
        if e.bass.bypass { e.bass.gainDB = 0; e.bass.bypass = false }
        if e.treble.bypass { e.treble.gainDB = 0; e.treble.bypass = false }
        return e
    }

    /// The settings the node asks for at the next input frame: its parameters', with its lanes'
    /// values there.
    func target() -> ShelfEQSettings {
        let base = nodeSettings
        guard let lanes else { return base }
        return lanes.settings(base, atFrame: timelineFrame(position))
    }

    /// Runs `frameCount` frames in place with the node's settings (and lanes).
    func process(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?, frameCount: Int) {
        if let lanes, lanes.moves {
            processAutomated(lanes, left: left, right: right, frameCount: frameCount)
        } else {
            process(target: target(), left: left, right: right, frameCount: frameCount)
        }
        position += frameCount
        if smooth, let p = parameters {
            // (live: what plays, for a hand's next step from it: `AudioParameter.playedValue`)
            let s = eq.settings
            p.bassGain { $0.playedValue = s.bass.gainDB }
            p.bassFrequency { $0.playedValue = s.bass.frequencyHz }
            p.bassSlope { $0.playedValue = s.bass.slope }
            p.trebleGain { $0.playedValue = s.treble.gainDB }
            p.trebleFrequency { $0.playedValue = s.treble.frequencyHz }
            p.trebleSlope { $0.playedValue = s.treble.slope }
            p.globalGain { $0.playedValue = s.globalGainDB }
        }
    }

    /// A moving lane: at the start of every `subBlock` cell of the timeline (the same cells
    /// whatever the blocks) a step of the smoothing toward the lanes' values there (one-pole,
    /// τ = 10 ms, as live changes), and the coefficients recomputed; so EQ lanes move at
    /// 48000/32 = 1500 updates a second at 48 kHz.
    private func processAutomated(_ lanes: EQLanes, left: UnsafeMutablePointer<Float>,
                                  right: UnsafeMutablePointer<Float>?, frameCount: Int) {
        let base = nodeSettings
        let cell = EQKernel.subBlock
        var done = 0
        while done < frameCount {
            // (looped: the cells of the timeline's frame, each loop cut at its seam; reading the
            // input of a shifter at a tempo, the input's cells, the lanes at their timeline frame)
            let looped = loopFrames > 0, input = readsInput   // (values first: no `self` right of `&&`)
            let wraps = looped && !input
            let p = wraps ? timelineFrame(position + done) : position + done
            let phase = LoopPosition.frame(p, period: cell)
            if phase == 0 {
                var s = eq.settings
                approach(&s, effective(lanes.settings(base, atFrame: wraps ? p : timelineFrame(p))), alpha: smoothingAlpha)
                eq.update(s)
            }
            // (two-argument `min`s: the variadic one allocates)
            let n = min(min(cell - phase, frameCount - done), wraps ? loopFrames - p : Int.max)
            let d = done
            eq.process(left: left + d, right: right.map { $0 + d }, frameCount: n)
            done += n
        }
    }

    /// The one-pole's coefficient per `subBlock` frames (τ = 10 ms).
    private var smoothingAlpha: Double { 1 - Libm.exp(-Double(EQKernel.subBlock) / (0.01 * sampleRate)) }

    /// One smoothing step of every setting toward `target` (gains and slopes linearly, corners
    /// in log frequency).
    @inline(__always)
    private func approach(_ s: inout ShelfEQSettings, _ target: ShelfEQSettings, alpha: Double) {
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
        let target = effective(raw)
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
        let alpha = 1 - Libm.exp(-Double(EQKernel.subBlock) / (0.01 * sampleRate))
        var done = 0
        while done < frameCount {
            let n = min(EQKernel.subBlock, frameCount - done)
            var s = eq.settings
            approach(&s, target, alpha: alpha)
            eq.update(s)
            let d = done
            eq.process(left: left + d, right: right.map { $0 + d }, frameCount: n)
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
    /// `meter`, and the player's mute and solo, as the mix reads them (see `Unretained`).
    let meterRef: Unretained<Meter>
    let mute: ParameterRef, solo: ParameterRef
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

    // The render side's view of the above (see `Unretained`): what `render` reads, without
    // reference counting, so that the compiler can check it (`@_noAllocation`/`@_noLocks`).
    /// The effects in order (`effects`), one `EffectStep` each; `effectCount` of them.
    private let steps: UnsafeMutablePointer<EffectStep>
    private let effectCount: Int
    private let readBufferRef: BufferRef?, sourceBufferRef: BufferRef?, tempoInputRef: BufferRef?, chunkRef: BufferRef?
    private let resamplerRef: Unretained<Resampler>?
    private let downmixMatrix: DownmixMatrix?
    /// `pitchChunkFrames(mode)`, read here.
    private let chunkFrames: Int

    /// One effect as `render` runs it: an EQ, or a shifter with the node's parameters it
    /// follows live.
    private struct EffectStep {
        var eq: Unretained<EQKernel>?
        var shifter: ShifterRef?
        /// A streaming shifter (live, or offline following lanes): not `PitchShifterMode.offline`.
        var streaming = false
        var pitch, formant, rate: ParameterRef?
        /// A constant pitch lane's cents: what a live shifter plays instead of the parameter
        /// (nil: the parameter, or a moving lane's map).
        var pitchLaneCents: Double?
        /// Live: the pitch's touch (a hand holding it over its lane, recorded; `SmoothedTouch`).
        var pitchTouch: Unretained<SmoothedTouch>?
        /// On the timeline (`onTimeline`), the tempo the node had when the kernel was made (its
        /// constant lane's, or its parameter's): the timeline's frames are placed by it, so it
        /// does not follow the parameter (nil: it does, live in song time).
        var fixedTempo: Double?
    }

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
        // (values first: the right side of `||` is a closure, and one capturing `self` is refused
        // by the realtime check)
        let heading = (left.target, right.target), ramping = left.stepsLeft != 0, now = (gainLeft, gainRight)
        guard gains != heading || (!ramping && now != gains) else { return }
        left.ramp(to: gains.left, steps: frames)
        right.ramp(to: gains.right, steps: frames)
    }

    /// A pitch lane that moves: its map (the shifter is a streaming one, reading it), and the
    /// fixed chunks the shifter renders in, whatever the blocks asked of the track
    /// (`pitchChunkFrames`; the chunk buffer and what is left of it).
    private let pitchMap: PitchMap?
    /// A moving tempo lane's map, or a steady tempo's with a moving pitch lane (`TrackTempo`;
    /// offline, and live on the timeline): the shifter is then a streaming one reading it, in
    /// the same chunks; looped live, its copy that starts again at every seam.
    private var tempoMap: TempoMap?
    /// `tempoMap`, as the render path reads it.
    private var tempoMapRef: Unretained<TempoMap>?
    /// `tempoMap` as the layout gave it: looped playback plays a copy that starts again at
    /// every seam (`TempoMap.looping(everyFrames:)`).
    private var unloopedTempoMap: TempoMap?
    /// The input position of `songBase` (where a moving pitch lane's map starts: its frames
    /// are the input's with a tempo map), set at each reset.
    private var pitchOrigin = 0
    private let chunk: AudioBuffer?
    private var chunkPosition = 0, chunkAvailable = 0
    /// Live looped playback: the lanes' timeline is `frames` long and starts again at each
    /// seam (the EQ's lanes and a pitch lane's map read the frame modulo it). With a tempo map,
    /// the map starts again at each seam too, from the input position a pass reaches (s(L), not
    /// whole: the source loops there, `sourceFramesPerPass`), and a pitch map on the input's
    /// time has that period. Control side, before rendering.
    func setLoop(frames: Int) {
        loopFrames = frames
        if let base = unloopedTempoMap {
            let map = frames > 0 ? base.looping(everyFrames: frames) : base
            tempoMap = map
            tempoMapRef = Unretained(map)
            pitchMap?.periodFrames = frames > 0 ? map.periodPosition : 0
            for e in effects { if case .eq(_, let k) = e, k.inputMap != nil { k.inputMap = map } }
        } else {
            pitchMap?.periodFrames = Double(frames)
        }
        for e in effects { if case .eq(_, let k) = e { k.loopFrames = frames } }
        for t in pitchTouches { t.loopFrames = frames }
    }

    /// The tempo at timeline frame `frame`: the tempo map's there, else the layout's tempo.
    func timelineTempo(atFrame frame: Int) -> Double {
        guard let map = unloopedTempoMap else { return layout.tempo }
        return map.tempo(atPosition: map.position(atFrame: frame))
    }

    /// Live looped playback: the source frames a pass of `frames` timeline frames takes (the
    /// tempo map's s(frames), else `frames` times `sourceFramesPerOutputFrame`).
    func sourceFramesPerPass(_ frames: Int) -> Double {
        if let map = unloopedTempoMap { return map.position(atFrame: frames) * inputFramesPerOutputRateFrame }
        return Double(frames) * sourceFramesPerOutputFrame
    }

    /// Live looped playback: the session's length (0: no loop).
    private var loopFrames = 0
    /// Live: the pitch touches the steps read (`EffectStep.pitchTouch`), held here.
    private var pitchTouches: [SmoothedTouch] = []

    /// The timeline frame (within the pass when looping) where a pitch set now on `shifter` is
    /// heard: its next vocoder frame's input time (a pitch map's frame, less its origin), or
    /// with `atOutput` its next output frame's (a switch), taken to the timeline (s⁻¹ with a
    /// tempo map, over a steady tempo on the timeline). Where a touch of the pitch is recorded,
    /// so a lane written from it plays it at the same frames.
    @inline(__always)
    private func pitchHeardFrame(_ shifter: ShifterRef, tempo: Double?, atOutput: Bool = false) -> Int {
        LoopPosition.frame(pitchHeardTimelineFrame(shifter, tempo: tempo, atOutput: atOutput), period: loopFrames)
    }

    /// `pitchHeardFrame` on the timeline, before it is taken within the pass.
    @inline(__always)
    private func pitchHeardTimelineFrame(_ shifter: ShifterRef, tempo: Double?, atOutput: Bool) -> Int {
        let t = atOutput ? shifter.inputTime : shifter.nextFrameInputTime
        let f: Int
        if let map = tempoMapRef {
            let origin = Double(pitchOrigin)
            f = Int(Libm.roundedDown(map { $0.frame(atPosition: origin + t) }))
        } else {
            f = songBase + Int(Libm.roundedDown(t / (tempo ?? 1)))
        }
        return f
    }

    /// Live: the cents a streaming shifter plays from now: a hand's (touch, recorded), else a
    /// constant lane's, else the parameter's. A touch is recorded at the frame the change is
    /// heard from: the next vocoder frame's (`pitchHeardFrame`), or, when the change switches
    /// (`PitchShifter.switches(toCents:)`: a fresh vocoder crossfaded in at the output), the
    /// output's own, so that the lane written from it steps where the switch was heard.
    @inline(__always)
    private func livePitchCents(_ step: EffectStep, _ shifter: ShifterRef) -> Double {
        let hand = step.pitch!.clampedValue
        guard let touch = step.pitchTouch else { return step.pitchLaneCents ?? hand }
        let touched = step.pitch! { $0.isTouched }
        let cents = touched ? hand : step.pitchLaneCents ?? hand
        var switches = shifter.switches(toCents: cents)
        let period = loopFrames   // (values first: no `self` right of `&&`)
        var acrossSeam = false
        if switches && period > 0 {
            // (looping: the points recorded ahead may already be in the next pass, while the
            // switch is heard before the seam: it cuts back into the take before the seam; a
            // take begun past the seam has none, and records it as a glide's, at the next frame)
            let ahead = pitchHeardTimelineFrame(shifter, tempo: step.fixedTempo, atOutput: false)
            let out = pitchHeardTimelineFrame(shifter, tempo: step.fixedTempo, atOutput: true)
            acrossSeam = LoopPosition.frame(ahead, period: period) - ahead != LoopPosition.frame(out, period: period) - out
            if acrossSeam && !touch({ $0.canRecordBeforeSeam(0) }) { switches = false; acrossSeam = false }
        }
        let frame = pitchHeardFrame(shifter, tempo: step.fixedTempo, atOutput: switches)
        _ = touch { $0.record(0, touched: touched, atFrame: frame, value: hand, cutsBack: switches, acrossSeam: acrossSeam) }
        return cents
    }

    /// Frames a moving pitch lane's shifter renders at a time.
    /// Frames a moving lane's shifter renders at a time: offline 1024, so that the work done
    /// per chunk (the look-ahead, the maps' block reads, the pulls) is paid less often; live
    /// 256, so that a short period never has to carry a long chunk. The shifter's output does
    /// not depend on its blocks (`StreamingBlockTests`), so a session plays live what its
    /// render wrote.
    static func pitchChunkFrames(_ mode: RenderMode) -> Int { mode == .live ? 256 : 1024 }
    /// Frames of the timeline between two samples of a pitch lane's map.
    static let pitchMapStepFrames = 32

    /// `timelineFrames`: the mix's length (how far a pitch lane's map reaches). `onTimeline`:
    /// the track's input is placed on the mix's timeline by its tempo (offline, and live when the
    /// kernel plays on the timeline: `RenderKernel.playsOnTimeline`), else (live) in song time.
    init(layout: TrackLayout, outputRate: Int, mixChannels: Int, lfeGainDB: Double?, maximumFrameCount: Int, mode: RenderMode,
         onTimeline: Bool, failures: RenderFailures, timelineFrames: Int = 0) {
        self.failures = failures
        chunkFrames = TrackKernel.pitchChunkFrames(mode)
        self.layout = layout
        meterRef = Unretained(meter)
        mute = ParameterRef(layout.player.muteParameter)
        solo = ParameterRef(layout.player.soloParameter)
        // the placement is read where the source is read: inside a read-ahead source's feeder,
        // else by a `PlacedSource` in front of the source
        let placement = layout.player.placement
        let speed = layout.player.speedParameter.clampedValue
        // (the placement's silence, in the mix's time; live in song time, as the tempo may change)
        let placedSpeed = onTimeline ? TrackTempo.placedSpeed(layout, speed: speed) : speed
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
        let timeMap = onTimeline ? layout.tempoMap : nil
        var beforeShifter = true
        for node in layout.effects {
            if let eqNode = node as? ShelfEQNode {
                let k = EQKernel(node: eqNode, smooth: mode == .live, sampleRate: rate)
                k.lanes = EQLanes(eqNode, sampleRate: rate, always: mode == .live)
                // (before the shifter its frames are the input's: lanes read s⁻¹ of them)
                k.readsInput = onTimeline && beforeShifter && (timeMap != nil || layout.tempo != 1)
                k.inputMap = timeMap
                k.inputTempo = layout.tempo
                // (its timeline position: an effect after a shifter sees its input that much late)
                k.position = -latency
                k.eq.prepare(spec)
                k.eq.update(k.effective(k.target()))
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
                    if let lane = cents.lane {
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
                    let chunkSpec = ProcessSpec(sampleRate: rate, maximumFrameCount: max(maximumFrameCount, chunkFrames),
                                                channelCount: channelCount)
                    // (offline, the pitches are the map's or the one setting, the tempos the time
                    // map's or the one setting: only their tables are built, its buffers sized for
                    // them; live, a hand may move the pitch and the tempo anywhere)
                    let first = settings.pitchCents, tempo = settings.tempo
                    let centsMet = map.map { min($0.minimumCents, first)...max($0.maximumCents, first) } ?? first...first
                    let temposMet = timeMap.map { min($0.minimumTempo, tempo)...max($0.maximumTempo, tempo) } ?? tempo...tempo
                    shifter.prepare(chunkSpec, settings: settings, mode: .streaming, sharesWorkspace: true,
                                    bounds: mode == .live ? nil : StreamingBounds(pitchCents: centsMet, tempo: temposMet))
                    tempoEffect = effects.count
                } else {
                    // live: a streaming shifter (no latency; its input is read ahead as it needs it)
                    shifter.prepare(spec, settings: settings, mode: mode == .live ? .streaming : .offline,
                                    sharesWorkspace: true, bounds: nil)
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
        unloopedTempoMap = tempoMap
        tempoMapRef = tempoMap.map { Unretained($0) }
        let chunked = map != nil || tempoMap != nil
        chunk = chunked ? AudioBuffer(channelCount: channelCount, capacityFrames: chunkFrames) : nil
        tempoInput = tempoEffect == nil ? nil
            : AudioBuffer(channelCount: channelCount, capacityFrames: max(maximumFrameCount, chunked ? chunkFrames : 0))
        readBufferRef = readBuffer.map { BufferRef($0) }
        sourceBufferRef = sourceBuffer.map { BufferRef($0) }
        tempoInputRef = tempoInput.map { BufferRef($0) }
        chunkRef = chunk.map { BufferRef($0) }
        resamplerRef = resampler.map { Unretained($0) }
        downmixMatrix = downmix.map { DownmixMatrix($0) }
        effectCount = effects.count
        steps = .allocate(capacity: max(1, effects.count))
        var touches: [SmoothedTouch] = []
        for (i, e) in effects.enumerated() {
            switch e {
            case .eq(_, let k):
                (steps + i).initialize(to: EffectStep(eq: Unretained(k)))
            case .pitch(let node, let shifter, let cents):
                var streaming = false
                if case .offline = shifter.mode {} else { streaming = true }
                // (live: a hand may hold the pitch over its lane)
                let touch = mode == .live ? SmoothedTouch([node.pitchParameter]) : nil
                if let touch { touches.append(touch) }
                (steps + i).initialize(to: EffectStep(shifter: ShifterRef(shifter), streaming: streaming, pitch: ParameterRef(node.pitchParameter),
                                                      formant: ParameterRef(node.formantParameter), rate: ParameterRef(node.rateParameter),
                                                      pitchLaneCents: cents.constantValue, pitchTouch: touch.map { Unretained($0) },
                                                      fixedTempo: onTimeline ? node.rateParameter.automation?.constantValue ?? node.rateParameter.clampedValue : nil))
            }
        }
        pitchTouches = touches
        let tempo = !onTimeline || TrackTempo.movingLane(layout) != nil ? 1 : layout.tempo
        sourceFramesPerOutputFrame = Double(rates.inRate) / Double(rates.outRate) * tempo
        inputFramesPerOutputRateFrame = Double(rates.inRate) / Double(rates.outRate)
    }

    deinit {
        for e in effects { if case .pitch(_, _, let cents) = e { cents.release() } }
        steps.deinitialize(count: effectCount)
        steps.deallocate()
        downmixMatrix?.deallocate()
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

    /// Live: where the track is in its own (song) time, frames of the mix at tempo 1: at tempo 1
    /// the mix's position; a tempo R moves it R frames per frame of the mix.
    var songFrame: Double {
        // (a pitch lane's shifter renders chunks ahead: the frames of its chunk not yet given
        // out are ahead of the track, at tempo 1, as lanes play live)
        if let s = liveShifterRef { return Double(songBase) + s.inputTime - Double(chunkRef == nil ? 0 : chunkAvailable) }
        return Double(songBase + framesSinceReset - latencyFrames)
    }

    /// Live: the tempo the track plays at now (1 without a shifter).
    var tempoNow: Double {
        guard let s = liveShifterRef else { return 1 }
        return s.currentTempo
    }

    /// Live: the live shifter, whose input time is the track's own time.
    private var liveShifterRef: ShifterRef? {
        guard let k = tempoEffect else { return nil }
        let step = steps[k]
        return step.streaming ? step.shifter : nil
    }

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
        for (i, e) in effects.enumerated() {
            switch e {
            case .eq(_, let k):
                // (reading the input: its position at the timeline's `songBase`)
                k.position = !k.readsInput ? songBase - latency
                    : Int((tempoMap?.position(atFrame: songBase) ?? Double(songBase) * k.inputTempo).rounded())
                k.lanes?.cutTakes()
                k.eq.update(k.effective(k.target()))
                k.eq.reset()
            case .pitch(let node, let s, let cents):
                // (a pitch a hand holds starts at its value, at once: the seek fades)
                let held = steps[i].pitchTouch != nil && node.pitchParameter.isTouched
                steps[i].pitchTouch?({ $0.cut() })
                // (with a tempo map the pitch map's frames are the input's: it starts at s(songBase))
                pitchOrigin = tempoMap.map { Int($0.position(atFrame: songBase).rounded()) } ?? songBase
                if let pitchMap, cents.moves {
                    s.setPitchMap(pitchMap, originFrame: pitchOrigin)
                    s.holdPitch(held ? node.pitchParameter.clampedValue : nil)
                } else {
                    s.setPitchCents(held ? node.pitchParameter.clampedValue : cents.value(atFrame: songBase))
                }
                s.setTempo(steps[i].fixedTempo ?? node.rateParameter.clampedValue)
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

    /// Gives its shifters their scratch memory from `workspace` (the rendering thread's, of at
    /// least `workspaceByteCount` bytes): when the kernel is made, at a seek, and before each
    /// block a pipeline's thread renders (offline). Not on the live render path.
    func use(_ workspace: PitchShifterWorkspace) {
        for e in effects { if case .pitch(_, let s, _) = e { s.use(workspace) } }
    }

    /// Renders the next `frameCount` frames of this track into `buffer` (`channelCount`
    /// channels; silence after the end), its shifters working in the workspace it was last given
    /// (`use`). Does not throw: a source that cannot be read is recorded in the kernel's
    /// `RenderFailures` and the track goes silent. The compiler checks that it allocates nothing
    /// and takes no lock (`@_noAllocation`/`@_noLocks`), down to the source's read (`read`,
    /// vouched for).
    @_noAllocation @_noLocks
    func render(frameCount: Int, into buffer: AudioBuffer) {
        render(frameCount: frameCount, into: BufferRef(buffer))
    }

    /// `render(frameCount:into:)` into a buffer held unretained (the mix's: `RenderKernel`).
    @_noAllocation @_noLocks
    func render(frameCount: Int, into buffer: BufferRef) {
        let left = buffer.planes[0]
        let right: UnsafeMutablePointer<Float>? = channelCount > 1 ? buffer.planes[1] : nil
        framesSinceReset += frameCount
        if let k = tempoEffect, let input = tempoInputRef, let shifter = steps[k].shifter {
            // A tempo (or live, where one may come): the shifter asks for its input as it needs
            // it (R frames per output frame); the effects before it run on that input, those after
            // it on the output. (`pullInput` captures values only: the kernel unretained.)
            let me = Unretained(self)
            func pullInput(_ n: Int) -> (UnsafePointer<Float>, UnsafePointer<Float>?) {
                me { $0.pullEffected(n, into: input, before: k) }
            }
            let step = steps[k], maximumPull = input { $0.capacityFrames }
            if let chunk = chunkRef {
                // a moving pitch lane: the shifter renders fixed chunks (see `pitchMap`)
                let c = chunk.planes, out = buffer.planes, capacity = chunk { $0.capacityFrames }
                let cL = c[0], cR: UnsafeMutablePointer<Float>? = channelCount > 1 ? c[1] : nil, most = chunkFrames
                var done = 0
                while done < frameCount {
                    if chunkAvailable == 0 {
                        if let touch = step.pitchTouch {
                            let hand = step.pitch!.clampedValue, frame = pitchHeardFrame(shifter, tempo: step.fixedTempo)
                            shifter.holdPitch(touch { $0.isTouched(0, atFrame: frame, value: hand) } ? hand : nil)
                        }
                        // a whole chunk the block takes goes straight to the block (no copy)
                        let direct = frameCount - done >= capacity
                        let l = direct ? out[0] + done : cL
                        let r = cR == nil ? nil : direct ? out[1] + done : cR
                        switch shifter {
                        case .baseline(let s):
                            s._withUnsafeGuaranteedRef { $0.shift(live: l, r, frameCount: capacity, maximumPull: most, pull: pullInput) }
                        case .avx2(let s):
                            s._withUnsafeGuaranteedRef { $0.shift(live: l, r, frameCount: capacity, maximumPull: most, pull: pullInput) }
                        }
                        if direct {
                            done += capacity
                            continue
                        }
                        chunkPosition = 0
                        chunkAvailable = capacity
                    }
                    let m = min(chunkAvailable, frameCount - done)
                    for ch in 0..<channelCount {
                        UnsafeMutableRawPointer(out[ch] + done).copyMemory(from: c[ch] + chunkPosition, byteCount: m * MemoryLayout<Float>.stride)
                    }
                    chunkPosition += m
                    chunkAvailable -= m
                    done += m
                }
            } else if step.streaming {
                // (the tempo first: `switches(toCents:)` reads it)
                shifter.setPreserveFormants(step.formant!.value != 0)
                shifter.setTempo(step.fixedTempo ?? step.rate!.clampedValue)
                shifter.setPitchCents(livePitchCents(step, shifter))
                switch shifter {
                case .baseline(let s):
                    s._withUnsafeGuaranteedRef { $0.shift(live: left, right, frameCount: frameCount, maximumPull: maximumPull, pull: pullInput) }
                case .avx2(let s):
                    s._withUnsafeGuaranteedRef { $0.shift(live: left, right, frameCount: frameCount, maximumPull: maximumPull, pull: pullInput) }
                }
            } else {
                switch shifter {
                case .baseline(let s):
                    s._withUnsafeGuaranteedRef { $0.shift(into: left, right, frameCount: frameCount, maximumPull: maximumPull, pull: pullInput) }
                case .avx2(let s):
                    s._withUnsafeGuaranteedRef { $0.shift(into: left, right, frameCount: frameCount, maximumPull: maximumPull, pull: pullInput) }
                }
            }
            // (live: the pitch that plays, for a hand's next step from it)
            if step.pitchTouch != nil { step.pitch! { $0.playedValue = shifter.currentCents } }
            runEffects((k + 1)..<effectCount, left: left, right: right, frameCount: frameCount)
            return
        }
        pull(frameCount: frameCount, into: buffer)
        runEffects(0..<effectCount, left: left, right: right, frameCount: frameCount)
    }

    /// The next `n` frames of the shifter's input (effect `k`): pulled into `input`, and the
    /// effects before it run on them.
    @inline(__always)
    private func pullEffected(_ n: Int, into input: BufferRef, before k: Int) -> (UnsafePointer<Float>, UnsafePointer<Float>?) {
        pull(frameCount: n, into: input)
        let planes = input.planes
        let inL = planes[0], inR: UnsafeMutablePointer<Float>? = channelCount > 1 ? planes[1] : nil
        runEffects(0..<k, left: inL, right: inR, frameCount: n)
        return (UnsafePointer(inL), inR.map { UnsafePointer($0) })
    }

    /// Runs effects `range` in place on `frameCount` frames.
    @inline(__always)
    private func runEffects(_ range: Range<Int>, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?,
                            frameCount: Int) {
        for i in range {
            let step = steps[i]
            if let eq = step.eq {
                eq { $0.process(left: left, right: right, frameCount: frameCount) }
            } else if let shifter = step.shifter {
                if step.streaming {
                    shifter.setPitchCents(step.pitchLaneCents ?? step.pitch!.clampedValue)
                    shifter.setPreserveFormants(step.formant!.value != 0)
                }
                shifter.process(left: left, right: right, frameCount: frameCount)
            }
        }
    }

    private func pull(frameCount: Int, into buffer: BufferRef) {
        var done = 0
        let planes = buffer.planes
        if let resampler = resamplerRef, let readBuffer = readBufferRef {
            let readPlanes = readBuffer.planes, readCapacity = readBuffer { $0.capacityFrames }
            while done < frameCount {
                let d = done
                done += resampler { $0.read(into: { planes[$0] }, offset: d, maxFrames: frameCount - d) }
                guard done < frameCount else { break }
                if resampler({ $0.isDrained }) { break }
                if resampler({ $0.needsInput }) {
                    let n = readSource(into: readBuffer, offset: 0, frameCount: readCapacity)
                    if n == 0 {
                        resampler { $0.finish() }
                    } else {
                        resampler { $0.write(frameCount: n) { UnsafePointer(readPlanes[$0]) } }
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
            for c in 0..<channelCount { (planes[c] + done).update(repeating: 0, count: frameCount - done) }
        }
    }

    /// Reads up to `frameCount` source frames into `out` at `offset` (the track's channels:
    /// downmixed when the source has more), sanitised; 0 at the end, and after a read error
    /// (recorded in `failures`).
    @inline(__always)
    private func readSource(into out: BufferRef, offset: Int, frameCount: Int) -> Int {
        guard let downmix = downmixMatrix, let sourceBuffer = sourceBufferRef else {
            let n = read(into: out, offset: offset, frameCount: frameCount)
            guardSamples(out, offset: offset, count: n)
            return n
        }
        let capacity = sourceBuffer { $0.capacityFrames }
        let n = read(into: sourceBuffer, offset: 0, frameCount: min(frameCount, capacity))
        guardSamples(sourceBuffer, offset: 0, count: n)
        downmix.process(input: sourceBuffer.planes, output: out.planes, offset: offset, frameCount: n)
        return n
    }

    /// The source's next frames; 0 after a read error, which is recorded.
    ///
    /// Vouched for (`no_performance_analysis`: the realtime check does not enter it): the
    /// source is an `any AudioSource`, whose types live above the engine (`MixFXIO`) where the
    /// check cannot follow. The live player's sources read lock-free rings its feeder thread
    /// fills (`StreamingSource`), without allocating or locking, as the allocation-counting
    /// play tests check; offline sources read files, outside the live contract. The error path
    /// (`RenderFailures.record`, a lock) ends the track's sound.
    @_semantics("no_performance_analysis")
    private func read(into buffer: BufferRef, offset: Int, frameCount: Int) -> Int {
        let source = source
        do {
            return try buffer { try source.read(into: $0, offset: offset, frameCount: frameCount) }
        } catch {
            failures.record(error)
            return 0
        }
    }

    /// Replaces what no node may see (NaN, ±∞, |x| > 10⁶) by 0, counting it.
    @inline(__always)
    private func guardSamples(_ buffer: BufferRef, offset: Int, count: Int) {
        var replaced = 0
        let planes = buffer.planes, channels = buffer { $0.channelCount }
        for c in 0..<channels { replaced += dspCopy.sanitize(planes[c] + offset, count: count) }
        if replaced > 0 { replacedSamples.add(replaced, ordering: .relaxed) }
    }
}

/// A track kernel as the mix uses it (`RenderKernel`): its members read and called through
/// the unretained reference, so that the checked mix counts no references.
extension Unretained where Object == TrackKernel {
    var index: Int { @inline(__always) get { self { $0.index } } }
    var channelCount: Int { @inline(__always) get { self { $0.channelCount } } }
    var gainLeft: Float { @inline(__always) get { self { $0.gainLeft } } }
    var gainRight: Float { @inline(__always) get { self { $0.gainRight } } }
    /// The mixer gains' ramps (`TrackKernel.left`, `right`).
    var left: LinearRamp {
        @inline(__always) get { self { $0.left } }
        @inline(__always) nonmutating set { self { $0.left = newValue } }
    }
    var right: LinearRamp {
        @inline(__always) get { self { $0.right } }
        @inline(__always) nonmutating set { self { $0.right = newValue } }
    }
    /// The player's mute and solo parameters' values.
    var muteValue: Double { @inline(__always) get { self { $0.mute.value } } }
    var soloValue: Double { @inline(__always) get { self { $0.solo.value } } }
    var songFrame: Double { @inline(__always) get { self { $0.songFrame } } }
    var tempoNow: Double { @inline(__always) get { self { $0.tempoNow } } }

    @inline(__always)
    func setGains(_ gains: (left: Float, right: Float)) { self { $0.setGains(gains) } }
    @inline(__always)
    func rampGains(to gains: (left: Float, right: Float), frames: Int) { self { $0.rampGains(to: gains, frames: frames) } }
    @inline(__always)
    func render(frameCount: Int, into buffer: BufferRef) { self { $0.render(frameCount: frameCount, into: buffer) } }
    /// `meter.record`.
    @inline(__always)
    func recordMeter(peak: Float, rms: Float) { self { $0.meterRef { $0.record(peak: peak, rms: rms) } } }
}
