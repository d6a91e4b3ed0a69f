import Testing
@testable import MixFXDSP
import TestSupport

/// The plan a shifter is sized by (`PitchShifterPlan`): its numbers for representative specs,
/// settings and modes, that its sizes cover what they must hold, and that its latency is the
/// delay the shifter actually gives.
@Suite struct PitchShifterPlanTests {
    static let mono441 = ProcessSpec(sampleRate: 44_100, maximumFrameCount: 512, channelCount: 1)
    static let stereo48 = ProcessSpec(sampleRate: 48_000, maximumFrameCount: 2048, channelCount: 2)

    /// Offline at 0 cents and tempo 1 nothing runs: no latency, nothing sized.
    @Test func neutralOfflineIsSkipped() {
        let plan = PitchShifterPlan(Self.mono441, settings: PitchShifterSettings(), mode: .offline)
        #expect(plan.kind == .skipped)
        #expect(plan.latencyFrames == 0 && plan.inputAheadFrames == 0 && plan.historyFrames == 0)
    }

    /// Offline +200 cents at 44.1 kHz: N = 4096, the interpolator of grid index 3 (32 taps) in
    /// every slot up to it, L = N/2 + ⌈(N/2 + 16 + 2)/2^(2/12)⌉ + 1 = 2048 + 1841 + 1 = 3890.
    @Test func offlinePitchNumbers() {
        let plan = PitchShifterPlan(Self.mono441, settings: PitchShifterSettings(pitchCents: 200), mode: .offline)
        #expect(plan.kind == .pitch)
        #expect(plan.fftSize == 4096)
        #expect(plan.tableIndices == [3, 3, 3, 3])
        #expect(SincTableCache.interpolator(index: 3).taps == 32)
        #expect(plan.latencyFrames == 3890)
        #expect(plan.inputAheadFrames == 0)
        #expect(plan.lookAheadFrames == 3890 && plan.stretchedLagFrames == 3890 && plan.spliceLatencyFrames == 3890)
        // the splice's hold read up to r times faster: 0.03 · 44 100 · 1.1225 = 1485
        #expect(plan.reachFrames == 3890 + 1485)
        #expect(!plan.formants && !plan.hasSwitch)
    }

    /// Offline −200 cents at tempo 0.8, 48 kHz stereo, blocks of 2048: the stretch
    /// σ = 2^(−2/12)/0.8 = 1.1136, read through the lowered table (64 taps); the input runs
    /// N/2 + ⌈2082/σ⌉ + 1 = 3919 frames ahead, plus a block's input ⌈2048·0.8⌉ + 2 = 1641.
    @Test func offlineTempoNumbers() {
        let settings = PitchShifterSettings(pitchCents: -200, tempo: 0.8)
        let plan = PitchShifterPlan(Self.stereo48, settings: settings, mode: .offline)
        #expect(plan.kind == .tempo)
        #expect(plan.tableIndices == [1, 1])
        #expect(plan.latencyFrames == 0)
        #expect(plan.inputAheadFrames == 3919)
        #expect(plan.lookAheadFrames == 3919 + 1641)
        #expect(plan.stretchedLagFrames == plan.lookAheadFrames)
        #expect(abs(plan.maxStretch - settings.ratio / 0.8) < 1e-12)
        // the splice's hold at the input's own speed (r < 1): 0.03 · 48 000 = 1440
        #expect(plan.reachFrames == 3919 + 1641 + 1440)
    }

    /// Offline at tempo 1/32 and +2400 cents, 48 kHz stereo: a splice reads the input further
    /// ahead of the output's input time, up to (length − attack)·(r − R), than the vocoder's
    /// bound. The input is pulled that far, but the vocoder takes it only to its bound, so the
    /// stretched signal is sized by that bound and a block's input, not by the splice's reach.
    @Test func offlineTempoSizesTheStretchedSignalByTheVocodersBound() {
        let settings = PitchShifterSettings(pitchCents: 2400, tempo: 1.0 / 32)
        let plan = PitchShifterPlan(Self.stereo48, settings: settings, mode: .offline)
        let block = PitchShifterPlan.blockInputFrames(2048, tempo: 1.0 / 32)
        let bound = PitchShifterPlan.latencyBound(fftSize: plan.fftSize, taps: SincTableCache.interpolatorTaps(index: plan.tableIndices.last!),
                                                  stretch: settings.ratio / settings.tempo)
        #expect(plan.vocoderAheadFrames == bound)
        #expect(plan.inputAheadFrames > 2 * bound, "the splice's reach \(plan.inputAheadFrames), the bound \(bound)")
        #expect(plan.lookAheadFrames == plan.inputAheadFrames + block)
        #expect(plan.stretchedLagFrames == bound + block)
    }

    /// Streaming at 48 kHz: every grid index up to +2400 cents (26), no latency, a switch, and
    /// the splice placed as a fixed-latency live shifter over the whole range would be (10 377
    /// frames, the bound of the cell just above 0 cents).
    @Test func streamingNumbers() {
        let plan = PitchShifterPlan(Self.stereo48, settings: PitchShifterSettings(pitchCents: 300), mode: .streaming)
        #expect(plan.kind == .streaming)
        #expect(plan.tableIndices == Array(0...25))
        #expect(plan.latencyFrames == 0 && plan.inputAheadFrames == 0)
        #expect(plan.spliceLatencyFrames == 10_377)
        #expect(plan.formants && plan.hasSwitch)
        // sized for the range, not the settings: the same plan at any pitch
        #expect(plan == PitchShifterPlan(Self.stereo48, settings: PitchShifterSettings(pitchCents: -2400), mode: .streaming))
        // the largest stretch: +2400 cents at the slowest live tempo
        #expect(plan.maxStretch == 4 / PitchShifterSettings.liveTempoRange.lowerBound)
    }

    /// Told the pitches it will meet (an offline lane's), a streaming shifter builds only the
    /// tables of their cells (a cent's margin either way) and fills the other slots with the
    /// nearest of those. Its buffers are sized for those pitches (and 0 cents) and the bounds'
    /// tempos (and 1); the taps and the splice's latency, which shape the output, stay the
    /// whole range's.
    @Test func onlyTheTablesOfThePitchesMetAreBuilt() {
        func plan(_ met: ClosedRange<Double>?, tempo: ClosedRange<Double> = 1...1) -> PitchShifterPlan {
            PitchShifterPlan(Self.stereo48, settings: PitchShifterSettings(pitchCents: 200), mode: .streaming,
                             bounds: met.map { StreamingBounds(pitchCents: $0, tempo: tempo) })
        }
        let all = plan(nil)
        #expect(all.builtIndices == all.tableIndices)
        // +100 … +300: the cells (0, 100] … (300, 400] are indices 2 … 5
        let raised = plan(100...300)
        #expect(raised.builtIndices == [2, 2] + [2, 3, 4, 5] + Array(repeating: 5, count: 20))
        // −200 … 0: lowered, unit, and the cell just above 0
        #expect(plan(-200...0).builtIndices == [0, 1] + Array(repeating: 2, count: 24))
        // one pitch, +1250: the cell (1200, 1300] (index 14) and, within a cent, no other
        #expect(plan(1250...1250).builtIndices == Array(repeating: 14, count: 26))
        for p in [raised, plan(-200...0), plan(1250...1250), plan(-2400...2400, tempo: 0.25...4)] {
            #expect(p.tableIndices == all.tableIndices && p.maxHalfTaps == all.maxHalfTaps
                    && p.spliceLatencyFrames == all.spliceLatencyFrames)
        }
        // the largest stretch: the highest ratio (or 1) over the slowest tempo (or 1)
        #expect(raised.maxStretch == PitchShifterSettings.ratio(cents: 300))
        #expect(plan(-200...0).maxStretch == 1)
        #expect(plan(100...300, tempo: 0.5...2).maxStretch == PitchShifterSettings.ratio(cents: 300) / 0.5)
        // bounded: smaller buffers; the whole range's bounds: the same plan as none
        #expect(raised.historyFrames < all.historyFrames && raised.stretchedLagFrames < all.stretchedLagFrames
                && raised.lookAheadFrames < all.lookAheadFrames)
        #expect(plan(-2400...2400, tempo: 0.25...4) == all)
        // every table's taps as built, without building it
        for i in all.tableIndices {
            #expect(SincTableCache.interpolatorTaps(index: i) == SincTableCache.interpolator(index: i).taps)
            #expect(SincTableCache.tableTaps(index: i) == SincTableCache.table(index: i).taps)
        }
    }

    static let cases: [(ProcessSpec, PitchShifterSettings, PitchShifterMode)] = {
        var all: [(ProcessSpec, PitchShifterSettings, PitchShifterMode)] = []
        for spec in [mono441, stereo48, ProcessSpec(sampleRate: 96_000, maximumFrameCount: 256, channelCount: 2)] {
            for cents in [-2400.0, -700, 0, 200, 1200, 2400] {
                for tempo in [0.25, 1, 1.5, 4] {
                    all.append((spec, PitchShifterSettings(pitchCents: cents, tempo: tempo), .offline))
                }
                all.append((spec, PitchShifterSettings(pitchCents: cents), .streaming))
            }
        }
        return all
    }()

    /// For every kind: the history and the gate's envelope hold the reach and a block, the
    /// history also the analysis windows, its slack a window; the reach covers the look-ahead,
    /// which covers the latency or the tempo's input ahead; the tables cover the ratio.
    @Test func sizesCoverWhatTheyHold() {
        for (spec, settings, mode) in Self.cases {
            let plan = PitchShifterPlan(spec, settings: settings, mode: mode)
            if plan.kind == .skipped { continue }
            let what = "\(spec.sampleRate) Hz, \(settings.pitchCents) cents, tempo \(settings.tempo), \(mode)"
            let block = spec.maximumFrameCount
            #expect(plan.historyFrames >= plan.reachFrames + block + 4 * plan.maxHalfTaps, "\(what)")
            #expect(plan.historyFrames >= PhaseVocoder.inputFramesHeld(fftSize: plan.fftSize, maximumFrameCount: block), "\(what)")
            #expect(plan.historySlackFrames >= plan.fftSize && plan.historySlackFrames >= 2 * plan.maxHalfTaps, "\(what)")
            #expect(plan.gateReachFrames >= plan.reachFrames + block, "\(what)")
            // one rule for the gate, whatever the kind
            let onsetFrames = Int(TransientSplice.onsetLookaheadSeconds * spec.sampleRate)
                + Int(TransientSplice.onsetBackSeconds * spec.sampleRate)
            #expect(plan.gateReachFrames == plan.reachFrames + block + onsetFrames + 64, "\(what)")
            #expect(plan.reachFrames > plan.lookAheadFrames, "\(what)")
            #expect(plan.lookAheadFrames >= plan.latencyFrames + plan.inputAheadFrames, "\(what)")
            #expect(plan.latencyFrames == 0 || plan.inputAheadFrames == 0, "\(what)")
            #expect(plan.tableIndices.last! >= SincTableCache.index(forRatio: settings.ratio), "\(what)")
            #expect(plan.maxStretch >= settings.ratio / settings.tempo - 1e-12, "\(what)")
            // a streaming shifter pulls up to the least stretch's bound at the fastest tempo
            if plan.kind == .streaming {
                let least = PitchShifterSettings.ratio(cents: -2400) / PitchShifterSettings.liveTempoRange.upperBound
                #expect(plan.lookAheadFrames >= PitchShifterPlan.latencyBound(fftSize: plan.fftSize, taps: 64, stretch: least), "\(what)")
            }
        }
    }

    /// A prepared shifter reports the plan's latency and look-ahead: with a `LevelMatch` (a faster
    /// tempo) or a `BandLevelMatch` (a slower one), a tempo's input look-ahead with what its
    /// output made ahead pulls (⌈D·R⌉ + 1 more); with a
    /// `PitchLevelMatch`, a fixed pitch's latency with the match's delay D.
    @Test func theShifterReportsThePlan() {
        for (spec, settings, mode) in Self.cases where spec.sampleRate != 96_000 {
            let plan = PitchShifterPlan(spec, settings: settings, mode: mode)
            let ps = PitchShifter()
            ps.prepare(spec, settings: settings, mode: mode)
            #expect(ps.plan == plan)
            let tempoMatch = ps.matchesLevel && plan.kind == .tempo, pitchMatch = ps.matchesLevel && plan.kind == .pitch
            let delay = settings.tempo < 1
                ? BandLevelMatch(sampleRate: spec.sampleRate, channels: spec.channelCount, tempo: settings.tempo,
                                 maximumFrameCount: spec.maximumFrameCount, inputAheadFrames: 0).delayFrames
                : LevelMatch(sampleRate: spec.sampleRate, channels: spec.channelCount, tempo: settings.tempo,
                             maximumFrameCount: spec.maximumFrameCount, inputAheadFrames: 0).delayFrames
            let pitchDelay = PitchLevelMatch(sampleRate: spec.sampleRate, latencyFrames: plan.latencyFrames,
                                             maximumFrameCount: spec.maximumFrameCount, analysisHopFrames: 512).delayFrames
            #expect(pitchDelay == PitchLevelMatch.delayFrames(sampleRate: spec.sampleRate))
            #expect(pitchMatch == (plan.kind == .pitch && settings.pitchCents != 0), "\(settings)")
            let matchAhead = tempoMatch ? Int((Double(delay) * settings.tempo).rounded(.up)) + 1 : 0
            #expect(ps.latencyFrames == plan.latencyFrames + (pitchMatch ? pitchDelay : 0))
            #expect(ps.inputAheadFrames == plan.inputAheadFrames + matchAhead)
            #expect(ps.fftSize == (plan.kind == .skipped ? 0 : plan.fftSize))
        }
    }

    /// The latency is the delay: an impulse into an offline shifter comes out (its attack put
    /// back in place by the transient splice) exactly `latencyFrames` later, at any ratio (a
    /// fixed pitch's with its `PitchLevelMatch`'s delay); a
    /// streaming shifter at 0 cents gives the impulse back at its own time.
    @Test(arguments: [-1200.0, -500.0, 200.0, 1200.0])
    func anImpulseComesOutAfterTheLatency(cents: Double) {
        let rate = 44_100.0, block = 512, at = 30_000
        var x = [Float](repeating: 0, count: 80_000)
        x[at] = 0.8
        let ps = PitchShifter()
        ps.prepare(ProcessSpec(sampleRate: rate, maximumFrameCount: block, channelCount: 1),
                   settings: PitchShifterSettings(pitchCents: cents))
        let latency = ps.latencyFrames
        let match = PitchLevelMatch.delayFrames(sampleRate: rate)
        #expect(ps.matchesLevel)
        #expect(latency == PitchShifterPlan(ProcessSpec(sampleRate: rate, maximumFrameCount: block, channelCount: 1),
                                            settings: PitchShifterSettings(pitchCents: cents), mode: .offline).latencyFrames + match)
        var y = x
        y.withUnsafeMutableBufferPointer { p in
            var i = 0
            while i < p.count { ps.process(left: p.baseAddress! + i, right: nil, frameCount: min(block, p.count - i)); i += block }
        }
        let peak = y.indices.max { abs(y[$0]) < abs(y[$1]) }!
        #expect(peak - at == latency, "the impulse came out \(peak - at) frames later, latency \(latency)")
        #expect(ps.starvedFrames == 0)
    }

    @Test func aStreamingShifterHasNoDelay() {
        let rate = 48_000.0, block = 480, at = 20_000
        var x = [Float](repeating: 0, count: 48_000)
        x[at] = 0.8
        let ps = PitchShifter()
        ps.prepare(ProcessSpec(sampleRate: rate, maximumFrameCount: block, channelCount: 1),
                   settings: PitchShifterSettings(), mode: .streaming)
        #expect(ps.latencyFrames == 0)
        #expect(ps.streamed(x, frames: x.count, blocks: [block]) == x)
    }
}
