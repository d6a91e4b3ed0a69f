/// Keeps a pitch-shifted output at the level of the input it came from: the offline shifter at a
/// fixed pitch and tempo 1, where output frame n holds input time n − L (L the shifter's
/// latency before this part's own delay).
///
/// The vocoder's frames add with less than full coherence on material that is not a steady tone,
/// so noise comes out quieter: lowering the pitch by more (its analysis frames lie further apart
/// than they overlap in the output: white noise −1.2 dB at −400 cents), raising it by less (the
/// recordings 0.1–0.2 dB; white noise at +400 cents 0.5 dB under the density a raised white noise
/// has, 1/r of the input's, on top of the band above the edge it must lose). This part
/// scales the output by
///
///     g(n) = √(P_in / P_out),
///
/// worked out at the boundaries between blocks of B = `blockFrames` output frames and linear
/// between them. At boundary jB: P_out is the output's mean power (x², the channels' mean) over
/// the h blocks either side (2h in all, a window of `windowSeconds`), P_in the input's over the same frames'
/// input times (n − L; before time 0, silence), each input block's power times ρ, the share of the
/// input's power below the band edge where the vocoder cuts when raising (`PhaseVocoder`: what
/// lies above would alias). So white noise raised keeps losing that band (ρ = 0.73 at +400
/// cents), and the recordings, which hold almost nothing there, keep their level. ρ comes from
/// each analysis frame's spectrum (`recordBand`), linear in input time between the frames'
/// centres; lowering, it is 1. The raw g is kept within `lowestGain`…`highestGain`, smoothed by
/// a triangle of half-width S blocks (`smoothingSeconds`, `GainTriangle`: exact, and the same
/// whatever the caller's blocks), then moved
/// toward 1 by `deadZone` (within it, exactly 1: a steady tone, whose level the vocoder keeps,
/// passes to the bit).
///
/// Why x² over 40 ms: the output's frequencies are the input's times r, so a detector whose delay
/// depends on frequency (the tempo's analytic pair, `LevelMatch`) is not at the same time on both
/// sides (it moved a tone burst lowered an octave by 13 samples), and a harmonic tone's beats at
/// its fundamental differ too (windows of 10 ms left a 55 Hz tone's partials 0.5 dB off at −500
/// cents). x² ripples at twice a tone's frequency; the smoothing takes that out before the dead
/// zone. Why blocks: the sums, the square root and the smoothing once per block instead of once
/// per frame (a per-frame match cost 18 % of a lowered render).
///
/// The window and the smoothing look ahead: `push` takes each block the shifter made, `pop` gives
/// back the block `delayFrames` D = (S + h + 1)·B frames before it, D frames of silence first;
/// the shifter adds D to its latency. Near a file's start and end the windows reach past the
/// signal, and the vocoder's onset and tail, which differ from the input's edges, take a gain too
/// (a steady tone up to +1 dB in its last 30 ms at −1200 cents); a steady tone whose output is
/// near 20 Hz ripples x² by more than the smoothing takes out (its gain moves by up to 0.05 dB).
///
/// Made by `PitchShifter.prepare` (control side); `reset`, `recordInput`, `recordBand`, `push`,
/// `pop` on the render side (no allocation). One thread at a time.
final class PitchLevelMatch {
    /// Frames a block (a power of two).
    static let blockFrames = 32
    static let windowSeconds = 0.040, smoothingSeconds = 0.040
    // (the dead zone, the gain's range and the power floor are `LevelMatch`'s)

    /// How far `pop` lags `push`, frames.
    let delayFrames: Int
    private let shift = 5, block = PitchLevelMatch.blockFrames
    /// h and S, blocks.
    private let half: Int, smoothing: Int
    /// L: output frame n holds input time n − L.
    private let latency: Int
    private let deadZone = LevelMatch.deadZone, floor = LevelMatch.powerFloor
    private let lowest = LevelMatch.lowestGain, highest = LevelMatch.highestGain
    // each block's input power (by output block: input times kB − L … kB + B − L) and the
    // prefix sums of ρ times it and of the output's, C[k] = Σ_{i<k}, rings by block
    private let inputBlocks: UnsafeMutablePointer<Double>
    private let inputSums: UnsafeMutablePointer<CompensatedSum>, outputSums: UnsafeMutablePointer<CompensatedSum>
    private let blockMask: Int
    // the gains' smoothing, by boundary
    private var triangle: GainTriangle
    // the analysis frames' centres and ρ, a ring
    private let bandTimes: UnsafeMutablePointer<Double>, bandRatios: UnsafeMutablePointer<Double>, bandMask: Int
    // the output held back, left then right, a ring of `heldMask + 1` frames each
    private let held: UnsafeMutablePointer<Float>, heldMask: Int
    // the input's block being filled, left then right
    private let inputStage: UnsafeMutablePointer<Float>
    private var inputBlock = 0
    private var committed = 0, inputTotal = CompensatedSum()
    private var pushed = 0, outputTotal = CompensatedSum(), popped = 0
    private var bandsRecorded = 0, bandCursor = 0

    /// A match for a shifter of latency `latencyFrames` at `sampleRate`, given blocks of at most
    /// `maximumFrameCount`; the vocoder's analysis frames at least `analysisHopFrames` apart (the
    /// ring of their band shares holds what one block's input runs).
    init(sampleRate: Double, latencyFrames: Int, maximumFrameCount: Int, analysisHopFrames: Int) {
        let b = Self.blockFrames
        (half, smoothing) = Self.widths(sampleRate: sampleRate)
        delayFrames = (smoothing + half + 1) * b
        latency = latencyFrames
        let most = max(1, maximumFrameCount)
        // the input runs L ahead of the output, which runs D ahead of what is handed out; a
        // boundary's window reaches h blocks back
        blockMask = powerOfTwo(atLeast: (latencyFrames + most) / b + 2 * half + 8) - 1
        triangle = GainTriangle(smoothing: smoothing, capacity: (delayFrames + most) / b + 2 * smoothing + 8)
        bandMask = powerOfTwo(atLeast: (latencyFrames + most + 2 * half * b) / max(1, analysisHopFrames) + 16) - 1
        heldMask = powerOfTwo(atLeast: delayFrames + most + 1) - 1
        inputBlocks = .allocate(capacity: blockMask + 1)
        inputSums = .allocate(capacity: blockMask + 1)
        outputSums = .allocate(capacity: blockMask + 1)
        bandTimes = .allocate(capacity: bandMask + 1)
        bandRatios = .allocate(capacity: bandMask + 1)
        held = .allocate(capacity: 2 * (heldMask + 1))
        inputStage = .allocate(capacity: 2 * b)
        reset()
    }

    deinit {
        inputBlocks.deallocate(); inputSums.deallocate(); outputSums.deallocate()
        triangle.deallocate()
        bandTimes.deallocate(); bandRatios.deallocate(); held.deallocate(); inputStage.deallocate()
    }

    /// h and S at `sampleRate`, blocks (S even).
    private static func widths(sampleRate: Double) -> (half: Int, smoothing: Int) {
        let blocks = windowSeconds * sampleRate / Double(blockFrames)
        return (max(1, Int((blocks / 2).rounded())), max(2, 2 * Int((smoothingSeconds * sampleRate / Double(blockFrames) / 2).rounded())))
    }

    /// D at `sampleRate` (what an instance's `delayFrames` will be).
    static func delayFrames(sampleRate: Double) -> Int {
        let (h, s) = widths(sampleRate: sampleRate)
        return (s + h + 1) * blockFrames
    }

    /// Nothing recorded; every gain before boundary 0 counts as 1.
    @_noLocks
    func reset() {
        inputBlocks.update(repeating: 0, count: blockMask + 1)
        inputSums[0] = CompensatedSum(); outputSums[0] = CompensatedSum()
        triangle.reset()
        held.update(repeating: 0, count: 2 * (heldMask + 1))
        inputStage.update(repeating: 0, count: 2 * block)
        inputBlock = latency >> shift
        committed = 0; inputTotal = CompensatedSum()
        pushed = 0; outputTotal = CompensatedSum(); popped = -delayFrames
        bandsRecorded = 0; bandCursor = 0
    }

    /// Follows the input's next `frameCount` frames, input times `time` on (each call's `time`
    /// where the last one ended).
    @_noLocks
    func recordInput(left: UnsafePointer<Float>, right: UnsafePointer<Float>?, frameCount: Int, at time: Int) {
        var k = 0, u = time + latency
        let stage = inputStage, b = block
        while k < frameCount {
            // the frames up to the end of output block u / B, staged
            let offset = u & (b - 1), n = min(frameCount - k, b - offset)
            vcopy(left + k, into: stage + offset, n)
            if let right { vcopy(right + k, into: stage + b + offset, n) }
            u += n; k += n
            if u & (b - 1) == 0 {
                inputBlocks[inputBlock & blockMask] = blockPower(stage, right == nil ? nil : stage + b)
                inputBlock += 1
            }
        }
    }

    /// Analysis frame centred on input time `time` (after the last one recorded) kept the share
    /// `ratio` of its power below the band edge.
    @_noLocks
    func recordBand(_ ratio: Double, at time: Double) {
        let recorded = bandsRecorded, cursor = bandCursor, mask = bandMask
        precondition(recorded - cursor <= mask, "PitchLevelMatch frame ring overflow")
        bandTimes[bandsRecorded & bandMask] = time
        bandRatios[bandsRecorded & bandMask] = ratio
        bandsRecorded += 1
    }

    /// ρ at input time `t`: linear between the frames either side, the nearest frame's beyond
    /// them, 1 before any frame.
    @inline(__always)
    private func band(at t: Double) -> Double {
        let recorded = bandsRecorded, times = bandTimes, ratios = bandRatios, mask = bandMask
        guard recorded > 0 else { return 1 }
        var c = bandCursor
        while c + 1 < recorded && times[(c + 1) & mask] <= t { c += 1 }
        bandCursor = c
        let t0 = times[c & mask], r0 = ratios[c & mask]
        guard c + 1 < recorded && t > t0 else { return r0 }
        let t1 = times[(c + 1) & mask], r1 = ratios[(c + 1) & mask]
        return r0 + (r1 - r0) * (t - t0) / (t1 - t0)
    }

    /// Takes the shifter's next `frameCount` output frames (after the ones pushed before) and
    /// works out the gains they complete.
    @_noLocks
    func push(left: UnsafePointer<Float>, right: UnsafePointer<Float>?, frameCount: Int) {
        let stride = heldMask + 1
        var k = 0
        while k < frameCount {
            // to the end of the block (the ring holds whole blocks: a block never wraps)
            let n = min(frameCount - k, block - (pushed & (block - 1)))
            let slot = pushed & heldMask
            vcopy(left + k, into: held + slot, n)
            if let right { vcopy(right + k, into: held + stride + slot, n) }
            pushed += n; k += n
            if pushed & (block - 1) == 0 {
                let start = (pushed - block) & heldMask
                completeBlock((pushed >> shift) - 1, power: blockPower(held + start, right == nil ? nil : held + stride + start))
            }
        }
    }

    /// Output block `b` is complete: its power goes into the sums, and boundary b − h + 1's raw
    /// gain (its window's last block is b) into the smoothing.
    @inline(__always)
    private func completeBlock(_ b: Int, power: Double) {
        outputTotal.add(power)
        outputSums[(b + 1) & blockMask] = outputTotal
        let j = b - half + 1
        guard j >= 0 else { return }
        // the input blocks up to b, each times ρ at its centre
        let inputBlocksDone = inputBlock
        precondition(inputBlocksDone > b, "PitchLevelMatch: the input is behind the output")
        while committed <= b {
            let centre = Double((committed << shift) + block / 2 - latency)
            inputTotal.add(inputBlocks[committed & blockMask] * band(at: centre))
            inputSums[(committed + 1) & blockMask] = inputTotal
            committed += 1
        }
        let from = max(0, j - half), to = b + 1, frames = Double((to - from) << shift)
        let outputMean = outputSums[to & blockMask].minus(outputSums[from & blockMask]) / frames
        let inputMean = inputSums[to & blockMask].minus(inputSums[from & blockMask]) / frames
        var g = Libm.sqrt((max(0, inputMean) + floor) / (max(0, outputMean) + floor))
        g = min(max(g, lowest), highest)
        triangle.add(j, Int64(Libm.rounded(g * Double(GainTriangle.unit))))
    }

    /// The smoothed gain at boundary `j`, the dead zone applied.
    @inline(__always)
    private func gain(at j: Int) -> Double {
        let g = Double(triangle.gain(j)) / Double(triangle.one)
        return g > 1 + deadZone ? g - deadZone : g < 1 - deadZone ? g + deadZone : 1
    }

    /// Writes the next `frameCount` frames of the held output, scaled by their gains (frame n is
    /// what `push` was given as frame n; D frames of silence first, and `delayFrames` more than
    /// these must have been pushed).
    @_noLocks
    func pop(into left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, frameCount: Int) {
        let first = popped, delay = delayFrames, made = pushed
        precondition(first + frameCount + delay <= made, "PitchLevelMatch: popped before pushed")
        let stride = heldMask + 1
        var k = 0
        while k < frameCount {
            let n = popped + k
            if n < 0 {
                // (before frame 0)
                let m = min(frameCount - k, -n)
                (left + k).update(repeating: 0, count: m)
                right.map { ($0 + k).update(repeating: 0, count: m) }
                k += m
                continue
            }
            let j = n >> shift, m = min(frameCount - k, block - (n & (block - 1)))
            let g0 = gain(at: j), g1 = gain(at: j + 1)
            let slot = n & heldMask
            if g0 == 1 && g1 == 1 {
                vcopy(held + slot, into: left + k, m)
                if let right { vcopy(held + stride + slot, into: right + k, m) }
            } else {
                let offset = n & (block - 1), (a, b) = (Float(g0), Float(g1))
                rampedGain(held + slot, into: left + k, m, offset: offset, from: a, to: b)
                if let right { rampedGain(held + stride + slot, into: right + k, m, offset: offset, from: a, to: b) }
            }
            k += m
        }
        popped += frameCount
    }
}

/// Σ of the power of the `PitchLevelMatch.blockFrames` (32) frames from `left` (and `right`):
/// x², the channels' mean; 0 for a block holding a NaN or an infinity. In eight lanes, always in
/// the same order: a block's power does not depend on how its frames arrived.
@inline(__always)
private func blockPower(_ left: UnsafePointer<Float>, _ right: UnsafePointer<Float>?) -> Double {
    var sum = SIMD8<Float>()
    let l = UnsafeRawPointer(left)
    if let right {
        let r = UnsafeRawPointer(right)
        for i in stride(from: 0, to: 128, by: 32) {
            let a = l.loadUnaligned(fromByteOffset: i, as: SIMD8<Float>.self)
            let b = r.loadUnaligned(fromByteOffset: i, as: SIMD8<Float>.self)
            sum += a * a + b * b
        }
        sum *= 0.5
    } else {
        for i in stride(from: 0, to: 128, by: 32) {
            let a = l.loadUnaligned(fromByteOffset: i, as: SIMD8<Float>.self)
            sum += a * a
        }
    }
    let total = Double(sum.sum())
    return total.isFinite ? total : 0
}

/// out[i] = x[i]·(g0 + (g1 − g0)·(offset + i)/32), `count` frames from `offset` within a block
/// of 32: the gain linear across the block, in single precision (the same wherever the block
/// is cut).
@inline(__always)
private func rampedGain(_ x: UnsafePointer<Float>, into out: UnsafeMutablePointer<Float>, _ count: Int, offset: Int,
                        from g0: Float, to g1: Float) {
    let step = (g1 - g0) / 32
    for i in 0..<count { out[i] = x[i] * (g0 + step * Float(offset + i)) }
}
