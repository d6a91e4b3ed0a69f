#if canImport(Glibc)
import Glibc
#endif

/// A pitch shifter that keeps duration: a phase vocoder time-stretches by the ratio r, then a
/// band-limited reader plays the stretched signal r times faster. It is four parts, each in its
/// own file:
///
/// - `PhaseVocoder`: frames, hop rule, frame map, FFT, phase locking, formants: the stretch;
/// - `StretchReader`: the position mapping p(t) and the sinc reads: the resample;
/// - `TransientGate`: keeps the vocoder's pre-echo out of the silence before a hit;
/// - `TransientSplice`: puts a shifted hit's attack back in place;
///
/// and `InputHistory`, the input by time, which the vocoder's analysis, the splice and the live
/// dry path read. Its scratch memory (FFT work buffers, the frame's spectra, the block's tables)
/// comes from a `PitchShifterWorkspace`, its own or one shared with the other shifters a thread
/// runs (`use(_:)`). Live, at 0 cents the output crossfades (`wetFadeSeconds`) to the dry input
/// delayed by L, so 0 cents is exact.
///
/// Output n holds input sample n − L: a fixed latency L = `latencyFrames`, which offline
/// rendering removes by pre-rolling L frames and draining L frames. L must let the stretched
/// signal be complete where it is read: after input n arrived, frames with A_m + N/2 ≤ n + 1 ran,
/// so it is final up to r·(n + 0.5 − N/2) − N/2; output n reads up to r·(n − L) + taps/2 + 1,
/// hence L ≥ N/2 + (N/2 + taps/2 + 1)/r (`starvedFrames` counts violations and stays 0).
///
/// Threading: one thread at a time (`prepare` on the control side, then `reset`, the setters and
/// `process` on the render side, which do not allocate). `@unchecked Sendable` so that an
/// offline render can hand a track to a worker thread; it is never used by two at once.
public final class PitchShifter: @unchecked Sendable {
    /// Live: the wet/dry crossfade at 0 cents.
    static let wetFadeSeconds = 0.02

    /// The settings of the last `prepare` (pitch updated by `setPitchCents`).
    public private(set) var settings = PitchShifterSettings()
    /// Offline or live, from `prepare`.
    public private(set) var mode = PitchShifterMode.offline
    /// Analysis frame length N, from the sample rate.
    public var fftSize: Int { parts?.vocoder.fftSize ?? 0 }
    /// The shorter of the two hops, N / overlap: the synthesis hop when lowering the pitch, the
    /// analysis hop when raising it.
    public var hopFrames: Int { parts?.vocoder.hopFrames ?? 0 }
    /// Output lags input by this many frames; offline rendering removes it.
    public private(set) var latencyFrames = 0
    /// With a tempo: how far ahead of an output frame's input time the input is taken, so that
    /// the stretched signal is final where it is read (the latency bound below, with the stretch
    /// σ = r/R for r). The output itself has no latency: input comes on demand.
    public private(set) var inputAheadFrames = 0
    /// Output samples that had to be zero because the stretched signal was late (0 unless the
    /// latency bound is wrong; tests check it).
    public var starvedFrames: Int {
        (parts?.reader.starvedFrames ?? 0) + (spareReader?.starvedFrames ?? 0) + retiredStarvedFrames
    }
    /// Analysis/synthesis frames run since `prepare` or `reset` (the cost: four FFTs each for
    /// stereo).
    public var framesRun: Int { parts?.vocoder.framesRun ?? 0 }

    /// What a prepared, running shifter is made of (nil: skipped, offline at 0 cents).
    private struct Parts {
        var vocoder: PhaseVocoder
        var reader: StretchReader
        let gate: TransientGate
        let splice: TransientSplice
        let history: InputHistory
    }
    private var parts: Parts?

    /// Streaming: a second vocoder and reader for the switch to a new pitch. Frames made at a
    /// lowered pitch are read r times slower, so the frames already made would hold the old pitch
    /// for about (N/2)/r (85 ms at −1200 cents, 171 ms at −2400). A pitch change of
    /// `switchMinimumCents` or more while such frames are unread (at a steady tempo) instead
    /// restarts these at the new pitch from the input history (`PhaseVocoder.restart`: frame 0
    /// on the next output's input time, the frames its input completes made at once), and the
    /// output crossfades to them over `switchFadeSeconds`, equal power (the two are not
    /// coherent). Then they become the shifter's own, and the old ones wait for the next switch.
    /// With fixed settings nothing switches: the output is exactly the offline shifter's.
    private var spareVocoder: PhaseVocoder?
    private var spareReader: StretchReader?
    /// The switch's crossfade: output frames done (−1: no switch running).
    private var switchFramesDone = -1
    /// A pitch change of `switchMinimumCents` or more arrived (`setPitchCents`).
    private var switchWanted = false
    /// Starved frames counted by readers since restarted.
    private var retiredStarvedFrames = 0
    /// Switches started since `reset` (tests).
    private(set) var switchCount = 0
    /// Streaming: the input pulled so far (the history holds it; a state may lag it).
    private var inputPulled = 0
    /// The switch's crossfade.
    static let switchFadeSeconds = 0.02
    /// Smaller changes glide (a slider's steps; two states a few cents apart would beat).
    static let switchMinimumCents = 50.0

    /// The tables of one block, from the workspace: per output frame the segment's ratio and its
    /// grid index; with a tempo, its input time rounded down (for the gate); live, its input time.
    /// With a spare state (streaming), its output and tables while a switch crossfades.
    private struct BlockTables {
        var ratios: UnsafeMutablePointer<Double>
        var tableIndices: UnsafeMutablePointer<Int>
        var inputTimes: UnsafeMutablePointer<Int>
        var times: UnsafeMutablePointer<Double>
        var spareLeft: UnsafeMutablePointer<Float>
        var spareRight: UnsafeMutablePointer<Float>
        var spareRatios: UnsafeMutablePointer<Double>
        var spareTableIndices: UnsafeMutablePointer<Int>
        var spareTimes: UnsafeMutablePointer<Double>

        init(_ c: inout ScratchCarver, frames: Int, spare: Bool) {
            ratios = c.take(Double.self, frames)
            tableIndices = c.take(Int.self, frames)
            inputTimes = c.take(Int.self, frames)
            times = c.take(Double.self, frames)
            let s = spare ? frames : 0
            spareLeft = c.take(Float.self, s)
            spareRight = c.take(Float.self, s)
            spareRatios = c.take(Double.self, s)
            spareTableIndices = c.take(Int.self, s)
            spareTimes = c.take(Double.self, s)
        }
    }
    private var blockTables: BlockTables = {
        var measure = ScratchCarver(nil)
        return BlockTables(&measure, frames: 1, spare: false)
    }()
    /// Bytes of scratch memory this shifter needs (`use(_:)`), from `prepare`.
    public private(set) var workspaceByteCount = 0
    private var ownWorkspace: PitchShifterWorkspace?
    private var boundWorkspace: UnsafeMutableRawPointer?
    private var maximumFrameCount = 0
    private var sampleRate = 48_000.0
    private var outIndex = 0
    private var wet: Float = 1   // live: the wet share (see `crossfadeToDry`)
    /// Live: the input time of the next output frame (see `process(live:...)`); the engine reads
    /// it as the track's position in its own time.
    public private(set) var inputTime = 0.0
    /// Live: the tempo the frames run now have glided to (1 until a tempo is set).
    public var currentTempo: Double { parts?.vocoder.tempo ?? 1 }

    /// An unprepared shifter; call `prepare` (control side) before `process`.
    public init() {}

    /// Allocates for `spec`, `settings` and `mode`. The FFT size follows the sample rate (≈ 85 ms:
    /// 4096 at 44.1/48 kHz, 8192 at 88.2/96 kHz). With `sharesWorkspace`, its scratch memory is
    /// not its own: hand it a `PitchShifterWorkspace` of `workspaceByteCount` bytes or more
    /// (`use(_:)`) before it processes. Control side.
    public func prepare(_ spec: ProcessSpec, settings: PitchShifterSettings, mode: PitchShifterMode = .offline,
                        sharesWorkspace: Bool = false) {
        prepareParts(spec, settings: settings, mode: mode)
        maximumFrameCount = max(1, spec.maximumFrameCount)
        ownWorkspace = nil
        bind(nil)
        if !sharesWorkspace && parts != nil {
            let own = PitchShifterWorkspace(byteCount: workspaceByteCount)
            ownWorkspace = own
            use(own)
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

    /// Carves the scratch of the block tables and the vocoder from `base` (nil: measures it into
    /// `workspaceByteCount`, and nothing is bound).
    private func bind(_ base: UnsafeMutableRawPointer?) {
        var carver = ScratchCarver(base)
        blockTables = BlockTables(&carver, frames: maximumFrameCount, spare: spareVocoder != nil)
        // (the spare vocoder's scratch is the same memory: the two never run a frame at once)
        var spareCarver = carver
        parts?.vocoder.bindScratch(&carver)
        spareVocoder?.bindScratch(&spareCarver)
        if base == nil { workspaceByteCount = parts == nil ? 0 : carver.byteCount }
        boundWorkspace = base
    }

    private func prepareParts(_ spec: ProcessSpec, settings: PitchShifterSettings, mode: PitchShifterMode) {
        precondition(spec.channelCount >= 1 && spec.channelCount <= 2)
        precondition(PitchShifterSettings.overlapRange.contains(settings.overlap))
        precondition(PitchShifterSettings.tempoRange.contains(settings.tempo))
        precondition(mode == .offline || PitchShifterSettings.liveTempoRange.contains(settings.tempo))
        parts = nil
        spareVocoder = nil
        spareReader = nil
        self.settings = settings
        self.mode = mode
        sampleRate = spec.sampleRate
        guard mode != .offline || !settings.isNeutral else { latencyFrames = 0; inputAheadFrames = 0; reset(); return }
        if settings.changesTempo && mode == .offline { prepareTempo(spec); return }
        let n = PhaseVocoder.fftSize(sampleRate: spec.sampleRate)
        // Latency for the smallest ratio this shifter may meet, and the tables it may read.
        let live = mode != .offline
        let minRatio = live ? PitchShifterSettings.ratio(cents: PitchShifterSettings.centsRange.lowerBound) : settings.ratio
        let maxRatio = live ? PitchShifterSettings.ratio(cents: PitchShifterSettings.centsRange.upperBound) : settings.ratio
        let tables: [SincTable], spliceTables: [SincTable]
        if live {
            tables = SincTableCache.interpolators(upToRatio: maxRatio)
            spliceTables = SincTableCache.tables(upToRatio: maxRatio)
        } else {
            // a fixed ratio reads one grid index only: the tables below it are not built (each
            // costs milliseconds), the slots hold the one that is
            let g = SincTableCache.index(forRatio: maxRatio)
            tables = Array(repeating: SincTableCache.interpolator(index: g), count: g + 1)
            spliceTables = Array(repeating: SincTableCache.table(index: g), count: g + 1)
        }
        let maxHalfTaps = (tables + spliceTables).map { $0.taps / 2 }.max()!
        // L, the latency bound for each ratio the shifter may meet: live, every grid index (with
        // the smallest ratio of its cell) at tempo R (the stretch r/R); offline, the one fixed ratio.
        func worstBound(tempo: Double) -> Int {
            tables.enumerated().map { i, t in
                let r: Double
                switch i {
                case SincTableCache.unitIndex: r = 1
                case SincTableCache.loweredIndex: r = min(minRatio, 1)
                default: r = PitchShifterSettings.ratio(cents: SincTableCache.cents(index: i - 1))
                }
                return Self.latencyBound(fftSize: n, taps: t.taps, stretch: r / tempo)
            }.max()!
        }
        if live {
            latencyFrames = worstBound(tempo: 1)
        } else {
            latencyFrames = Self.latencyBound(fftSize: n, taps: tables[tables.count - 1].taps, stretch: settings.ratio)
        }
        let maxFrames = spec.maximumFrameCount
        let splice = TransientSplice(sampleRate: spec.sampleRate, tables: spliceTables, latencyFrames: latencyFrames,
                                     halfTaps: maxHalfTaps)
        // Live, the tempo may change (`setTempo`, within `liveTempoRange`): a streaming shifter
        // pulls its input up to the latency bound for the stretch σ = r/R past the output's input
        // time, σ spans r_min/R_max…r_max/R_min, and the buffers hold the largest of those spans.
        var stretchSizing = latencyFrames, maxStretch = maxRatio, reach = latencyFrames
        if live {
            frameLength = n
            let slow = PitchShifterSettings.liveTempoRange.lowerBound, fast = PitchShifterSettings.liveTempoRange.upperBound
            maxStretch = maxRatio / slow
            let blockInput = Int((Double(maxFrames) * fast).rounded(.up)) + 2
            reach = max(latencyFrames, worstBound(tempo: fast)) + blockInput + maxFrames
                + Int(TransientSplice.lengthSeconds * spec.sampleRate * maxRatio)
            // the stretched span: what is pulled ahead of the read position, stretched
            let span = max(Double(latencyFrames) * maxRatio, Double(worstBound(tempo: slow)) * maxStretch)
                + Double(blockInput) * maxStretch
            stretchSizing = Int((span / maxStretch).rounded(.up))
        }
        // the input by time, for the splice and the dry path, and the vocoder's analysis windows
        // (streaming: a switch's frame 0 reads N/2 behind the output's input time)
        let history = InputHistory(channelCount: spec.channelCount,
                                   frames: max(reach + maxFrames + 4 * maxHalfTaps + 2 * splice.onsetLookaheadFrames + 64
                                                   + (mode == .streaming ? n / 2 : 0),
                                               PhaseVocoder.inputFramesHeld(fftSize: n, maximumFrameCount: maxFrames)),
                                   slack: max(2 * maxHalfTaps, n))
        func vocoder() -> PhaseVocoder {
            PhaseVocoder(sampleRate: spec.sampleRate, maximumFrameCount: maxFrames, channelCount: spec.channelCount,
                         overlap: settings.overlap, maxRatio: maxStretch,
                         latencyFrames: stretchSizing, readHalfTaps: maxHalfTaps, inputHistory: history,
                         tempo: settings.tempo, formants: mode != .offline || settings.preserveFormants)
        }
        if mode == .streaming {
            spareVocoder = vocoder()
            spareReader = StretchReader(tables: tables)
        }
        parts = Parts(
            vocoder: vocoder(),
            reader: StretchReader(tables: tables),
            gate: TransientGate(sampleRate: spec.sampleRate,
                                reachFrames: reach + maxFrames + splice.onsetLookaheadFrames + splice.onsetBackFrames),
            splice: splice,
            history: history)
        // streaming: no latency (the input is read ahead instead)
        if mode == .streaming { latencyFrames = 0 }
        reset()
    }

    /// N (streaming: the look-ahead's bound is computed per block).
    private var frameLength = 0

    /// The latency bound: how many input frames past an output's input time the vocoder must
    /// have taken so that the stretched signal is final where the output reads it, for a reader
    /// of `taps` taps and the stretch σ (r, or r/R with a tempo). After input t + a arrived,
    /// frames with A_m + N/2 ≤ t + a ran, so the signal is final up to σ·(t + a − N/2) − N/2;
    /// the read reaches σ·t + taps/2 + 1, hence a = N/2 + ⌈(N/2 + taps/2 + 2)/σ⌉ + 1. The one
    /// formula for the offline latency, the tempo's look-ahead, the live L and the streaming
    /// look-ahead.
    @inline(__always)
    static func latencyBound(fftSize n: Int, taps: Int, stretch sigma: Double) -> Int {
        n / 2 + Int((Double(n / 2 + taps / 2 + 2) / sigma).rounded(.up)) + 1
    }

    /// With a tempo R (offline): the vocoder stretches by σ = r/R, the reader reads r times
    /// faster while input time advances R per output frame; input is pulled as far ahead as
    /// σ's latency bound needs; the transient splice puts each attack at T/R. (The dry path is
    /// not used.)
    private func prepareTempo(_ spec: ProcessSpec) {
        let n = PhaseVocoder.fftSize(sampleRate: spec.sampleRate)
        let r = settings.ratio, tempo = settings.tempo, sigma = r / tempo
        let g = SincTableCache.index(forRatio: r)
        let tables = Array(repeating: SincTableCache.interpolator(index: g), count: g + 1)
        let spliceTables = Array(repeating: SincTableCache.table(index: g), count: g + 1)
        let halfTaps = max(tables[g].taps, spliceTables[g].taps) / 2
        inputAheadFrames = Self.latencyBound(fftSize: n, taps: tables[g].taps, stretch: sigma)
        latencyFrames = 0
        let maxFrames = spec.maximumFrameCount
        let blockInput = Int((Double(maxFrames) * tempo).rounded(.up)) + 2
        let splice = TransientSplice(sampleRate: spec.sampleRate, tables: spliceTables, latencyFrames: 0, halfTaps: halfTaps)
        let history = InputHistory(channelCount: spec.channelCount,
                                   frames: max(inputAheadFrames + blockInput + maxFrames + 4 * halfTaps + 2 * splice.onsetLookaheadFrames
                                                   + Int(TransientSplice.lengthSeconds * spec.sampleRate * max(1, r)) + 64,
                                               PhaseVocoder.inputFramesHeld(fftSize: n, maximumFrameCount: maxFrames)),
                                   slack: max(2 * halfTaps, n))
        parts = Parts(
            vocoder: PhaseVocoder(sampleRate: spec.sampleRate, maximumFrameCount: maxFrames, channelCount: spec.channelCount,
                                  overlap: settings.overlap, maxRatio: sigma,
                                  latencyFrames: inputAheadFrames + blockInput, readHalfTaps: halfTaps, inputHistory: history,
                                  tempo: tempo, formants: settings.preserveFormants),
            reader: StretchReader(tables: tables),
            gate: TransientGate(sampleRate: spec.sampleRate, reachFrames: inputAheadFrames + blockInput + maxFrames + 64),
            splice: splice,
            history: history)
        reset()
    }

    /// Clears all signal state; the next sample is treated as sample 0. Does not allocate.
    public func reset() {
        wet = mode != .offline && settings.isNeutral ? 0 : 1
        outIndex = 0
        // live: output frame 0 at input time −L·R, so that input time 0 is heard after L frames
        inputTime = -Double(latencyFrames) * settings.tempo
        switchFramesDone = -1
        switchWanted = false
        retiredStarvedFrames = 0
        switchCount = 0
        inputPulled = 0
        spareReader?.reset()
        guard let parts else { return }
        parts.vocoder.targetTempo = settings.tempo
        parts.vocoder.reset(pitchCents: settings.pitchCents)
        parts.vocoder.preserveFormants = settings.preserveFormants
        parts.reader.reset()
        parts.gate.reset()
        parts.splice.reset()
        parts.history.reset()
    }

    /// Turns formant preservation on or off while running (render side, once per block; live
    /// and streaming shifters: an offline shifter made its formant buffers only if prepared with
    /// formants on, and keeps that setting).
    @inline(__always)
    public func setPreserveFormants(_ on: Bool) {
        guard mode != .offline else { return }
        settings.preserveFormants = on
        parts?.vocoder.preserveFormants = on
        spareVocoder?.preserveFormants = on
    }

    /// Sets the pitch while running (live mode; the render side calls it once per block). The
    /// vocoder glides to it over about 20 ms.
    @inline(__always)
    public func setPitchCents(_ cents: Double) {
        let target = min(max(cents, PitchShifterSettings.centsRange.lowerBound), PitchShifterSettings.centsRange.upperBound)
        if spareVocoder != nil && abs(target - settings.pitchCents) >= Self.switchMinimumCents { switchWanted = true }
        settings.pitchCents = target
        parts?.vocoder.setTargetCents(target)
        if switchFramesDone >= 0 { spareVocoder?.setTargetCents(target) }
    }

    /// Sets the tempo while running (live mode; the render side calls it once per block),
    /// clamped to `liveTempoRange`. The frames glide to it (τ = 100 ms); it is heard once they are
    /// read (a streaming shifter: within its look-ahead). From 0 cents and tempo 1 the
    /// output first fades from the exact dry input to the wet signal, and only then the tempo
    /// moves.
    @inline(__always)
    public func setTempo(_ tempo: Double) {
        guard mode != .offline else { return }
        let range = PitchShifterSettings.liveTempoRange
        settings.tempo = tempo.isNaN ? 1 : min(max(tempo, range.lowerBound), range.upperBound)
    }

    /// Streaming, any tempo: writes `frameCount` output frames into `left` (and `right`), asking
    /// `pull(k)` for the next k input frames (at most `maximumPull` at a time) as the output's
    /// input time advances. Output frame n is at input time t_n, t_{n+1} = t_n + R_m (the tempo
    /// of the frame it reads), from t_0 = −L·R after `reset`. While the tempo is 1 and t_n whole
    /// this is exactly `process(left:right:frameCount:)` fed the same input (the pull then asks
    /// for `frameCount` frames a block); a tempo returning to 1 steers t onto the nearest whole
    /// frame within a block so that it is again. Never allocates.
    public func process(live left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, frameCount: Int,
                        maximumPull: Int, pull: (Int) throws -> (UnsafePointer<Float>, UnsafePointer<Float>?)) rethrows {
        precondition(mode == .streaming, "process(live:) is for a streaming shifter")
        guard let parts else { return }
        precondition(boundWorkspace != nil, "a shifter prepared with sharesWorkspace needs use(_:) before it processes")
        let times = blockTables.times
        let vocoder = parts.vocoder
        // the tempo waits until the output is wholly wet (leaving the exact dry path)
        vocoder.targetTempo = wet == 1 ? settings.tempo : 1
        if switchWanted { startSwitch(parts) }
        let spare: (vocoder: PhaseVocoder, reader: StretchReader)?
        if switchFramesDone >= 0, let v = spareVocoder, let r = spareReader {
            v.targetTempo = vocoder.targetTempo
            spare = (v, r)
        } else {
            spare = nil
        }
        // the fastest tempo the frames not read past (and those to come) have, and whether all
        // of them are at exactly 1
        var (high, allAtOne) = Self.unreadTempos(vocoder, parts.reader)
        if let spare {
            let (h, one) = Self.unreadTempos(spare.vocoder, spare.reader)
            high = max(high, h)
            allAtOne = allAtOne && one
        }
        // back at tempo 1 between whole frames: this block steers onto the nearest one (a step
        // of at most 1 + 0.5/frameCount: under 2 cents for one block, no jump)
        let whole = inputTime == inputTime.rounded(.down)
        let nudge = allAtOne && !whole ? (inputTime.rounded() - inputTime) / Double(frameCount) : 0
        let exact = allAtOne && whole
        // Each state takes the input as far as its own look-ahead needs; the input is pulled as
        // far as either needs. A state that lags what was pulled (restarted, or swapped in after
        // a switch) takes it from the history a block's worth at a time, not all at once.
        let lastTime = floorToInt(inputTime + Double(frameCount - 1) * high) + 1
        var ahead = streamingAheadFrames(vocoder, parts.reader)
        let neededMain = lastTime + ahead
        var needed = neededMain, neededSpare = 0
        if let spare {
            let a = streamingAheadFrames(spare.vocoder, spare.reader)
            neededSpare = lastTime + a
            ahead = max(ahead, a)
            needed = max(needed, neededSpare)
        }
        while inputPulled < needed {
            let n = min(maximumPull, maximumFrameCount, needed - inputPulled)
            let (l, r) = try pull(n)
            parts.gate.recordInput(left: l, right: r, frameCount: n, at: inputPulled)
            parts.history.write(left: l, right: r, frameCount: n, at: inputPulled)
            // (a state in step takes each block as it comes, as it always has, but not past
            // its own need: its buffers hold what its own look-ahead stretches, not the other's)
            let inStep = vocoder.inputEnd == inputPulled && inputPulled + n <= neededMain
            inputPulled += n
            if inStep { vocoder.append(frameCount: n, readPosition: parts.reader.lastReadPosition) }
        }
        vocoder.advance(to: min(inputPulled, neededMain), readPosition: parts.reader.lastReadPosition)
        spare?.vocoder.advance(to: min(inputPulled, neededSpare), readPosition: spare!.reader.lastReadPosition)
        let t0 = inputTime
        inputTime = parts.reader.read(into: left, right, frameCount: frameCount, firstTime: t0, ratios: blockTables.ratios,
                                      tableIndices: blockTables.tableIndices, from: vocoder, times: times, nudge: nudge)
        if let spare {
            // both read the same times (the tempo is steady through a switch, the nudge the same)
            inputTime = crossfadeToSpare(left, right, frameCount: frameCount, firstTime: t0, nudge: nudge, spare: spare)
        }
        if nudge != 0 { inputTime = inputTime.rounded() }
        if exact {
            let first = Int(t0)
            // the input held past t is `ahead`, as an offline shifter's latency at this ratio
            let g = SincTableCache.index(forRatio: settings.ratio)
            parts.splice.setRoom(aheadFrames: ahead, halfTaps: max(parts.reader.tables[g].taps, parts.splice.tables[g].taps) / 2)
            parts.gate.process(left: left, right: right, frameCount: frameCount, firstTime: first)
            parts.splice.process(left: left, right: right, frameCount: frameCount, firstTime: first,
                                 ratios: blockTables.ratios, tableIndices: blockTables.tableIndices, gate: parts.gate, input: parts.history)
            crossfadeToDry(left, right, frameCount: frameCount, firstTime: first, parts: parts)
        } else {
            for k in 0..<frameCount { blockTables.inputTimes[k] = max(-1, floorToInt(times[k])) }
            parts.gate.process(left: left, right: right, frameCount: frameCount, firstTime: 0, times: blockTables.inputTimes)
            parts.splice.process(left: left, right: right, frameCount: frameCount, firstOutput: outIndex, times: times,
                                 tempo: vocoder.tempo, ratios: blockTables.ratios, tableIndices: blockTables.tableIndices,
                                 gate: parts.gate, input: parts.history)
        }
        outIndex += frameCount
        if let spare, switchFramesDone >= Self.switchFadeFrames(sampleRate) {
            // the new state is the shifter's own; the old one waits for the next switch
            spareVocoder = vocoder
            spareReader = parts.reader
            self.parts!.vocoder = spare.vocoder
            self.parts!.reader = spare.reader
            switchFramesDone = -1
        }
    }

    /// The fastest tempo of the frames `reader` has not read past and those to come, and whether
    /// all of them are at exactly 1.
    private static func unreadTempos(_ vocoder: PhaseVocoder, _ reader: StretchReader) -> (high: Double, allAtOne: Bool) {
        var high = max(vocoder.tempo, vocoder.targetTempo)
        var allAtOne = vocoder.tempo == 1 && vocoder.targetTempo == 1
        for m in reader.segment..<max(reader.segment, vocoder.framesRun) {
            let r = vocoder.historyT[m & vocoder.historyMask]
            high = max(high, r)
            allAtOne = allAtOne && r == 1
        }
        return (high, allAtOne)
    }

    /// Output frames of a switch's crossfade.
    private static func switchFadeFrames(_ sampleRate: Double) -> Int { max(1, Int(switchFadeSeconds * sampleRate)) }

    /// Starts a switch (see `spareVocoder`) if none is running, the output is wet, the tempo is
    /// steady, and frames made at a lowered pitch are still to be read; else the change glides.
    private func startSwitch(_ parts: Parts) {
        switchWanted = false
        let vocoder = parts.vocoder
        guard switchFramesDone < 0, let spareV = spareVocoder, let spareR = spareReader, wet == 1,
              vocoder.tempo == vocoder.targetTempo else { return }
        var lowered = vocoder.currentCents < 0
        for m in parts.reader.segment..<max(parts.reader.segment, vocoder.framesRun) {
            let slot = m & vocoder.historyMask
            guard vocoder.historyT[slot] == vocoder.tempo else { return }
            lowered = lowered || vocoder.historyR[slot] * vocoder.historyT[slot] < 1 - SincTableCache.unitTolerance
        }
        guard lowered else { return }
        retiredStarvedFrames += spareR.starvedFrames
        spareV.targetTempo = vocoder.tempo
        spareV.preserveFormants = vocoder.preserveFormants
        spareV.restart(at: inputTime, pitchCents: settings.pitchCents)
        spareR.reset()
        switchFramesDone = 0
        switchCount += 1
    }

    /// A switch: reads the spare state at the same times into the workspace and crossfades the
    /// output to it (equal power); its ratios, grid indices and times become the block's.
    /// Returns the input time after the block.
    private func crossfadeToSpare(_ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, frameCount: Int,
                                  firstTime t0: Double, nudge: Double,
                                  spare: (vocoder: PhaseVocoder, reader: StretchReader)) -> Double {
        let b = blockTables
        let next = spare.reader.read(into: b.spareLeft, right != nil ? b.spareRight : nil, frameCount: frameCount,
                                     firstTime: t0, ratios: b.spareRatios, tableIndices: b.spareTableIndices,
                                     from: spare.vocoder, times: b.spareTimes, nudge: nudge)
        let fade = Double(Self.switchFadeFrames(sampleRate))
        for k in 0..<frameCount {
            let x = min(1, Double(switchFramesDone + k + 1) / fade) * Double.pi / 2
            let old = Float(cos(x)), new = Float(sin(x))
            left[k] = old * left[k] + new * b.spareLeft[k]
            if let right { right[k] = old * right[k] + new * b.spareRight[k] }
        }
        b.ratios.update(from: b.spareRatios, count: frameCount)
        b.tableIndices.update(from: b.spareTableIndices, count: frameCount)
        b.times.update(from: b.spareTimes, count: frameCount)
        switchFramesDone += frameCount
        return next
    }

    /// Streaming: how far past the output's input time the input must be: the latency bound
    /// N/2 + ⌈(N/2 + taps/2 + 2)/σ⌉ + 1 (taps of the reader's table for the frame's pitch ratio
    /// r) for the largest of the frames not yet read past, the frames now being made and the
    /// settings they glide to. With fixed settings it is exactly an offline shifter's latency.
    private func streamingAheadFrames(_ vocoder: PhaseVocoder, _ reader: StretchReader) -> Int {
        let tables = reader.tables
        func bound(ratio r: Double, tempo: Double) -> Int {
            let table = tables[min(tables.count - 1, SincTableCache.index(forRatio: r))]
            return Self.latencyBound(fftSize: frameLength, taps: table.taps, stretch: r / tempo)
        }
        func ratio(cents: Double) -> Double { cents == 0 ? 1 : PitchShifterSettings.ratio(cents: cents) }
        // The frames still to be made glide from the current pitch and tempo to the targets, each
        // monotonically but at its own pace (τ = 20 ms and 100 ms), so their stretch r/R can dip
        // below both ends' (a pitch drop with a tempo drop: r falls at once while R is still
        // high; bounding the two ends alone starved the reader). The least r over the greatest R
        // bounds every frame of the glide; with fixed settings it is the one stretch.
        var ahead = bound(ratio: min(ratio(cents: vocoder.currentCents), ratio(cents: settings.pitchCents)),
                          tempo: max(vocoder.tempo, vocoder.targetTempo))
        for m in reader.segment..<max(reader.segment, vocoder.framesRun) {
            let slot = m & vocoder.historyMask
            ahead = max(ahead, bound(ratio: vocoder.historyR[slot] * vocoder.historyT[slot], tempo: vocoder.historyT[slot]))
        }
        return ahead
    }

    /// Shifts `frameCount` frames in place (`right` nil for mono, and only then). Output lags
    /// input by `latencyFrames`. Never allocates.
    public func process(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?, frameCount: Int) {
        guard let parts else { return }
        precondition(boundWorkspace != nil, "a shifter prepared with sharesWorkspace needs use(_:) before it processes")
        let time = parts.vocoder.inputEnd
        let inR = right.map { UnsafePointer($0) }
        parts.gate.recordInput(left: left, right: inR, frameCount: frameCount, at: time)
        parts.history.write(left: left, right: inR, frameCount: frameCount, at: time)
        parts.vocoder.append(frameCount: frameCount, readPosition: parts.reader.lastReadPosition)
        // the input is kept: the block now receives the output, input time t0 + k at frame k
        let t0 = outIndex - latencyFrames
        parts.reader.read(into: left, right, frameCount: frameCount, firstFrame: t0,
                          ratios: blockTables.ratios, tableIndices: blockTables.tableIndices, from: parts.vocoder)
        parts.gate.process(left: left, right: right, frameCount: frameCount, firstTime: t0)
        parts.splice.process(left: left, right: right, frameCount: frameCount, firstTime: t0,
                             ratios: blockTables.ratios, tableIndices: blockTables.tableIndices, gate: parts.gate, input: parts.history)
        if mode == .live { crossfadeToDry(left, right, frameCount: frameCount, firstTime: t0, parts: parts) }
        outIndex += frameCount
    }

    /// With a tempo (`settings.changesTempo`): writes `frameCount` output frames into `left`
    /// (and `right`), output frame n at input time n·R, asking `pull(k)` for the next k input
    /// frames as they are needed (at most `maximumFrameCount` at a time; silence after the end).
    /// `pull` returns where the caller holds them (`right` nil for mono); they are copied before
    /// the next call. Never allocates.
    public func process(into left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, frameCount: Int,
                        maximumPull: Int, pull: (Int) throws -> (UnsafePointer<Float>, UnsafePointer<Float>?)) rethrows {
        guard let parts else { return }
        precondition(boundWorkspace != nil, "a shifter prepared with sharesWorkspace needs use(_:) before it processes")
        let tempo = settings.tempo
        // frame n at input time n·R, from its absolute index (the same times in any blocks)
        let needed = Int((Double(outIndex + frameCount - 1) * tempo).rounded(.up)) + inputAheadFrames
        while parts.vocoder.inputEnd < needed {
            let n = min(maximumPull, maximumFrameCount, needed - parts.vocoder.inputEnd)
            let (l, r) = try pull(n)
            parts.gate.recordInput(left: l, right: r, frameCount: n, at: parts.vocoder.inputEnd)
            parts.history.write(left: l, right: r, frameCount: n, at: parts.vocoder.inputEnd)
            parts.vocoder.append(frameCount: n, readPosition: parts.reader.lastReadPosition)
        }
        for k in 0..<frameCount { blockTables.inputTimes[k] = floorToInt(Double(outIndex + k) * tempo) }
        parts.reader.read(into: left, right, frameCount: frameCount, firstFrame: outIndex,
                          ratios: blockTables.ratios, tableIndices: blockTables.tableIndices, from: parts.vocoder)
        parts.gate.process(left: left, right: right, frameCount: frameCount, firstTime: 0, times: blockTables.inputTimes)
        parts.splice.process(left: left, right: right, frameCount: frameCount, firstOutput: outIndex, tempo: tempo,
                             ratio: settings.ratio, table: SincTableCache.index(forRatio: settings.ratio),
                             gate: parts.gate, input: parts.history)
        outIndex += frameCount
    }

    /// Live: toward the dry input (delayed by L) while the pitch is at 0 cents and the vocoder
    /// has glided there, back to the wet signal otherwise; a linear fade of `wetFadeSeconds`.
    private func crossfadeToDry(_ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, frameCount: Int,
                                firstTime: Int, parts: Parts) {
        let step = Float(1 / (Self.wetFadeSeconds * sampleRate))
        let history = parts.history.base, stride = parts.history.stride, mask = parts.history.mask
        let atZero = parts.vocoder.targetCents == 0
        let tempoIsOne = settings.tempo == 1
        var w = wet
        defer { wet = w }
        for k in 0..<frameCount {
            var dryL: Float = 0, dryR: Float = 0
            if firstTime + k >= 0 {
                let slot = (firstTime + k) & mask
                dryL = history[slot]
                dryR = right != nil ? history[stride + slot] : dryL
            }
            let wantWet = !(blockTables.ratios[k] == 1 && atZero && tempoIsOne)
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
