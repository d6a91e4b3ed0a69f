/// What a pitch shifter is sized for, worked out once from its `ProcessSpec`, settings and mode
/// before anything is allocated: its latency, how far its input runs ahead, the sinc tables it
/// may read, and the sizes of the vocoder's stretched buffer, the gate's envelope and the input
/// history. Pure numbers (the tables' taps come from `SincTableCache`, which builds a table on
/// first use): `PitchShifter.prepare` builds its parts from it, and the tests check it.
///
/// Four kinds of shifter:
///
/// - `skipped`: offline at 0 cents and tempo 1: nothing runs, no latency.
/// - `pitch`: offline, a fixed pitch ratio r: output n holds input n − L, L the latency bound
///   for the one ratio (see `latencyBound`).
/// - `tempo`: offline with a tempo R: the vocoder stretches by σ = r/R and the input is pulled as
///   the output needs it, `inputAheadFrames` (σ's latency bound, or how far a splice reads
///   ahead if further) past the output's input time; no latency.
/// - `streaming`: live (pitch and tempo may change while running): the input is pulled as the
///   output needs it, as far ahead as the current stretch needs (computed per block); no
///   latency. The buffers are sized for every ratio in `PitchShifterSettings.centsRange` at every
///   tempo in `liveTempoRange`, or offline for the pitches and tempos of its lanes
///   (`StreamingBounds`), and a second vocoder state serves the switch (`PitchSwitch`).
struct PitchShifterPlan: Equatable {
    enum Kind: Equatable { case skipped, pitch, tempo, streaming }

    let kind: Kind
    /// Analysis frame length N, from the sample rate (`PhaseVocoder.fftSize`).
    let fftSize: Int
    /// Output n holds input n − `latencyFrames` (`pitch`; 0 otherwise).
    let latencyFrames: Int
    /// `tempo`: how far past the output's input time the input is pulled.
    let inputAheadFrames: Int
    /// `tempo`: how far past the output's input time the vocoder takes the input (σ's latency
    /// bound; the input pulled beyond it is the splice's, `inputAheadFrames`), 0 otherwise.
    let vocoderAheadFrames: Int
    /// The grid index (`SincTableCache.index(forRatio:)`) each table slot holds. Slot i serves
    /// the ratios of grid index i: streaming, every index up to the largest ratio's; offline,
    /// the one index the fixed ratio reads, in every slot up to it (the tables below it are
    /// never built: each costs milliseconds).
    let tableIndices: [Int]
    /// The grid index whose tables fill each slot: the slot's own where the shifter may read
    /// it, else the nearest one it may (a slot it never reads). A streaming shifter told which
    /// pitches it will meet (an offline lane's, `StreamingBounds`) builds only theirs.
    let builtIndices: [Int]
    /// The widest reach, either side, of the reader's interpolators and the splice's tables.
    let maxHalfTaps: Int
    /// The look-ahead A: how far the input may run past the input time of a block's first
    /// output frame. `pitch`: L. `tempo`: `inputAheadFrames` and a block's input,
    /// ⌈maxFrames·R⌉ + 2. `streaming`: the largest latency bound at tempo 1 or the fastest
    /// tempo (the live range's, or the bounds'), a block's input at that tempo, and a block.
    let lookAheadFrames: Int
    /// The look-ahead and what a transient splice reads past an onset: its `lengthSeconds` read
    /// up to r times faster (r ≥ 1). The gate's envelope and the history hold this much input
    /// past the oldest input time a block reads.
    let reachFrames: Int
    /// Streaming: how far past a block's last input time a splice started in it may read the
    /// input (an onset `onsetLookahead` ahead, its attack, the rest of its length at up to
    /// the largest ratio, and a table's reach): the input is pulled at least this far, so a
    /// splice never reads input not yet pulled (what it read there would depend on how far
    /// ahead the blocks happened to pull).
    let spliceReadAheadFrames: Int
    /// The transient gate's envelope ring: the reach, a block, the splice's onset probe
    /// (look-ahead and back) and a margin of 64.
    let gateReachFrames: Int
    /// The input history: the reach, a block, (offline tempo) how far a splice falls behind
    /// (`spliceLagFrames`), the reads' reach both ways twice over, the onset look-ahead twice,
    /// the splice's look back for quiet and a margin of 64; streaming, also N/2, because a
    /// switch's restarted frame 0 reads N/2 behind the output's input time. At least what the
    /// vocoder's analysis windows need (`PhaseVocoder.inputFramesHeld`).
    let historyFrames: Int
    /// The history's mirrored head: the longest contiguous read (a window N, or a table's taps
    /// twice over).
    let historySlackFrames: Int
    /// How far behind its input the vocoder's stretched signal is read, for sizing its buffer
    /// (`PhaseVocoder`'s `latencyFrames`): `pitch` L, `tempo` the vocoder's own bound and a
    /// block's input (not the splice's read-ahead, which only the input holds), `streaming` the
    /// largest span pulled ahead of the read position, stretched, over the largest stretch.
    let stretchedLagFrames: Int
    /// The largest stretch σ = r/R the vocoder may run.
    let maxStretch: Double
    /// The latency the transient splice is placed in (its room to read ahead when raising the
    /// pitch): `pitch` L, `tempo` 0, `streaming` the L of a fixed-latency live shifter over the
    /// whole range (its room is then set per block, `TransientSplice.setRoom`).
    let spliceLatencyFrames: Int
    /// Whether the vocoder keeps formant buffers (streaming: always, formants may be turned on).
    let formants: Bool
    /// Streaming: a second vocoder state for the live pitch switch (`PitchSwitch`).
    let hasSwitch: Bool

    /// The plan for `spec`, `settings` and `mode`. `bounds`: streaming, the pitches and tempos
    /// the shifter will be asked for, if known before it runs (nil: any in the live ranges).
    /// Bounds size the look-ahead, the history, the gate's envelope, the stretched buffer and
    /// how far a splice reads ahead for those (with 0 cents and tempo 1 among them:
    /// `StreamingBounds.sizedCents`, `sizedTempo`) instead of the live ranges; the tables' taps,
    /// the splice's latency and with them the output are the live range's all the same.
    init(_ spec: ProcessSpec, settings: PitchShifterSettings, mode: PitchShifterMode,
         bounds: StreamingBounds? = nil) {
        let rate = spec.sampleRate, maxFrames = spec.maximumFrameCount
        let n = PhaseVocoder.fftSize(sampleRate: rate)
        fftSize = n
        let streaming = mode == .streaming
        let kind: Kind = streaming ? .streaming : settings.isNeutral ? .skipped : settings.changesTempo ? .tempo : .pitch
        self.kind = kind
        guard kind != .skipped else {
            latencyFrames = 0; inputAheadFrames = 0; vocoderAheadFrames = 0; tableIndices = []; builtIndices = []; maxHalfTaps = 0; lookAheadFrames = 0
            reachFrames = 0; gateReachFrames = 0; historyFrames = 0; historySlackFrames = 0; stretchedLagFrames = 0
            maxStretch = 1; spliceLatencyFrames = 0; formants = false; hasSwitch = false; spliceReadAheadFrames = 0
            return
        }
        // The ratios the shifter may meet, and the tables they read.
        // (streaming: the tables span the live range; the sizes, the bounds' pitches and tempos)
        let live = PitchShifterSettings.centsRange, liveTempo = PitchShifterSettings.liveTempoRange
        let sizedCents = bounds?.sizedCents ?? live
        let minRatio = streaming ? PitchShifterSettings.ratio(cents: sizedCents.lowerBound) : settings.ratio
        let maxRatio = streaming ? PitchShifterSettings.ratio(cents: sizedCents.upperBound) : settings.ratio
        let top = SincTableCache.index(forRatio: streaming ? PitchShifterSettings.ratio(cents: live.upperBound) : maxRatio)
        let indices = streaming ? Array(0...top) : Array(repeating: top, count: top + 1)
        tableIndices = indices
        builtIndices = streaming ? Self.builtIndices(indices, pitchesMet: bounds?.pitchCents) : indices
        // the grid indices the sizes are worked out for: every one, or those the bounds' pitches
        // read (and 0 cents')
        let sizedIndices = bounds.map { b in Array(Set(Self.builtIndices(indices, pitchesMet: b.sizedCents))).sorted() } ?? indices
        let readTaps = indices.map { SincTableCache.interpolatorTaps(index: $0) }
        let spliceTaps = indices.map { SincTableCache.tableTaps(index: $0) }
        let halfTaps = (readTaps + spliceTaps).map { $0 / 2 }.max()!
        maxHalfTaps = halfTaps
        let onsetLookahead = Int(TransientSplice.onsetLookaheadSeconds * rate)
        let onsetBack = Int(TransientSplice.onsetBackSeconds * rate)
        let spliceHold = Int(TransientSplice.lengthSeconds * rate * max(1, maxRatio))
        let attack = Int(TransientSplice.attackSeconds * rate), length = Int(TransientSplice.lengthSeconds * rate)
        spliceReadAheadFrames = !streaming ? 0
            : onsetLookahead + attack + Int((Double(length - attack) * max(1, maxRatio)).rounded(.up)) + halfTaps + 2

        let latency: Int, inputAhead: Int, lookAhead: Int, stretchedLag: Int, stretch: Double, spliceLatency: Int
        var vocoderAhead = 0
        switch kind {
        case .pitch:
            latency = Self.latencyBound(fftSize: n, taps: readTaps[top], stretch: settings.ratio)
            inputAhead = 0
            lookAhead = latency
            stretchedLag = latency
            stretch = settings.ratio
            spliceLatency = latency
        case .tempo:
            let sigma = settings.ratio / settings.tempo
            latency = 0
            // the vocoder's bound, or further where a splice reads ahead of the output's input
            // time (at ratio r > R it runs ahead by up to (length − attack)·(r − R) frames)
            vocoderAhead = Self.latencyBound(fftSize: n, taps: readTaps[top], stretch: sigma)
            inputAhead = max(vocoderAhead,
                             Self.spliceAheadFrames(rate: rate, ratio: settings.ratio, tempo: settings.tempo, halfTaps: halfTaps))
            lookAhead = inputAhead + Self.blockInputFrames(maxFrames, tempo: settings.tempo)
            // (the stretched signal holds what the vocoder takes, not the splice's read-ahead)
            stretchedLag = vocoderAhead + Self.blockInputFrames(maxFrames, tempo: settings.tempo)
            stretch = sigma
            spliceLatency = 0
        case .skipped:
            preconditionFailure("a skipped shifter has no sizes (returned above)")
        case .streaming:
            // L for every grid index (with the smallest ratio of its cell) at tempo R (the
            // stretch r/R): at tempo 1 it is a fixed-latency live shifter's L; at the live
            // tempo range's ends it bounds the streaming look-ahead.
            func worstBound(tempo: Double, over indices: [Int], lowest: Double) -> Int {
                indices.map { i in
                    let r: Double
                    switch i {
                    case SincTableCache.unitIndex: r = 1
                    case SincTableCache.loweredIndex: r = min(lowest, 1)
                    default: r = PitchShifterSettings.ratio(cents: SincTableCache.cents(index: i - 1))
                    }
                    return Self.latencyBound(fftSize: n, taps: readTaps[i], stretch: r / tempo)
                }.max()!
            }
            // (the splice's latency is the live range's whatever the bounds: it shapes the output)
            let liveLatency = worstBound(tempo: 1, over: indices, lowest: PitchShifterSettings.ratio(cents: live.lowerBound))
            let sizedLatency = worstBound(tempo: 1, over: sizedIndices, lowest: minRatio)
            let tempos = bounds?.sizedTempo ?? liveTempo
            let slow = tempos.lowerBound, fast = tempos.upperBound
            let blockInput = Self.blockInputFrames(maxFrames, tempo: fast)
            latency = 0
            inputAhead = 0
            lookAhead = max(sizedLatency, worstBound(tempo: fast, over: sizedIndices, lowest: minRatio)) + blockInput + maxFrames
            // the stretched span: what is pulled ahead of the read position, stretched
            stretch = maxRatio / slow
            let span = max(Double(sizedLatency) * maxRatio, Double(worstBound(tempo: slow, over: sizedIndices, lowest: minRatio)) * stretch)
                + Double(blockInput) * stretch
            stretchedLag = Int((span / stretch).rounded(.up))
            spliceLatency = liveLatency
        }
        latencyFrames = latency
        inputAheadFrames = inputAhead
        vocoderAheadFrames = vocoderAhead
        lookAheadFrames = lookAhead
        stretchedLagFrames = stretchedLag
        maxStretch = stretch
        spliceLatencyFrames = spliceLatency
        // (offline tempo: a splice falls behind the output's input time by up to its length
        // times R − min(1, r), reading the input at its own speed or r times faster)
        let spliceLag = kind == .tempo ? Self.spliceLagFrames(rate: rate, ratio: settings.ratio, tempo: settings.tempo) : 0
        let reach = lookAhead + spliceHold
        reachFrames = reach
        gateReachFrames = reach + maxFrames + onsetLookahead + onsetBack + 64
        let quietBack = Int(TransientSplice.quietBackSeconds * rate)
        historyFrames = max(reach + spliceLag + maxFrames + 4 * halfTaps + 2 * onsetLookahead + quietBack + 64 + (streaming ? n / 2 : 0),
                            PhaseVocoder.inputFramesHeld(fftSize: n, maximumFrameCount: maxFrames))
        historySlackFrames = max(2 * halfTaps, n)
        formants = streaming || settings.preserveFormants
        hasSwitch = streaming
    }

    /// For each grid index in `indices`, the index whose tables fill its slot: itself if a
    /// pitch in `pitchesMet` (widened by a cent either way, for the rounding of a map's
    /// values) falls in its cell, else the nearest such index. The grid index is monotone in
    /// the cents except for 0 (unit) and 1 (lowered), which are met when the range reaches
    /// 0 and below it.
    static func builtIndices(_ indices: [Int], pitchesMet: ClosedRange<Double>?) -> [Int] {
        guard let met = pitchesMet else { return indices }
        let lo = met.lowerBound - 1, hi = met.upperBound + 1
        func raised(_ cents: Double) -> Int { SincTableCache.index(forRatio: PitchShifterSettings.ratio(cents: cents)) }
        let firstRaised = lo > 0 ? raised(lo) : SincTableCache.firstRaisedIndex
        let lastRaised = hi > 0 ? raised(hi) : SincTableCache.firstRaisedIndex - 1
        let used = indices.filter { i in
            switch i {
            case SincTableCache.unitIndex: lo <= 0 && hi >= 0
            case SincTableCache.loweredIndex: lo < 0
            default: i >= firstRaised && i <= lastRaised
            }
        }
        return indices.map { i in used.min { abs($0 - i) < abs($1 - i) } ?? i }
    }

    /// Offline tempo R, ratio r: how far past the output's input time a splice reads the input.
    /// Output o holds input time o·R; from the onset T, landed at output T/R or later, the
    /// splice reads T + attack + (o − T/R − attack)·r after its attack, which is at most
    /// attack + (length − attack)·(r − R) past o·R; then a table's reach, and the onset probe's
    /// look-ahead as a margin.
    static func spliceAheadFrames(rate: Double, ratio r: Double, tempo: Double, halfTaps: Int) -> Int {
        let attack = Int(TransientSplice.attackSeconds * rate), length = Int(TransientSplice.lengthSeconds * rate)
        let onsetLookahead = Int(TransientSplice.onsetLookaheadSeconds * rate)
        return onsetLookahead + attack + Int((Double(length - attack) * max(0, r - tempo)).rounded(.up)) + halfTaps + 2
    }

    /// Offline tempo R, ratio r: how far behind the output's input time a splice reads the
    /// input: it reads at least min(1, r) input frames per output frame for its length while
    /// the output's input time moves R, and its onset lands up to R frames late (T/R rounded
    /// up to a frame); below tempo 1 its ramp, from the probe (the onset look-ahead ℓ ahead) to
    /// the onset, reads the input at its own speed, up to ℓ·(1/R − 1) behind.
    static func spliceLagFrames(rate: Double, ratio r: Double, tempo: Double) -> Int {
        let length = Int(TransientSplice.lengthSeconds * rate), attack = Int(TransientSplice.attackSeconds * rate)
        let onsetLookahead = Double(Int(TransientSplice.onsetLookaheadSeconds * rate))
        return Int((Double(length) * max(0, tempo - min(1, r))).rounded(.up)) + Int(tempo.rounded(.up)) + attack
            + Int((onsetLookahead * max(0, 1 / tempo - 1)).rounded(.up))
    }

    /// The input a block of `frames` output frames takes at tempo R: ⌈frames·R⌉ + 2.
    static func blockInputFrames(_ frames: Int, tempo: Double) -> Int { Int((Double(frames) * tempo).rounded(.up)) + 2 }

    /// The latency bound: how many input frames past an output's input time the vocoder must
    /// have taken so that the stretched signal is final where the output reads it, for a reader
    /// of `taps` taps and the stretch σ (r, or r/R with a tempo). After input t + a arrived,
    /// frames with A_m + N/2 ≤ t + a ran, so the signal is final up to σ·(t + a − N/2) − N/2;
    /// the read reaches σ·t + taps/2 + 1, hence a = N/2 + ⌈(N/2 + taps/2 + 2)/σ⌉ + 1. The one
    /// formula for the offline latency, the tempo's look-ahead, the live sizing and the
    /// streaming look-ahead (`UnreadFrames`).
    @inline(__always)
    static func latencyBound(fftSize n: Int, taps: Int, stretch sigma: Double) -> Int {
        n / 2 + Int(Libm.roundedUp(Double(n / 2 + taps / 2 + 2) / sigma)) + 1
    }
}
