/// Plays the vocoder's stretched signal r times faster: the resample half of the shifter.
///
/// Output sample n (input time t = n − L, L the shifter's latency; with a tempo R, t = (n − L)·R)
/// reads the stretched signal at
///
///     p(t) = S_m + (t − A_m)·σ_m,   the segment m with A_m ≤ t < A_{m+1},
///
/// (A_m, S_m, σ_m: frame m's analysis centre, synthesis centre and stretch r_m/R, from the
/// vocoder's frame map) through a `SincTable` for the pitch ratio r_m = σ_m·R's grid index. This
/// is the position mapping: p advances σ·R = r per output sample, so the pitch moves by r while
/// t, and with it the input, advances R per output sample. Raising the pitch, each
/// synthesis frame was cut above 0.92/r of Nyquist, so nothing is left to alias and a short
/// interpolator suffices (`SincTableCache.interpolator`).
///
/// Made by `PitchShifter.prepare` (control side); `reset` and `read` on the render side. One
/// thread at a time.
final class StretchReader {
    /// The interpolators, by ratio grid index.
    let tables: [SincTable]
    /// The same as values, for the render path (`SincTable.View`), and how many.
    let tableViews: UnsafeMutablePointer<SincTable.View>, tableCount: Int
    /// Output samples that had to be zero because the stretched signal was not final yet (0
    /// unless the latency bound is wrong).
    private(set) var starvedFrames = 0
    /// Where the last sample was read (the vocoder keeps what lies after it).
    private(set) var lastReadPosition = 0.0
    /// The frame whose segment holds the current output.
    private(set) var segment = 0
    private var tableRatio = 0.0            // the ratio `table` was chosen for
    private var table = 0

    init(tables: [SincTable]) {
        self.tables = tables
        tableViews = .allocate(capacity: tables.count)
        for (i, t) in tables.enumerated() { tableViews[i] = t.view }
        tableCount = tables.count
    }

    deinit { tableViews.deallocate() }

    @_noLocks
    func reset() {
        starvedFrames = 0
        segment = 0
        lastReadPosition = 0
    }

    /// Reads `frameCount` output samples (frame k at input time `(firstFrame + k)·step`, step the
    /// vocoder's tempo: a product of the frame's absolute index, so that the times, and the
    /// output, do not depend on how the output is cut into blocks) into `left` (and `right` for stereo), with each one's pitch ratio and grid
    /// index into `ratios`/`tableIndices` (1 and the last index before time 0, where the output
    /// is silence).
    ///
    /// With `times` (a tempo that changes, live): frame 0 is at `firstTime` (`firstFrame` is not
    /// used), frame k+1's input time is frame k's plus the
    /// tempo R_m of the segment it read (before time 0, the vocoder's tempo) plus `nudge`, each
    /// frame's time goes into `times`, and p therefore advances r_m (plus σ·nudge) per output
    /// sample. Returns the input time of the frame after the block. With `mapped` (a tempo map,
    /// offline automation), frame k is at `times[k]` as the caller filled it in.
    @inline(__always) @discardableResult
    @_noLocks
    func read(into left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, frameCount: Int,
              firstFrame: Int = 0, firstTime: Double = 0, ratios: UnsafeMutablePointer<Double>, tableIndices: UnsafeMutablePointer<Int>,
              from vocoder: PhaseVocoder.ReadView, times: UnsafeMutablePointer<Double>? = nil, nudge: Double = 0,
              mapped: Bool = false) -> Double {
        let fixedStep = vocoder.tempo, variable = times != nil, earlyStep = vocoder.tempo
        var next = firstTime
        let historyA = vocoder.historyA, historyR = vocoder.historyR, historyS = vocoder.historyS
        let historyT = vocoder.historyT
        let mask = vocoder.historyMask
        let framesRun = vocoder.framesRun, nextA = vocoder.nextAnalysisCentre
        // the frames this block may read are all still in the map
        let firstSegment = segment, mapCapacity = vocoder.historyCapacity   // (values: see `Owned`)
        precondition(framesRun - firstSegment <= mapCapacity, "PhaseVocoder frame map overflow")
        let yFinal = vocoder.finalStretchedEnd, yStart = vocoder.stretchedStart
        let y0 = vocoder.stretched, y1 = vocoder.stretched + vocoder.stretchedCapacity
        // the per-sample state in locals for the loop (stored back after it)
        var seg = segment, lastRead = lastReadPosition, segTable = table, segTableRatio = tableRatio
        var starved = starvedFrames
        defer {
            segment = seg; lastReadPosition = lastRead; table = segTable; tableRatio = segTableRatio
            starvedFrames = starved
        }
        var k = 0
        while k < frameCount {
            let t = mapped ? times![k] : variable ? next : Double(firstFrame + k) * fixedStep
            var wetL: Float = 0, wetR: Float = 0
            var segmentRatio = 1.0
            var step = earlyStep
            if t >= 0 {
                var moved = false
                while seg + 1 < framesRun && historyA[(seg + 1) & mask] <= t { seg += 1; moved = true }
                let a = historyA[seg & mask]
                let sigma = historyR[seg & mask]
                step = variable ? historyT[seg & mask] : fixedStep
                let r = sigma * step   // the pitch ratio the segment is read at
                if moved || r != segTableRatio {
                    segTableRatio = r
                    segTable = SincTableCache.index(forRatio: r)
                }
                segmentRatio = r
                let nextAOfSegment = seg + 1 < framesRun ? historyA[(seg + 1) & mask] : nextA
                let p = Double(historyS[seg & mask]) + (t - a) * sigma
                lastRead = p
                let i = floorToInt(p)
                let table = tableViews[segTable]
                let half = table.taps / 2
                if t >= nextAOfSegment || i + half >= yFinal {
                    starved += 1
                } else if i - half + 1 >= yStart {
                    let frac = p - Double(i)
                    if right != nil {
                        (wetL, wetR) = table.interpolate(y0 + (i - yStart), y1 + (i - yStart), index: 0, fraction: frac)
                    } else {
                        wetL = table.interpolate(y0 + (i - yStart), index: 0, fraction: frac)
                    }
                    if let right {
                        // Stereo: the rest of this segment's samples without the segment
                        // search, the table choice and the frame map's loads, each the same
                        // arithmetic as above (the same times, so the same values), until the
                        // segment or the readable span ends. Within a segment the read step is
                        // the segment's own; the times are the fixed step's products, the
                        // caller's list (`mapped`) or the running sum t + R_m + nudge (live).
                        left[k] = wetL; right[k] = wetR; ratios[k] = r; tableIndices[k] = segTable
                        times?[k] = t
                        next = t + step + nudge
                        let s = Double(historyS[seg & mask])
                        let segmentStep = step, listed = times
                        var kk = k + 1
                        // four samples at a time while all lie in the segment and the readable span
                        while kk + 3 < frameCount {
                            let t: SIMD4<Double>
                            if mapped {
                                t = UnsafeRawPointer(listed! + kk).loadUnaligned(as: SIMD4<Double>.self)
                            } else if variable {
                                // (one addition after another, as frame by frame)
                                let t1 = next + segmentStep + nudge, t2 = t1 + segmentStep + nudge
                                t = SIMD4(next, t1, t2, t2 + segmentStep + nudge)
                            } else {
                                let base = Double(firstFrame + kk)
                                t = SIMD4<Double>(base, base + 1, base + 2, base + 3) * fixedStep
                            }
                            guard t[3] < nextAOfSegment else { break }
                            let p = s + (t - a) * sigma
                            let (whole, index) = floorWhole(p)
                            guard index[3] &+ half < yFinal else { break }
                            lastRead = p[3]
                            let first = index[0] &- yStart
                            let (l, rr) = table.interpolate4(y0 + first, y1 + first, offsets: index &- index[0],
                                                             fractions: p - whole)
                            // whole-vector stores (lane by lane, the compiler took the sums
                            // apart into scalar additions again)
                            UnsafeMutableRawPointer(left + kk).storeBytes(of: l, as: SIMD4<Float>.self)
                            UnsafeMutableRawPointer(right + kk).storeBytes(of: rr, as: SIMD4<Float>.self)
                            UnsafeMutableRawPointer(ratios + kk).storeBytes(of: SIMD4(repeating: r), as: SIMD4<Double>.self)
                            UnsafeMutableRawPointer(tableIndices + kk).storeBytes(of: SIMD4(repeating: segTable), as: SIMD4<Int>.self)
                            if variable && !mapped {
                                UnsafeMutableRawPointer(listed! + kk).storeBytes(of: t, as: SIMD4<Double>.self)
                            }
                            next = t[3] + segmentStep + nudge
                            kk += 4
                        }
                        // and one at a time up to the segment's or the span's end
                        while kk < frameCount {
                            let t = mapped ? listed![kk] : variable ? next : Double(firstFrame + kk) * fixedStep
                            guard t < nextAOfSegment else { break }
                            let p = s + (t - a) * sigma
                            let i = floorToInt(p)
                            guard i + half < yFinal else { break }
                            lastRead = p
                            (left[kk], right[kk]) = table.interpolate(y0 + (i - yStart), y1 + (i - yStart), index: 0,
                                                                      fraction: p - Double(i))
                            ratios[kk] = r; tableIndices[kk] = segTable
                            listed?[kk] = t
                            next = t + segmentStep + nudge
                            kk += 1
                        }
                        k = kk
                        continue
                    }
                }
            }
            left[k] = wetL
            right?[k] = wetR
            ratios[k] = segmentRatio
            tableIndices[k] = segTable
            times?[k] = t
            next = t + step + nudge
            k += 1
        }
        return variable ? next : Double(firstFrame + frameCount) * fixedStep
    }
}
