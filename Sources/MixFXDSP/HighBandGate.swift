#if canImport(Glibc)
import Glibc
#endif

/// Keeps the vocoder's smear of a hit's highs out of the time before it, over other sound.
///
/// `TransientGate` compares the whole band: over a bed of bass and chords the wet envelope is
/// the bed's, and a hi-hat's or snare's highs smeared over the window before it (up to 30 ms,
/// 15 dB under the hit) pass. This gate makes the same comparison on the highs. Its detector is
/// the first difference d[n] = x[n] − x[n−1] (|D(f)|² = 4 sin²(πf/fs): 6 dB an octave, −30 dB at
/// 330 Hz against 11 kHz), on the input and on the wet signal; a shift moves a component from f
/// to r·f, where the detector weighs it about r² as much (at most 3.0 dB more up to Nyquist for
/// r ≥ 1/2, 3.7 dB for r ≥ 1/4, and never more for r > 1), so the input's envelope is scaled by r² (by 1
/// with formant preservation, which keeps the envelope where it was). Where the wet detector's
/// envelope is more than `TransientGate.excessPowerRatio` above that at the same instant, the
/// wet highs, h = wet − LP(wet) (`SplitLowPass`'s low-pass at `cornerHz`·r), are turned down to
/// `TransientGate.allowedAmplitudeRatio` above it: out = wet + (g − 1)·h = LP(wet) + g·h, so
/// fully closed it leaves the lows (their level; the low-pass turns their phase, by 0.14 rad at a
/// tenth of the corner). The gain opens and closes as the whole band's gate's does; on
/// steady material the envelopes agree, g stays exactly 1 and out = wet.
///
/// Envelopes go by groups of 8 frames (input frames by input time, output frames by output
/// index): within a group the largest power so far, across groups a release of ρ⁸ (ρ the whole
/// band gate's per-frame release), so whole groups are worked out in vectors and every value is
/// the same however the blocks fall. The input's are folded in from the shifter's input history
/// as the output reaches them (input times never go back), so only the last `groupsKept` are
/// kept. The low-pass runs only while the gain is off 1: it starts from rest `warmupSeconds`
/// back, on the wet frames the gate keeps for it, so the split is settled when the gain first
/// moves (and the same for any blocks). Made by `PitchShifter.prepare` (control side); `reset`
/// and `process` on the render side. One thread at a time.
final class HighBandGate {
    /// The split's corner before a shift (the wet signal's is this times r).
    static let cornerHz = 2000.0
    /// The wet signal's corner is kept at most this fraction of the sample rate.
    static let highestCornerRatio = 0.4
    /// How far back the split's low-pass starts: 3 ms, over 6 of its time constants
    /// 1/(2π·f·ζ) at the lowest corner (500 Hz, r = 1/4, ζ = 1/√2), so it has settled to 0.2 %.
    static let warmupSeconds = 0.003

    /// The input groups whose envelopes are kept (a power of two: the output's reads reach a few
    /// groups behind the newest folded in, R + 2 at a tempo R).
    static let groupsKept = 64

    private let sampleRate: Double
    private let lookaheadFrames: Int
    /// The input detector's envelope by group of 8 input frames, a ring of `groupsKept`, folded
    /// in from the input history up to `cursor` as the output reaches it.
    private let envelope: UnsafeMutablePointer<Float>
    /// The last `keptFrames` wet frames as they came, left then right, by output index: a ring
    /// (a power of two) longer than the warm-up by a group, so that a group written ahead of
    /// the frame being gated never overwrites the frames the warm-up reads.
    private let recent: UnsafeMutablePointer<Float>
    private let warmupFrames: Int, keptFrames: Int
    private let groupRelease: Float, openCoefficient: Float, closeCoefficient: Float
    private let excess: Float, allowed: Float, silence: Float, settled: Float
    // input: the next input time to fold in, the last frame (for the difference), the current
    // group's largest power and the last whole group's envelope
    private var cursor = 0, inputLast = SIMD2<Float>(), inputPeak: Float = 0, inputPrevious: Float = 0
    // output: the same, the gain, and the split (for the ratio `splitRatio`; NaN: not yet made)
    private var outputLast = SIMD2<Float>(), outputPeak: Float = 0, outputPrevious: Float = 0, gain: Float = 1
    private var split = SplitLowPass(cornerHz: 1000, sampleRate: 44_100), splitRatio = Double.nan
    private var splitState = SplitLowPassState(), splitRunning = false

    /// A gate at `sampleRate`.
    init(sampleRate: Double) {
        self.sampleRate = sampleRate
        lookaheadFrames = Int(TransientGate.lookaheadSeconds * sampleRate)
        envelope = .allocate(capacity: Self.groupsKept)
        warmupFrames = Int(Self.warmupSeconds * sampleRate)
        keptFrames = powerOfTwo(atLeast: warmupFrames + 8)
        recent = .allocate(capacity: 2 * keptFrames)
        groupRelease = Float(exp(-8 / (TransientGate.releaseSeconds * sampleRate)))
        openCoefficient = Float(1 - exp(-1 / (TransientGate.openSeconds * sampleRate)))
        closeCoefficient = Float(1 - exp(-1 / (TransientGate.closeSeconds * sampleRate)))
        excess = TransientGate.excessPowerRatio; allowed = TransientGate.allowedAmplitudeRatio
        silence = TransientGate.silencePower; settled = TransientGate.settledGain
        reset()
    }

    deinit { envelope.deallocate(); recent.deallocate() }

    @_noLocks
    func reset() {
        envelope.update(repeating: 0, count: Self.groupsKept)
        recent.update(repeating: 0, count: 2 * keptFrames)
        cursor = 0; inputLast = SIMD2(); inputPeak = 0; inputPrevious = 0
        outputLast = SIMD2(); outputPeak = 0; outputPrevious = 0; gain = 1
        splitRatio = .nan; splitState = SplitLowPassState(); splitRunning = false
    }

    /// Folds the input's frames from `cursor` up to `target` (from `input`, channel 1 if
    /// `stereo`) into the group envelopes; `target` at most what the history holds.
    @inline(__always)
    private func advanceInput(to target: Int, _ input: InputHistory.View, stereo: Bool) {
        var t = cursor
        guard t < target else { return }
        let env = envelope, mask = Self.groupsKept - 1, rho8 = groupRelease
        let samples = input.base, other = input.base + input.stride, ringMask = input.mask
        var last = inputLast, peak = inputPeak, previous = inputPrevious
        defer { cursor = t; inputLast = last; inputPeak = peak; inputPrevious = previous }
        let half: Float = stereo ? 0.5 : 1
        while t < target {
            let slot = t & ringMask
            if t & 7 == 0 && t + 8 <= target {   // a whole group in vectors (the ring's mirrored
                                                 // head keeps eight frames contiguous)
                let l = UnsafeRawPointer(samples + slot).loadUnaligned(as: SIMD8<Float>.self)
                var dl = l - shiftedUp(l, by: 1)
                dl[0] = l[0] - last[0]
                var p = dl * dl
                var lastRight: Float = 0
                if stereo {
                    let r = UnsafeRawPointer(other + slot).loadUnaligned(as: SIMD8<Float>.self)
                    var dr = r - shiftedUp(r, by: 1)
                    dr[0] = r[0] - last[1]
                    p = SIMD8(repeating: 0.5) * (p + dr * dr)
                    lastRight = r[7]
                }
                let half4 = pointwiseMaxLanes4(p.lowHalf, p.highHalf)
                let half2 = pointwiseMaxLanes2(half4.lowHalf, half4.highHalf)
                let value = max(max(half2[0], half2[1]), rho8 * previous)
                env[(t >> 3) & mask] = value
                previous = value; peak = value
                last = SIMD2(l[7], lastRight)
                t += 8
                continue
            }
            let x = SIMD2<Float>(samples[slot], stereo ? other[slot] : 0), d = x - last
            last = x
            let p = half * (d * d).sum()
            peak = t & 7 == 0 ? p : max(peak, p)
            let value = max(peak, rho8 * previous)
            env[(t >> 3) & mask] = value
            if t & 7 == 7 { previous = value }
            t += 1
        }
    }

    /// Gates the wet block's highs in place; its frame k is output index `firstOutput + k` and
    /// input time `firstTime + k` (before 0: nothing yet, not gated), or `times[k]` when given (a
    /// tempo's, never decreasing), read at the pitch ratio `ratios[k]` (`formants`: the envelope
    /// kept, r taken as 1). The input is read from `input`, which holds input times up to
    /// `inputEnd`.
    @_noLocks
    func process(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?, frameCount: Int, firstOutput: Int,
                 firstTime: Int, times: UnsafePointer<Int>?, ratios: UnsafePointer<Double>, formants: Bool,
                 input: InputHistory.View, inputEnd: Int) {
        let env = envelope, mask = Self.groupsKept - 1, rho8 = groupRelease, up = openCoefficient, down = closeCoefficient
        let ahead = lookaheadFrames, excess = excess, allowed = allowed, silence = silence, settled = settled
        let kept = recent, keptMask = keptFrames - 1, keptRight = keptFrames, warmup = warmupFrames
        let rate = sampleRate, highest = Self.highestCornerRatio * sampleRate, corner = Self.cornerHz
        var last = outputLast, peak = outputPeak, previous = outputPrevious, g0 = gain
        var split = split, splitRatio = splitRatio, state = splitState, running = splitRunning
        defer {
            outputLast = last; outputPeak = peak; outputPrevious = previous; gain = g0
            self.split = split; self.splitRatio = splitRatio; splitState = state; splitRunning = running
        }
        let half: Float = right != nil ? 0.5 : 1, stereo = right != nil
        @inline(__always) func inputTime(_ k: Int) -> Int {
            if let times { return times[k] }
            return firstTime &+ k
        }
        /// What the input's envelope allows the wet detector at frame k: r²·excess·e_in (∞ before
        /// the input starts: nothing is gated there).
        @inline(__always) func allowedPower(_ k: Int) -> Float {
            let t = inputTime(k)
            let r = formants ? 1 : Float(ratios[k])
            return t < 0 ? .infinity : excess * r * r * env[((t &+ ahead) >> 3) & mask]
        }
        /// At most the least of `allowedPower` over frames k … k + 7 (0 if any is before the
        /// input), for the vector test: where no frame tops it, none tops its own.
        @inline(__always) func leastAllowedPower(_ k: Int) -> Float {
            var eIn: Float
            if let times {
                eIn = .infinity
                for j in 0..<8 {
                    let t = times[k &+ j]
                    if t < 0 { return 0 }
                    eIn = min(eIn, env[((t &+ ahead) >> 3) & mask])
                }
            } else {
                let t = firstTime &+ k
                if t < 0 { return 0 }
                // (eight consecutive input times: at most two groups)
                eIn = min(env[((t &+ ahead) >> 3) & mask], env[((t &+ 7 &+ ahead) >> 3) & mask])
            }
            if formants { return excess * eIn }
            // (a ratio holds for a vocoder frame's whole segment, hundreds of frames: eight
            // frames hold at most two, so the least is at one end)
            let least = Float(min(ratios[k], ratios[k &+ 7]))
            return excess * least * least * eIn
        }
        var k = 0
        while k < frameCount {
            let a = firstOutput &+ k
            if a & 7 == 0 && k + 8 <= frameCount && g0 == 1 {
                // a whole group while the gain rests at 1 (nearly always): its envelope in
                // vectors; if no frame tops what the input allows, it passes as it is
                let l = UnsafeRawPointer(left + k).loadUnaligned(as: SIMD8<Float>.self)
                let dl = l - frameBefore(l, left, k, last[0])
                var p = dl * dl
                var r = SIMD8<Float>()
                if let right {
                    r = UnsafeRawPointer(right + k).loadUnaligned(as: SIMD8<Float>.self)
                    let dr = r - frameBefore(r, right, k, last[1])
                    p = SIMD8(repeating: 0.5) * (p + dr * dr)
                }
                let slot = a & keptMask
                UnsafeMutableRawPointer(kept + slot).storeBytes(of: l, as: SIMD8<Float>.self)
                UnsafeMutableRawPointer(kept + keptRight + slot).storeBytes(of: r, as: SIMD8<Float>.self)
                // the group's envelope at its last frame: its largest power or the last group's
                // released, whichever is larger (the envelope grows through a group, so every
                // frame is under the silence floor or what the input allows exactly when the last is)
                let m4 = pointwiseMaxLanes4(p.lowHalf, p.highHalf), m2 = pointwiseMaxLanes2(m4.lowHalf, m4.highHalf)
                let e = max(max(m2[0], m2[1]), rho8 * previous)
                // the input's envelope through the group holding the eighth frame's input time
                let lastTime = inputTime(k &+ 7)
                if lastTime >= 0 { advanceInput(to: min((((lastTime &+ ahead) >> 3) &+ 1) << 3, inputEnd), input, stereo: stereo) }
                if e <= max(silence, leastAllowedPower(k)) {
                    previous = e; peak = e
                    last = SIMD2(l[7], r[7])
                    k += 8
                    continue
                }
                // (otherwise frame by frame below, from the same state: the group's kept frames
                // are rewritten with the same values)
            }
            // one frame
            let x = SIMD2<Float>(left[k], right?[k] ?? 0), d = x - last
            last = x
            kept[a & keptMask] = x[0]; kept[keptRight + (a & keptMask)] = x[1]
            let p = half * (d * d).sum()
            peak = a & 7 == 0 ? p : max(peak, p)
            let e = max(peak, rho8 * previous)
            if a & 7 == 7 { previous = e }
            let time = inputTime(k)
            if time >= 0 { advanceInput(to: min((((time &+ ahead) >> 3) &+ 1) << 3, inputEnd), input, stereo: stereo) }
            let limit = allowedPower(k)
            var g: Float = 1
            if e > silence && limit < e { g = allowed * Libm.squareRoot(limit / (excess * e)) }
            if g != 1 || g0 != 1 {
                g0 += (g - g0) * (g > g0 ? up : down)
                if g == 1 && g0 > settled { g0 = 1 }
            }
            if g0 != 1 {
                let rk = formants ? 1 : ratios[k]
                if rk != splitRatio {   // (a new segment's ratio: at most once a vocoder frame)
                    splitRatio = rk
                    split = SplitLowPass(cornerHz: min(corner * rk, highest), sampleRate: rate)
                }
                if !running {   // the low-pass from rest over the kept frames before this one
                    state = SplitLowPassState()
                    for j in (a &- warmup)..<a {
                        let v = SIMD2<Float>(kept[j & keptMask], kept[keptRight + (j & keptMask)])
                        state.shift(state.step(v, split))
                    }
                    running = true
                }
                let w = state.step(x, split)
                let highs = x - split.lowPass(w, state)
                state.shift(w)
                left[k] += (g0 - 1) * highs[0]
                right?[k] += (g0 - 1) * highs[1]
            } else {
                running = false
            }
            k += 1
        }
    }
}

/// The RBJ cookbook's second-order Butterworth low-pass (Q = 1/√2) at one corner, in direct
/// form II for two channels in the lanes of a vector:
///
///     w[n] = x[n] − a1·w[n−1] − a2·w[n−2],   y[n] = b·(w[n] + 2w[n−1] + w[n−2]),
///
/// c = cos(2π·f/fs), α = sin(2π·f/fs)/(2Q), a0 = 1 + α: a1 = −2c/a0, a2 = (1 − α)/a0,
/// b = (1 − c)/(2·a0).
struct SplitLowPass {
    let a1: SIMD2<Float>, a2: SIMD2<Float>, b: SIMD2<Float>

    @inline(__always)
    init(cornerHz: Double, sampleRate: Double) {
        let w = 2 * Double.pi * cornerHz / sampleRate
        let c = Libm.cos(w), alpha = Libm.sin(w) * 0.7071067811865476, a0 = 1 + alpha   // 1/(2Q) = 1/√2
        a1 = SIMD2(repeating: Float(-2 * c / a0)); a2 = SIMD2(repeating: Float((1 - alpha) / a0))
        b = SIMD2(repeating: Float((1 - c) / (2 * a0)))
    }

    @inline(__always)
    func lowPass(_ w: SIMD2<Float>, _ s: SplitLowPassState) -> SIMD2<Float> { b * (w + 2 * s.w1 + s.w2) }
}

/// A `SplitLowPass`'s two past values of w, per channel.
struct SplitLowPassState {
    var w1 = SIMD2<Float>(), w2 = SIMD2<Float>()

    /// w[n] for the input x[n].
    @inline(__always)
    func step(_ x: SIMD2<Float>, _ c: SplitLowPass) -> SIMD2<Float> { x - c.a1 * w1 - c.a2 * w2 }

    @inline(__always)
    mutating func shift(_ w: SIMD2<Float>) { w2 = w1; w1 = w }
}

@inline(__always)
private func pointwiseMaxLanes4(_ a: SIMD4<Float>, _ b: SIMD4<Float>) -> SIMD4<Float> { a.replacing(with: b, where: b .> a) }

@inline(__always)
private func pointwiseMaxLanes2(_ a: SIMD2<Float>, _ b: SIMD2<Float>) -> SIMD2<Float> { a.replacing(with: b, where: b .> a) }

/// The frames before frames k … k + 7 of `channel` (`v` holds those eight): the block's own from
/// the second frame on (they are as they came while the gain rests at 1), the first frame's
/// `kept` from the last block.
@inline(__always)
private func frameBefore(_ v: SIMD8<Float>, _ channel: UnsafeMutablePointer<Float>, _ k: Int, _ kept: Float) -> SIMD8<Float> {
    if k > 0 { return UnsafeRawPointer(channel + k - 1).loadUnaligned(as: SIMD8<Float>.self) }
    var b = shiftedUp(v, by: 1)
    b[0] = kept
    return b
}
