/// Brings a compressing stretch's output back to the level of the input it came from.
///
/// Where the vocoder's stretch σ = r/R is below 1 (a faster tempo, unless the pitch rises as
/// much; a lowered pitch), its frames come from input frames further apart than they overlap in
/// the output; on material that is not a steady tone they add with less than full coherence, so
/// noise comes out quieter (the more, the further), while the smear fills the dips and decays
/// after a sound. This part scales the output by
///
///     g(n) = √(P_in / P_out),
///
/// P_out the mean power of the output (the channels' mean) over a window of `Shape.windowSeconds`
/// centred on output frame n, P_in the input's over the input times that window
/// maps to, [⌊(n − h)·R⌋ + O, ⌊(n + h)·R⌋ + O) (output frame n is at input time n·R + O: the
/// tempo path O = 0, the fixed-latency pitch path R = 1, O = −L; input before time 0 counts as
/// silence), worked out at every
/// `rawGainStride`-th frame and held between. g is kept within
/// `lowestGain`…`highestGain`, moved toward 1 by `deadZone` (g = 1 exactly within it: a steady
/// tone, whose level the vocoder keeps, passes unchanged, to the bit), and smoothed by a
/// triangle of half-width S = `Shape.smoothingSeconds` (two running means of S frames, on gains
/// fixed at 2⁻³⁰ so that every sum is exact and the same whatever the blocks). The power (`Shape`):
///
/// - a tempo (`Shape.tempo`): the instantaneous power of the analytic signal (`HilbertPair`),
///   10 ms windows, ±15 ms smoothing. Both sides hold the same frequencies, so the pair's delay,
///   which depends on frequency, is the same on both;
/// - a lowered pitch (`Shape.pitch`): x², 40 ms windows, ±40 ms smoothing. The output's
///   frequencies are the input's times r: the pair's delay would differ between them (a tone
///   burst lowered an octave moved 13 samples), and a harmonic tone's beats, at its fundamental,
///   differ too: windows of 10 ms left a 55 Hz tone's partials 0.5 dB off at −500 cents; with
///   40 ms, and the dead zone on the smoothed gain (`Shape.deadZoneLast`), they are untouched.
///
/// The window and
/// the smoothing look ahead, so the output is delayed by `delayFrames` D = S + h − 2: `push`
/// takes the shifter's output as it is made, `pop` gives it back D frames later, scaled. (The
/// tempo path makes its output D ahead, so `pop` hands out frame 0 first; the in-place pitch path
/// adds D to its latency, `leadsBySilence`: `pop` hands out D frames of silence first.)
///
/// Input side: `recordInput` follows the input as it is pulled, by input time; both sides keep
/// prefix sums of the power in rings long enough for the windows still to come. (The detectors
/// settle on their own clocks, input and output time: after a step of a DC offset or of content
/// under about 20 Hz the two disagree for a few of the slowest section's time constants (800
/// samples, 17 ms at 48 kHz), and the gain follows. Slower tempos, where that lasts longer in
/// the output, are left without a match: there the level loss is also smaller.) Made by
/// `PitchShifter.prepare` (control side); `reset`, `recordInput`, `push`, `pop` on the render
/// side (no allocation). One thread at a time.
///
/// Only an offline shifter at a fixed pitch and tempo has one: a pitch lane or map, or a tempo
/// lane, runs the streaming shifter (live playback's), which has none, so a render whose lane
/// holds a lowered pitch keeps the vocoder's loss. Near a file's start and end (the first and
/// last 0.1 s) the windows reach past the signal, and the vocoder's onset and tail, which differ
/// from the input's edges, take a gain too (a steady tone up to +1 dB in the last 30 ms at −1200
/// cents). A steady tone whose output is near 20 Hz ripples x² by more than the smoothing takes
/// out: its gain moves by up to 0.05 dB.
final class LevelMatch {
    /// How the power is measured: the window centred on the output frame, the half-width of the
    /// gain's triangular smoothing, and whether it is the analytic signal's (else x²).
    /// `deadZoneLast`: the dead zone is applied to the smoothed gain, not to the raw one (x²
    /// ripples at twice a tone's frequency: ±0.8 % in g for a 247 Hz tone over 40 ms, more than
    /// the dead zone, and the smoothing takes that out first).
    struct Shape: Equatable {
        let windowSeconds: Double, smoothingSeconds: Double, analytic: Bool, deadZoneLast: Bool
        /// A tempo: both sides at the same frequencies.
        static let tempo = Shape(windowSeconds: 0.010, smoothingSeconds: 0.015, analytic: true, deadZoneLast: false)
        /// A lowered pitch: the output's frequencies are the input's times r.
        static let pitch = Shape(windowSeconds: 0.040, smoothingSeconds: 0.040, analytic: false, deadZoneLast: true)
    }
    /// g within this of 1 is 1; beyond it, g is moved this much toward 1.
    static let deadZone = 0.005
    /// The gain's range: −6 dB to +3 dB.
    static let lowestGain = 0.501187233627272, highestGain = 1.41253754462275
    /// Added to both powers (mean square per frame): silence against silence is g = 1.
    static let powerFloor = 1e-10
    /// The fixed point of the gains: 2³⁰ is 1.
    static let unit: Int64 = 1 << 30
    /// The raw gain is worked out at every this many output frames (the window moved on by 8
    /// frames: a square root and a division saved on 7 frames of 8).
    static let rawGainStride = 8

    /// How far `pop` lags `push`, frames.
    let delayFrames: Int
    /// Where the owner may make a block before `push`: `maximumFrameCount` frames a channel.
    let staging: (left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>)
    private let half: Int, smoothing: Int, tempo: Double, channels: Int
    /// `Shape.analytic`, `Shape.deadZoneLast`.
    private let analytic: Bool, deadZoneLast: Bool
    /// O: the input time of output frame 0.
    private let inputOrigin: Int
    /// Whether `pop` starts D frames before frame 0 (silence), for a caller that takes a block
    /// out for each block in.
    private let leadsBySilence: Bool
    private let maximumFrameCount: Int
    // power prefix sums C[t] = Σ_{u<t} p[u], by input time and by output index, each as a sum
    // and its rounding error (compensated: a window's difference keeps its precision however
    // long the file before it)
    private let inputSums: UnsafeMutablePointer<CompensatedSum>, inputMask: Int
    private let outputSums: UnsafeMutablePointer<CompensatedSum>, outputMask: Int
    // the raw gains (fixed point), the first running means, the smoothed gains: rings by frame
    private let rawGains: UnsafeMutablePointer<Int64>, firstMeans: UnsafeMutablePointer<Int64>, gainMask: Int
    private let gains: UnsafeMutablePointer<Int64>
    // the output held back, left then right, a ring of `delayMask + 1` frames each
    private let held: UnsafeMutablePointer<Float>, delayMask: Int
    private var inputPair = HilbertPair(), outputPair = HilbertPair()
    private var inputRecorded = 0, inputTotal = CompensatedSum()
    private var pushed = 0, outputTotal = CompensatedSum(), popped = 0
    private var firstSum: Int64 = 0, secondSum: Int64 = 0, lastRawGain = LevelMatch.unit

    /// A level match for a shifter at `tempo` R with `channels` channels, given blocks of at
    /// most `maximumFrameCount`, whose input is pulled at most `inputAheadFrames` past the
    /// input time of the last output frame made, output frame 0 at input time `inputOrigin`;
    /// `leadsBySilence`: `pop` gives D frames of silence before frame 0.
    init(sampleRate: Double, channels: Int, tempo: Double, maximumFrameCount: Int, inputAheadFrames: Int,
         shape: Shape = .tempo, inputOrigin: Int = 0, leadsBySilence: Bool = false) {
        precondition(channels == 1 || channels == 2)
        (analytic, deadZoneLast) = (shape.analytic, shape.deadZoneLast)
        precondition(inputOrigin <= 0)
        self.channels = channels
        self.tempo = tempo
        self.inputOrigin = inputOrigin
        self.leadsBySilence = leadsBySilence
        self.maximumFrameCount = max(1, maximumFrameCount)
        (half, smoothing) = Self.widths(shape, sampleRate: sampleRate)
        delayFrames = smoothing + half - 2
        // a block's gains need the output from 2h before it, and the input from there (R times
        // as far) up to what the shifter has pulled ahead of the block's last frame
        let outputSpan = 2 * half + self.maximumFrameCount + 2
        let inputSpan = Int((Double(outputSpan) * tempo).rounded(.up)) + inputAheadFrames + self.maximumFrameCount + 2
        inputMask = powerOfTwo(atLeast: inputSpan) - 1
        outputMask = powerOfTwo(atLeast: outputSpan) - 1
        gainMask = powerOfTwo(atLeast: max(2 * smoothing + 2, delayFrames + self.maximumFrameCount + 2)) - 1
        delayMask = powerOfTwo(atLeast: delayFrames + self.maximumFrameCount + 1) - 1
        inputSums = .allocate(capacity: inputMask + 1)
        outputSums = .allocate(capacity: outputMask + 1)
        rawGains = .allocate(capacity: gainMask + 1)
        firstMeans = .allocate(capacity: gainMask + 1)
        gains = .allocate(capacity: gainMask + 1)
        held = .allocate(capacity: 2 * (delayMask + 1))
        staging = (.allocate(capacity: self.maximumFrameCount), .allocate(capacity: self.maximumFrameCount))
        staging.left.initialize(repeating: 0, count: self.maximumFrameCount)
        staging.right.initialize(repeating: 0, count: self.maximumFrameCount)
        reset()
    }

    deinit {
        inputSums.deallocate(); outputSums.deallocate(); rawGains.deallocate(); firstMeans.deallocate(); gains.deallocate()
        held.deallocate(); staging.left.deallocate(); staging.right.deallocate()
    }

    /// h and S of `shape` at `sampleRate`, frames.
    private static func widths(_ shape: Shape, sampleRate: Double) -> (half: Int, smoothing: Int) {
        (max(1, Int((shape.windowSeconds * sampleRate / 2).rounded(.down))),
         max(2, 2 * Int((shape.smoothingSeconds * sampleRate / 2).rounded())))
    }

    /// D of `shape` at `sampleRate` (what an instance's `delayFrames` will be).
    static func delayFrames(_ shape: Shape, sampleRate: Double) -> Int {
        let (h, s) = widths(shape, sampleRate: sampleRate)
        return s + h - 2
    }

    /// Nothing recorded; every gain before frame 0 counts as 1.
    @_noLocks
    func reset() {
        inputSums[0] = CompensatedSum(); outputSums[0] = CompensatedSum()
        rawGains.update(repeating: Self.unit, count: gainMask + 1)
        let s = Int64(smoothing)
        firstMeans.update(repeating: s * Self.unit, count: gainMask + 1)
        gains.update(repeating: s * s * Self.unit, count: gainMask + 1)
        held.update(repeating: 0, count: 2 * (delayMask + 1))
        inputPair.reset(); outputPair.reset()
        inputRecorded = 0; inputTotal = CompensatedSum(); pushed = 0; outputTotal = CompensatedSum()
        popped = leadsBySilence ? -delayFrames : 0
        firstSum = s * Self.unit; secondSum = s * s * Self.unit; lastRawGain = Self.unit
    }

    /// Follows the input's next `frameCount` frames, input times `time` on (each call's `time`
    /// where the last one ended).
    @_noLocks
    func recordInput(left: UnsafePointer<Float>, right: UnsafePointer<Float>?, frameCount: Int, at time: Int) {
        var total = inputTotal
        let sums = inputSums, mask = inputMask
        var pairs = inputPair
        let a = analytic
        defer { inputPair = pairs; inputTotal = total; inputRecorded = time + frameCount }
        for k in 0..<frameCount {
            total.add(matchPower(&pairs, analytic: a, left[k], right?[k]))
            sums[(time + k + 1) & mask] = total
        }
    }

    /// Takes the shifter's next `frameCount` output frames (after the ones pushed before) and
    /// works out the gains they complete.
    @_noLocks
    func push(left: UnsafePointer<Float>, right: UnsafePointer<Float>?, frameCount: Int) {
        let first = pushed, hold = held, dMask = delayMask, stride = delayMask + 1
        var total = outputTotal
        var pairs = outputPair
        let sums = outputSums, oMask = outputMask, a = analytic
        for k in 0..<frameCount {
            let slot = (first + k) & dMask
            hold[slot] = left[k]
            if let right { hold[stride + slot] = right[k] }
            total.add(matchPower(&pairs, analytic: a, left[k], right?[k]))
            sums[(first + k + 1) & oMask] = total
        }
        outputPair = pairs; outputTotal = total; pushed = first + frameCount
        // raw gain j needs the output up to j + h − 1; it is worked out at every
        // `rawGainStride`-th frame and held between (the smoothing is 90 times as wide)
        let h = half, firstGain = first - h + 1, endGain = pushed - h + 1
        var raw = lastRawGain
        for j in max(0, firstGain)..<max(0, endGain) {
            if j % Self.rawGainStride == 0 { raw = rawGain(j) }
            addGain(j, raw)
        }
        lastRawGain = raw
    }

    /// g(j), fixed point: the input's mean power over the window against the output's.
    @inline(__always)
    private func rawGain(_ j: Int) -> Int64 {
        let h = half, r = tempo, origin = inputOrigin
        let a = max(0, j - h), b = j + h
        let outputPower = outputSums[b & outputMask].minus(outputSums[a & outputMask]) / Double(b - a)
        // the input times the output window maps to; those before 0 are silence
        let ia = floorToInt(Double(a) * r) + origin
        let ib = min(max(ia, floorToInt(Double(b) * r) + origin), inputRecorded)
        let from = max(0, ia)
        let inputPower = ib > from ? inputSums[ib & inputMask].minus(inputSums[from & inputMask]) / Double(ib - ia) : 0
        let floor = Self.powerFloor
        var g = Libm.sqrt((max(0, inputPower) + floor) / (max(0, outputPower) + floor))
        g = min(max(g, Self.lowestGain), Self.highestGain)
        if deadZoneLast { return Int64(Libm.rounded(g * Double(Self.unit))) }
        let dead = Self.deadZone
        if g > 1 + dead { g -= dead } else if g < 1 - dead { g += dead } else { return Self.unit }
        return Int64(Libm.rounded(g * Double(Self.unit)))
    }

    /// Records raw gain j and the smoothed gain it completes, i = j − S + 1: the second running
    /// mean of S of the first, B₁(k) = Σ g(k − S/2 … k + S/2 − 1), B₂(i) = Σ B₁(i − S/2 + 1 … i + S/2).
    @inline(__always)
    private func addGain(_ j: Int, _ g: Int64) {
        let s = smoothing, mask = gainMask
        firstSum += g - rawGains[(j - s) & mask]
        rawGains[j & mask] = g
        let k = j - s / 2 + 1
        secondSum += firstSum - firstMeans[(k - s) & mask]
        firstMeans[k & mask] = firstSum
        let i = k - s / 2
        if i >= 0 { gains[i & mask] = secondSum }
    }

    /// Writes the next `frameCount` frames of the held output, scaled by their gains (frame i
    /// is what `push` was given as frame i; `delayFrames` more must have been pushed).
    @_noLocks
    func pop(into left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, frameCount: Int) {
        let first = popped, hold = held, dMask = delayMask, stride = delayMask + 1, gMask = gainMask
        let one = Int64(smoothing) * Int64(smoothing) * Self.unit, scale = 1 / Double(one)
        let last = deadZoneLast, dead = Self.deadZone
        for k in 0..<frameCount {
            let slot = (first + k) & dMask
            let fixed = gains[(first + k) & gMask]
            var g = Double(fixed) * scale
            // (`deadZoneLast`: the smoothed gain within the dead zone is 1; else the raw gains were
            // already, and 1 is `one` exactly)
            if last { g = g > 1 + dead ? g - dead : g < 1 - dead ? g + dead : 1 }
            if first + k < 0 {
                // (before frame 0, `leadsBySilence`)
                left[k] = 0
                right?[k] = 0
            } else if last ? g == 1 : fixed == one {
                left[k] = hold[slot]
                right?[k] = hold[stride + slot]
            } else {
                let gain = Float(g)
                left[k] = gain * hold[slot]
                right?[k] = gain * hold[stride + slot]
            }
        }
        popped = first + frameCount
    }
}

/// `LevelMatch`'s power of the next frame: by `pairs`, or as x²; the channels' mean (a NaN or an
/// infinity: 0). (A free function: a static one called through `Self` is refused on the render path.)
@inline(__always)
private func matchPower(_ pairs: inout HilbertPair, analytic: Bool, _ left: Float, _ right: Float?) -> Double {
    if analytic { return pairs.power(left, right) }
    let l = Double(left), r = Double(right ?? left)
    guard l.isFinite && r.isFinite else { return 0 }
    return right == nil ? l * l : 0.5 * (l * l + r * r)
}

/// A running sum and the rounding error of its additions (Neumaier's compensated summation), so
/// that the difference of two running sums far into a long file is as precise as a sum of the
/// values between them.
struct CompensatedSum {
    private(set) var sum = 0.0, error = 0.0

    @inline(__always)
    mutating func add(_ x: Double) {
        let t = sum + x
        // (the exact error of the rounded addition, whichever operand is larger)
        error += abs(sum) >= abs(x) ? (sum - t) + x : (x - t) + sum
        sum = t
    }

    /// This sum less an earlier one.
    @inline(__always)
    func minus(_ earlier: CompensatedSum) -> Double { (sum - earlier.sum) + (error - earlier.error) }
}
