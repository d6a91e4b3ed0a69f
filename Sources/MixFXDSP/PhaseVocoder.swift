#if canImport(Glibc)
import Glibc
#endif

/// The time-stretch half of the shifter: a phase vocoder that stretches its input by the ratio r,
/// frame by frame, into the stretched signal `StretchReader` reads.
///
/// Analysis frame m is centred on input position A_m, synthesis frame m on stretched position
/// S_m, with S_{m+1} = S_m + Hs_m and A_{m+1} = A_m + Hs_m/r_m, so the stretch follows the ratio
/// frame by frame. The shorter hop is N/overlap (`synthesisHop`). Each output bin is the input
/// bin turned by a unit phasor U[k] from `PhaseLocking` (identity phase locking, Laroche &
/// Dolson 1999), shared by all channels and measured on their summed cross-spectra, so the
/// channels keep their phase differences exactly and the stereo image and mono sum hold. Hann
/// windows, weighted overlap-add divided by the running Σ_m w²(s − S_m), so the gain is unity for
/// any sequence of hops; above a crossover the analysis frames are narrower
/// (`SpectralWindowing`). With formant preservation, `FormantCorrection` scales the bins before
/// synthesis. Raising the pitch, the bins above 0.92/r of Nyquist are cut (a raised-cosine
/// roll-off of `taperBins` below the edge): what the stretched signal holds above 1/r of Nyquist
/// would alias when it is read r times faster.
///
/// The frame map (A_m, r_m, S_m of the last `historyCapacity` frames) is what the reader maps
/// output time through. The ratio glides toward the target (`setTargetCents`) with a one-pole of
/// `glideSeconds`, stepped once per frame by the output time since the last frame.
///
/// Made by `PitchShifter.prepare` (control side: every buffer is allocated then); `reset` and
/// `append` on the render side. One thread at a time.
final class PhaseVocoder {
    /// Time constant of the pitch glide.
    static let glideSeconds = 0.02
    /// A glide this close to its target (cents) is there.
    static let glideSnapCents = 0.05
    /// Time constant of the tempo glide. Longer than the pitch's: neighbouring frames made at
    /// very different tempos stretch their overlap differently, and their sum has a step (at
    /// 20 ms a change from 1.6 to 0.5 moved 53 % of the way in one frame and left a step of
    /// −28 dB in a tone; at 100 ms each frame moves at most 10 %).
    static let tempoGlideSeconds = 0.1
    /// A tempo glide this close to its target (relative) is there.
    static let glideSnapTempoRatio = 1e-6
    /// How the synthesis hop and the highs' window powers (`SpectralWindowing`) follow a
    /// stretch that changes (a lane, a time map, a glide). Frames whose highs' windows differ
    /// (another hop, other powers) do not sum flat where they overlap: made at once, the changes
    /// moved a tone above the crossover by up to ±0.5 dB under a 0 → 1200 cent lane.
    ///
    /// - Near its target (`synthesisHop`), the hop moves by at most 1/`hopSlewDivisor` of itself a
    ///   frame, times the analysis hop over N/overlap where that is longer (so by about as much
    ///   per second however sparse the frames); the powers follow what both hops allow through
    ///   two one-poles of `powersCoefficient` a frame.
    /// - Half the hop away or more (a step, a fast glide), the powers go to 0 through the
    ///   one-poles of `powersOffCoefficient`, and once below `powersOffSnap` they are 0 and the
    ///   hop takes its target at once, frame by frame: with no extra powers any sequence of hops
    ///   sums flat. They come back (as above) once the target has moved no more than a step a
    ///   frame for `powersOffHoldFrames` (without that hold a fast lane cycled between the two).
    ///
    /// Steady settings never move either.
    static let hopSlewDivisor = 256
    static let powersCoefficient = 0.1
    static let powersOffCoefficient = 0.15
    static let powersOffSnap = 0.05
    /// Frames the target must move no more than a step a frame before the powers come back.
    static let powersOffHoldFrames = 8
    /// Powers (and their first stage) this close to their goal are there.
    static let powersSnap = 0.005
    /// Analysis frame length: the least power of two ≥ 256 covering `frameSeconds`.
    static let frameSeconds = 0.085

    /// Frame length N for `sampleRate` (4096 at 44.1/48 kHz, 8192 at 88.2/96 kHz).
    static func fftSize(sampleRate: Double) -> Int {
        var n = 256
        while Double(n) < sampleRate * frameSeconds { n *= 2 }
        return n
    }

    /// Bins of the raised-cosine roll-off below the band edge of a raised frame (≈ 350 Hz).
    static func taperBins(fftSize: Int) -> Int { max(4, fftSize / 128) }

    let fftSize: Int
    /// The shorter of the two hops, N / overlap.
    let hopFrames: Int
    let channelCount: Int
    private let sampleRate: Double
    private let maximumFrameCount: Int
    private let fft: Owned<RealFFT>
    private let window: UnsafePointer<Float>          // the shared `Windows` of this N
    private let windowSquared: UnsafePointer<Float>
    private let taper: UnsafePointer<Float>
    private let taperCount: Int                          // `taperBins(fftSize:)`
    /// Narrower frames for the highs (the shared tables of this N) from `narrowedFrom` up.
    private let windowing: Owned<SpectralWindowing>
    private let narrowedFrom: Int
    /// The taps and gains of a frame between two whole powers (`SpectralWindowing.narrowing(powers:scratch:)`).
    private let mixedNarrowing: UnsafeMutablePointer<Float>
    /// The synthesis hop the last frame was made with (0: none since `reset`, the next takes its
    /// target at once), and the highs' powers with their smoother's first stage
    /// (`hopSlewDivisor`).
    private(set) var hop = 0
    /// The input frames between the last two frames (what the pitch glide steps by).
    private var lastInputStep = 0.0
    private(set) var narrowingPowers = 0.0
    private var narrowingPowersFirst = 0.0
    /// The last frame's target hop, the frames its target has moved no more than a step, and
    /// whether the powers are held off (`powersOffHoldFrames`).
    private var hopTarget = 0, targetSteadyFrames = 0, powersOff = false
    /// The input by time, written by the shifter before each `append`: the analysis windows
    /// are read from it (it holds at least `inputFramesHeld`).
    private let inputHistory: Owned<InputHistory>
    /// The stretched signal, channel c at c · `stretchedCapacity`, from `stretchedStart`.
    let stretched: UnsafeMutablePointer<Float>
    let stretchedCapacity: Int
    /// Σ_m w²(s − S_m) for the N stretched positions not yet final, at s mod N (a ring: a frame
    /// adds to the N positions from its start, and the hop before the next frame's start is
    /// divided and cleared before that frame runs).
    private let norm: UnsafeMutablePointer<Float>
    // The analysis spectra of this frame and the previous one, per channel: two buffers of the
    // vocoder's own that swap roles after each frame (the previous frame's were copied, 32 KB
    // a stereo frame: 1.6 % of the band's CPU in memmove).
    private var re: UnsafeMutablePointer<Float>
    private var im: UnsafeMutablePointer<Float>
    private var prevRe: UnsafeMutablePointer<Float>
    private var prevIm: UnsafeMutablePointer<Float>
    // Scratch, from the shifter's workspace (`bindScratch`):
    private var power: UnsafeMutablePointer<Float>
    private var outRe: UnsafeMutablePointer<Float>        // the turned spectrum of one channel
    private var outIm: UnsafeMutablePointer<Float>
    private var plainPower: UnsafeMutablePointer<Float>   // (`scratch`)
    private let locking: Owned<PhaseLocking>
    private let formant: Owned<FormantCorrection>?    // nil where formants cannot be asked for
    /// How far either side of a read position the reader reaches (kept when compacting).
    private let readHalfTaps: Int
    /// Frames the frame map keeps (a power of two): more than the frames whose synthesis can
    /// lie in the stretched buffer (which is what the reader reads through the map), as every
    /// hop is at least `hopFrames`.
    let historyCapacity: Int
    let historyMask: Int
    // The frame map: A_m, r_m and S_m by m & historyMask.
    let historyA: UnsafeMutablePointer<Double>
    let historyR: UnsafeMutablePointer<Double>
    let historyS: UnsafeMutablePointer<Int>
    /// Frame m's tempo R_m (its stretch is r_m/R_m), by m & historyMask.
    let historyT: UnsafeMutablePointer<Double>
    /// Frame m's share of its analysis power below the band edge it is cut at (raising the
    /// pitch, with `measuresBand`: what `PitchLevelMatch` expects to keep; 1 otherwise), by
    /// m & historyMask.
    let historyBand: UnsafeMutablePointer<Double>
    /// Whether what frame m is read with is the input itself: at 0 cents and tempo 1, every
    /// phasor at its target (`PhaseLocking.advance(align:)`) in it and in the frames before it
    /// that overlap it (`alignedRun`), by m & historyMask: only then may the shifter cross to
    /// the dry input.
    let historyAligned: UnsafeMutablePointer<Bool>
    /// Frames in a row made with every phasor at its target (after a reset, where the phasors
    /// are 1: as many as any frame overlaps).
    private var alignedRun = 0

    /// Input frames taken so far: the next input time.
    private(set) var inputEnd = 0
    /// Absolute stretched index of `stretched[0]`.
    private(set) var stretchedStart = 0
    /// Frames run since `reset` (the map holds the last `historyCapacity`).
    private(set) var framesRun = 0
    /// A of the next frame.
    private(set) var nextAnalysisCentre = 0.0
    private var nextS = 0                      // S of the next frame
    private var lastCentre = 0                 // rounded A of the previous frame
    private var lastSynthesisCentre = 0        // S of the previous frame
    /// The pitch the frames run now have glided to.
    private(set) var currentCents = 0.0
    private(set) var targetCents = 0.0
    /// The tempo R of the frames run now: the input is consumed R times faster than the output
    /// is read (1: the duration kept). Glides toward `targetTempo` like the pitch (live);
    /// offline it stays what `init` set.
    private(set) var tempo: Double
    /// The tempo `tempo` glides to (live tempo changes).
    var targetTempo: Double
    /// Keep the spectral envelope where it was (`FormantCorrection`).
    var preserveFormants = false
    /// Whether each frame's band share goes into `historyBand` (for a `PitchLevelMatch`; else
    /// it holds 1).
    var measuresBand = false

    /// A vocoder for `channelCount` channels at `sampleRate`, taking blocks of up to
    /// `maximumFrameCount`, for stretches σ up to `maxRatio`, read `latencyFrames` behind its
    /// input by a reader reaching `readHalfTaps` either side, its input in `inputHistory` (of at
    /// least `inputFramesHeld` frames), at tempo `tempo`; with `formants`, able to preserve
    /// formants (`preserveFormants`, else it is ignored).
    init(sampleRate: Double, maximumFrameCount: Int, channelCount: Int, overlap: Int,
         maxRatio: Double, latencyFrames: Int, readHalfTaps: Int, inputHistory: InputHistory, tempo: Double = 1,
         formants: Bool = true) {
        self.tempo = tempo
        targetTempo = tempo
        let n = Self.fftSize(sampleRate: sampleRate)
        fftSize = n
        hopFrames = max(1, n / overlap)
        self.channelCount = channelCount
        self.sampleRate = sampleRate
        self.maximumFrameCount = maximumFrameCount
        self.readHalfTaps = readHalfTaps
        let bins = n / 2 + 1
        fft = Owned(RealFFT(size: n, wideVectors: RealFFT.defaultWideVectors, sharedWork: true))
        let windows = Windows.shared(fftSize: n)
        window = windows.window
        windowSquared = windows.windowSquared
        taper = windows.taper
        taperCount = Self.taperBins(fftSize: n)
        windowing = Owned(SpectralWindowing.shared(fftSize: n, sampleRate: sampleRate, hopFrames: max(1, n / overlap)))
        narrowedFrom = SpectralWindowing.firstBin(sampleRate: sampleRate, fftSize: n)
        mixedNarrowing = .allocate(capacity: windowing.object.mixScratchCount)

        let ch = channelCount
        precondition(inputHistory.capacity >= Self.inputFramesHeld(fftSize: n, maximumFrameCount: maximumFrameCount)
                     && inputHistory.slack >= n && inputHistory.channelCount == channelCount)
        self.inputHistory = Owned(inputHistory)
        // What must stay after a compaction: from the reader's last position (less its reach) to
        // the end of the newest frame. The input is at most latencyFrames + a block past the
        // reader's input time, and frames run up to N/2 before the input's end, so that is at
        // most σ·(latencyFrames + block − N/2) + N/2 + reach. A frame adds N past it before the
        // next compaction can run, and another N of room keeps compactions one per N or fewer.
        // (Measured at +200 cents, 2048-frame blocks: 6240 of 16 130 held after compacting.)
        stretchedCapacity = Int((Double(latencyFrames + maximumFrameCount) * max(1, maxRatio)).rounded(.up))
            + 2 * n + 4 * readHalfTaps + 2 * hopFrames + 64
        stretched = .allocate(capacity: stretchedCapacity * ch)
        norm = .allocate(capacity: n)
        re = .allocate(capacity: bins * ch)
        im = .allocate(capacity: bins * ch)
        prevRe = .allocate(capacity: bins * ch)
        prevIm = .allocate(capacity: bins * ch)
        locking = Owned(PhaseLocking(fftSize: n, sampleRate: sampleRate))
        formant = formants ? Owned(FormantCorrection(bins: bins)) : nil
        var measure = ScratchCarver(nil)
        (power, outRe, outIm, plainPower) = Self.scratch(&measure, fftSize: n, formants: formants)
        // (1024 frames before: 32 KB a shifter, where about 40 are read at +200 cents)
        var frames = 16
        while frames < stretchedCapacity / hopFrames + n / hopFrames + 8 { frames *= 2 }
        historyCapacity = frames
        historyMask = frames - 1
        historyA = .allocate(capacity: frames)
        historyR = .allocate(capacity: frames)
        historyS = .allocate(capacity: frames)
        historyT = .allocate(capacity: frames)
        historyBand = .allocate(capacity: frames)
        historyAligned = .allocate(capacity: frames)
    }

    deinit {
        for p in [stretched, norm, re, im, prevRe, prevIm, mixedNarrowing] { p.deallocate() }
        historyA.deallocate(); historyR.deallocate(); historyS.deallocate(); historyT.deallocate()
        historyBand.deallocate(); historyAligned.deallocate()
        fft.release(); inputHistory.release(); locking.release(); formant?.release(); windowing.release()
        heldPitchMap?.release()
        heldTempoMap?.release()
    }

    /// The scratch: the summed power, one channel's turned spectrum, and with `formants` the
    /// frame's own power before the highs' narrowing (what the formant envelope reads).
    private static func scratch(_ c: inout ScratchCarver, fftSize n: Int, formants: Bool) -> (UnsafeMutablePointer<Float>,
        UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>) {
        let bins = n / 2 + 1
        return (c.take(Float.self, bins + 8), c.take(Float.self, bins), c.take(Float.self, bins), c.take(Float.self, formants ? bins + 8 : 1))
    }

    /// Takes its scratch, its FFT's and its phase locking's from `carver` (render side: no
    /// allocation; a counting carver measures it).
    func bindScratch(_ carver: inout ScratchCarver) {
        (power, outRe, outIm, plainPower) = Self.scratch(&carver, fftSize: fftSize, formants: formant != nil)
        fft.object.bindScratch(&carver)
        locking.object.bindScratch(&carver)
    }

    /// Clears every signal; the next input is time 0 (input before it is silence), at
    /// `pitchCents` without a glide.
    @_noLocks
    func reset(pitchCents: Double) {
        let ch = channelCount, bins = fftSize / 2 + 1
        targetCents = pitchCents
        currentCents = pitchCents
        tempo = targetTempo
        stretched.update(repeating: 0, count: stretchedCapacity * ch)
        norm.update(repeating: 0, count: fftSize)
        prevRe.update(repeating: 0, count: bins * ch)
        prevIm.update(repeating: 0, count: bins * ch)
        locking { $0.reset() }
        alignedRun = fftSize
        inputEnd = 0
        stretchedStart = -fftSize / 2 - 2 * readHalfTaps - 8
        framesRun = 0
        nextAnalysisCentre = 0
        nextS = 0
        lastCentre = 0
        lastSynthesisCentre = 0
        hop = 0
        lastInputStep = Double(hopFrames)
    }

    /// Starts over at input time `t`, at `pitchCents` and `targetTempo` without a glide, having
    /// taken no input past t: frame 0 is centred on t and on stretched position 0 (`advance`
    /// then takes the input the history already holds). A streaming shifter's fresh state for a
    /// pitch change (`PitchShifter`'s switch). Render side; does not allocate.
    @_noLocks
    func restart(at t: Double, pitchCents: Double) {
        reset(pitchCents: pitchCents)
        nextAnalysisCentre = t
        lastCentre = roundToInt(t)
        inputEnd = floorToInt(t)
    }

    /// Takes the input up to `end`, which the history already holds (more than a block at a
    /// time is fine: the analysis reads the history), and runs every frame it completes; the
    /// reader last read at `readPosition`. A streaming shifter's state that lags the input
    /// pulled (after a switch) catches up with it as its reads need it.
    /// (Frames already due that waited for room in the stretched buffer run too.)
    @_noLocks
    func advance(to end: Int, readPosition: Double) {
        inputEnd = max(inputEnd, end)
        // (no `&&` with `self` on its right: see `Owned`)
        while roundToInt(nextAnalysisCentre) + fftSize / 2 <= inputEnd {
            guard nextFrameFits(readPosition: readPosition) else { break }
            runFrame(readPosition: readPosition)
        }
    }

    /// What the reader takes of a vocoder for a block (its frame map and stretched signal), as
    /// values: `StretchReader.read` gets it from a closure (see `Owned`).
    struct ReadView {
        let tempo: Double
        let historyA: UnsafeMutablePointer<Double>, historyR: UnsafeMutablePointer<Double>
        let historyS: UnsafeMutablePointer<Int>, historyT: UnsafeMutablePointer<Double>
        let historyBand: UnsafeMutablePointer<Double>
        let historyAligned: UnsafeMutablePointer<Bool>
        let historyMask: Int, historyCapacity: Int
        let framesRun: Int, nextAnalysisCentre: Double
        let finalStretchedEnd: Int, stretchedStart: Int
        let stretched: UnsafeMutablePointer<Float>, stretchedCapacity: Int
    }
    var readView: ReadView {
        ReadView(tempo: tempo, historyA: historyA, historyR: historyR, historyS: historyS, historyT: historyT, historyBand: historyBand,
                 historyAligned: historyAligned, historyMask: historyMask, historyCapacity: historyCapacity, framesRun: framesRun,
                 nextAnalysisCentre: nextAnalysisCentre, finalStretchedEnd: finalStretchedEnd,
                 stretchedStart: stretchedStart, stretched: stretched, stretchedCapacity: stretchedCapacity)
    }

    /// The pitch the ratio glides to.
    @inline(__always)
    func setTargetCents(_ cents: Double) { targetCents = cents }

    /// The stretched signal is final before this index (no frame will add to it).
    var finalStretchedEnd: Int { nextS - fftSize / 2 }

    /// The input frames the history must hold for the analysis windows: every frame whose
    /// window the input completed has run, so the next window starts within N of the input's
    /// end before a block of at most `maximumFrameCount` is appended.
    static func inputFramesHeld(fftSize n: Int, maximumFrameCount: Int) -> Int { n + maximumFrameCount + 8 }

    /// Takes the next `frameCount` input frames (at most the shifter's `maximumFrameCount`),
    /// which the history already holds, and runs every frame whose window is then complete; the
    /// reader last read at `readPosition` (what lies before it, less its reach, may go).
    @_noLocks
    func append(frameCount: Int, readPosition: Double) {
        let most = maximumFrameCount
        precondition(frameCount <= most)
        advance(to: inputEnd + frameCount, readPosition: readPosition)
    }

    /// The synthesis hop for stretch r (the pitch ratio at tempo 1). The shorter of the two hops is N/overlap, so neither the
    /// analysis nor the synthesis frames overlap more than `overlap` times: lowering the pitch,
    /// Hs = N/overlap and Ha = Hs/r; raising it, Hs = r·N/overlap and Ha = N/overlap (raising by
    /// r costs no more frames than not shifting). The synthesis frames still overlap at least
    /// min(overlap, 4) times. Where the highs' narrower frames would not sum flat at r·N/overlap
    /// (`SpectralWindowing`), Hs is N/K for the nearest whole overlap K instead.
    @inline(__always)
    private func synthesisHop(ratio r: Double) -> Int {
        guard r > 1 else { return hopFrames }
        let hop = max(hopFrames, min(roundToInt(Double(hopFrames) * r), fftSize / 4))
        // (below an overlap of 4 no hop allows a power: nothing to move to; no `||` with `self`
        // on its right: see `Owned`)
        if fftSize / hopFrames < 4 { return hop }
        if windowing({ $0.allowsAsMany(hop: hop) }) { return hop }
        // the nearest whole overlap, where the highs' narrower frames sum flat
        let n = fftSize, k = max(4, min(n / hopFrames, (n + hop / 2) / hop))
        return n / k
    }

    /// The next frame's synthesis hop toward `target` at stretch `sigma`, and the highs' powers
    /// for it (`hopSlewDivisor`).
    @inline(__always)
    private func nextHop(toward target: Int, stretch sigma: Double) -> Int {
        if hop == 0 {
            (hop, hopTarget, targetSteadyFrames, powersOff) = (target, target, 0, false)
            narrowingPowers = Double(windowing { $0.powers(hop: target) })
            narrowingPowersFirst = narrowingPowers
            return hop
        }
        // (locals: no `||` or `&&` with `self` on its right, see `Owned`)
        let last = hop, shortHop = hopFrames, lastTarget = hopTarget
        let sparse = max(1, Double(last) / sigma / Double(shortHop))
        let step = max(1, Int(Double(last) / Double(Self.hopSlewDivisor) * sparse))
        var p = narrowingPowers, first = narrowingPowersFirst, off = powersOff
        // far: half the hop away or more, as after a step or in a fast glide; the
        // powers stay off until the target has moved no more than a step a frame for
        // `powersOffHoldFrames` (nearer, as a glide's whole overlaps, the hop moves there in
        // steps with the powers kept)
        let gap = abs(target - last)
        let steady = abs(target - lastTarget) <= step ? targetSteadyFrames + 1 : 0
        if gap > step && 2 * gap >= last {
            off = true
        } else if steady >= Self.powersOffHoldFrames {
            off = false
        }
        let next = off && p == 0 ? target : last + max(-step, min(step, target - last))
        (hop, hopTarget, targetSteadyFrames, powersOff) = (next, target, steady, off)
        let here = windowing { $0.powers(hop: next) }, there = windowing { $0.powers(hop: target) }
        let goal = off ? 0 : Double(min(here, there))
        if p != goal || first != goal {
            let k = off ? Self.powersOffCoefficient : Self.powersCoefficient
            first += (goal - first) * k
            p += (first - p) * k
            if abs(p - goal) < Self.powersSnap && abs(first - goal) < Self.powersSnap { (p, first) = (goal, goal) }
            if off && p <= Self.powersOffSnap { (p, first) = (0, 0) }
            (narrowingPowers, narrowingPowersFirst) = (p, first)
        }
        return next
    }

    /// Offline automation: each frame's target pitch from this map at its analysis centre (its
    /// input time) plus `pitchMapOrigin` (see `PitchMap`).
    var pitchMap: PitchMap? {
        get { heldPitchMap?.object }
        set {
            heldPitchMap?.release()
            heldPitchMap = newValue.map { Owned($0) }
        }
    }
    private var heldPitchMap: Owned<PitchMap>?
    var pitchMapOrigin = 0
    /// Live touch: the cents a hand holds the pitch at, over the map (NaN: none, the map plays).
    var handCents = Double.nan

    /// Offline automation: each frame's tempo from this map at its analysis centre plus
    /// `tempoMapBase` (the map's position of input time 0), without a glide (see `TempoMap`).
    var tempoMap: TempoMap? {
        get { heldTempoMap?.object }
        set {
            heldTempoMap?.release()
            heldTempoMap = newValue.map { Owned($0) }
        }
    }
    private var heldTempoMap: Owned<TempoMap>?
    var tempoMapBase = 0.0

    private func runFrame(readPosition: Double) {
        if !handCents.isNaN {
            targetCents = handCents
        } else if let map = heldPitchMap {
            let frame = nextAnalysisCentre + Double(pitchMapOrigin)
            targetCents = map { $0.cents(atFrame: frame) }
        }
        if let map = heldTempoMap {
            let position = nextAnalysisCentre + tempoMapBase
            tempo = map { $0.tempo(atPosition: position) }
        }
        // Glide toward the target pitch (one-pole, τ = glideSeconds, in whole frames).
        if currentCents != targetCents {
            // (the output time since the last frame: its input step over the tempo)
            let frameSeconds = lastInputStep / (tempo * sampleRate)
            Smoother.onePole(&currentCents, toward: targetCents, coefficient: min(1, frameSeconds / Self.glideSeconds),
                             snap: Self.glideSnapCents)
        }
        let glides = heldTempoMap == nil   // (no `self` right of `&&`: see `Owned`)
        if tempo != targetTempo && glides {
            let frameSeconds = Double(hopFrames) / sampleRate
            Smoother.onePoleLog(&tempo, toward: targetTempo, coefficient: min(1, frameSeconds / Self.tempoGlideSeconds),
                                snapRatio: Self.glideSnapTempoRatio)
        }
        let r = currentCents == 0 ? 1 : PitchShifterSettings.ratio(cents: currentCents)
        let sigma = r / tempo   // the stretch (exactly r at tempo 1)
        let a = nextAnalysisCentre, s = nextS
        let hs = nextHop(toward: synthesisHop(ratio: sigma), stretch: sigma)
        historyA[framesRun & historyMask] = a
        historyR[framesRun & historyMask] = sigma
        historyS[framesRun & historyMask] = s
        historyT[framesRun & historyMask] = tempo
        analyseAndSynthesise(centre: roundToInt(a), offsetFrames: a - Double(roundToInt(a)), ratio: r, stretch: sigma, at: s,
                             hop: hs, readPosition: readPosition)
        nextAnalysisCentre = a + Double(hs) / sigma
        lastInputStep = Double(hs) / sigma
        nextS = s + hs
        framesRun += 1
    }

    /// Whether the next frame's synthesis fits in the stretched buffer once what the reader has
    /// passed is dropped. It always does with fixed settings (the buffer is sized for them); a
    /// live look-ahead sized for one stretch while the frames are still made at a larger one
    /// (a glide across the whole range, or a switch's other state) may take more input than
    /// the buffer can stretch, and the frame then waits for the reader (its input is kept).
    @inline(__always)
    private func nextFrameFits(readPosition: Double) -> Bool {
        let end = nextS + fftSize / 2
        if end - stretchedStart <= stretchedCapacity { return true }
        let start = stretchedStart, capacity = stretchedCapacity
        let drop = min(floorToInt(readPosition) - readHalfTaps - 2, end - fftSize) - start
        return drop > 0 && end - start - drop <= capacity
    }

    private func compactStretched(upTo end: Int, readPosition: Double) {
        let firstNeeded = floorToInt(readPosition) - readHalfTaps - 2
        let drop = min(firstNeeded, end - fftSize) - stretchedStart
        let full = end - stretchedStart > stretchedCapacity - fftSize   // (no `self` right of `&&`: see `Owned`)
        if drop > 0 && full {
            // what the buffer holds up to the new frame's end (which may lie past the buffer
            // before the drop; `nextFrameFits` has checked it lies within after)
            let held = min(end - stretchedStart, stretchedCapacity)
            for c in 0..<channelCount {
                let base = stretched + c * stretchedCapacity
                vcopy(base + drop, into: base, held - drop)
                for i in (held - drop)..<held { base[i] = 0 }
            }
            stretchedStart += drop
        }
        let start = stretchedStart, capacity = stretchedCapacity
        precondition(end - start <= capacity, "PhaseVocoder stretch overflow")
    }

    /// Frame m: analysis centred on input `a` (its exact centre `offsetFrames` after it),
    /// synthesis centred on `s` = S_m, and S_{m+1} = s + `hop`.
    private func analyseAndSynthesise(centre a: Int, offsetFrames: Double, ratio: Double, stretch: Double, at s: Int, hop: Int,
                                      readPosition: Double) {
        let n = fftSize, bins = n / 2 + 1, ch = channelCount
        let frameStartY = s - n / 2
        compactStretched(upTo: frameStartY + n, readPosition: readPosition)
        // Analysis: all channels, from the history (before time 0: silence), whose ring still
        // holds the window (it keeps `inputFramesHeld`; checked as the own buffer's overflow was)
        let held = inputEnd - (a - n / 2), historyFrames = inputHistory { $0.capacity }
        precondition(held <= historyFrames, "PhaseVocoder input overflow")
        // (what the closures below need of `self`, as values: see `Owned`)
        let window = window, frameRe = re, frameIm = im
        // Raising the pitch, the bins above the band edge are cut before synthesis (below), so
        // the phase work stops just above it, unless formant preservation reads the envelope
        // there.
        let formant = preserveFormants && ratio != 1 ? self.formant : nil, formants = formant != nil
        let grid = SincTableCache.index(forRatio: ratio)
        let edge = grid < SincTableCache.firstRaisedIndex ? bins : min(bins, Int(SincTableCache.bandEdge(index: grid) * Double(bins - 1)))
        let activeBins = formants ? bins : min(bins, edge + 16)
        // The highs' extra window powers (`SpectralWindowing`): a at analysis, s at synthesis.
        let powers = narrowingPowers, mixed = mixedNarrowing
        let narrowing = windowing { $0.narrowing(powers: powers, scratch: mixed) }
        let narrowedFrom = narrowedFrom
        // (the formant envelope reads the frame's own spectrum: the narrowed bins count a noise
        // floor through another window, a step at the crossover)
        let formantPower = formants && narrowing.analysis.powers > 0 ? plainPower : power
        // raising: the power of the frame and of what the cut above the edge takes (before the
        // highs' narrowing, which weighs their bins otherwise), all channels
        var totalPower: Float = 0, cutPower: Float = 0
        let taperBins = taperCount, taper = taper, measures = measuresBand && edge < bins
        for c in 0..<ch {
            let src = inputHistory { $0.samples(channel: c, from: a - n / 2, count: n) }
            fft { $0.forward(src, window: window, re: frameRe + c * bins, im: frameIm + c * bins) }
            if measures {
                let xr = frameRe + c * bins, xi = frameIm + c * bins
                totalPower += vsumPower(xr, xi, bins)
                cutPower += vsumPower(xr + edge, xi + edge, bins - edge)
                for k in max(0, edge - taperBins)..<edge {
                    let g = taper[k - (edge - taperBins)]
                    cutPower += (1 - g * g) * (xr[k] * xr[k] + xi[k] * xi[k])
                }
            }
            if formantPower != power { vaddPower(frameRe + c * bins, frameIm + c * bins, formantPower, bins, accumulating: c > 0) }
            if narrowing.analysis.powers > 0 {
                narrowSpectrum(frameRe + c * bins, frameIm + c * bins, bins: bins, from: narrowedFrom, to: activeBins,
                               narrowing.analysis)
            }
        }
        for c in 0..<ch {
            vaddPower(re + c * bins, im + c * bins, power, activeBins, accumulating: c > 0)
        }
        // (the share of the power the cut keeps, `historyBand`: 1 where nothing is cut or the frame is silent)
        historyBand[framesRun & historyMask] = cutPower > 0 && totalPower.isFinite ? max(0, 1 - Double(cutPower) / Double(totalPower)) : 1
        (power + activeBins).update(repeating: 0, count: bins + 8 - activeBins)   // the slack reads as silence
        let power = power, lastRe = prevRe, lastIm = prevIm
        formant?({ $0.update(power: formantPower, ratio: ratio, keptBins: edge) })
        // (at 0 cents and tempo 1 the phasors go back to the input's, for the fade to the dry input)
        let align = ratio == 1 && stretch == 1
        var aligned = true   // (frame 0: the phasors are 1 after a reset)
        if framesRun > 0 {
            let ha = a - lastCentre, hs = s - lastSynthesisCentre
            aligned = locking {
                $0.advance(power: power, re: frameRe, im: frameIm, prevRe: lastRe, prevIm: lastIm,
                           channels: ch, ha: ha, hs: hs, activeBins: activeBins,
                           peakReach: phaseLockingPeakReach(stretch: stretch), align: align, alignOffsetFrames: offsetFrames)
            }
        }
        alignedRun = align && aligned ? alignedRun + 1 : 0
        // (the frames a synthesis window overlaps: N over the hop, rounded up)
        historyAligned[framesRun & historyMask] = alignedRun * hop >= n
        let (rotRe, rotIm) = locking { ($0.rotRe, $0.rotIm) }
        let formantGains = formant?({ $0.gains })
        // Synthesis: turn every bin by its phasor, cut above the edge, inverse FFT, window,
        // overlap-add. This frame's spectra then become the previous ones.
        for c in 0..<ch {
            let xr = re + c * bins, xi = im + c * bins
            if narrowing.analysis.powers > 0 && edge > narrowedFrom {
                // the highs' gain G (`SpectralWindowing`): over the blend from its table, then one value
                let from = narrowedFrom, blended = min(narrowing.gainBins, edge - from)
                vrotate(xr, xi, rotRe, rotIm, into: outRe, outIm, from)
                vrotate(xr + from, xi + from, rotRe + from, rotIm + from, into: outRe + from, outIm + from, blended,
                        gains: narrowing.gains)
                vrotate(xr + from + blended, xi + from + blended, rotRe + from + blended, rotIm + from + blended,
                        into: outRe + from + blended, outIm + from + blended, edge - from - blended,
                        gain: narrowing.gains[narrowing.gainBins])
            } else {
                vrotate(xr, xi, rotRe, rotIm, into: outRe, outIm, edge)
            }
            // (the formant filter before the highs' synthesis window: windowed after, the frame
            // keeps the window's length)
            if let formantGains {
                vmul(outRe, formantGains, outRe, edge)
                vmul(outIm, formantGains, outIm, edge)
            }
            let synthesisFrom = narrowedFrom + narrowing.synthesis.blendBins
            if narrowing.synthesis.powers > 0 && edge > synthesisFrom {
                // the highs' synthesis window w^(1+s) (what its taps read past the edge is silence)
                (outRe + edge).update(repeating: 0, count: min(8, bins - edge))
                (outIm + edge).update(repeating: 0, count: min(8, bins - edge))
                narrowSpectrum(outRe, outIm, bins: bins, from: synthesisFrom, to: edge, narrowing.synthesis)
            }
            if edge < bins {
                (outRe + edge).update(repeating: 0, count: bins - edge)
                (outIm + edge).update(repeating: 0, count: bins - edge)
                let start = max(0, edge - taperBins)
                for k in start..<edge {
                    let g = taper[k - (edge - taperBins)]
                    outRe[k] *= g; outIm[k] *= g
                }
            }
            outIm[0] = 0; outIm[bins - 1] = 0
            let dst = stretched + c * stretchedCapacity + (frameStartY - stretchedStart)
            let turnedRe = outRe, turnedIm = outIm
            fft { $0.inverse(re: turnedRe, im: turnedIm, window: window, addingTo: dst) }
        }
        // Weighted overlap-add with a running normalisation: Σ w·frame / Σ w², which is unity
        // gain for any sequence of hops. Output before S_{m+1} − N/2 gets no more frames, so it
        // is divided now, and its norm slots cleared for the positions N later. The ring's N
        // slots from this frame's start wrap at most once: two runs each.
        let start = frameStartY & (n - 1), tail = n - start
        vadd(windowSquared, into: norm + start, tail)
        vadd(windowSquared + tail, into: norm, start)
        let y0 = stretched + (frameStartY - stretchedStart), y1 = ch > 1 ? y0 + stretchedCapacity : nil
        let first = min(hop, tail)
        vdivideByNorm(y0, y1, norm + start, first)
        (norm + start).update(repeating: 0, count: first)
        if hop > first {
            vdivideByNorm(y0 + first, y1.map { $0 + first }, norm, hop - first)
            norm.update(repeating: 0, count: hop - first)
        }
        lastSynthesisCentre = s
        swap(&re, &prevRe)
        swap(&im, &prevIm)
        lastCentre = a
    }
}

extension PhaseVocoder {
    /// The read-only tables of one frame size N, built once per process on the control side and
    /// shared by every vocoder of that size (32 KB at N = 4096 that each shifter held before):
    /// the Hann window w(i) = ½ − ½·cos(2πi/N), w², and the band edge's taper
    /// g(j) = ½ + ½·cos(π(j + 1)/(T + 1)), T = `taperBins`.
    /// `@unchecked Sendable`: written only in `init`, read by any thread after.
    final class Windows: @unchecked Sendable {
        let window: UnsafePointer<Float>
        let windowSquared: UnsafePointer<Float>
        let taper: UnsafePointer<Float>

        private static let cache = ControlLock<[Int: Windows]>([:])

        /// The tables for frames of `fftSize`, built on first use.
        static func shared(fftSize n: Int) -> Windows {
            cache.withLock { c in
                if let w = c[n] { return w }
                let w = Windows(fftSize: n)
                c[n] = w
                return w
            }
        }

        private init(fftSize n: Int) {
            let w = UnsafeMutablePointer<Float>.allocate(capacity: n)
            let w2 = UnsafeMutablePointer<Float>.allocate(capacity: n)
            for i in 0..<n { w[i] = Float(0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(n))) }
            for i in 0..<n { w2[i] = w[i] * w[i] }
            let taperBins = PhaseVocoder.taperBins(fftSize: n)
            let g = UnsafeMutablePointer<Float>.allocate(capacity: taperBins)
            for j in 0..<taperBins { g[j] = Float(0.5 + 0.5 * cos(Double.pi * Double(j + 1) / Double(taperBins + 1))) }
            window = UnsafePointer(w); windowSquared = UnsafePointer(w2); taper = UnsafePointer(g)
        }

        deinit {
            UnsafeMutablePointer(mutating: window).deallocate()
            UnsafeMutablePointer(mutating: windowSquared).deallocate()
            UnsafeMutablePointer(mutating: taper).deallocate()
        }
    }
}
