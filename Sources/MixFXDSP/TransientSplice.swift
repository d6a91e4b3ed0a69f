/// Puts a shifted hit back in place with its attack intact.
///
/// The gate keeps a hit's smear out of the silence before it, but the vocoder still lays copies
/// of the hit at (T − A_m)·(1/r − 1) from its true time T (frame m centred at A_m), so pitch-down
/// attacks come out late and soft. At an onset (the input's envelope `onsetLookaheadSeconds`
/// ahead, `onsetPowerRatio` (9 dB) above its value `onsetBackSeconds` earlier) the output
/// crossfades within the look-ahead to the input itself: its first `attackSeconds` as they are
/// (too short to carry pitch), then played r times faster, g(t) = x(T + a + (t − T − a)·r): the
/// right pitch, the attack in place and untouched. After holding for two thirds of
/// `lengthSeconds` it crossfades back to the vocoder over the last third (which by then holds no
/// early copies). Steady material never triggers it; a new onset waits `holdoffSeconds`.
///
/// A hit over quiet is spliced whole: its envelope is `quietPowerRatio` (40 dB) above the
/// input's power (less its mean: an offset is not sound) from `quietBackSeconds` to
/// `quietBackSeconds − quietSpanSeconds` before the probe (the samples, not the envelope, whose
/// release would still hold a hit 100 ms back; 5–10 ms back passes over what rings just before
/// a band-limited click). A hit over other
/// sound is spliced above a crossover only (one of `crossoversHz`): there a whole splice would
/// play that sound r times faster too, and its fade back would sum two copies of it at different
/// phases (a held tone dips through every hit), while the attack that the vocoder smears most
/// audibly (hats, snares, consonants) is mostly high. The splice's change to the output,
/// w·(g − wet), then goes through a high-pass H (second-order Butterworth), so the output is
/// (1 − H)·wet + H·g: the vocoder's well below the crossover, the splice's well above it, and
/// both in between (1 − H is not a low-pass: +2 dB near 0.8 of the crossover, falling 6 dB per
/// octave above), where the two takes of the sound under the hit can cancel for the splice's
/// 30 ms. So the crossover is the lowest above whose half the hit stands out from the sound
/// before it (`firstClearBand`; measured on the input, whose frequencies a lowered pitch moves
/// lower still, so it errs toward leaving that sound alone), and a hit that stands out nowhere
/// is not spliced. The filter rings out for `tailSeconds` after.
/// A tempo alone (pitch ratio 1) splices whole over sound too: it reads the sound under the
/// hit at its own speed, and its fade back is between two takes of it. A raised pitch (r > 1)
/// read in input time (offline at tempo 1, or streaming on whole frames at tempo 1 with no
/// tempo map) does not splice over sound at all: there the vocoder's copies of a hit land
/// before it, where the gates keep them down, and the attack stays nearly in place, while the
/// splice's fade back sums two takes of the sound under the hit some milliseconds apart, which
/// dips a held tone under the hit by up to tens of dB (`Benchmarks/RESULTS.md`, 2026-12-06
/// 19:10). Such an onset, spliced or not, starts the hold-off.
///
/// Reads the input through an anti-aliasing `SincTable` per ratio grid index (it plays the input
/// r times faster). Made by `PitchShifter.prepare` (control side); `reset` and `process` on the
/// render side. One thread at a time.
final class TransientSplice {
    static let onsetLookaheadSeconds = 0.001
    static let onsetBackSeconds = 0.003
    static let attackSeconds = 0.003
    static let lengthSeconds = 0.03
    static let holdoffSeconds = 0.05
    /// The envelope's rise over `onsetBackSeconds` that marks an onset: 8 (9.03 dB).
    static let onsetPowerRatio: Float = 8
    /// Where before the probe the splice looks for quiet, and for how long.
    static let quietBackSeconds = 0.01
    static let quietSpanSeconds = 0.005
    /// The hit's envelope over the input's mean power there that makes it a hit over quiet:
    /// 10⁴ (40 dB, as `cutPowerRatio`); or that mean under `onsetFloor`.
    static let quietPowerRatio: Float = 1e4
    /// Where a splice over other sound may start (its high-pass's corner), lowest first: it
    /// takes the lowest crossover c above which the hit stands out from the sound before it,
    /// its power above c/2 (`bandMarginPowerRatio`) over that sound's there. Lower, that sound
    /// would be spliced too, and in the high-pass's transition the vocoder's take of it and the
    /// splice's can cancel (a held tone at 2.1 kHz dipped 26 dB through every hit at −300
    /// cents). With none clear the hit is not spliced.
    static let crossoversHz = [1500.0, 3000.0, 6000.0]
    /// How far the hit (its loudest channel) must top the sound before it above c/2, in every
    /// channel: 10⁴ in power (40 dB, as `quietPowerRatio`). The two takes of that sound cancel by as much however loud it is, so
    /// the margin is the hit's over it, not the hit's loudness: at 20 dB a chord 6 dB quieter
    /// than the one that passed still dipped 16 dB.
    static let bandMarginPowerRatio: Float = 1e4
    /// The sound before the hit is measured after the detector has settled for this long.
    static let bandSettleSeconds = 0.002
    /// A splice from silence (`fromSilence`) fades in over this from its ramp's start, not over
    /// the whole ramp: the gate lets the smear in over the ramp's last samples only, and a step
    /// would cut what the vocoder still holds of a sound that ended 10–50 ms before the hit.
    static let fadeInSeconds = 0.0002
    /// How long that high-pass runs on after a splice, for its own ring to decay.
    static let tailSeconds = 0.005
    /// Below this envelope (−80 dB) there is no onset.
    static let onsetFloor: Float = 1e-8
    /// A hit from silence (what came before it under `onsetFloor`, or 10⁴ below it in power,
    /// 40 dB) is read without its precursor (`spliceBlend`); over other sound the kernel reads
    /// it whole, as it reads everything else (there the precursor is under that sound, and a
    /// cut read would add an edge to it). Such a hit whose input was silence from
    /// `quietBackSeconds` back up to it (`fromSilence`) takes the output whole within
    /// `fadeInSeconds` of the ramp's start: the gate opens a fraction of a millisecond ahead of
    /// the input's rise, and a crossfade over the whole ramp let the smear in over its last samples.
    static let cutPowerRatio: Float = 1e4

    let onsetLookaheadFrames: Int, onsetBackFrames: Int, attackFrames: Int
    /// `quietBackSeconds` and `quietSpanSeconds` in frames.
    let quietBackFrames: Int, quietSpanFrames: Int
    /// `tailSeconds` in frames.
    private let tailFrames: Int
    /// 1 / `fadeInSeconds` in frames.
    private let fadeInRate: Float
    /// The high-pass of a splice over other sound (`BiquadCoefficients.highPass`, Q = 1/√2) as
    /// b0, b1, b2, a1, a2, then its state, z1 and z2 per channel (`highPassStep`). Sample by
    /// sample in `Float`, inside the splice's loop, rather than a `StereoBiquad` over a block.
    private let highPass: UnsafeMutablePointer<Float>
    /// Whether the current splice is above the crossover only (a hit over other sound).
    private var highOnly = false
    /// The splices' high-passes, one per crossover (`crossoversHz` under 0.4 of the sample
    /// rate), five coefficients each (`highPassStep`).
    private let crossovers: UnsafeMutablePointer<Float>
    private let crossoverCount: Int
    /// The crossover the high-pass holds now.
    private var crossover = 0
    /// The band detectors' coefficients (b0, b1, b2, a1, a2): in lane i the high-pass at half
    /// crossover i (run twice, 24 dB an octave; a lane past the last crossover repeats it).
    private let detectors: UnsafeMutablePointer<SIMD4<Float>>
    /// `bandSettleSeconds` in frames.
    private let bandSettleFrames: Int
    private let lengthFrames: Int, holdoffFrames: Int
    /// The tables, by ratio grid index (`SincTableCache.index(forRatio:)`).
    let tables: [SincTable]
    /// The same as values, for the render path (`SincTable.View`).
    private let tableViews: UnsafeMutablePointer<SincTable.View>
    /// A read's window with the input from the onset on left out (`spliceBlend`): a table's
    /// taps for each of two channels.
    private let cutScratch: UnsafeMutablePointer<Float>
    /// How far ahead of output time a splice raising the pitch may read: the shifter's latency
    /// less what the reads and the look-ahead need.
    private var roomFrames: Int
    // The current splice: onset T (input time), ratio, table, and where its hold and fade end;
    // new onsets wait until `holdoffEnd`.
    private var onset = 0, end = Int.min, holdEnd = 0, ratio = 1.0, table = 0, holdoffEnd = Int.min
    /// The onset the reads before it leave out (`cutPowerRatio`), or `Int.max`: none.
    private var cutOnset = Int.max
    /// Whether the current splice takes the output whole from `fadeInSeconds` after its ramp's
    /// start (a hit from silence, `cutPowerRatio`, with silence up to it, `fromSilence`).
    private var fromRampStart = false
    /// Where the current splice's last frame is, its high-pass's ring included (whole input
    /// times; output frames with a tempo).
    private var activeEnd = Int.min, activeEndOut = -Double.infinity

    /// A splice at `sampleRate` reading through `tables`, inside a shifter of `latencyFrames`
    /// whose reads reach `halfTaps` samples either side.
    init(sampleRate: Double, tables: [SincTable], latencyFrames: Int, halfTaps: Int) {
        onsetLookaheadFrames = Int(Self.onsetLookaheadSeconds * sampleRate)
        onsetBackFrames = Int(Self.onsetBackSeconds * sampleRate)
        quietBackFrames = Int(Self.quietBackSeconds * sampleRate)
        quietSpanFrames = max(1, Int(Self.quietSpanSeconds * sampleRate))
        attackFrames = Int(Self.attackSeconds * sampleRate)
        lengthFrames = Int(Self.lengthSeconds * sampleRate)
        holdoffFrames = Int(Self.holdoffSeconds * sampleRate)
        tailFrames = Int(Self.tailSeconds * sampleRate)
        fadeInRate = 1 / Float(max(1, Int(Self.fadeInSeconds * sampleRate)))
        bandSettleFrames = Int(Self.bandSettleSeconds * sampleRate)
        let usable = Self.crossoversHz.filter { $0 < 0.4 * sampleRate }
        precondition(Self.crossoversHz.count <= 4, "the band detectors hold four crossovers, one a lane")
        crossoverCount = max(1, usable.count)
        let hz = usable.isEmpty ? [0.4 * sampleRate] : usable
        /// b0, b1, b2, a1, a2 of the high-pass at `f`.
        func highPassAt(_ f: Double) -> [Float] {
            let h = BiquadCoefficients.highPass(frequencyHz: f, q: 0.5.squareRoot(), sampleRate: sampleRate)
            return [h.b0, h.b1, h.b2, h.a1, h.a2].map { Float($0) }
        }
        crossovers = .allocate(capacity: 5 * crossoverCount)
        for (i, c) in hz.enumerated() { (crossovers + 5 * i).initialize(from: highPassAt(c), count: 5) }
        let halves = (0..<4).map { highPassAt(hz[min($0, hz.count - 1)] / 2) }
        detectors = .allocate(capacity: 5)
        for j in 0..<5 { detectors[j] = SIMD4(halves[0][j], halves[1][j], halves[2][j], halves[3][j]) }
        highPass = .allocate(capacity: 9)
        highPass.update(from: crossovers, count: 5)
        highPass[5] = 0; highPass[6] = 0; highPass[7] = 0; highPass[8] = 0
        self.tables = tables
        tableViews = .allocate(capacity: tables.count)
        for (i, t) in tables.enumerated() { tableViews[i] = t.view }
        roomFrames = latencyFrames - halfTaps - 2 * onsetLookaheadFrames - attackFrames - 4
        cutScratch = .allocate(capacity: 2 * (tables.map(\.taps).max() ?? 0))
    }

    deinit { tableViews.deallocate(); cutScratch.deallocate(); highPass.deallocate(); crossovers.deallocate(); detectors.deallocate() }

    /// The taps of the table of grid index `index`.
    func taps(index: Int) -> Int { tableViews[index].taps }

    func reset() {
        end = Int.min; holdoffEnd = Int.min; cutOnset = Int.max; activeEnd = Int.min; fromRampStart = false
        tempoEnd = minusInfinity; activeEndOut = minusInfinity; highOnly = false
        clearHighPass()
    }

    private func clearHighPass() { highPass[5] = 0; highPass[6] = 0; highPass[7] = 0; highPass[8] = 0 }

    /// At an onset at `probe` (envelope `eNow`): whether its splice is over other sound
    /// (`highOnly`: never for a tempo alone, `shifted` false, which reads the sound under the hit
    /// at its own speed), measured against the hit's envelope a look-ahead on (the first rising
    /// frame may hold only its first samples), and above which crossover (`firstClearBand`). A
    /// splice over sound that starts while the last one's high-pass rings out (not `idle`)
    /// keeps its crossover and carries its state on: its input starts from w = 0, so the two
    /// join without a seam. False, and nothing changed, for a hit over sound at a `raised`
    /// pitch, and for one that stands out in no band (or, while the high-pass rings, not in its
    /// band): neither is spliced.
    @inline(__always)
    private func chooseKind(probe: Int, eNow: Float, shifted: Bool, raised: Bool, idle: Bool, channels: Int,
                            env: UnsafeMutablePointer<Float>, envMask: Int, input: InputHistory.View) -> Bool {
        let quiet = meanPower(from: probe - quietBackFrames, count: quietSpanFrames, channels: channels, input: input)
        let eHit = max(eNow, env[(probe + onsetLookaheadFrames) & envMask])
        let overQuiet = quiet < Self.onsetFloor || eHit > Self.quietPowerRatio * quiet
        let overSound = shifted && !overQuiet
        if overSound && raised { return false }
        let ringing = highOnly   // (no `self` right of `&&`: see `Owned`)
        let keep = overSound && !idle && ringing
        if overSound {
            let first = keep ? crossover : 0, last = keep ? crossover : crossoverCount - 1
            let band = firstClearBand(first: first, last: last, probe: probe, channels: channels, input: input)
            if band < 0 { return false }
            if !keep {
                crossover = band
                let from = crossovers + 5 * band
                for j in 0..<5 { highPass[j] = from[j] }
            }
        }
        highOnly = overSound
        if !highOnly || idle { clearHighPass() }
        return true
    }

    /// The earliest input frame at or before `probe`, at most `onsetBackFrames` before it and
    /// after `now` (the frame's own input time: an onset found late, after a hold-off, still
    /// lands ahead of the frame), from which every frame up to `probe` passes the onset test
    /// (its envelope over `onsetFloor` and `onsetPowerRatio` over its value `onsetBackFrames`
    /// earlier).
    @inline(__always)
    private func firstRisingFrame(probe: Int, after now: Int, env: UnsafeMutablePointer<Float>, envMask: Int) -> Int {
        let back = onsetBackFrames, rise = Self.onsetPowerRatio, floor = Self.onsetFloor
        let lowest = max(probe - back, now + 1)
        var first = probe
        while first > lowest && first - 1 - back >= 0 {
            let e = env[(first - 1) & envMask], before = env[(first - 1 - back) & envMask]
            if !(e > floor && e > rise * before) { break }
            first -= 1
        }
        return first
    }

    /// Whether the input from `quietBackFrames` before an onset at `first` up to it is silence:
    /// its mean square (a DC offset counts: the gates let the wet's smear through at its level)
    /// under `onsetFloor` in every channel. Up to the onset, not the ramp's start: a hit found
    /// after its first frames (near the input's start, where the onset test cannot look back)
    /// then has them in the window and is crossfaded.
    @inline(__always)
    private func fromSilence(first: Int, channels: Int, input: InputHistory.View) -> Bool {
        let count = quietBackFrames, start = first - count, floor = Self.onsetFloor * Float(count)
        for c in 0..<channels {
            let samples = input.base + c * input.stride
            var squares: Float = 0
            for j in 0..<count {
                let v = samples[(start + j) & input.mask]
                squares += v * v
            }
            if !(squares < floor) { return false }
        }
        return true
    }

    /// The lowest crossover from `first` through `last` whose band (its detector, from c/2 up)
    /// the hit tops by `bandMarginPowerRatio` in mean power in every channel: the hit from
    /// `probe` to a look-ahead on, in its loudest channel, against each channel's input from
    /// `quietBackFrames` − `bandSettleFrames` (8 ms at 44.1 kHz) to `quietBackFrames` −
    /// `quietSpanFrames` (5 ms) before it; −1: none. (Against the loudest channel's hit: a
    /// channel with no hit of its own, only hiss, would otherwise bar every splice of a
    /// hard-panned hit.) The detectors run in the lanes of a vector, from `quietBackFrames`
    /// back, on the input less its first sample there (so a DC offset or a loud bass starts
    /// them settled, not ringing).
    @inline(__always)
    private func firstClearBand(first: Int, last: Int, probe: Int, channels: Int, input: InputHistory.View) -> Int {
        let b0 = detectors[0], b1 = detectors[1], b2 = detectors[2], a1 = detectors[3], a2 = detectors[4]
        let margin = SIMD4<Float>(repeating: Self.bandMarginPowerRatio)
        let from = probe - quietBackFrames + bandSettleFrames, to = probe - quietBackFrames + quietSpanFrames
        let start = from - bandSettleFrames, hitEnd = probe + onsetLookaheadFrames
        let beforeCount = Float(to - from), hitCount = Float(hitEnd - probe)
        var loudest = SIMD4<Float>(), before = SIMD4<Float>()   // (over the channels: the hit's loudest, the sound's)
        for c in 0..<channels {
            let samples = input.base + c * input.stride
            let offset = samples[start & input.mask]
            var z0 = SIMD4<Float>(), z1 = z0, z2 = z0, z3 = z0, quiet = z0, hit = z0
            for t in start..<hitEnd {
                let x = SIMD4<Float>(repeating: samples[t & input.mask] - offset)
                let y = b0 * x + z0
                z0 = b1 * x - a1 * y + z1
                z1 = b2 * x - a2 * y
                let v = b0 * y + z2
                z2 = b1 * y - a1 * v + z3
                z3 = b2 * y - a2 * v
                if t >= from && t < to { quiet += v * v } else if t >= probe { hit += v * v }
            }
            loudest = pointwiseMax(loudest, hit)
            before = pointwiseMax(before, quiet)
        }
        let clear = margin * before * hitCount .<= loudest * beforeCount
        for band in first...last where clear[band] { return band }
        return -1
    }

    /// The input held past the output's input time is now `aheadFrames` (a shifter reading its
    /// input ahead on demand); `halfTaps` is its reads' reach.
    @_noLocks
    func setRoom(aheadFrames: Int, halfTaps: Int) {
        roomFrames = aheadFrames - halfTaps - 2 * onsetLookaheadFrames - attackFrames - 4
    }

    // With a tempo, the splice in output time: where its ramp starts, where the onset lands
    // (T/R), where its hold and fade end.
    private var rampStart = 0.0, onsetOut = 0.0, holdEndOut = 0.0, tempoEnd = -Double.infinity
    /// −∞, for `reset` (the compiler's realtime check cannot see into the standard library's).
    private let minusInfinity = -Double.infinity

    /// With a tempo R (output frame o at input time o·R): the same splice, placed so that the
    /// onset T lands at output time T/R, where the vocoder's copies of a hit smear it late (a
    /// stretch below 1 lays them up to (N/2)(1/σ − 1) after it). From the onset the input is
    /// read at its own speed for the attack, then `ratio` times faster; the input time it
    /// reaches drifts from the vocoder's by (1 − R) per frame, which the 10 ms fade back covers
    /// as a crossfade between two takes of steady material. `firstOutput` is the block's first
    /// output frame; the grid index `table` is `ratio`'s.
    @_noLocks
    func process(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?, frameCount: Int, firstOutput: Int,
                 tempo: Double, ratio: Double, table tableIndex: Int, gate: TransientGate.View, input: InputHistory.View) {
        let clock = OutputClock(tempo: tempo, times: nil, nextTime: 0, frameCount: frameCount, ratios: nil, ratio: ratio,
                                tableIndices: nil, table: tableIndex)
        spliceInOutputTime(left, right, frameCount: frameCount, firstOutput: firstOutput, gate: gate, input: input, clock: clock)
    }

    /// The same with a tempo that changes (streaming): frame k is at input time `times[k]` and
    /// reads at `ratios[k]` (grid index `tableIndices[k]`); an onset lands where the local tempo
    /// (`times[k+1] − times[k]`, the frame after the block at `nextTime`) carries it, so where it
    /// lands does not depend on where the blocks end.
    @_noLocks
    func process(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?, frameCount: Int, firstOutput: Int,
                 times: UnsafePointer<Double>, nextTime: Double, ratios: UnsafePointer<Double>, tableIndices: UnsafePointer<Int>,
                 gate: TransientGate.View, input: InputHistory.View) {
        let clock = OutputClock(tempo: 1, times: times, nextTime: nextTime, frameCount: frameCount, ratios: ratios, ratio: 1,
                                tableIndices: tableIndices, table: 0)
        spliceInOutputTime(left, right, frameCount: frameCount, firstOutput: firstOutput, gate: gate, input: input, clock: clock)
    }

    /// Where a block's output frames are in input time, for the splice in output time: at a
    /// steady tempo R (`times` nil: frame o at o·R, read at one ratio through one table), or
    /// listed (frame k at `times[k]`, read at `ratios[k]` through `tableIndices[k]`). (A value,
    /// not closures: a closure the compiler did not inline was an indirect call per frame.)
    private struct OutputClock {
        let tempo: Double
        let times: UnsafePointer<Double>?
        let nextTime: Double
        let frameCount: Int
        let ratios: UnsafePointer<Double>?, ratio: Double
        let tableIndices: UnsafePointer<Int>?, table: Int

        /// Frame k's (output frame o's) input time.
        @inline(__always)
        func inputTime(_ k: Int, _ o: Double) -> Double {
            if let times { return times[k] }
            return o * tempo
        }

        /// The output time at which an onset at input time `probe`, found at frame k, lands: T/R,
        /// or where the local tempo (`times[k+1] − times[k]`, the frame after the block at
        /// `nextTime`) carries it, so that it does not depend on where the blocks end.
        @inline(__always)
        func landing(_ k: Int, _ o: Double, _ probe: Int) -> Double {
            guard let times else { return Double(probe) / tempo }
            let local = (k + 1 < frameCount ? times[k + 1] : nextTime) - times[k]
            return o + (Double(probe) - times[k]) / local
        }

        @inline(__always)
        func ratio(_ k: Int) -> Double { ratios?[k] ?? ratio }

        @inline(__always)
        func table(_ k: Int) -> Int { tableIndices?[k] ?? table }
    }

    /// Whether no probe from `first` through `last` (their slots and those `back` before them
    /// contiguous in the envelope's ring, all started) passes the onset test; false also where
    /// that cannot be told this way. Tests whole groups of eight slots, so it may look past
    /// `last` (those slots' outcome only makes it answer false).
    @inline(__always)
    private func quietSpan(env: UnsafeMutablePointer<Float>, envMask: Int, from first: Int, through last: Int, back: Int,
                           rise: Float, floor: Float) -> Bool {
        let groups = (last - first) / 8 + 1
        let slot = first & envMask, backSlot = (first - back) & envMask
        guard last >= first && first - back >= 0 && slot + 8 * groups <= envMask + 1 && backSlot + 8 * groups <= envMask + 1 else {
            return false
        }
        let raw = UnsafeRawPointer(env)
        let riseLanes = SIMD8<Float>(repeating: rise), floorLanes = SIMD8<Float>(repeating: floor)
        // (the groups' outcomes or-ed lane by lane, reduced once)
        var any = SIMDMask<SIMD8<Int32>>(repeating: false)
        for g in 0..<groups {
            let eNow = raw.loadUnaligned(fromByteOffset: 4 * (slot + 8 * g), as: SIMD8<Float>.self)
            let eBefore = raw.loadUnaligned(fromByteOffset: 4 * (backSlot + 8 * g), as: SIMD8<Float>.self)
            any = any .| ((eNow .> riseLanes * eBefore) .& (eNow .> floorLanes))
        }
        return laneByte(any) == 0
    }

    /// The splice placed in output time: frame k (output frame o) is at input time
    /// `clock.inputTime(k, o)`; an onset at input time `probe` found at frame k lands at output
    /// time `clock.landing(k, o, probe)`, and is read at `clock.ratio(k)` through `clock.table(k)`.
    @inline(__always)
    private func spliceInOutputTime(_ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, frameCount: Int,
                                    firstOutput: Int, gate: TransientGate.View, input: InputHistory.View, clock: OutputClock) {
        let env = gate.envelope, envMask = gate.mask
        let lookahead = onsetLookaheadFrames, back = onsetBackFrames, attack = Double(attackFrames)
        let rise = Self.onsetPowerRatio, floor = Self.onsetFloor, fadeIn = fadeInRate
        let channels = right == nil ? 1 : 2
        var k = 0
        while k < frameCount {
            let o = Double(firstOutput + k)
            let now = floorToInt(clock.inputTime(k, o))
            // (`over`: a new splice may start; `idle`: nor is a high-pass ringing out, so frames
            // may be skipped)
            let over = o >= tempoEnd, idle = o >= activeEndOut, free = now >= holdoffEnd   // (no `self` right of `&&`: see `Owned`)
            if idle && free && k + 8 <= frameCount {
                // Between splices, eight frames at once when none of them starts one (the input
                // times only grow, so all eight are past the splice and the hold-off too, and
                // their probes lie between the first frame's and the last's): the onset test on
                // every probe in that span, a superset of the eight. Where one rises, or the
                // span cannot be tested this way, the frames go one by one below.
                let firstProbe = now + lookahead, lastProbe = floorToInt(clock.inputTime(k &+ 7, o + 7)) + lookahead
                if quietSpan(env: env, envMask: envMask, from: firstProbe, through: lastProbe, back: back, rise: rise, floor: floor) {
                    k += 8
                    continue
                }
            }
            defer { k += 1 }
            if over && free {
                let probe = now + lookahead
                let eNow = env[probe & envMask], eBefore = env[(probe - back) & envMask]
                var splices = probe - back >= 0 && eNow > rise * eBefore && eNow > floor
                if splices {
                    holdoffEnd = probe + holdoffFrames
                    // (a hit over sound with no band clear of it: no splice)
                    splices = chooseKind(probe: probe, eNow: eNow, shifted: clock.ratio(k) != 1, raised: false, idle: idle,
                                         channels: channels, env: env, envMask: envMask, input: input)
                }
                if splices {
                    ratio = clock.ratio(k)
                    let cut = eBefore < floor || eNow > Self.cutPowerRatio * eBefore
                    // A hit from silence starts at the first input frame of its rise: above tempo 1
                    // the frames' probes step over input frames, and a cut after the hit's first
                    // sample rang it into the silence through the read's kernel. (Before that
                    // frame the envelope is silence or falling, so the onset test fails there.)
                    let first = cut ? firstRisingFrame(probe: probe, after: now, env: env, envMask: envMask) : probe
                    onset = first
                    cutOnset = cut ? first : Int.max
                    fromRampStart = cut ? fromSilence(first: first, channels: channels, input: input) : false
                    table = clock.table(k)
                    rampStart = o
                    onsetOut = max(o + 1, clock.landing(k, o, first))
                    holdEndOut = onsetOut + Double(2 * lengthFrames / 3)
                    tempoEnd = onsetOut + Double(lengthFrames)
                    activeEndOut = tempoEnd + Double(highOnly ? tailFrames : 0)
                }
            }
            guard o < activeEndOut else { continue }
            guard o < tempoEnd else {
                spliceTail(left, right, k, highPass: highPass)
                continue
            }
            let w: Float
            if o < onsetOut {
                let linear = Float((o - rampStart) / (onsetOut - rampStart))
                w = fromRampStart ? min(1, max(Float(o - rampStart) * fadeIn, linear)) : linear
            } else if o < holdEndOut {
                w = 1
            } else {
                w = Float((tempoEnd - o) / (tempoEnd - holdEndOut))
            }
            // the attack at its own speed, then `ratio` times faster
            let since = o - onsetOut
            let pos = Double(onset) + (since <= attack ? since : attack + (since - attack) * ratio)
            spliceBlend(left, right, k, weight: w, input: input, at: pos, table: tableViews[table], onset: cutOnset,
                        scratch: cutScratch, highPass: highOnly ? highPass : nil)
        }
    }

    /// Splices into the wet block in place (frame k is input time `firstTime + k`; before 0 and
    /// where `ratios[k]` is 1 it is left alone), finding onsets in `gate`'s envelope and reading
    /// the input from `input`. `tableIndices[k]` is the grid index of `ratios[k]`.
    @_noLocks
    func process(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?, frameCount: Int, firstTime: Int,
                 ratios: UnsafePointer<Double>, tableIndices: UnsafePointer<Int>, gate: TransientGate.View, input: InputHistory.View) {
        let env = gate.envelope, envMask = gate.mask
        let lookahead = onsetLookaheadFrames, back = onsetBackFrames, attack = attackFrames
        let rise = Self.onsetPowerRatio, floor = Self.onsetFloor, fadeIn = fadeInRate
        let channels = right == nil ? 1 : 2
        var k = min(frameCount, max(0, -firstTime))
        while k < frameCount {
            let now = firstTime + k
            // Between splices, eight frames at once when none of them starts one: the onset
            // test on their eight probes, contiguous slots (`quietSpan`), so a quiet stretch
            // costs a vector compare per eight frames.
            let over = now >= end, idle = now >= activeEnd, free = now >= holdoffEnd   // (no `self` right of `&&`: see `Owned`)
            if idle && free && k + 8 <= frameCount {
                let probe = now + lookahead
                if quietSpan(env: env, envMask: envMask, from: probe, through: probe + 7, back: back, rise: rise, floor: floor) {
                    k += 8
                    continue
                }
            }
            defer { k += 1 }
            guard ratios[k] != 1 else { continue }
            if over && free {
                let probe = now + lookahead
                let eNow = env[probe & envMask], eBefore = env[(probe - back) & envMask]
                var splices = probe - back >= 0 && eNow > rise * eBefore && eNow > floor
                if splices {
                    holdoffEnd = probe + holdoffFrames
                    // (a hit over sound at a raised pitch: no splice, and a last one's tail rings on below)
                    splices = chooseKind(probe: probe, eNow: eNow, shifted: true, raised: ratios[k] > 1, idle: idle,   // (ratio ≠ 1 here)
                                         channels: channels, env: env, envMask: envMask, input: input)
                }
                if splices {
                    onset = probe
                    cutOnset = eBefore < floor || eNow > Self.cutPowerRatio * eBefore ? probe : Int.max
                    fromRampStart = cutOnset == probe ? fromSilence(first: probe, channels: channels, input: input) : false
                    ratio = ratios[k]
                    table = tableIndices[k]
                    // reading ahead of t by (t − T)·(r − 1) must stay inside the input held
                    var length = lengthFrames
                    if ratio > 1 {
                        length = max(0, min(length, Int(Double(roomFrames) / (ratio - 1))))
                    }
                    holdEnd = probe + 2 * length / 3
                    end = probe + length
                    activeEnd = end + (highOnly ? tailFrames : 0)
                }
            }
            guard now < activeEnd else { continue }
            guard now < end else {
                spliceTail(left, right, k, highPass: highPass)
                continue
            }
            let w: Float
            if now < onset {
                let linear = Float(now - (onset - lookahead)) / Float(lookahead)
                w = fromRampStart ? min(1, max(Float(now - (onset - lookahead)) * fadeIn, linear)) : linear
            } else if now < holdEnd {
                w = 1
            } else {
                w = Float(end - now) / Float(max(1, end - holdEnd))
            }
            // the attack at its own speed, then r times faster
            let sinceAttack = now - onset - attack
            let pos = sinceAttack <= 0 ? Double(now) : Double(onset + attack) + Double(sinceAttack) * ratio
            spliceBlend(left, right, k, weight: w, input: input, at: pos, table: tableViews[table], onset: cutOnset,
                        scratch: cutScratch, highPass: highOnly ? highPass : nil)
        }
    }
}

/// A splice's output frame k moves by `weight` toward the input read at `pos` through `table`.
/// Before `onset` (a hit from silence: `TransientSplice.cutPowerRatio`; `Int.max`: none) the
/// input from the onset on is left out of the read (copied into `scratch` with those samples
/// 0): the table's symmetric kernel would otherwise ring the hit into the silence before it, a
/// pre-echo that the input itself does not have.
/// (A function, not a static method: a call to a class's static method takes the
/// class's metadata, which the realtime check refuses.)
@inline(__always)
private func spliceBlend(_ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, _ k: Int, weight w: Float,
                          input: InputHistory.View, at pos: Double, table t: SincTable.View, onset: Int,
                          scratch: UnsafeMutablePointer<Float>, highPass: UnsafeMutablePointer<Float>?) {
    let i = floorToInt(pos)
    let first = i - t.taps / 2 + 1
    var a = input.base + (first & input.mask), b = a + input.stride
    // (a read within a sample of the onset keeps the onset's own sample: cut there, a hit
    // read at onset − ε and onset + 1 − ε would lose its first sample, all of a click)
    let cutFrom = pos > Double(onset - 1) ? onset + 1 : onset
    if pos < Double(onset) && first + t.taps > cutFrom {
        let mask = input.mask, taps = t.taps, stereo = right != nil
        for j in 0..<taps {
            let x = first + j, keep: Float = x < cutFrom ? 1 : 0
            scratch[j] = keep * input.base[x & mask]
            if stereo { scratch[taps + j] = keep * input.base[input.stride + (x & mask)] }
        }
        a = scratch
        b = scratch + taps
    }
    let frac = pos - Double(i)
    if let right {
        let (gL, gR) = t.interpolate(a, b, index: t.taps / 2 - 1, fraction: frac)
        if let highPass {
            left[k] += highPassStep(w * (gL - left[k]), highPass, state: 5)
            right[k] += highPassStep(w * (gR - right[k]), highPass, state: 7)
        } else {
            left[k] += w * (gL - left[k])
            right[k] += w * (gR - right[k])
        }
    } else {
        let gL = t.interpolate(a, index: t.taps / 2 - 1, fraction: frac)
        if let highPass {
            left[k] += highPassStep(w * (gL - left[k]), highPass, state: 5)
        } else {
            left[k] += w * (gL - left[k])
        }
    }
}

/// After a splice over other sound: its high-pass rings out (its input 0) into frame k.
@inline(__always)
private func spliceTail(_ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, _ k: Int,
                        highPass: UnsafeMutablePointer<Float>) {
    left[k] += highPassStep(0, highPass, state: 5)
    if let right { right[k] += highPassStep(0, highPass, state: 7) }
}

/// One sample through the biquad `h` (b0, b1, b2, a1, a2 at 0…4), transposed direct form II with
/// its state at `state` and `state + 1`:
///
///     y = b0·x + z1,   z1 ← b1·x − a1·y + z2,   z2 ← b2·x − a2·y
@inline(__always)
private func highPassStep(_ x: Float, _ h: UnsafeMutablePointer<Float>, state z: Int) -> Float {
    let y = h[0] * x + h[z]
    h[z] = h[1] * x - h[3] * y + h[z + 1]
    h[z + 1] = h[2] * x - h[4] * y
    return y
}

/// The input's mean power over `count` frames from input time `first`, every channel, without
/// its mean (its variance): a DC offset is not sound a splice could comb, and the high-pass
/// would take it out of the attack.
@inline(__always)
private func meanPower(from first: Int, count: Int, channels: Int, input: InputHistory.View) -> Float {
    var power: Float = 0
    for c in 0..<channels {
        let samples = input.base + c * input.stride
        var sum: Float = 0, squares: Float = 0
        for j in 0..<count {
            let v = samples[(first + j) & input.mask]
            sum += v
            squares += v * v
        }
        let mean = sum / Float(count)
        power += max(0, squares / Float(count) - mean * mean)
    }
    return power / Float(channels)
}
