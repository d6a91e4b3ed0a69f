/// Identity phase locking (Laroche & Dolson 1999) for the phase vocoder of `PitchShifter`: per
/// frame, the peaks of the channels' summed power spectrum get a new unit phasor from their
/// measured instantaneous frequency, and every bin of a peak's region turns with it, so the phase
/// relations inside a region (one partial's main lobe) are kept. The phasors `rotRe`/`rotIm` are
/// shared by all channels.
///
/// For a peak p, with the phase advance measured over the actual analysis hop Ha and the
/// synthesis hop Hs,
///
///     ω_p = 2πp/N,   dφ = princarg(arg Σ_c X_c[p]·conj X'_c[p] − ω_p·Ha)
///     U[p] = U'[p] · e^{iθ},   θ = ω_p·(Hs − Ha) + dφ·(Hs/Ha − 1)
///
/// (primes: previous frame), which advances the synthesis phase by ω_inst·Hs with
/// ω_inst = ω_p + dφ/Ha. The phasors are allocated in `init`, the scratch is the shifter's
/// workspace; `advance` never allocates. One thread at a time (the vocoder that owns it).
final class PhaseLocking {
    /// Bins per spectrum, N/2 + 1.
    let fullBins: Int
    /// The bins `advance` works on: those below it are synthesised (see `advance`).
    private var bins: Int
    private let fftSize: Int
    /// The frames' sample rate (for `alignFloorHz`).
    private let alignSampleRateHz: Float
    /// 2^(c/1200) − 1 for c = `alignCents`, and 10^(−`alignQuietDB`/10) (`alignPeakPhasors`).
    private let alignKappa = Float(Libm.pow(2, Double(alignCents) / 1200) - 1)
    private let alignQuietRatio = Float(Libm.pow(10, -Double(alignQuietDB) / 10))
    /// U[k], the phasor each bin turns by (8 bins of slack for whole-vector fills).
    let rotRe: UnsafeMutablePointer<Float>
    let rotIm: UnsafeMutablePointer<Float>
    // Scratch, from the shifter's workspace (`bindScratch`):
    private var peaks: UnsafeMutablePointer<Int32>        // peak bins (padded to a multiple of 8)
    private var peakRotRe: UnsafeMutablePointer<Float>    // the peaks' new phasors
    private var peakRotIm: UnsafeMutablePointer<Float>
    private var crossRe: UnsafeMutablePointer<Float>      // Σ_c X_c·conj X'_c
    private var crossIm: UnsafeMutablePointer<Float>
    /// `setLanes`, read here on the control side: a global is built on first use, and that
    /// first use must not be the render thread's (it takes a lock and allocates).
    private let laneTable: UnsafePointer<SIMD8<Int8>>

    /// Phasors for frames of `fftSize` points (control side); the scratch comes later
    /// (`bindScratch`).
    init(fftSize: Int, sampleRate: Double) {
        self.fftSize = fftSize
        alignSampleRateHz = Float(sampleRate)
        laneTable = setLanes
        fullBins = fftSize / 2 + 1
        bins = fullBins
        rotRe = .allocate(capacity: fullBins + 8)
        rotIm = .allocate(capacity: fullBins + 8)
        var measure = ScratchCarver(nil)
        (peaks, peakRotRe, peakRotIm, crossRe, crossIm) = Self.scratch(&measure, fullBins: fullBins)
        reset()
    }

    deinit {
        rotRe.deallocate(); rotIm.deallocate()
    }

    private static func scratch(_ c: inout ScratchCarver, fullBins: Int) -> (UnsafeMutablePointer<Int32>,
        UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>) {
        (c.take(Int32.self, fullBins + 8), c.take(Float.self, fullBins + 8), c.take(Float.self, fullBins + 8),
         c.take(Float.self, fullBins), c.take(Float.self, fullBins))
    }

    /// Takes the scratch buffers from `carver` (render side: no allocation).
    func bindScratch(_ carver: inout ScratchCarver) {
        (peaks, peakRotRe, peakRotIm, crossRe, crossIm) = Self.scratch(&carver, fullBins: fullBins)
    }

    /// Every phasor back to 1 (no turn).
    @_noLocks
    func reset() {
        rotRe.update(repeating: 1, count: fullBins + 8)
        rotIm.update(repeating: 0, count: fullBins + 8)
    }

    /// Advances the phasors for a frame: `power` is the channels' summed power (bins + 8 values,
    /// the slack zero), `re`/`im` and `prevRe`/`prevIm` this frame's and the previous frame's
    /// spectra (`channels` × `fullBins`), `ha` the analysis hop that separates them, `hs` the
    /// synthesis hop. Only bins below `activeBins` are worked on (a raised frame is cut above its
    /// band edge, so the bins above it are never synthesised; their phasors go stale, and a bin
    /// that comes back below the edge starts from whatever it holds, like a new partial).
    /// `peakReach` is how many bins either side a peak must top: 1 or 2 (`peakReach(stretch:)`).
    ///
    /// `align` (a frame at exactly 0 cents and tempo 1, where the shifter may cross to the dry
    /// input): the phasors are also turned back toward their targets (1, or the phase of a
    /// fractional analysis centre, `alignOffsetFrames`: see `alignCents`). Returns whether every
    /// phasor the frame synthesises with is then at its target, so that the frame's output is
    /// the input itself (always true with `align` false: then it is not asked).
    @_noLocks @discardableResult
    func advance(power: UnsafePointer<Float>, re: UnsafePointer<Float>, im: UnsafePointer<Float>,
                 prevRe: UnsafePointer<Float>, prevIm: UnsafePointer<Float>, channels: Int, ha: Int, hs: Int,
                 activeBins: Int, peakReach: Int, align: Bool = false, alignOffsetFrames: Double = 0) -> Bool {
        bins = min(max(activeBins, 16), fullBins)
        let count = peakReach == 1 ? findPeaks(power, OneBin.self) : findPeaks(power, TwoBins.self)
        advancePeakPhasors(count: count, ha: ha, hs: hs, re, im, prevRe, prevIm, channels: channels)
        // a DC peak (frequency 0) never turns: its phasor is 1, whatever its bin held before
        // (a bin 0 that was another peak's region kept that peak's angle, and scaled the offset)
        let peakBins = peaks, dcRe = peakRotRe, dcIm = peakRotIm   // (values: see `Owned`)
        if count > 0 && peakBins[0] == 0 { dcRe[0] = 1; dcIm[0] = 0 }
        guard align else {
            fillRegions(count: count, power)
            return true
        }
        if count == 0 {
            // nothing sounds: every phasor to its target at once
            alignEveryBin(offsetFrames: alignOffsetFrames)
            return true
        }
        let aligned = alignPeakPhasors(count: count, hs: hs, power: power, offsetFrames: alignOffsetFrames)
        fillRegions(count: count, power)
        return aligned
    }

    /// How far `align` turns a peak's phasor toward its target per frame: by at most
    /// ω·Hs·(2^(c/1200) − 1), c = `alignCents`, ω the peak bin's frequency (at least
    /// `alignFloorHz`'s), so its partial's pitch moves by at most c cents, and by at most
    /// `alignMostRadians`, so that the frames a sample overlap-adds (N/Hs of them, each turned a
    /// little further) stay nearly in phase and their sum keeps its level. A phase off by up to π
    /// is back in max(1/(2·f·(2^(c/1200) − 1)), π/`alignMostRadians` frames): 0.4 s at 440 Hz,
    /// 1.7 s at 100 Hz and below, π/0.1 frames (0.36 s at 44.1 kHz) above about 500 Hz. A peak
    /// more than `alignQuietDB` below the frame's loudest is set to its target at once: its step is not
    /// heard, and waiting for it would hold the fade back for nothing.
    ///
    /// Why: at 0 cents and tempo 1 each peak keeps the phase offset it gathered while the pitch
    /// was elsewhere (θ = 0 there), so the wet signal is the input with each partial's phase
    /// turned, and the shifter's fade to the dry input would sum two tones out of phase (a dip
    /// as deep as their phases are apart). Turned back, the wet signal is the input and the
    /// fade is between equals.
    ///
    /// The target is 1 when the frame's analysis centre a is a whole sample; after a stretch it
    /// may lie between samples (the frame is analysed at the nearest one, c, and read as centred
    /// on a), which delays the wet signal by a − c, up to half a sample: each peak's target is
    /// then e^{iω_p·(a − c)}, the phase that advance undoes (`alignOffsetFrames`).
    static let alignCents: Float = 5
    static let alignFloorHz: Float = 100
    static let alignMostRadians: Float = 0.1
    static let alignQuietDB: Float = 60

    /// Every bin's phasor to its target e^{iω_k·δ} (1 when δ = 0), δ = `offsetFrames`.
    private func alignEveryBin(offsetFrames delta: Double) {
        guard delta != 0 else {
            reset()
            return
        }
        let perBin = Float(2 * Double.pi * delta / Double(fftSize))
        var k = 0
        while k < fullBins {
            let bins = SIMD8<Float>(0, 1, 2, 3, 4, 5, 6, 7) + SIMD8<Float>(repeating: Float(k))
            let (sn, cs) = fastSinCos(princarg(bins * perBin))
            UnsafeMutableRawPointer(rotRe).storeBytes(of: cs, toByteOffset: 4 * k, as: SIMD8<Float>.self)
            UnsafeMutableRawPointer(rotIm).storeBytes(of: sn, toByteOffset: 4 * k, as: SIMD8<Float>.self)
            k += 8
        }
    }

    /// Turns each peak's new phasor toward its target e^{iω_p·δ}, δ = `offsetFrames` (see
    /// `alignCents`); returns whether all are there.
    private func alignPeakPhasors(count: Int, hs hopFrames: Int, power: UnsafePointer<Float>, offsetFrames delta: Double) -> Bool {
        // the largest turn per frame of bin p: min(max(ω_p, ω_floor)·Hs·κ, the cap),
        // ω_p = 2πp/N (radians per frame), with the floor's bin f_floor·N/Fs as a number of bins
        let perBin = 2 * Float.pi / Float(fftSize) * Float(hopFrames) * alignKappa
        let floorBins = SIMD8<Float>(repeating: Self.alignFloorHz * Float(fftSize) / alignSampleRateHz)
        let cap = SIMD8<Float>(repeating: Self.alignMostRadians)
        let targetPerBin = SIMD8<Float>(repeating: Float(2 * Double.pi * delta / Double(fftSize)))
        let one = SIMD8<Float>(repeating: 1), zero = SIMD8<Float>()
        // the loudest peak's power, and the quiet ones' bound below it
        var loudest: Float = 0
        for q in 0..<count { loudest = max(loudest, power[Int(peaks[q])]) }
        let quiet = loudest * alignQuietRatio
        var allDone = true
        var q = 0
        while q < count {
            let p = SIMD8<Float>(UnsafeRawPointer(peaks).loadUnaligned(fromByteOffset: 4 * q, as: SIMD8<Int32>.self))
            let i0 = Int(peaks[q]), i1 = Int(peaks[q + 1]), i2 = Int(peaks[q + 2]), i3 = Int(peaks[q + 3])
            let i4 = Int(peaks[q + 4]), i5 = Int(peaks[q + 5]), i6 = Int(peaks[q + 6]), i7 = Int(peaks[q + 7])
            let level = SIMD8(power[i0], power[i1], power[i2], power[i3], power[i4], power[i5], power[i6], power[i7])
            let ur = UnsafeRawPointer(peakRotRe).loadUnaligned(fromByteOffset: 4 * q, as: SIMD8<Float>.self)
            let ui = UnsafeRawPointer(peakRotIm).loadUnaligned(fromByteOffset: 4 * q, as: SIMD8<Float>.self)
            // the angle still to turn: the phasor's less the target's, within ±π
            let target = princarg(p * targetPerBin)
            let angle = princarg(fastAtan2(ui, ur) - target)
            let most = pointwiseMin(p.replacing(with: floorBins, where: p .< floorBins) * perBin, cap)
            let done = (angle.replacing(with: -angle, where: angle .< zero) .<= most) .| (level .< quiet)
            let rest = angle - most.replacing(with: -most, where: angle .< zero)
            // (a target of 1 exactly: the frame is then the input itself, bit for bit)
            let (sn, cs) = fastSinCos(rest.replacing(with: zero, where: done) + target)
            let exact = done .& (target .== zero)
            let nr = cs.replacing(with: one, where: exact), ni = sn.replacing(with: zero, where: exact)
            UnsafeMutableRawPointer(peakRotRe).storeBytes(of: nr, toByteOffset: 4 * q, as: SIMD8<Float>.self)
            UnsafeMutableRawPointer(peakRotIm).storeBytes(of: ni, toByteOffset: 4 * q, as: SIMD8<Float>.self)
            // (the padding lanes repeat the last peak)
            if !all(done) { allDone = false }
            q += 8
        }
        return allDone
    }

    /// How far a peak must stand above its neighbours, in bins, for a frame that stretches time
    /// by `stretch` (the synthesis hop over the analysis hop): ±2 (a Hann window's main lobe, so
    /// one partial is one region) up to a stretch of 1.3 either way, ±1 beyond, where smaller
    /// regions, each bin nearer its own measured frequency, keep more of the signal. Measured on
    /// `mixfx-bench --quality`'s four recordings (log-spectral distance of round trips, mean):
    /// tempo 0.5 then 2, 2.96 dB with ±2 against 2.80 with ±1 (2 then 0.5: 4.66 against 4.56);
    /// 0.67, 2.70 against 2.62; +700 cents and back, 3.81 against 3.70; but tempo 0.8, 2.43
    /// against 2.49, and +400 cents, 3.00 against 3.03. (The crossover lies near 1.3: tempo
    /// 0.74, 2.55 against 2.54.)
    static func peakReach(stretch: Double) -> Int { phaseLockingPeakReach(stretch: stretch) }

    /// Local maxima over ±1 or ±2 bins (`Reach`) of the channels' summed power, into `peaks`;
    /// returns how many. Eight bins at a time: the comparisons give a lane mask, its lanes as the
    /// bits of a byte pick the row of `setLanes` that lists the set lanes in order, and those
    /// bins are stored as one vector at the end of the list, which moves on by the bits set
    /// (lane by lane, a store, an extraction and an add per lane had cost four times the
    /// instructions). `peaks` has 8 values of slack for the whole-vector store. (The reach is a
    /// type, so each loop is compiled for its own and tests nothing: a flag tested in the loop
    /// cost 10 % more instructions here.)
    private func findPeaks<Reach: PeakReach>(_ power: UnsafePointer<Float>, _: Reach.Type) -> Int {
        var count = 0
        let far = Reach.bins == 2
        // (values, and the count passed inout: a local function capturing `self` or a `var`
        // is refused by the realtime check; see `Owned`)
        let peaks = peaks, bins = bins
        func scalarPeak(_ k: Int, _ count: inout Int) {
            let m = power[k]
            let isPeak = m > power[k - 1] && m >= power[k + 1] && m > 0
                && (!far || ((k < 2 || m > power[k - 2]) && (k + 2 >= bins || m >= power[k + 2])))
            peaks[count] = Int32(k); count += isPeak ? 1 : 0
        }
        // bin 0 is a peak when it tops its neighbours: a DC offset's region (bins 0 and 1 under
        // the Hann window) then keeps its own phase (frequency 0) instead of turning with the
        // next peak's, which made a constant a wobble at that peak's rate
        let dc = power[0]
        let isDCPeak = dc > 0 && dc >= power[1] && (!far || dc >= power[2])
        peaks[count] = 0; count += isDCPeak ? 1 : 0
        scalarPeak(1, &count)
        let raw = UnsafeRawPointer(power)
        let zero = SIMD8<Float>()   // named: an inline SIMD8(repeating: 0) here compiles to a lane loop
        let table = laneTable, out = UnsafeMutableRawPointer(peaks)
        var k = 2
        while k + 10 <= bins {
            let m = raw.loadUnaligned(fromByteOffset: 4 * k, as: SIMD8<Float>.self)
            let l1 = raw.loadUnaligned(fromByteOffset: 4 * (k - 1), as: SIMD8<Float>.self)
            let l2 = raw.loadUnaligned(fromByteOffset: 4 * (k - 2), as: SIMD8<Float>.self)
            let r1 = raw.loadUnaligned(fromByteOffset: 4 * (k + 1), as: SIMD8<Float>.self)
            let r2 = raw.loadUnaligned(fromByteOffset: 4 * (k + 2), as: SIMD8<Float>.self)
            var mask = (m .> l1) .& (m .>= r1) .& (m .> zero)
            if far { mask .&= (m .> l2) .& (m .>= r2) }
            let bits = laneByte(mask)
            if bits != 0 {
                let bins = SIMD8<Int32>(truncatingIfNeeded: table[bits]) &+ Int32(truncatingIfNeeded: k)
                out.storeBytes(of: bins, toByteOffset: 4 &* count, as: SIMD8<Int32>.self)
                count &+= bits.nonzeroBitCount
            }
            k += 8
        }
        while k < bins - 1 { scalarPeak(k, &count); k += 1 }
        return count
    }

    /// The new phasor of each peak (see the type's notes), eight peaks at a time. The phase
    /// terms ω_p·Ha and ω_p·(Hs − Ha) are reduced modulo 2π exactly in integers first
    /// (ω_p·h = 2π·(p·h mod N)/N), so large bins and hops lose no precision.
    private func advancePeakPhasors(count: Int, ha haFrames: Int, hs hopFrames: Int,
                                    _ re: UnsafePointer<Float>, _ im: UnsafePointer<Float>,
                                    _ prevRe: UnsafePointer<Float>, _ prevIm: UnsafePointer<Float>, channels: Int) {
        guard count > 0 else { return }
        // Σ_c X_c·conj X'_c over the bins worked on
        for c in 0..<channels {
            vaddCrossSpectrum(re + c * fullBins, im + c * fullBins, prevRe + c * fullBins, prevIm + c * fullBins,
                              crossRe, crossIm, bins, accumulating: c > 0)
        }
        let last = peaks[count - 1]
        for q in count..<((count + 7) / 8 * 8) { peaks[q] = last }   // pad the last chunk
        let wrap = SIMD8<Int32>(repeating: Int32(fftSize - 1))
        let binAngle = 2 * Float.pi / Float(fftSize)
        let ha = SIMD8<Int32>(repeating: Int32(haFrames))
        let stretch = SIMD8<Int32>(repeating: Int32(hopFrames - haFrames))
        let dGain = SIMD8<Float>(repeating: Float(hopFrames) / Float(haFrames) - 1)
        let outRe = UnsafeMutableRawPointer(peakRotRe), outIm = UnsafeMutableRawPointer(peakRotIm)
        var q = 0
        while q < count {
            // the peaks' bins as a vector, and as scalars for the gathers (built from scalars
            // rather than lane by lane: lane inserts go through memory)
            let p = UnsafeRawPointer(peaks).loadUnaligned(fromByteOffset: 4 * q, as: SIMD8<Int32>.self)
            let i0 = Int(peaks[q]), i1 = Int(peaks[q + 1]), i2 = Int(peaks[q + 2]), i3 = Int(peaks[q + 3])
            let i4 = Int(peaks[q + 4]), i5 = Int(peaks[q + 5]), i6 = Int(peaks[q + 6]), i7 = Int(peaks[q + 7])
            @inline(__always) func gather(_ a: UnsafeMutablePointer<Float>) -> SIMD8<Float> {
                SIMD8(a[i0], a[i1], a[i2], a[i3], a[i4], a[i5], a[i6], a[i7])
            }
            // Σ_c X_c[p]·conj X'_c[p]
            let xr = gather(crossRe), xi = gather(crossIm)
            // dφ = princarg(arg − ω·Ha);  θ = ω·(Hs − Ha) + dφ·(Hs/Ha − 1)
            let omegaHa = SIMD8<Float>((p &* ha) & wrap) * binAngle
            let omegaStretch = SIMD8<Float>((p &* stretch) & wrap) * binAngle
            let dphi = princarg(fastAtan2(xi, xr) - omegaHa)
            let theta = princarg(omegaStretch + dphi * dGain)
            let (sn, cs) = fastSinCos(theta)
            let ur = gather(rotRe), ui = gather(rotIm)
            let nr = ur * cs - ui * sn, ni = ur * sn + ui * cs
            let scale = 1 / Libm.squareRoot(nr * nr + ni * ni)   // keep them unit phasors
            outRe.storeBytes(of: nr * scale, toByteOffset: 4 * q, as: SIMD8<Float>.self)
            outIm.storeBytes(of: ni * scale, toByteOffset: 4 * q, as: SIMD8<Float>.self)
            q += 8
        }
    }

    /// Every bin of a peak's region (up to the lowest-power bin between it and the next
    /// peak) takes the peak's phasor; bins before the first peak belong to it, after the last to
    /// the last. Regions are a few bins long, so both steps work eight bins at a time: the gap's
    /// minimum from one vector (bins past the gap never chosen), and the fill as whole vectors
    /// whose overshoot the next region overwrites (`rotRe`/`rotIm` have 8 bins of slack).
    private func fillRegions(count: Int, _ power: UnsafePointer<Float>) {
        let raw = UnsafeRawPointer(power)
        let laneBits = SIMD8<Int32>(0, 1, 2, 3, 4, 5, 6, 7), highBits = SIMD8<Int32>(repeating: ~7)
        let past = SIMD8<Int32>(repeating: .max)
        let outRe = UnsafeMutableRawPointer(rotRe), outIm = UnsafeMutableRawPointer(rotIm)
        var regionStart = 0
        for q in 0..<count {
            let p = Int(peaks[q])
            var regionEnd = bins
            if q + 1 < count {
                let next = Int(peaks[q + 1])
                // The lowest bin of the gap, eight bins at a time, from one integer reduction:
                // each power's 3 lowest mantissa bits are replaced by its lane, so the smallest
                // key (powers are finite and ≥ 0, so their bits, as Int32, order like their
                // values) names its lane too. Powers within 8 ulp of each other count as equal:
                // within a step the lower lane wins, across steps the lower lane too, and the
                // earlier step on the same lane. Bins past the gap take the largest key.
                var k = p + 1
                var lowestKey = Int32.max, lowestChunk = k
                repeat {   // ≤ 8 bins per step (the next peak is 2 or more bins on); `power` has 8 bins of slack
                    let v = raw.loadUnaligned(fromByteOffset: 4 &* k, as: SIMD8<Int32>.self)
                    let left = SIMD8<Int32>(repeating: Int32(truncatingIfNeeded: next - k))
                    let keys = ((v & highBits) | laneBits).replacing(with: past, where: laneBits .>= left)
                    let key = minLane(keys)
                    if key < lowestKey { lowestKey = key; lowestChunk = k }
                    k &+= 8
                } while k < next
                regionEnd = lowestChunk + Int(lowestKey & 7)
            }
            let ur = SIMD8<Float>(repeating: peakRotRe[q]), ui = SIMD8<Float>(repeating: peakRotIm[q])
            var k = regionStart
            while k < regionEnd {
                outRe.storeBytes(of: ur, toByteOffset: 4 &* k, as: SIMD8<Float>.self)
                outIm.storeBytes(of: ui, toByteOffset: 4 &* k, as: SIMD8<Float>.self)
                k &+= 8
            }
            regionStart = regionEnd
        }
    }
}

/// Row m lists the set bits of m (lane i: the i-th set bit's index; 0 after the last), for
/// `PhaseLocking.findPeaks`. Filled once, on first use (a `PhaseLocking`'s `init`, control side),
/// read-only after (hence `nonisolated(unsafe)`).
private nonisolated(unsafe) let setLanes: UnsafePointer<SIMD8<Int8>> = {
    let rows = UnsafeMutablePointer<SIMD8<Int8>>.allocate(capacity: 256)
    for m in 0..<256 {
        var row = SIMD8<Int8>(), n = 0
        for i in 0..<8 where m & (1 << i) != 0 { row[n] = Int8(i); n += 1 }
        rows[m] = row
    }
    return UnsafePointer(rows)
}()

/// How far `PhaseLocking.findPeaks` looks on each side of a bin.
private protocol PeakReach { static var bins: Int { get } }
private enum OneBin: PeakReach { static var bins: Int { 1 } }
private enum TwoBins: PeakReach { static var bins: Int { 2 } }

/// `PhaseLocking.peakReach(stretch:)`, as a function the render path calls (a class's static
/// method takes the class's metadata, which the realtime check refuses).
@inline(__always)
func phaseLockingPeakReach(stretch: Double) -> Int {
    stretch >= 1.3 || stretch * 1.3 <= 1 ? 1 : 2
}
