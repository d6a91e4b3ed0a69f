import MixFXDSP

/// A track's effects, shelf EQ → pitch shifter, with a dry/wet mix, for a host that hands over
/// each block as it is played and wants the output back at once: a plugin (`MixFXLV2`). The
/// engine's live tracks read their files ahead; a plugin cannot see input before it arrives, so
/// here the streaming shifter (pitch, formants and EQ may change while it runs) is fed its input
/// late, and runs in blocks of its own:
///
/// - The shifter runs in blocks of `blockFrames` B, whatever the host's block sizes (lv2apply
///   calls with one frame at a time, a DAW with hundreds): the output is the same bytes for any
///   split of the input into host blocks, and a host's one-frame calls cost a copy, not a
///   shifter call.
/// - The shifter's input is the EQ'd input delayed by `latencyFrames` D = L + B − 1, L its
///   `liveLatencyFrames`. Why that is enough: the shifter has no latency of its own (output time
///   s reads input time s); making the block of output frames [q, q + B) it asks for input up to
///   q + B + a − 1, a ≤ L its look-ahead, i.e. plugin input q + B + a − 1 − D; a block is made
///   once the host asks for its first frame q, when input up to q has arrived, so it is enough
///   that B + a − 1 − D ≤ 0. The output therefore lags the input by exactly D at every pitch
///   (what the plugin reports), and D is fixed, as hosts need it.
/// - The dry signal is the input delayed by the same D, so the dry/wet mix is of aligned
///   signals: wet 0 is the delayed input exactly, and so is 0 cents with a flat EQ (the
///   streaming shifter's exact path; a 0 dB band is skipped).
///
/// Settings are taken once per `process` call and smoothed as the engine's live tracks smooth
/// them (the shifter glides its pitch, `EQKernel` its bands; the wet share ramps linearly over
/// `wetFadeSeconds`). `reset` jumps to them.
///
/// Threading: `init` on the control side (it allocates); `reset` and `process` on the audio
/// thread, which do not allocate, lock or log. One thread at a time.
public final class FixedLatencyChain: @unchecked Sendable {
    /// What the chain is set to: read once per `process` call.
    public struct Settings: Sendable, Equatable {
        /// Pitch shift, cents (clamped to `PitchShifterSettings.centsRange` by the shifter).
        public var pitchCents: Double
        /// Keep the formants when shifting.
        public var preserveFormants: Bool
        /// The shelf EQ before the shifter.
        public var eq: ShelfEQSettings
        /// The share of the processed signal, 0 (the delayed input) … 1 (only the processed).
        public var wet: Float

        /// Settings (neutral unless given).
        public init(pitchCents: Double = 0, preserveFormants: Bool = false, eq: ShelfEQSettings = .init(), wet: Float = 1) {
            self.pitchCents = pitchCents
            self.preserveFormants = preserveFormants
            self.eq = eq
            self.wet = wet
        }
    }

    /// The shifter's block B (5.3 ms at 48 kHz): part of the latency, and of the cost per call.
    public static let blockFrames = 256
    /// The longest stretch of a host's block taken at once (longer ones are taken in parts).
    static let chunkFrames = 4096
    /// How long a change of the wet share takes from 0 to 1.
    static let wetFadeSeconds = 0.02

    /// 1 or 2.
    public let channelCount: Int
    /// Output frame n holds what became of input frame n − `latencyFrames` (see the type's notes).
    public let latencyFrames: Int
    /// Input frames the shifter asked for before they arrived (given as silence). Stays 0: the
    /// latency is chosen so; the tests check it.
    public private(set) var starvedFrames = 0

    private let shifter: any PitchShifting
    private let eq: EQKernel
    /// The input as it arrived (raw: the dry path reads it too), a ring of `inputMask + 1` frames.
    private let input: AudioBuffer
    private let inputMask: Int
    /// Output made but not yet handed back, a ring of whole blocks.
    private let output: AudioBuffer
    private let outputMask: Int
    /// What the shifter pulls: the delayed input, EQ'd.
    private let pulled: AudioBuffer
    private let wetStep: Float
    private var wet: Float = 1
    private var target = Settings()
    /// Input frames received, output frames made and handed back, since `reset`.
    private var received = 0, made = 0, delivered = 0
    /// The shifter's input frames pulled since `reset` (its frame j is input frame j − D).
    private var shifterPulled = 0

    /// A chain for `channelCount` (1 or 2) channels at `sampleRate` (control side: allocates,
    /// about 1 MB for stereo at 48 kHz; warms the shifter up so that the first block allocates
    /// nothing either).
    public init(sampleRate: Double, channelCount: Int) {
        precondition(channelCount == 1 || channelCount == 2, "the chain runs one or two channels")
        self.channelCount = channelCount
        let b = Self.blockFrames
        let spec = ProcessSpec(sampleRate: sampleRate, maximumFrameCount: b, channelCount: channelCount)
        shifter = DSPCopy.active.makePitchShifter()
        shifter.prepare(spec, settings: PitchShifterSettings(), mode: .streaming, sharesWorkspace: false, bounds: nil)
        latencyFrames = shifter.liveLatencyFrames + b - 1
        eq = EQKernel(smooth: true, sampleRate: sampleRate)
        eq.eq.prepare(spec)
        // the raw input from the oldest frame still read (the dry path's, D behind the output made)
        // to the newest: D + a chunk + a block
        let inputFrames = Self.powerOfTwo(atLeast: latencyFrames + Self.chunkFrames + b)
        input = AudioBuffer(channelCount: channelCount, capacityFrames: inputFrames)
        inputMask = inputFrames - 1
        let outputFrames = Self.powerOfTwo(atLeast: Self.chunkFrames + b)
        output = AudioBuffer(channelCount: channelCount, capacityFrames: outputFrames)
        outputMask = outputFrames - 1
        pulled = AudioBuffer(channelCount: channelCount, capacityFrames: b)
        wetStep = Float(1 / (Self.wetFadeSeconds * sampleRate))
        warmUp()
        reset(Settings())
    }

    /// Clears all signal state and jumps to `settings` (audio thread; no allocation).
    public func reset(_ settings: Settings) {
        target = settings
        eq.eq.update(eq.effective(settings.eq))
        eq.eq.reset()
        shifter.setPitchCents(settings.pitchCents)
        shifter.setTempo(1)
        shifter.setPreserveFormants(settings.preserveFormants)
        shifter.reset()
        input.clear(frameCount: input.capacityFrames)
        output.clear(frameCount: output.capacityFrames)
        wet = Self.clampedWet(settings.wet)
        received = 0; made = 0; delivered = 0; shifterPulled = 0
        starvedFrames = 0
    }

    /// Takes `frameCount` frames of input and writes as many of output, `latencyFrames` later,
    /// heading for `settings` (audio thread; no allocation). `outLeft` may be `inLeft` (and
    /// `outRight` `inRight`): in place. The right pointers are for stereo chains only.
    public func process(inLeft: UnsafePointer<Float>, inRight: UnsafePointer<Float>?,
                        outLeft: UnsafeMutablePointer<Float>, outRight: UnsafeMutablePointer<Float>?,
                        frameCount: Int, settings: Settings) {
        target = settings
        var done = 0
        while done < frameCount {
            let n = min(Self.chunkFrames, frameCount - done)
            take(inLeft + done, inRight.map { $0 + done }, frameCount: n)
            while made < delivered + n { makeBlock() }
            give(outLeft + done, outRight.map { $0 + done }, frameCount: n)
            done += n
        }
    }

    /// Copies input frames into the ring, bad samples replaced by 0 (`SampleGuard`).
    private func take(_ left: UnsafePointer<Float>, _ right: UnsafePointer<Float>?, frameCount n: Int) {
        for c in 0..<channelCount {
            let source = c == 0 ? left : (right ?? left), ring = input.channel(c)
            var i = 0
            while i < n {
                let slot = (received + i) & inputMask, run = min(n - i, inputMask + 1 - slot)
                (ring + slot).update(from: source + i, count: run)
                // (a NaN or ∞ from the host would stay in the filters and the shifter for good)
                _ = SampleGuard.sanitize(ring + slot, count: run)
                i += run
            }
        }
        received += n
    }

    /// Copies made output frames to the host.
    private func give(_ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, frameCount n: Int) {
        for c in 0..<channelCount {
            guard let target = c == 0 ? left : right else { continue }
            let ring = output.channel(c)
            var i = 0
            while i < n {
                let slot = (delivered + i) & outputMask, run = min(n - i, outputMask + 1 - slot)
                (target + i).update(from: ring + slot, count: run)
                i += run
            }
        }
        delivered += n
    }

    /// Makes the next block of output: the shifter's block from the delayed, EQ'd input, then
    /// the dry/wet mix with the delayed input.
    private func makeBlock() {
        let b = Self.blockFrames, slot = made & outputMask   // (blocks never wrap: B divides the ring)
        let left = output.channel(0) + slot
        let right: UnsafeMutablePointer<Float>? = channelCount > 1 ? output.channel(1) + slot : nil
        shifter.setPitchCents(target.pitchCents)
        shifter.setPreserveFormants(target.preserveFormants)
        shifter.process(live: left, right, frameCount: b, maximumPull: b) { k in pull(k) }
        mixDry(left, right)
        made += b
    }

    /// The shifter's next `k` input frames: input frames j − D on, silence before the first,
    /// EQ'd.
    private func pull(_ k: Int) -> (UnsafePointer<Float>, UnsafePointer<Float>?) {
        let first = shifterPulled - latencyFrames
        for c in 0..<channelCount {
            let ring = input.channel(c), to = pulled.channel(c)
            for i in 0..<k {
                let frame = first + i
                if frame < 0 {
                    to[i] = 0
                } else if frame >= received {
                    to[i] = 0
                    if c == 0 { starvedFrames += 1 }
                } else {
                    to[i] = ring[frame & inputMask]
                }
            }
        }
        shifterPulled += k
        let l = pulled.channel(0), r: UnsafeMutablePointer<Float>? = channelCount > 1 ? pulled.channel(1) : nil
        eq.process(target: target.eq, left: l, right: r, frameCount: k)
        return (UnsafePointer(l), r.map { UnsafePointer($0) })
    }

    /// out = dry + w·(wet − dry), the dry signal the input D frames back, w ramping toward the
    /// target; exactly the processed signal at w = 1 and exactly the dry one at w = 0.
    private func mixDry(_ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?) {
        let goal = Self.clampedWet(target.wet)
        if wet == 1 && goal == 1 { return }
        let first = made - latencyFrames
        let dryL = input.channel(0), dryR = channelCount > 1 ? input.channel(1) : dryL
        var w = wet
        for k in 0..<Self.blockFrames {
            Smoother.linear(&w, toward: goal, step: wetStep)
            let frame = first + k
            let slot = frame & inputMask
            let dl: Float = frame < 0 ? 0 : dryL[slot], dr: Float = frame < 0 ? 0 : dryR[slot]
            if w == 0 {
                left[k] = dl
                right?[k] = dr
            } else if w < 1 {
                left[k] = dl + w * (left[k] - dl)
                if let right { right[k] = dr + w * (right[k] - dr) }
            }
        }
        wet = w
    }

    /// Runs a second of noise through the chain at a raised pitch, a lowered one and back, with
    /// formants and the EQ on (control side, from `init`): the first run of each path
    /// instantiates what the runtime makes lazily.
    private func warmUp() {
        let n = Self.blockFrames
        let l = UnsafeMutablePointer<Float>.allocate(capacity: n), r = UnsafeMutablePointer<Float>.allocate(capacity: n)
        defer { l.deallocate(); r.deallocate() }
        var seed: UInt32 = 1
        var s = Settings(pitchCents: 700, preserveFormants: true, eq: ShelfEQSettings(bass: .init(frequencyHz: 100, gainDB: 3)), wet: 0.5)
        reset(s)
        for block in 0..<(48_000 / n) {
            for i in 0..<n {
                seed = seed &* 1_664_525 &+ 1_013_904_223
                l[i] = Float(Int32(bitPattern: seed)) / 4e9
                r[i] = -l[i]
            }
            if block == 60 { s.pitchCents = -1900; s.wet = 1 }
            if block == 120 { s.pitchCents = 0; s.preserveFormants = false }
            process(inLeft: l, inRight: channelCount > 1 ? r : nil, outLeft: l, outRight: channelCount > 1 ? r : nil,
                    frameCount: n, settings: s)
        }
    }

    private static func clampedWet(_ w: Float) -> Float { w.isNaN ? 1 : min(max(w, 0), 1) }

    private static func powerOfTwo(atLeast n: Int) -> Int {
        var p = 1
        while p < n { p *= 2 }
        return p
    }
}
