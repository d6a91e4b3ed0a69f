/// Brings a compressing stretch's output at a faster tempo back to the level of the input it came
/// from (at tempo 1, a fixed pitch: `PitchLevelMatch`).
///
/// Where the vocoder's stretch σ = r/R is below 1 (a faster tempo, unless the pitch rises as
/// much), its frames come from input frames further apart than they overlap in
/// the output; on material that is not a steady tone they add with less than full coherence, so
/// noise comes out quieter (the more, the further), while the smear fills the dips and decays
/// after a sound. This part scales the output by
///
///     g(n) = √(P_in / P_out),
///
/// P_out the mean power of the output (the channels' mean) over a window of `windowSeconds`
/// centred on output frame n, P_in the input's over the input times that window
/// maps to, [⌊(n − h)·R⌋, ⌊(n + h)·R⌋) (output frame n is at input time n·R), worked out at every
/// `rawGainStride`-th frame and held between. g is kept within
/// `lowestGain`…`highestGain`, moved toward 1 by `deadZone` (g = 1 exactly within it: a steady
/// tone, whose level the vocoder keeps, passes unchanged, to the bit), and smoothed by a
/// triangle of half-width S = `smoothingSeconds` (two running means of S frames, on gains
/// fixed at 2⁻³⁰ so that every sum is exact and the same whatever the blocks). The power is the
/// analytic signal's (`HilbertPair`), which, unlike x², does not ripple at twice a tone's
/// frequency, so 10 ms windows suffice; both sides hold the same frequencies, so the pair's
/// delay, which depends on frequency, is the same on both (a pitch moves them apart: there
/// `PitchLevelMatch` takes x² over longer windows).
///
/// The window and
/// the smoothing look ahead, so the output is delayed by `delayFrames` D = S + h − 2: `push`
/// takes the shifter's output as it is made, `pop` gives it back D frames later, scaled (the
/// shifter makes its output D ahead, so `pop` hands out frame 0 first).
///
/// Input side: `recordInput` follows the input as it is pulled, by input time; both sides keep
/// prefix sums of the power in rings long enough for the windows still to come. (The detectors
/// settle on their own clocks, input and output time: after a step of a DC offset or of content
/// under about 20 Hz the two disagree for a few of the slowest section's time constants (800
/// samples, 17 ms at 48 kHz), and the gain follows. Slower tempos, where that lasts longer in
/// the output, are left without this match: there the level loss is also smaller, and with the
/// pitch kept `BandLevelMatch` takes the highs back to the input's envelope instead.) Made by
/// `PitchShifter.prepare` (control side); `reset`, `recordInput`, `push`, `pop` on the render
/// side (no allocation). One thread at a time.
///
/// Only an offline shifter at a fixed tempo has one: a tempo lane runs the streaming shifter
/// (live playback's), which has none.
final class LevelMatch {
    /// The window centred on the output frame, and the half-width of the gain's triangular
    /// smoothing.
    static let windowSeconds = 0.010, smoothingSeconds = 0.015
    /// g within this of 1 is 1; beyond it, g is moved this much toward 1.
    static let deadZone = 0.005
    /// The gain's range: −6 dB to +3 dB.
    static let lowestGain = 0.501187233627272, highestGain = 1.41253754462275
    /// Added to both powers (mean square per frame): silence against silence is g = 1.
    static let powerFloor = 1e-10
    /// The fixed point of the gains: 2³⁰ is 1.
    static let unit = GainTriangle.unit
    /// The raw gain is worked out at every this many output frames (the window moved on by 8
    /// frames: a square root and a division saved on 7 frames of 8).
    static let rawGainStride = 8

    /// How far `pop` lags `push`, frames.
    let delayFrames: Int
    /// Where the owner may make a block before `push`: `maximumFrameCount` frames a channel.
    let staging: (left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>)
    private let half: Int, smoothing: Int, tempo: Double, channels: Int
    private let maximumFrameCount: Int
    // power prefix sums C[t] = Σ_{u<t} p[u], by input time and by output index, each as a sum
    // and its rounding error (compensated: a window's difference keeps its precision however
    // long the file before it)
    private let inputSums: UnsafeMutablePointer<CompensatedSum>, inputMask: Int
    private let outputSums: UnsafeMutablePointer<CompensatedSum>, outputMask: Int
    // the gains' smoothing, by frame
    private var triangle: GainTriangle
    // the output held back, left then right, a ring of `delayMask + 1` frames each
    private let held: UnsafeMutablePointer<Float>, delayMask: Int
    private var inputPair = HilbertPair(), outputPair = HilbertPair()
    private var inputRecorded = 0, inputTotal = CompensatedSum()
    private var pushed = 0, outputTotal = CompensatedSum(), popped = 0
    private var lastRawGain = LevelMatch.unit

    /// A level match for a shifter at `tempo` R with `channels` channels, given blocks of at
    /// most `maximumFrameCount`, whose input is pulled at most `inputAheadFrames` past the
    /// input time of the last output frame made.
    init(sampleRate: Double, channels: Int, tempo: Double, maximumFrameCount: Int, inputAheadFrames: Int) {
        precondition(channels == 1 || channels == 2)
        self.channels = channels
        self.tempo = tempo
        self.maximumFrameCount = max(1, maximumFrameCount)
        (half, smoothing) = Self.widths(sampleRate: sampleRate)
        delayFrames = smoothing + half - 2
        // a block's gains need the output from 2h before it, and the input from there (R times
        // as far) up to what the shifter has pulled ahead of the block's last frame
        let outputSpan = 2 * half + self.maximumFrameCount + 2
        let inputSpan = Int((Double(outputSpan) * tempo).rounded(.up)) + inputAheadFrames + self.maximumFrameCount + 2
        inputMask = powerOfTwo(atLeast: inputSpan) - 1
        outputMask = powerOfTwo(atLeast: outputSpan) - 1
        triangle = GainTriangle(smoothing: smoothing, capacity: delayFrames + self.maximumFrameCount + 2)
        delayMask = powerOfTwo(atLeast: delayFrames + self.maximumFrameCount + 1) - 1
        inputSums = .allocate(capacity: inputMask + 1)
        outputSums = .allocate(capacity: outputMask + 1)
        held = .allocate(capacity: 2 * (delayMask + 1))
        staging = (.allocate(capacity: self.maximumFrameCount), .allocate(capacity: self.maximumFrameCount))
        staging.left.initialize(repeating: 0, count: self.maximumFrameCount)
        staging.right.initialize(repeating: 0, count: self.maximumFrameCount)
        reset()
    }

    deinit {
        inputSums.deallocate(); outputSums.deallocate(); triangle.deallocate()
        held.deallocate(); staging.left.deallocate(); staging.right.deallocate()
    }

    /// h and S at `sampleRate`, frames.
    private static func widths(sampleRate: Double) -> (half: Int, smoothing: Int) {
        (max(1, Int((windowSeconds * sampleRate / 2).rounded(.down))),
         max(2, 2 * Int((smoothingSeconds * sampleRate / 2).rounded())))
    }

    /// Nothing recorded; every gain before frame 0 counts as 1.
    @_noLocks
    func reset() {
        inputSums[0] = CompensatedSum(); outputSums[0] = CompensatedSum()
        triangle.reset()
        held.update(repeating: 0, count: 2 * (delayMask + 1))
        inputPair.reset(); outputPair.reset()
        inputRecorded = 0; inputTotal = CompensatedSum(); pushed = 0; outputTotal = CompensatedSum()
        popped = 0
        lastRawGain = Self.unit
    }

    /// Follows the input's next `frameCount` frames, input times `time` on (each call's `time`
    /// where the last one ended).
    @_noLocks
    func recordInput(left: UnsafePointer<Float>, right: UnsafePointer<Float>?, frameCount: Int, at time: Int) {
        var total = inputTotal
        let sums = inputSums, mask = inputMask
        var pairs = inputPair
        defer { inputPair = pairs; inputTotal = total; inputRecorded = time + frameCount }
        for k in 0..<frameCount {
            total.add(pairs.power(left[k], right?[k]))
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
        let sums = outputSums, oMask = outputMask
        for k in 0..<frameCount {
            let slot = (first + k) & dMask
            hold[slot] = left[k]
            if let right { hold[stride + slot] = right[k] }
            total.add(pairs.power(left[k], right?[k]))
            sums[(first + k + 1) & oMask] = total
        }
        outputPair = pairs; outputTotal = total; pushed = first + frameCount
        // raw gain j needs the output up to j + h − 1; it is worked out at every
        // `rawGainStride`-th frame and held between (the smoothing is 90 times as wide)
        let h = half, firstGain = first - h + 1, endGain = pushed - h + 1
        var raw = lastRawGain
        for j in max(0, firstGain)..<max(0, endGain) {
            if j % Self.rawGainStride == 0 { raw = rawGain(j) }
            triangle.add(j, raw)
        }
        lastRawGain = raw
    }

    /// g(j), fixed point: the input's mean power over the window against the output's.
    @inline(__always)
    private func rawGain(_ j: Int) -> Int64 {
        let h = half, r = tempo
        let a = max(0, j - h), b = j + h
        let outputPower = outputSums[b & outputMask].minus(outputSums[a & outputMask]) / Double(b - a)
        // the input times the output window maps to
        let ia = floorToInt(Double(a) * r)
        let ib = min(max(ia, floorToInt(Double(b) * r)), inputRecorded)
        let inputPower = ib > ia ? inputSums[ib & inputMask].minus(inputSums[ia & inputMask]) / Double(ib - ia) : 0
        let floor = Self.powerFloor
        var g = Libm.sqrt((max(0, inputPower) + floor) / (max(0, outputPower) + floor))
        g = min(max(g, Self.lowestGain), Self.highestGain)
        let dead = Self.deadZone
        if g > 1 + dead { g -= dead } else if g < 1 - dead { g += dead } else { return Self.unit }
        return Int64(Libm.rounded(g * Double(Self.unit)))
    }

    /// Writes the next `frameCount` frames of the held output, scaled by their gains (frame i
    /// is what `push` was given as frame i; `delayFrames` more must have been pushed).
    @_noLocks
    func pop(into left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, frameCount: Int) {
        let first = popped, hold = held, dMask = delayMask, stride = delayMask + 1, smoothed = triangle
        let one = smoothed.one, scale = 1 / Double(one)
        for k in 0..<frameCount {
            let slot = (first + k) & dMask
            let fixed = smoothed.gain(first + k)
            let g = Double(fixed) * scale
            // (the raw gains within the dead zone were 1, and 1 is `one` exactly)
            if fixed == one {
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
