#if canImport(Glibc)
import Glibc
#endif
import MixFXDSP

/// The output stage: what every mix goes through on its way out of the engine, live and
/// offline alike. One chain of three parts, each optional:
///
///     mix ─▶ master gain ─▶ limiter ─▶ meters ─▶ out
///
/// - **master gain**: `gain`, linear (1: none). Offline it is the loudness normalisation's gain,
///   which must come before the limiter so the limiter catches what it pushes over the ceiling;
///   live it stays 1 (the mixer's volume is in each track's gains, see `RenderKernel`).
/// - **limiter**: the engine's `LimiterNode` (`Limiter`, a look-ahead true-peak limiter). Its
///   ceiling follows a moving ceiling lane per sample, offline and live; otherwise, live, the
///   node's parameter, read once per block.
/// - **meters** (live): short-term loudness, true peak and the limiter's gain, published in
///   `MasterMeter` for the terminal mixer.
///
/// **Latency** is pre-rolled and drained like a track's, so the stage's output has exactly its
/// input's length and is aligned with it at frame 0: after `reset`, the first `render` pulls
/// `latencyFrames` more frames of input and drops what the limiter returns for them (silence
/// from before the start); once the input ends it is fed that much silence. So a live kernel
/// and an offline render give the same samples, limiter or not. (Without a limiter the latency
/// is 0 and the stage is the gain alone, or nothing.)
///
/// `init` allocates; `render` and `reset` do not allocate, lock or throw (beyond what the source
/// does: the live kernel's mix does neither).
public final class OutputStage {
    /// The master gain, linear, applied before the limiter (1: none). Set between passes.
    public var gain: Float = 1
    /// The frames the limiter delays its input by, removed by the pre-roll (0 without one).
    public let latencyFrames: Int
    /// The limiter's settings, when there is one.
    public var limiterSettings: LimiterSettings? { limiter?.settings }
    /// Since `reset`: the limiter's largest gain reduction, dB (0 when it never acted or there
    /// is none), and the output frames it turned down.
    public var maximumGainReductionDB: Double { limiter?.maximumGainReductionDB ?? 0 }
    public var framesLimited: Int { limiter?.framesLimited ?? 0 }

    private var limiter: Limiter?
    /// Live: the node whose ceiling the limiter follows.
    private let ceilingNode: LimiterNode?
    /// Its ceiling parameter, held unretained (`ceilingNode` keeps it alive) so that `limit`
    /// reads it without reference counting.
    private let ceilingParameter: Unmanaged<AudioParameter>?
    private var loudness: LoudnessMeter?
    private var truePeak: TruePeakMeter?
    /// Whether it has the loudness and true-peak meters (with a `MasterMeter` to publish to).
    private let metered: Bool
    private let meter: MasterMeter?
    /// `meter`, held unretained (`meter` keeps it) for the checked `process`.
    private let meterRef: Unmanaged<MasterMeter>?
    /// Where the stage's own blocks go: the drain's silence.
    private let silence: AudioBuffer
    /// Its frames (the spec's maximum).
    private let capacityFrames: Int
    private var preRollLeft = 0
    private var drainLeft = 0
    private var inputEnded = false

    /// A moving ceiling lane (`ceilingLane`): per input frame k of the timeline, the ceiling
    /// c(k − D) of the input the limiter's detector sees then (D its delay), linear; the lane's
    /// dB values go through `ceilingDB` first. `inputFrames`: the timeline frame of the next
    /// input frame (`reset(timelineFrame:)` sets it; it counts on from there).
    private let ceilingLane: PreparedLane?
    /// `ceilingLane`, held unretained (`ceilingLane` keeps it) for the checked `process`.
    private let ceilingLaneRef: Unmanaged<PreparedLane>?
    /// `TruePeakMeter.detectorDelayFrames`, read here (another module's global is not read on
    /// the checked path).
    private let detectorDelayFrames = TruePeakMeter.detectorDelayFrames
    private let ceilingDB: UnsafeMutablePointer<Double>
    private let ceilings: UnsafeMutablePointer<Float>
    private var inputFrames = 0
    /// Live, looping: the session's length in frames; the ceiling lane's frames are the
    /// timeline's modulo it, so each pass plays the lane from its start (0: no loop).
    public var loopFrames = 0

    /// A stage for blocks of up to `spec.maximumFrameCount` frames. `limiter`: the limiter's
    /// settings (nil: none); `ceilingNode`: a node whose ceiling it follows (live); `meter`:
    /// where the live meters are published (nil: no meters); `ceilingLane`: the
    /// ceiling's lane on the mix's timeline (a moving one is followed per sample, see
    /// `Limiter.process`; it takes over from `ceilingNode`'s parameter). Control side.
    public init(_ spec: ProcessSpec, limiter settings: LimiterSettings?, ceilingNode: LimiterNode? = nil,
                meter: MasterMeter? = nil, ceilingLane: AutomationLane? = nil) {
        let moving = settings != nil && ceilingLane.map { $0.constantValue == nil && !$0.breakpoints.isEmpty } == true
        self.ceilingLane = moving ? ceilingLane.map { PreparedLane($0, scale: .decibels, sampleRate: spec.sampleRate) } : nil
        ceilingLaneRef = self.ceilingLane.map { Unmanaged.passUnretained($0) }
        ceilingDB = .allocate(capacity: moving ? spec.maximumFrameCount : 0)
        ceilings = .allocate(capacity: moving ? spec.maximumFrameCount : 0)
        if let settings {
            var l = Limiter()
            l.prepare(spec, settings: settings)
            l.statisticsStartFrame = l.latencyFrames   // the pre-roll's frames are not output
            limiter = l
        }
        latencyFrames = limiter?.latencyFrames ?? 0
        // (a lane, moving or not, takes over from the node's parameter: a constant one is the
        // ceiling `settings` start at, a moving one is followed per sample)
        let laned = ceilingLane.map { !$0.breakpoints.isEmpty } == true
        self.ceilingNode = settings == nil || laned ? nil : ceilingNode
        ceilingParameter = self.ceilingNode.map { Unmanaged.passUnretained($0.ceilingParameter) }
        self.meter = meter
        meterRef = meter.map { Unmanaged.passUnretained($0) }
        metered = meter != nil
        if meter != nil {
            loudness = LoudnessMeter(sampleRate: spec.sampleRate, channelCount: spec.channelCount, keepingSteps: 30)
            truePeak = TruePeakMeter(channelCount: spec.channelCount, maximumFrameCount: spec.maximumFrameCount)
        }
        silence = AudioBuffer(channelCount: spec.channelCount, capacityFrames: spec.maximumFrameCount)
        capacityFrames = spec.maximumFrameCount
        reset()
    }

    deinit {
        ceilingDB.deallocate()
        ceilings.deallocate()
        limiter?.deallocate()
        truePeak?.deallocate()
    }

    /// Silence in the limiter and its statistics cleared; the next `render` pre-rolls again.
    /// (A start, a seek, another pass over the same mix.) `timelineFrame`: the frame of the
    /// mix's timeline the next input frame is (a ceiling lane is read from there).
    public func reset(timelineFrame: Int = 0) {
        limiter?.reset()
        if limiter != nil { limiter!.statisticsStartFrame = latencyFrames }
        preRollLeft = latencyFrames
        drainLeft = latencyFrames
        inputEnded = false
        inputFrames = timelineFrame
    }

    /// Renders the next up to `frameCount` (≤ the spec's maximum) frames of output, pulling
    /// input from `source` (asked for n frames, it returns a buffer holding up to n; 0 at its
    /// end). Returns the buffer holding the output (the source's, processed in place, or the
    /// stage's own) and its frames: as many as the source gave (a live mix may give fewer than
    /// asked before its end, as a tempo glides), the drain's silence after its end, 0 after
    /// that.
    @inline(__always)
    public func render<E: Error>(frameCount: Int,
                                 from source: (Int) throws(E) -> (AudioBuffer, Int)) throws(E) -> (AudioBuffer, Int) {
        // the pre-roll: what the limiter returns for its first `latencyFrames` frames of input
        // is silence from before the start
        while preRollLeft > 0 {
            let (block, n) = try pull(min(preRollLeft, silence.capacityFrames), source)
            guard n > 0 else { preRollLeft = 0; break }
            process(block.planes, channelCount: block.channelCount, frameCount: n, metering: false)
            preRollLeft -= n
        }
        let (block, n) = try pull(frameCount, source)
        if n > 0 { process(block.planes, channelCount: block.channelCount, frameCount: n, metering: true) }
        return (block, n)
    }

    /// `render(frameCount:from:)` for a source that always mixes into the same buffer, whose
    /// channels are `block` (`channelCount` of them): the live kernel's mix. `source(n)` writes
    /// up to n frames there and returns how many; the output is left there too (the drain's
    /// silence as well, in place of the stage's own buffer: the same samples). Returns its
    /// frames. The compiler checks it (`@_noAllocation`/`@_noLocks`), with the caller's
    /// `source`.
    @_noAllocation @_noLocks
    func render(frameCount: Int, into block: AudioBuffer.Planes, channelCount: Int, from source: (Int) -> Int) -> Int {
        // (`pull`'s steps written out here: a checked function may call the closure it is
        // given, not hand it on)
        var preRolling = preRollLeft > 0
        while true {
            let wanted = preRolling ? min(preRollLeft, capacityFrames) : frameCount
            var got = 0
            if !inputEnded {
                got = source(wanted)
                if got == 0 { inputEnded = true }
            }
            if got == 0 {
                got = min(wanted, drainLeft)
                for c in 0..<channelCount { block[c].update(repeating: 0, count: got) }
                drainLeft -= got
            }
            if preRolling {
                // the pre-roll, as `render(frameCount:from:)`'s
                if got == 0 {
                    preRollLeft = 0
                } else {
                    process(block, channelCount: channelCount, frameCount: got, metering: false)
                    preRollLeft -= got
                }
                preRolling = preRollLeft > 0
                continue
            }
            if got > 0 { process(block, channelCount: channelCount, frameCount: got, metering: true) }
            return got
        }
    }

    /// Up to `frameCount` frames of input: the source's, then (once it gave none) the drain's
    /// silence.
    @inline(__always)
    private func pull<E: Error>(_ frameCount: Int, _ source: (Int) throws(E) -> (AudioBuffer, Int)) throws(E) -> (AudioBuffer, Int) {
        if !inputEnded {
            let (block, got) = try source(frameCount)
            if got > 0 { return (block, got) }
            inputEnded = true
        }
        let padding = min(frameCount, drainLeft)
        silence.clear(frameCount: padding)
        drainLeft -= padding
        return (silence, padding)
    }

    /// gain → limiter → meters, in place. The compiler checks that this allocates nothing and
    /// takes no lock (`@_noAllocation`/`@_noLocks`, down through `Limiter`, `LoudnessMeter`,
    /// `TruePeakMeter` and `MasterMeter`): the live output stage's whole block.
    @inline(__always) @_noAllocation @_noLocks
    private func process(_ planes: AudioBuffer.Planes, channelCount: Int, frameCount n: Int, metering: Bool) {
        if let lane = ceilingLaneRef {
            // (the pre-roll's frames are the timeline's first: input frame k is timeline frame
            // `inputFrames` + k; looping, modulo the length, cut at the seam)
            let dB = ceilingDB, linear = ceilings, first = inputFrames - detectorDelayFrames, period = loopFrames
            if period > 0 {
                var done = 0
                while done < n {
                    let at = ((first + done) % period + period) % period
                    let m = min(n - done, period - at)
                    lane._withUnsafeGuaranteedRef { $0.fill(dB + done, fromFrame: at, count: m) }
                    done += m
                }
            } else {
                lane._withUnsafeGuaranteedRef { $0.fill(dB, fromFrame: first, count: n) }
            }
            for i in 0..<n { linear[i] = Float(Libm.pow(10, dB[i] / 20)) }
            limit(planes, channelCount: channelCount, frameCount: n, ceilings: linear)
        } else {
            limit(planes, channelCount: channelCount, frameCount: n, ceilings: nil)
        }
        inputFrames += n
        guard metering, let meter = meterRef else { return }
        guard metered else { return }
        // (a closure handed to a checked function is checked too: it captures the channels'
        // pointers, not the buffer)
        let lufs = loudness!.process({ UnsafePointer(planes[$0]) }, frameCount: n)
        truePeak!.restartPeaks()
        truePeak!.process({ UnsafePointer(planes[$0]) }, frameCount: n)
        let peak = truePeak!.peak, gain = limiter?.currentGain ?? 1
        meter._withUnsafeGuaranteedRef { $0.record(shortTermLUFS: lufs, truePeak: peak, limiterGain: gain) }
    }

    /// gain → limiter, in place (checked, as `process`).
    @inline(__always) @_noAllocation @_noLocks
    private func limit(_ planes: AudioBuffer.Planes, channelCount: Int, frameCount n: Int, ceilings: UnsafePointer<Float>?) {
        // (`AudioBuffer.scale`'s loop)
        let gain = gain
        if gain != 1 {
            for c in 0..<channelCount {
                let p = planes[c]
                for i in 0..<n { p[i] *= gain }
            }
        }
        if limiter != nil {
            if let ceilingParameter { limiter!.setCeiling(dBTP: ceilingParameter._withUnsafeGuaranteedRef { $0.clampedValue }) }
            limiter!.process(planes, frameCount: n, ceilings: ceilings)
        }
    }
}
