/// A pitch shifter that keeps duration: a phase vocoder time-stretches by the ratio r, then a
/// band-limited reader plays the stretched signal r times faster. It is made of parts, each in
/// its own file:
///
/// - `PitchShifterPlan`: the latency, look-ahead, tables and buffer sizes, from the spec,
///   settings and mode (worked out once, before anything is allocated);
/// - `PhaseVocoder`: frames, hop rule, frame map, FFT, phase locking, formants: the stretch;
/// - `StretchReader`: the position mapping p(t) and the sinc reads: the resample;
/// - `TransientGate`: keeps the vocoder's pre-echo out of the silence before a hit;
/// - `TransientSplice`: puts a shifted hit's attack back in place;
/// - `LevelMatch` (offline with a tempo above 1, a stretch r/R below 1), `BandLevelMatch`
///   (offline with a tempo below 1, the pitch kept: the octaves from 1 kHz up) and
///   `PitchLevelMatch` (offline at a fixed pitch, tempo 1): bring the output back to the input's
///   level; with a tempo, the output made ahead inside the shifter by the match's look-ahead,
///   without one, that look-ahead added to the latency;
/// - `InputHistory`: the input by time, which the vocoder's analysis, the splice and the
///   streaming dry path read;
/// - streaming only: `PitchSwitch` (a second vocoder state for a large pitch change, crossfaded
///   in) and `UnreadFrames` (what the frames not yet read ask of the next block).
///
/// Its scratch memory (FFT work buffers, the frame's spectra, the block's tables) comes from a
/// `PitchShifterWorkspace`, its own or one shared with the other shifters a thread runs
/// (`use(_:)`). Streaming, at 0 cents and tempo 1 the output crossfades (`wetFadeSeconds`) to
/// the dry input, so 0 cents is exact.
///
/// Offline without a tempo, output n holds input sample n − L: a fixed latency L =
/// `latencyFrames`, which offline rendering removes by pre-rolling L frames and draining L
/// frames. L must let the stretched signal be complete where it is read: after input n arrived,
/// frames with A_m + N/2 ≤ n + 1 ran, so it is final up to r·(n + 0.5 − N/2) − N/2; output n
/// reads up to r·(n − L) + taps/2 + 1, hence L ≥ N/2 + (N/2 + taps/2 + 1)/r (`starvedFrames`
/// counts violations and stays 0). With a tempo, or streaming, the shifter pulls its input as the
/// output needs it instead: no latency.
///
/// One process path: each entry point takes its input through `pullInput` (the in-place entry
/// point's block is one pull), reads the stretched signal, then `gateAndSplice`.
///
/// Threading: one thread at a time (`prepare` on the control side, then `reset`, the setters and
/// `process` on the render side, which do not allocate). `@unchecked Sendable` so that an
/// offline render can hand a track to a worker thread; it is never used by two at once.
public final class PitchShifter: @unchecked Sendable {
    /// Streaming: the wet/dry crossfade at 0 cents.
    static let wetFadeSeconds = 0.02

    /// The settings of the last `prepare` (pitch and tempo updated by the setters).
    public private(set) var settings = PitchShifterSettings()
    /// Offline or streaming, from `prepare`.
    public private(set) var mode = PitchShifterMode.offline
    /// `mode == .offline`, for the render path (`==` on another module's enum is not inlinable,
    /// so the compiler's realtime check cannot see it).
    private var isOffline: Bool {
        if case .offline = mode { return true }
        return false
    }
    /// What `prepare` sized the shifter for.
    private(set) var plan: PitchShifterPlan?
    /// Analysis frame length N, from the sample rate.
    public var fftSize: Int { parts?.vocoder.object.fftSize ?? 0 }
    /// The shorter of the two hops, N / overlap: the synthesis hop when lowering the pitch, the
    /// analysis hop when raising it.
    public var hopFrames: Int { parts?.vocoder.object.hopFrames ?? 0 }
    /// The synthesis hop the last frame was made with and the highs' window powers it took
    /// (tests: how they follow a glide, `PhaseVocoder.hopSlewDivisor`).
    var lastHopAndPowers: (hop: Int, powers: Double) {
        parts.map { p in p.vocoder { ($0.hop, $0.narrowingPowers) } } ?? (0, 0)
    }
    /// Output lags input by this many frames; offline rendering removes it.
    public private(set) var latencyFrames = 0
    /// Streaming: the least delay that makes the look-ahead of every pitch in the range (at
    /// tempo 1) available when the input cannot be read ahead, as in a plugin host that hands
    /// over each block as it is played: fed its input this many frames late, the shifter never
    /// asks for a frame that has not arrived. 0 for other modes.
    public private(set) var liveLatencyFrames = 0
    /// With a tempo: how far ahead of an output frame's input time the input is taken, so that
    /// the stretched signal is final where it is read (the latency bound, with the stretch
    /// σ = r/R for r), and, with a `LevelMatch`, its output made `delayFrames` ahead. The
    /// output itself has no latency: input comes on demand.
    public private(set) var inputAheadFrames = 0
    /// The plan's part of `inputAheadFrames`: how far past the last output frame made the
    /// input is pulled.
    private var pullAheadFrames = 0
    /// How far past the input time of a block's first output frame the input may be pulled
    /// (`PitchShifterPlan.lookAheadFrames`; 0 when skipped).
    public var lookAheadFrames: Int { plan?.lookAheadFrames ?? 0 }
    /// Output samples that had to be zero because the stretched signal was late (0 unless the
    /// latency bound is wrong; tests check it).
    public var starvedFrames: Int {
        (parts?.reader.object.starvedFrames ?? 0)
            + (pitchSwitch.map { $0.object.reader.object.starvedFrames + $0.object.retiredStarvedFrames } ?? 0)
    }
    /// Analysis/synthesis frames run since `prepare` or `reset` (the cost: four FFTs each for
    /// stereo).
    public var framesRun: Int { parts?.vocoder.object.framesRun ?? 0 }
    /// Pitch switches started since `reset` (tests).
    var switchCount: Int { pitchSwitch?.object.count ?? 0 }

    /// What a prepared, running shifter is made of (nil: skipped, offline at 0 cents), each
    /// held as `Owned` so that the render path calls them without reference counting (released
    /// by `deinit`, or by `prepare` before it makes new ones).
    private struct Parts {
        var vocoder: Owned<PhaseVocoder>
        var reader: Owned<StretchReader>
        let gate: Owned<TransientGate>
        let highGate: Owned<HighBandGate>
        let splice: Owned<TransientSplice>
        let history: Owned<InputHistory>
        /// Offline at a fixed tempo: above 1 with a stretch r/R below 1, or below 1 at pitch
        /// ratio 1 (nil otherwise).
        let levelMatch: TempoMatch?
        /// Offline at a fixed pitch and tempo 1 (the fixed-latency path; nil otherwise).
        let pitchMatch: Owned<PitchLevelMatch>?

        func release() {
            vocoder.release(); reader.release(); gate.release(); highGate.release(); splice.release(); history.release()
            levelMatch?.release(); pitchMatch?.release()
        }
    }
    private var parts: Parts?
    /// Offline at a fixed pitch with `tonalityLimitHz`: the split that moves the highs by a
    /// constant frequency (nil: none).
    private var tonality: Owned<TonalityLimit>?
    /// The shifter's own latency (the plan's), without the tonality limit's filters.
    private var shiftLatency = 0
    /// Offline with a tempo: how far ahead the vocoder takes the input (`PitchShifterPlan`).
    private var vocoderAhead = 0
    /// Streaming: the switch to a new pitch.
    private var pitchSwitch: Owned<PitchSwitch>?
    /// Whether the last `prepare` made a `LevelMatch` (offline, a tempo above 1 and σ = r/R below
    /// 1), a `BandLevelMatch` (offline, a tempo below 1 with the pitch kept) or a
    /// `PitchLevelMatch` (offline at a fixed pitch, tempo 1).
    public var matchesLevel: Bool { parts?.levelMatch != nil || parts?.pitchMatch != nil }
    /// With a `PitchLevelMatch`: the vocoder's frames whose band share it has been given.
    private var bandFramesRecorded = 0
    /// With a tempo's match (`TempoMatch`): the output frames handed out since `reset`
    /// (`outIndex` runs its `delayFrames` ahead of it).
    private var emitIndex = 0

    /// The tables of one block, from the workspace: per output frame the segment's ratio and its
    /// grid index; its input time rounded down (for the gate, with a tempo); streaming, its input
    /// time.
    private struct BlockTables {
        var ratios: UnsafeMutablePointer<Double>
        var tableIndices: UnsafeMutablePointer<Int>
        var inputTimes: UnsafeMutablePointer<Int>
        var times: UnsafeMutablePointer<Double>

        init(_ c: inout ScratchCarver, frames: Int) {
            ratios = c.take(Double.self, frames)
            tableIndices = c.take(Int.self, frames)
            inputTimes = c.take(Int.self, frames)
            times = c.take(Double.self, frames)
        }
    }
    private var blockTables: BlockTables = {
        var measure = ScratchCarver(nil)
        return BlockTables(&measure, frames: 1)
    }()
    /// Bytes of scratch memory this shifter needs (`use(_:)`), from `prepare`.
    public private(set) var workspaceByteCount = 0
    private var ownWorkspace: PitchShifterWorkspace?
    private var boundWorkspace: UnsafeMutableRawPointer?
    private var maximumFrameCount = 0
    private var sampleRate = 48_000.0
    /// Output frames written since `reset`.
    private var outIndex = 0
    /// The input pulled so far (the history holds it; streaming, a vocoder state may lag it).
    private var inputPulled = 0
    /// `PitchShifterPlan.spliceReadAheadFrames`.
    private var spliceReadAhead = 0
    private var wet: Float = 1   // streaming: the wet share (see `crossfadeToDry`)
    /// Streaming: the input time of the next output frame (see `process(live:...)`); the engine
    /// reads it as the track's position in its own time.
    public private(set) var inputTime = 0.0
    /// Streaming: the input time of the next vocoder frame's analysis centre (a pitch set now
    /// starts there: the time a pitch map is read at, less its origin).
    public var nextFrameInputTime: Double {
        @_noAllocation @_noLocks
        get {
            guard let parts else { return inputTime }
            // (a switch running: the incoming state's, which a change glides on and is heard from)
            if let pitchSwitch, pitchSwitch({ $0.isRunning }) {
                let incoming = pitchSwitch { $0.vocoder }
                return incoming { $0.nextAnalysisCentre }
            }
            return parts.vocoder { $0.nextAnalysisCentre }
        }
    }

    /// Streaming: the pitch the frames run now have glided to, cents (0 when skipped).
    public var currentCents: Double {
        @_noAllocation @_noLocks
        get {
            guard let parts else { return 0 }
            return parts.vocoder { $0.currentCents }
        }
    }

    /// Streaming: the tempo the frames run now have glided to (1 until a tempo is set).
    public var currentTempo: Double {
        @_noAllocation @_noLocks
        get {
            guard let parts else { return 1 }
            return parts.vocoder { $0.tempo }
        }
    }

    /// An unprepared shifter; call `prepare` (control side) before `process`.
    public init() {}

    deinit {
        heldTempoMap?.release()
        parts?.release()
        pitchSwitch?.release()
        tonality?.release()
        heldPitchMap?.release()
    }

    /// Allocates for `spec`, `settings` and `mode`, as `PitchShifterPlan` sizes it. The FFT size
    /// follows the sample rate (≈ 85 ms: 4096 at 44.1/48 kHz, 8192 at 88.2/96 kHz). With
    /// `sharesWorkspace`, its scratch memory is not its own: hand it a `PitchShifterWorkspace` of
    /// `workspaceByteCount` bytes or more (`use(_:)`) before it processes. `bounds`
    /// (streaming): the pitches and tempos it will be asked for, when they are known before it
    /// runs (an offline lane's and time map's), so that only their interpolation tables are
    /// built and its buffers are sized for them (`StreamingBounds`). Control side.
    public func prepare(_ spec: ProcessSpec, settings: PitchShifterSettings, mode: PitchShifterMode = .offline,
                        sharesWorkspace: Bool = false, bounds: StreamingBounds? = nil) {
        precondition(spec.channelCount >= 1 && spec.channelCount <= 2)
        precondition(PitchShifterSettings.overlapRange.contains(settings.overlap))
        precondition(PitchShifterSettings.tempoRange.contains(settings.tempo))
        precondition(mode == .offline || PitchShifterSettings.liveTempoRange.contains(settings.tempo))
        let plan = PitchShifterPlan(spec, settings: settings, mode: mode, bounds: bounds)
        self.plan = plan
        self.settings = settings
        // (what the buffers are sized for: the bounds with 0 cents and tempo 1, else the live ranges)
        sizedCents = bounds?.sizedCents ?? PitchShifterSettings.centsRange
        sizedTempo = bounds?.sizedTempo ?? PitchShifterSettings.liveTempoRange
        precondition(bounds == nil || (sizedCents.contains(settings.pitchCents) && sizedTempo.contains(settings.tempo)),
                     "settings \(settings.pitchCents) cents, tempo \(settings.tempo) outside the bounds \(sizedCents), \(sizedTempo)")
        (lowestCents, highestCents) = (sizedCents.lowerBound, sizedCents.upperBound)
        (slowestTempo, fastestTempo) = (sizedTempo.lowerBound, sizedTempo.upperBound)
        self.mode = mode
        sampleRate = spec.sampleRate
        precondition(settings.tonalityLimitHz == 0 || (mode == .offline && !settings.changesTempo),
                     "a tonality limit is for an offline shifter at a fixed pitch and tempo 1")
        // (the fixed-latency path's level match delays the lows: the highs wait as long)
        let pitchMatchDelay = plan.kind == .pitch && matchesLevel(plan) ? PitchLevelMatch.delayFrames(sampleRate: spec.sampleRate) : 0
        tonality?.release()
        tonality = nil
        if plan.kind == .pitch && TonalityLimit.crossover(limitHz: settings.tonalityLimitHz, ratio: settings.ratio,
                                                          sampleRate: spec.sampleRate) != nil {
            tonality = Owned(TonalityLimit(limitHz: settings.tonalityLimitHz, ratio: settings.ratio, sampleRate: spec.sampleRate,
                                           channels: spec.channelCount, latencyFrames: plan.latencyFrames + pitchMatchDelay,
                                           maximumFrameCount: max(1, spec.maximumFrameCount)))
        }
        shiftLatency = plan.latencyFrames
        vocoderAhead = plan.vocoderAheadFrames
        pullAheadFrames = plan.inputAheadFrames
        spliceReadAhead = plan.spliceReadAheadFrames
        liveLatencyFrames = plan.kind == .streaming ? plan.spliceLatencyFrames : 0
        parts?.release()
        parts = nil
        pitchSwitch?.release()
        pitchSwitch = nil
        if plan.kind != .skipped { makeParts(plan, spec) }
        // (with a tempo, the level match's output made ahead is input pulled ahead, ⌈D·R⌉ more at
        // most; without one, its look-ahead is latency)
        let matchDelay = parts?.levelMatch?.delayFrames ?? 0
        let madeAhead = plan.kind == .tempo && matchDelay > 0 ? Int((Double(matchDelay) * settings.tempo).rounded(.up)) + 1 : 0
        inputAheadFrames = plan.inputAheadFrames + madeAhead
        precondition((parts?.pitchMatch?.object.delayFrames ?? 0) == pitchMatchDelay)
        latencyFrames = plan.latencyFrames + pitchMatchDelay + (tonality?.object.delayFrames ?? 0)
        reset()
        maximumFrameCount = max(1, spec.maximumFrameCount)
        ownWorkspace = nil
        bind(nil)
        if !sharesWorkspace && parts != nil {
            let own = PitchShifterWorkspace(byteCount: workspaceByteCount)
            ownWorkspace = own
            use(own)
        }
    }

    /// Builds the parts `plan` sizes (control side).
    private func makeParts(_ plan: PitchShifterPlan, _ spec: ProcessSpec) {
        let tables = plan.builtIndices.map { SincTableCache.interpolator(index: $0) }
        let spliceTables = plan.builtIndices.map { SincTableCache.table(index: $0) }
        let history = InputHistory(channelCount: spec.channelCount, frames: plan.historyFrames, slack: plan.historySlackFrames)
        func vocoder() -> PhaseVocoder {
            PhaseVocoder(sampleRate: spec.sampleRate, maximumFrameCount: spec.maximumFrameCount, channelCount: spec.channelCount,
                         overlap: settings.overlap, maxRatio: plan.maxStretch, latencyFrames: plan.stretchedLagFrames,
                         readHalfTaps: plan.maxHalfTaps, inputHistory: history, tempo: settings.tempo, formants: plan.formants)
        }
        if plan.hasSwitch {
            pitchSwitch = Owned(PitchSwitch(vocoder: vocoder(), reader: StretchReader(tables: tables), sampleRate: spec.sampleRate))
        }
        parts = Parts(
            vocoder: Owned(vocoder()),
            reader: Owned(StretchReader(tables: tables)),
            gate: Owned(TransientGate(sampleRate: spec.sampleRate, reachFrames: plan.gateReachFrames)),
            highGate: Owned(HighBandGate(sampleRate: spec.sampleRate)),
            splice: Owned(TransientSplice(sampleRate: spec.sampleRate, tables: spliceTables, latencyFrames: plan.spliceLatencyFrames,
                                          halfTaps: plan.maxHalfTaps)),
            history: Owned(history),
            levelMatch: levelMatch(plan, spec),
            pitchMatch: pitchMatch(plan, spec))
        if parts?.pitchMatch != nil { parts?.vocoder { $0.measuresBand = true } }
    }

    /// The tempo's level match: offline, where the stretch σ = r/R is below 1 with a tempo above
    /// 1 (`LevelMatch`), or at a slower tempo without a pitch (`BandLevelMatch`). None
    /// streaming: its look-ahead would delay every live change.
    private func levelMatch(_ plan: PitchShifterPlan, _ spec: ProcessSpec) -> TempoMatch? {
        guard plan.kind == .tempo && matchesLevel(plan) else { return nil }
        let most = max(1, spec.maximumFrameCount)
        if settings.tempo < 1 {
            return .slower(Owned(BandLevelMatch(sampleRate: spec.sampleRate, channels: spec.channelCount, tempo: settings.tempo,
                                                maximumFrameCount: most, inputAheadFrames: plan.inputAheadFrames)))
        }
        return .faster(Owned(LevelMatch(sampleRate: spec.sampleRate, channels: spec.channelCount, tempo: settings.tempo,
                                        maximumFrameCount: most, inputAheadFrames: plan.inputAheadFrames)))
    }

    /// The fixed pitch's level match (the fixed-latency path: its delay added to the latency).
    private func pitchMatch(_ plan: PitchShifterPlan, _ spec: ProcessSpec) -> Owned<PitchLevelMatch>? {
        guard plan.kind == .pitch && matchesLevel(plan) else { return nil }
        // (the synthesis hop is never shorter than N/overlap, the analysis hop that over r)
        let shortHop = PhaseVocoder.fftSize(sampleRate: spec.sampleRate) / max(1, settings.overlap)
        return Owned(PitchLevelMatch(sampleRate: spec.sampleRate, latencyFrames: plan.latencyFrames,
                                     maximumFrameCount: spec.maximumFrameCount,
                                     analysisHopFrames: max(1, Int(Double(shortHop) / max(1, settings.ratio)))))
    }

    /// Whether `plan` (with `settings`) calls for a level match (`levelMatch(_:_:)`, `pitchMatch(_:_:)`).
    private func matchesLevel(_ plan: PitchShifterPlan) -> Bool {
        guard settings.levelMatch else { return false }
        switch plan.kind {
        case .tempo: return settings.tempo > 1 ? settings.ratio < settings.tempo : settings.ratio == 1
        case .pitch: return settings.ratio != 1
        case .skipped, .streaming: return false
        }
    }

    /// Takes its scratch memory from `workspace` from now on (render side: no allocation). A
    /// workspace may serve any number of shifters that never process at the same time.
    @inline(__always)
    public func use(_ workspace: PitchShifterWorkspace) {
        guard workspace.base != boundWorkspace else { return }
        precondition(workspace.byteCount >= workspaceByteCount, "workspace of \(workspace.byteCount) bytes, \(workspaceByteCount) needed")
        bind(workspace.base)
    }

    /// Carves the scratch of the block tables, the switch and the vocoder from `base` (nil:
    /// measures it into `workspaceByteCount`, and nothing is bound).
    private func bind(_ base: UnsafeMutableRawPointer?) {
        var carver = ScratchCarver(base)
        blockTables = BlockTables(&carver, frames: maximumFrameCount)
        pitchSwitch?.object.bindScratch(&carver, frames: maximumFrameCount)
        // (the spare vocoder's scratch is the same memory: the two never run a frame at once)
        var spareCarver = carver
        parts?.vocoder.object.bindScratch(&carver)
        pitchSwitch?.object.vocoder.object.bindScratch(&spareCarver)
        if base == nil { workspaceByteCount = parts == nil ? 0 : carver.byteCount }
        boundWorkspace = base
    }

    /// Clears all signal state; the next sample is treated as sample 0. Does not allocate.
    @_noAllocation @_noLocks
    public func reset() {
        let neutral = settings.isNeutral, mapped = heldTempoMap != nil   // (no `self` right of `&&`: see `Owned`)
        wet = !isOffline && neutral && !mapped ? 0 : 1
        outIndex = 0
        emitIndex = 0
        // output frame 0 at input time −L·R, so that input time 0 is heard after L frames
        inputTime = -Double(latencyFrames) * settings.tempo
        inputPulled = 0
        pitchSwitch?({ $0.reset() })
        tonality?({ $0.reset() })
        guard let parts else { return }
        let s = settings
        parts.vocoder {
            $0.targetTempo = s.tempo
            $0.reset(pitchCents: s.pitchCents)
            $0.preserveFormants = s.preserveFormants
        }
        parts.reader { $0.reset() }
        parts.gate { $0.reset() }
        parts.highGate { $0.reset() }
        parts.splice { $0.reset() }
        parts.history { $0.reset() }
        parts.levelMatch?.reset()
        parts.pitchMatch?({ $0.reset() })
        bandFramesRecorded = 0
    }

    /// Turns formant preservation on or off while running (render side, once per block;
    /// streaming shifters: an offline shifter made its formant buffers only if prepared with
    /// formants on, and keeps that setting).
    @inline(__always)
    @_noAllocation @_noLocks
    public func setPreserveFormants(_ on: Bool) {
        guard !isOffline else { return }
        settings.preserveFormants = on
        parts?.vocoder({ $0.preserveFormants = on })
        pitchSwitch?({ $0.vocoder { $0.preserveFormants = on } })
    }

    /// Sets the pitch while running (streaming; the render side calls it once per block), clamped
    /// to `centsRange` (and to the bounds `prepare` was given). The vocoder glides to it over
    /// about 20 ms; a large step from a lowered pitch switches (`PitchSwitch`).
    @inline(__always)
    @_noAllocation @_noLocks
    public func setPitchCents(_ cents: Double) {
        let target = min(max(cents, lowestCents), highestCents)
        let old = settings.pitchCents
        pitchSwitch?({ $0.pitchChanged(from: old, to: target) })
        settings.pitchCents = target
        parts?.vocoder({ $0.setTargetCents(target) })
    }

    /// Streaming: whether `setPitchCents(cents)` now would switch (`PitchSwitch`: a fresh
    /// vocoder state crossfaded in from the next output frame, `inputTime`, instead of a glide
    /// from the next vocoder frame, `nextFrameInputTime`), by the rule the next block applies
    /// (a large step, no switch running, wholly wet, a steady tempo, frames made at a lowered
    /// pitch unread; no tempo map). Render side; reads only.
    @_noAllocation @_noLocks
    public func switches(toCents cents: Double) -> Bool {
        guard let parts, let pitchSwitch, heldTempoMap == nil, wet == 1 else { return false }
        let target = min(max(cents, lowestCents), highestCents), old = settings.pitchCents
        guard abs(target - old) >= PitchSwitch.minimumCents || pitchSwitch({ $0.isWanted }) else { return false }
        guard !pitchSwitch({ $0.isRunning }) else { return false }
        let tempo = settings.tempo
        guard parts.vocoder({ $0.tempo }) == tempo else { return false }
        let unread = UnreadFrames(parts.vocoder, parts.reader, targetCents: target)
        return unread.steadyTempo && unread.lowered
    }

    /// Streaming, for offline automation: every vocoder frame takes its pitch from `map` at its
    /// input time (`PitchMap`), `originFrame` being the map's frame of input time 0; nil: back
    /// to `setPitchCents`. Set before `reset` (which starts at the map's pitch). A map beyond the
    /// bounds `prepare` was given is refused (a precondition). Does not allocate.
    public func setPitchMap(_ map: PitchMap?, originFrame: Int) {
        if let map {
            precondition(sizedCents.contains(map.minimumCents) && sizedCents.contains(map.maximumCents),
                         "a pitch map of \(map.minimumCents)…\(map.maximumCents) cents on a shifter sized for \(sizedCents)")
        }
        heldPitchMap?.release()
        heldPitchMap = map.map { Owned($0) }
        pitchMapOrigin = originFrame
        parts?.vocoder.object.pitchMap = map
        parts?.vocoder.object.pitchMapOrigin = originFrame
        pitchSwitch?.object.vocoder.object.pitchMap = map
        pitchSwitch?.object.vocoder.object.pitchMapOrigin = originFrame
        if let map { settings.pitchCents = map.cents(atFrame: Double(originFrame)) }
    }
    /// The map of `setPitchMap` (as `Owned`: read on the render path).
    private var heldPitchMap: Owned<PitchMap>?
    private var pitchMapOrigin = 0

    /// Streaming with a pitch map, live touch: a hand holds the pitch at `cents` over the map
    /// (each vocoder frame's target is then `cents`, glided to and, at the release, back to the
    /// map's, as any change: τ = 20 ms; clamped as `setPitchCents`); nil lets go. The render side
    /// calls it once per chunk.
    @inline(__always)
    @_noAllocation @_noLocks
    public func holdPitch(_ cents: Double?) {
        let low = lowestCents, high = highestCents
        let c = cents.map { min(max($0, low), high) } ?? .nan
        // (values first: no `self` right of `&&`, see `Owned`)
        let old = handCents
        guard c != old && !(c.isNaN && old.isNaN) else { return }
        handCents = c
        if !c.isNaN { settings.pitchCents = c }   // (a reset starts there)
        parts?.vocoder({ $0.handCents = c })
        pitchSwitch?({ $0.vocoder { $0.handCents = c } })
    }
    /// The cents of `holdPitch` (NaN: none).
    private var handCents = Double.nan

    /// Streaming, for offline automation: output frame n is read at input time
    /// `map.position(atFrame: originFrame + n)` less that of `originFrame` (the map's own
    /// positions, not a sum of tempos: the length and the times are exact whatever the blocks),
    /// and every vocoder frame runs at the map's tempo at its analysis centre, without a glide;
    /// nil: back to `setTempo`. Set before `reset`. A map beyond the bounds `prepare` was given
    /// is refused (a precondition). Does not allocate.
    public func setTempoMap(_ map: TempoMap?, originFrame: Int) {
        if let map {
            // (a map's cell tempos are sums over its frames: a rounding past its lane's end is allowed)
            let margin = 1e-9 * sizedTempo.upperBound
            precondition(map.minimumTempo >= sizedTempo.lowerBound - margin && map.maximumTempo <= sizedTempo.upperBound + margin,
                         "a tempo map of \(map.minimumTempo)…\(map.maximumTempo) on a shifter sized for \(sizedTempo)")
        }
        heldTempoMap?.release()
        heldTempoMap = map.map { Owned($0) }
        tempoMapOrigin = originFrame
        tempoMapBase = map?.position(atFrame: originFrame) ?? 0
        parts?.vocoder.object.tempoMap = map
        parts?.vocoder.object.tempoMapBase = tempoMapBase
        pitchSwitch?.object.vocoder.object.tempoMap = map
        pitchSwitch?.object.vocoder.object.tempoMapBase = tempoMapBase
        if let map { settings.tempo = map.tempo(atPosition: tempoMapBase) }
    }
    /// The map of `setTempoMap` (as `Owned`: read on the render path).
    private var heldTempoMap: Owned<TempoMap>?
    private var tempoMapOrigin = 0
    private var tempoMapBase = 0.0

    /// Sets the tempo while running (streaming; the render side calls it once per block),
    /// clamped to `liveTempoRange` (and to the bounds `prepare` was given). The frames glide to it (τ = 100 ms); it is heard once they are
    /// read (within the look-ahead). From 0 cents and tempo 1 the output first fades from the
    /// exact dry input to the wet signal, and only then the tempo moves.
    @inline(__always)
    @_noAllocation @_noLocks
    public func setTempo(_ tempo: Double) {
        guard !isOffline else { return }
        settings.tempo = min(max(PitchShifterSettings.clampedLiveTempo(tempo), slowestTempo), fastestTempo)
    }

    // What the buffers are sized for (`prepare`'s bounds with 0 cents and tempo 1, or the live
    // ranges): the render-side setters clamp to them, the maps must lie within them.
    private var sizedCents = PitchShifterSettings.centsRange, sizedTempo = PitchShifterSettings.liveTempoRange
    // (the same as values the render path reads)
    private var lowestCents = PitchShifterSettings.centsRange.lowerBound, highestCents = PitchShifterSettings.centsRange.upperBound
    private var slowestTempo = PitchShifterSettings.liveTempoRange.lowerBound
    private var fastestTempo = PitchShifterSettings.liveTempoRange.upperBound

    // MARK: - The process path

    /// Shifts `frameCount` frames in place (`right` nil for mono, and only then; at most the
    /// spec's `maximumFrameCount`): offline without a tempo. Output lags input by
    /// `latencyFrames`. Never allocates.
    @_noAllocation @_noLocks
    public func process(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?, frameCount: Int) {
        guard let parts else { return }
        // (conditions on values: a condition is a closure, and one capturing `self` is refused
        // by the realtime check; see `Owned`)
        let bound = boundWorkspace != nil, most = maximumFrameCount
        precondition(bound, "a shifter prepared with sharesWorkspace needs use(_:) before it processes")
        precondition(frameCount <= most)
        // (with a tonality limit the shifter takes the lows, `delayFrames` late, and the highs
        // are added back moved)
        tonality?({ $0.split(left, right, frameCount: frameCount) })
        // the block is the input, one pull; it then receives the output, input time t0 + k at frame k
        let input = (UnsafePointer(left), right.map { UnsafePointer($0) })
        let end = inputPulled + frameCount
        pullInput(parts, upTo: end, ownNeed: end, maximumPull: frameCount) { _ in input }
        if let pitchMatch = parts.pitchMatch {
            // the frames just run: where each was centred, and its band share
            let view = parts.vocoder { $0.readView }
            var m = bandFramesRecorded
            let run = view.framesRun, mask = view.historyMask
            pitchMatch { p in
                while m < run {
                    p.recordBand(view.historyBand[m & mask], at: view.historyA[m & mask])
                    m += 1
                }
            }
            bandFramesRecorded = m
        }
        let t0 = outIndex - shiftLatency
        let source = parts.vocoder { $0.readView }, b = blockTables
        _ = parts.reader {
            $0.read(into: left, right, frameCount: frameCount, firstFrame: t0, ratios: b.ratios, tableIndices: b.tableIndices,
                    from: source)
        }
        gateAndSplice(parts, left, right, frameCount: frameCount, at: .whole(firstTime: t0))
        // (with a level match, the block goes in and the block `delayFrames` before it comes out)
        parts.pitchMatch?({ m in
            m.push(left: left, right: right, frameCount: frameCount)
            m.pop(into: left, right, frameCount: frameCount)
        })
        let highsTime = outIndex - latencyFrames
        tonality?({ $0.addHighs(left, right, frameCount: frameCount, firstTime: highsTime) })
        outIndex += frameCount
    }

    /// With a tempo (`settings.changesTempo`), offline: writes `frameCount` output frames into
    /// `left` (and `right`), output frame n at input time n·R, asking `pull(k)` for the next k
    /// input frames as they are needed (at most `maximumFrameCount` at a time; silence after the
    /// end). `pull` returns where the caller holds them (`right` nil for mono); they are copied
    /// before the next call. Never allocates.
    /// (`shift(into:…)` with `pull` vouched for: a closure that reaches a checked function is
    /// checked where it is made, and one that came through `PitchShifting` cannot be. The engine
    /// calls `shift(into:…)` itself, so its pull function is checked.)
    public func process(into left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, frameCount: Int,
                        maximumPull: Int, pull: (Int) throws -> (UnsafePointer<Float>, UnsafePointer<Float>?)) rethrows {
        @_semantics("no_performance_analysis")
        func vouched(_ n: Int) throws -> (UnsafePointer<Float>, UnsafePointer<Float>?) { try pull(n) }
        try shift(into: left, right, frameCount: frameCount, maximumPull: maximumPull, pull: vouched)
    }

    /// `process(into:…)`, checked by the compiler (`@_noAllocation`/`@_noLocks`, with whatever
    /// `pull` a caller hands it).
    @_noAllocation @_noLocks
    public func shift(into left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, frameCount: Int,
               maximumPull: Int, pull: (Int) throws -> (UnsafePointer<Float>, UnsafePointer<Float>?)) rethrows {
        guard let parts else { return }
        let bound = boundWorkspace != nil, most = maximumFrameCount
        precondition(bound, "a shifter prepared with sharesWorkspace needs use(_:) before it processes")
        precondition(frameCount <= most)
        guard let levelMatch = parts.levelMatch else {
            try shiftBlock(parts, into: left, right, frameCount: frameCount, maximumPull: maximumPull, pull: pull)
            return
        }
        // the output made `delayFrames` ahead of what is handed out, in blocks of at most the
        // spec's, into the level match's own buffers
        let (staging, delay) = (levelMatch.staging, levelMatch.delayFrames)
        let target = emitIndex + frameCount + delay
        while outIndex < target {
            let n = min(most, target - outIndex)
            try shiftBlock(parts, into: staging.left, right == nil ? nil : staging.right, frameCount: n, maximumPull: maximumPull,
                           pull: pull)
            levelMatch.push(left: staging.left, right: right == nil ? nil : staging.right, frameCount: n)
        }
        levelMatch.pop(into: left, right, frameCount: frameCount)
        emitIndex += frameCount
    }

    /// The tempo path's next `frameCount` output frames, output frame n at input time n·R.
    @inline(__always)
    private func shiftBlock(_ parts: Parts, into left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?,
                            frameCount: Int, maximumPull: Int,
                            pull: (Int) throws -> (UnsafePointer<Float>, UnsafePointer<Float>?)) rethrows {
        // frame n at input time n·R, from its absolute index (the same times in any blocks); the
        // input pulled as far as a splice reads, the vocoder taking it as far as its own bound
        let last = Int(Libm.roundedUp(Double(outIndex + frameCount - 1) * settings.tempo))
        let needed = last + pullAheadFrames, ownNeed = last + vocoderAhead
        try pullInput(parts, upTo: needed, ownNeed: ownNeed, maximumPull: maximumPull, pull: pull)
        let pulled = inputPulled, readPosition = parts.reader { $0.lastReadPosition }
        parts.vocoder { $0.advance(to: min(pulled, ownNeed), readPosition: readPosition) }
        let source = parts.vocoder { $0.readView }, b = blockTables, first = outIndex
        _ = parts.reader {
            $0.read(into: left, right, frameCount: frameCount, firstFrame: first, ratios: b.ratios, tableIndices: b.tableIndices,
                    from: source)
        }
        gateAndSplice(parts, left, right, frameCount: frameCount, at: .steadyTempo(settings.tempo))
        outIndex += frameCount
    }

    /// Streaming, any tempo: writes `frameCount` output frames into `left` (and `right`), asking
    /// `pull(k)` for the next k input frames (at most `maximumPull` at a time) as the output's
    /// input time advances. Output frame n is at input time t_n, t_{n+1} = t_n + R_m (the tempo
    /// of the frame it reads), from t_0 = 0 after `reset`. While the tempo is 1 and t_n whole
    /// this is exactly an offline shifter's output for the same input; a tempo returning to 1
    /// steers t onto the nearest whole frame within a block so that it is again. Never allocates.
    /// (`shift(live:…)` with `pull` vouched for, as `process(into:…)`.)
    public func process(live left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, frameCount: Int,
                        maximumPull: Int, pull: (Int) throws -> (UnsafePointer<Float>, UnsafePointer<Float>?)) rethrows {
        @_semantics("no_performance_analysis")
        func vouched(_ n: Int) throws -> (UnsafePointer<Float>, UnsafePointer<Float>?) { try pull(n) }
        try shift(live: left, right, frameCount: frameCount, maximumPull: maximumPull, pull: vouched)
    }

    /// `process(live:…)`, checked by the compiler (see `shift(into:…)`).
    @_noAllocation @_noLocks
    public func shift(live left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, frameCount: Int,
               maximumPull: Int, pull: (Int) throws -> (UnsafePointer<Float>, UnsafePointer<Float>?)) rethrows {
        var streaming = false
        if case .streaming = mode { streaming = true }   // (`==` on another module's enum is not inlinable)
        precondition(streaming, "process(live:) is for a streaming shifter")
        guard let parts, let pitchSwitch else { return }
        let bound = boundWorkspace != nil
        precondition(bound, "a shifter prepared with sharesWorkspace needs use(_:) before it processes")
        let vocoder = parts.vocoder
        let b = blockTables
        if let map = heldTempoMap {
            // a tempo map: the block's times are the map's; the frames to come may run as fast
            // as its fastest tempo within the look-ahead (their tempo is the map's, not a glide)
            let origin = tempoMapOrigin + outIndex, base = tempoMapBase, ahead = Double(lookAheadFrames)
            let fastest = map { m in
                m.positions(fromFrame: origin, count: frameCount, minus: base, into: b.times)
                return m.maximumTempo(fromPosition: b.times[0] + base, span: b.times[frameCount - 1] - b.times[0] + ahead)
            }
            vocoder { $0.targetTempo = fastest }
        } else {
            // the tempo waits until the output is wholly wet (leaving the exact dry path)
            let tempoNow = wet == 1 ? settings.tempo : 1
            vocoder { $0.targetTempo = tempoNow }
        }
        let mapped = heldTempoMap != nil
        // (with a map, the frames to come may go down to its lowest pitch: the look-ahead is
        // sized for it)
        var comingCents = settings.pitchCents
        if let map = heldPitchMap {
            let currentCents = vocoder { $0.currentCents }
            comingCents = min(map { $0.minimumCents }, currentCents)
            if !handCents.isNaN { comingCents = min(comingCents, handCents) }
        }
        let own = UnreadFrames(vocoder, parts.reader, targetCents: comingCents)
        if !mapped && pitchSwitch({ $0.isWanted }) {
            let w = wet, t = inputTime, cents = settings.pitchCents
            pitchSwitch { $0.startIfUseful(own: vocoder, unread: own, wet: w, inputTime: t, pitchCents: cents) }
        }
        let spareVocoder = pitchSwitch { $0.vocoder }, spareReader = pitchSwitch { $0.reader }
        var spare: UnreadFrames?
        if pitchSwitch({ $0.isRunning }) {
            let target = vocoder { $0.targetTempo }
            spareVocoder { $0.targetTempo = target }
            spare = UnreadFrames(spareVocoder, spareReader, targetCents: comingCents)
        }
        // the fastest tempo the frames not read past (and those to come) have, and whether all
        // of them are at exactly 1
        let high = max(own.fastestTempo, spare?.fastestTempo ?? own.fastestTempo)
        let allAtOne = own.allAtUnitTempo && (spare?.allAtUnitTempo ?? true) && !mapped
        // back at tempo 1 between whole frames: this block steers onto the nearest one (a step
        // of at most 1 + 0.5/frameCount: under 2 cents for one block, no jump)
        let whole = inputTime == Libm.roundedDown(inputTime)
        let nudge = allAtOne && !whole ? (Libm.rounded(inputTime) - inputTime) / Double(frameCount) : 0
        let exact = allAtOne && whole
        // Each state takes the input as far as its own look-ahead needs; the input is pulled as
        // far as either needs. A state that lags what was pulled (restarted, or swapped in after
        // a switch) takes it from the history a block's worth at a time, not all at once.
        let lastTime = mapped ? floorToInt(b.times[frameCount - 1]) + 1 : floorToInt(inputTime + Double(frameCount - 1) * high) + 1
        let neededOwn = lastTime + own.aheadFrames, neededSpare = lastTime + (spare?.aheadFrames ?? 0)
        let ahead = max(own.aheadFrames, spare?.aheadFrames ?? own.aheadFrames)
        let hasSpare = spare != nil
        // (off the whole times, a splice reads up to `spliceReadAheadFrames` past the block's
        // last input time; on them its length is kept within `ahead` instead, as offline)
        let spliceNeed = exact ? 0 : lastTime + spliceReadAhead
        try pullInput(parts, upTo: max(hasSpare ? max(neededOwn, neededSpare) : neededOwn, spliceNeed), ownNeed: neededOwn,
                      maximumPull: maximumPull, pull: pull)
        let pulled = inputPulled
        let ownRead = parts.reader { $0.lastReadPosition }
        vocoder { $0.advance(to: min(pulled, neededOwn), readPosition: ownRead) }
        if hasSpare {
            let spareRead = spareReader { $0.lastReadPosition }
            spareVocoder { $0.advance(to: min(pulled, neededSpare), readPosition: spareRead) }
        }
        let t0 = inputTime
        let source = vocoder { $0.readView }
        let firstSegment = parts.reader { $0.segment }
        if exact && !hasSpare {
            // whole times at tempo 1: frame k at t0 + k, the same values as the running sum, as
            // products (no chain of additions from one frame to the next)
            let first = Int(t0)
            inputTime = parts.reader {
                $0.read(into: left, right, frameCount: frameCount, firstFrame: first, ratios: b.ratios,
                        tableIndices: b.tableIndices, from: source)
            }
        } else {
            inputTime = parts.reader {
                $0.read(into: left, right, frameCount: frameCount, firstTime: t0, ratios: b.ratios, tableIndices: b.tableIndices,
                        from: source, times: b.times, nudge: nudge, mapped: mapped)
            }
        }
        if let map = heldTempoMap {
            let end = tempoMapOrigin + outIndex + frameCount, base = tempoMapBase
            inputTime = map { $0.position(atFrame: end) } - base
        }
        if hasSpare {
            // both read the same times (the tempo is steady through a switch, the nudge the same)
            inputTime = pitchSwitch {
                $0.crossfade(left, right, frameCount: frameCount, firstTime: t0, nudge: nudge,
                             ratios: b.ratios, tableIndices: b.tableIndices, times: b.times)
            }
        }
        if nudge != 0 { inputTime = Libm.rounded(inputTime) }
        if exact {
            let first = Int(t0)
            // the input held past t is `ahead`, as an offline shifter's latency at this ratio
            let g = SincTableCache.index(forRatio: settings.ratio)
            let readTaps = parts.reader { $0.tableViews[g].taps }, spliceTaps = parts.splice { $0.taps(index: g) }
            parts.splice { $0.setRoom(aheadFrames: ahead, halfTaps: max(readTaps, spliceTaps) / 2) }
            gateAndSplice(parts, left, right, frameCount: frameCount, at: .whole(firstTime: first))
            crossfadeToDry(left, right, frameCount: frameCount, firstTime: first, parts: parts, source: source,
                           firstSegment: firstSegment)
        } else {
            // (`inputTime` is now the frame after the block's, as the next block will list it: a
            // map's `position(atFrame:)` less its base is its `positions`' value, to the bit)
            gateAndSplice(parts, left, right, frameCount: frameCount, at: .listed(nextTime: inputTime))
        }
        outIndex += frameCount
        if pitchSwitch({ $0.isFadeOver }) {
            // the new state is the shifter's own; the old one waits for the next switch
            var running = parts
            (running.vocoder, running.reader) = pitchSwitch { $0.handOver(parts.vocoder, parts.reader) }
            self.parts = running
        }
    }

    /// The one pull loop: asks `pull(k)` for input until `upTo` frames have been pulled (k at
    /// most `maximumPull` and the spec's `maximumFrameCount`). Each run goes to the gate's
    /// envelope and the history, and to the shifter's own vocoder state while that is in step
    /// with the input pulled and needs it (`ownNeed`: its buffers hold what its own look-ahead
    /// stretches; a state that lags catches up with `advance`).
    @inline(__always)
    private func pullInput(_ parts: Parts, upTo needed: Int, ownNeed: Int, maximumPull: Int,
                           pull: (Int) throws -> (UnsafePointer<Float>, UnsafePointer<Float>?)) rethrows {
        while inputPulled < needed {
            // (two-argument `min`s: the variadic one builds an array)
            let n = min(min(maximumPull, maximumFrameCount), needed - inputPulled)
            let (l, r) = try pull(n)
            let at = inputPulled
            parts.gate { $0.recordInput(left: l, right: r, frameCount: n, at: at) }
            parts.history { $0.write(left: l, right: r, frameCount: n, at: at) }
            parts.levelMatch?.recordInput(left: l, right: r, frameCount: n, at: at)
            parts.pitchMatch?({ $0.recordInput(left: l, right: r, frameCount: n, at: at) })
            let inStep = parts.vocoder { $0.inputEnd } == at && at + n <= ownNeed
            inputPulled += n
            if inStep {
                let readPosition = parts.reader { $0.lastReadPosition }
                parts.vocoder { $0.append(frameCount: n, readPosition: readPosition) }
            }
        }
    }

    /// Where a block's output frames are in input time, for the gate and the splice.
    private enum BlockTime {
        /// Frame k at input time `firstTime` + k (no tempo, or streaming exactly at tempo 1).
        case whole(firstTime: Int)
        /// Frame k at input time (n + k)·R, n the block's first output frame (offline tempo).
        case steadyTempo(Double)
        /// Frame k at the block's `times[k]`, the frame after the block at `nextTime` (streaming).
        case listed(nextTime: Double)
    }

    /// Gates the block's pre-echo and splices its attacks back in place (`TransientGate`,
    /// `TransientSplice`), the block's frames at input times `time`.
    @inline(__always)
    private func gateAndSplice(_ parts: Parts, _ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?,
                               frameCount: Int, at time: BlockTime) {
        let b = blockTables, first = outIndex
        let gate = parts.gate { $0.view }, input = parts.history { $0.view }
        let formants = settings.preserveFormants, pulled = inputPulled
        switch time {
        case .whole(let t0):
            parts.gate { $0.process(left: left, right: right, frameCount: frameCount, firstTime: t0) }
            parts.highGate {
                $0.process(left: left, right: right, frameCount: frameCount, firstOutput: first, firstTime: t0, times: nil, ratios: b.ratios,
                           formants: formants, input: input, inputEnd: pulled)
            }
            parts.splice {
                $0.process(left: left, right: right, frameCount: frameCount, firstTime: t0,
                           ratios: b.ratios, tableIndices: b.tableIndices, gate: gate, input: input)
            }
        case .steadyTempo(let tempo):
            // (four at a time, as `.listed`: the same products and floors)
            var k = 0
            let lanes = SIMD4<Double>(0, 1, 2, 3), step = SIMD4<Double>(repeating: tempo)
            while k + 3 < frameCount {
                let t = (SIMD4<Double>(repeating: Double(first + k)) + lanes) * step
                UnsafeMutableRawPointer(b.inputTimes + k).storeBytes(of: floorWhole(t).int, as: SIMD4<Int>.self)
                k += 4
            }
            while k < frameCount { b.inputTimes[k] = floorToInt(Double(first + k) * tempo); k += 1 }
            parts.gate { $0.process(left: left, right: right, frameCount: frameCount, firstTime: 0, times: b.inputTimes) }
            let ratio = settings.ratio, table = SincTableCache.index(forRatio: ratio)
            parts.highGate {
                $0.process(left: left, right: right, frameCount: frameCount, firstOutput: first, firstTime: 0, times: b.inputTimes,
                           ratios: b.ratios,
                           formants: formants, input: input, inputEnd: pulled)
            }
            parts.splice {
                $0.process(left: left, right: right, frameCount: frameCount, firstOutput: first, tempo: tempo,
                           ratio: ratio, table: table, gate: gate, input: input)
            }
        case .listed(let nextTime):
            // (four at a time: `floorWhole` is `floorToInt`, without a conversion per frame)
            var k = 0
            while k + 3 < frameCount {
                let t = UnsafeRawPointer(b.times + k).loadUnaligned(as: SIMD4<Double>.self)
                let whole = floorWhole(t).int
                UnsafeMutableRawPointer(b.inputTimes + k).storeBytes(of: whole.replacing(with: -1, where: whole .< -1),
                                                                     as: SIMD4<Int>.self)
                k += 4
            }
            while k < frameCount { b.inputTimes[k] = max(-1, floorToInt(b.times[k])); k += 1 }
            parts.gate { $0.process(left: left, right: right, frameCount: frameCount, firstTime: 0, times: b.inputTimes) }
            parts.highGate {
                $0.process(left: left, right: right, frameCount: frameCount, firstOutput: first, firstTime: 0, times: b.inputTimes,
                           ratios: b.ratios,
                           formants: formants, input: input, inputEnd: pulled)
            }
            parts.splice {
                $0.process(left: left, right: right, frameCount: frameCount, firstOutput: first, times: b.times,
                           nextTime: nextTime, ratios: b.ratios, tableIndices: b.tableIndices, gate: gate, input: input)
            }
        }
    }

    /// Streaming: toward the dry input while the pitch is at 0 cents, the tempo 1, the vocoder
    /// has glided there and the frame read is the input itself (its phasors turned back to the
    /// input's: `PhaseVocoder.historyAligned`, so the fade is between equals), back to the wet signal
    /// otherwise; a linear fade of `wetFadeSeconds`. `source` is the vocoder the block was
    /// read from and `firstSegment` its reader's segment before the block (frame k's frame is
    /// found from there, as the reader found it: the same whatever the blocks).
    private func crossfadeToDry(_ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, frameCount: Int,
                                firstTime: Int, parts: Parts, source: PhaseVocoder.ReadView, firstSegment: Int) {
        let step = Float(1 / (Self.wetFadeSeconds * sampleRate))
        let view = parts.history { $0.view }
        let history = view.base, stride = view.stride, mask = view.mask
        // (a pitch held by a hand is the target over the map)
        let held = !handCents.isNaN
        let atZero = held ? handCents == 0 : parts.vocoder { $0.targetCents } == 0
        let map = held ? nil : heldPitchMap, origin = pitchMapOrigin
        let tempoIsOne = settings.tempo == 1
        // Wholly wet, and no frame of the block can ask for the dry input (a tempo, or a pitch
        // off 0 cents: the target's, or every value of the map's, between two of which a frame's
        // cents lie): the block stays as it is, with no per-frame test (the same bytes).
        var mayBeZero = atZero
        if let map {
            let (lowest, highest) = map { ($0.minimumCents, $0.maximumCents) }
            mayBeZero = lowest <= 0 && highest >= 0
        }
        let mayBeDry = tempoIsOne && mayBeZero
        if wet == 1 && !mayBeDry { return }
        var w = wet
        defer { wet = w }
        let historyA = source.historyA, aligned = source.historyAligned, frameMask = source.historyMask
        let framesRun = source.framesRun
        var seg = firstSegment
        for k in 0..<frameCount {
            // the frame this output frame was read from (before time 0: silence, as the input)
            var isInput = true
            if firstTime + k >= 0 {
                let t = Double(firstTime + k)
                while seg + 1 < framesRun && historyA[(seg + 1) & frameMask] <= t { seg += 1 }
                isInput = aligned[seg & frameMask]
            }
            var dryL: Float = 0, dryR: Float = 0
            if firstTime + k >= 0 {
                let slot = (firstTime + k) & mask
                dryL = history[slot]
                dryR = right != nil ? history[stride + slot] : dryL
            }
            // (with a map: whether it is at 0 cents at this frame's own time)
            var zero = atZero
            if let map {
                let frame = Double(firstTime + k + origin)
                zero = map { $0.cents(atFrame: frame) } == 0
            }
            let wantWet = !(blockTables.ratios[k] == 1 && zero && tempoIsOne && isInput)
            Smoother.linear(&w, toward: wantWet ? 1 : 0, step: step)
            let m = w
            if m == 0 {
                left[k] = dryL
                right?[k] = dryR
            } else if m < 1 {
                left[k] = dryL + m * (left[k] - dryL)
                if let right { right[k] = dryR + m * (right[k] - dryR) }
            }
        }
    }
}


/// The offline tempo path's level match, which the shifter makes its output `delayFrames` ahead
/// for: broadband at a faster tempo (`LevelMatch`), by band at a slower one (`BandLevelMatch`).
enum TempoMatch {
    case faster(Owned<LevelMatch>)
    case slower(Owned<BandLevelMatch>)

    var delayFrames: Int {
        switch self {
        case .faster(let m): m { $0.delayFrames }
        case .slower(let m): m { $0.delayFrames }
        }
    }
    var staging: (left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        switch self {
        case .faster(let m): m { $0.staging }
        case .slower(let m): m { $0.staging }
        }
    }
    @inline(__always)
    func reset() {
        switch self {
        case .faster(let m): m { $0.reset() }
        case .slower(let m): m { $0.reset() }
        }
    }
    @inline(__always)
    func recordInput(left: UnsafePointer<Float>, right: UnsafePointer<Float>?, frameCount: Int, at time: Int) {
        switch self {
        case .faster(let m): m { $0.recordInput(left: left, right: right, frameCount: frameCount, at: time) }
        case .slower(let m): m { $0.recordInput(left: left, right: right, frameCount: frameCount, at: time) }
        }
    }
    @inline(__always)
    func push(left: UnsafePointer<Float>, right: UnsafePointer<Float>?, frameCount: Int) {
        switch self {
        case .faster(let m): m { $0.push(left: left, right: right, frameCount: frameCount) }
        case .slower(let m): m { $0.push(left: left, right: right, frameCount: frameCount) }
        }
    }
    @inline(__always)
    func pop(into left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, frameCount: Int) {
        switch self {
        case .faster(let m): m { $0.pop(into: left, right, frameCount: frameCount) }
        case .slower(let m): m { $0.pop(into: left, right, frameCount: frameCount) }
        }
    }
    func release() {
        switch self {
        case .faster(let m): m.release()
        case .slower(let m): m.release()
        }
    }
}
