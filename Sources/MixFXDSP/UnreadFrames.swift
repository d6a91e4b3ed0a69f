/// What the frames a streaming shifter's reader has not read past (and the frames still to be
/// made) ask of the next block, from one scan of the vocoder's frame map: how fast the output's
/// input time may advance, whether it can be exact, whether a pitch switch may start, and how
/// far ahead the input must be. Render side; does not allocate.
struct UnreadFrames {
    /// The fastest tempo R among them (and the current and target tempo).
    var fastestTempo: Double
    /// All of them, and the current and target tempo, are exactly 1.
    var allAtUnitTempo: Bool
    /// All of them run at the vocoder's current tempo (a switch needs a steady tempo).
    var steadyTempo: Bool
    /// The current pitch or one of them is lowered (r < 1): frames read r times slower, which
    /// would hold the old pitch for (N/2)/r after a change (`PitchSwitch`).
    var lowered: Bool
    /// The look-ahead: the latency bound N/2 + ⌈(N/2 + taps/2 + 2)/σ⌉ + 1
    /// (`PitchShifterPlan.latencyBound`, taps of the reader's table for the frame's pitch ratio
    /// r) for the largest of them. With fixed settings it is exactly an offline shifter's latency.
    var aheadFrames: Int

    /// Scans the frame map of `vocoder` from `reader`'s segment on; `targetCents` is the pitch
    /// the frames to come glide to.
    @inline(__always)
    init(_ vocoder: Owned<PhaseVocoder>, _ reader: Owned<StretchReader>, targetCents: Double) {
        let (segment, tables, tableCount) = reader { ($0.segment, $0.tableViews, $0.tableCount) }
        self = vocoder { UnreadFrames($0, segment: segment, tables: tables, tableCount: tableCount, targetCents: targetCents) }
    }

    /// The same, the reader given as its segment and its tables (`tableCount` of them).
    @inline(__always)
    private init(_ vocoder: borrowing PhaseVocoder, segment: Int, tables: UnsafePointer<SincTable.View>, tableCount: Int, targetCents: Double) {
        let n = vocoder.fftSize
        func bound(ratio r: Double, tempo: Double) -> Int {
            let table = tables[min(tableCount - 1, SincTableCache.index(forRatio: r))]
            return PitchShifterPlan.latencyBound(fftSize: n, taps: table.taps, stretch: r / tempo)
        }
        func ratio(cents: Double) -> Double { cents == 0 ? 1 : PitchShifterSettings.ratio(cents: cents) }
        fastestTempo = max(vocoder.tempo, vocoder.targetTempo)
        allAtUnitTempo = vocoder.tempo == 1 && vocoder.targetTempo == 1
        steadyTempo = true
        lowered = vocoder.currentCents < 0
        // The frames still to be made glide from the current pitch and tempo to the targets, each
        // monotonically but at its own pace (τ = 20 ms and 100 ms), so their stretch r/R can dip
        // below both ends' (a pitch drop with a tempo drop: r falls at once while R is still
        // high; bounding the two ends alone starved the reader). The least r over the greatest R
        // bounds every frame of the glide; with fixed settings it is the one stretch.
        aheadFrames = bound(ratio: min(ratio(cents: vocoder.currentCents), ratio(cents: targetCents)),
                            tempo: max(vocoder.tempo, vocoder.targetTempo))
        for m in segment..<max(segment, vocoder.framesRun) {
            let slot = m & vocoder.historyMask
            let tempo = vocoder.historyT[slot], stretch = vocoder.historyR[slot]
            fastestTempo = max(fastestTempo, tempo)
            allAtUnitTempo = allAtUnitTempo && tempo == 1
            steadyTempo = steadyTempo && tempo == vocoder.tempo
            lowered = lowered || stretch * tempo < 1 - SincTableCache.unitTolerance
            aheadFrames = max(aheadFrames, bound(ratio: stretch * tempo, tempo: tempo))
        }
    }
}
