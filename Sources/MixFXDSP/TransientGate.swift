#if canImport(Glibc)
import Glibc
#endif

/// Keeps the vocoder's smear of a hit out of the silence before it (pre-echo).
///
/// The vocoder spreads a hit over its whole window, so energy appears before the hit. Where the
/// wet signal's power envelope is more than `excessPowerRatio` (6.02 dB) above what the input
/// held at that instant (the input's envelope `lookaheadSeconds` ahead: instant attack,
/// `releaseSeconds` release), the wet signal is turned down to 6.02 dB above it; the gain opens
/// in `openSeconds` and closes in `closeSeconds` (one-pole time constants: closing within a
/// millisecond, so the smear's rise does not get through while the gain comes down). On steady
/// material the two envelopes agree and the gain stays exactly 1.
///
/// The release keeps the input's envelope from dipping between the peaks of a low tone, so it
/// also runs on through silence: 250 ms after a sound stops it still allows −93 dBFS where a hit's
/// smear, 50 ms before the hit, is −87 to −92 dBFS. So where the input has been quiet (every
/// frame's power under `quietPower`, −100 dBFS) for `quietSeconds` up to the look-ahead, the gate
/// takes the input's envelope as at most `quietPower` instead: the wet signal there is the
/// vocoder's smear of sound before or after, and is let through at most 6 dB above it. The
/// input's quiet runs (from their `quietSeconds`-th frame on) are recorded with its envelope.
///
/// It also keeps the input's envelope by input time, which the transient splice reads to find
/// onsets. Made by `PitchShifter.prepare` (control side); `reset`, `recordInput` and `process` on
/// the render side. One thread at a time.
final class TransientGate {
    static let lookaheadSeconds = 0.0002
    static let releaseSeconds = 0.02
    static let openSeconds = 0.00025
    static let closeSeconds = 0.001
    /// The wet power above the input's that closes the gate: 4 (6.02 dB).
    static let excessPowerRatio: Float = 4
    /// The wet amplitude the gate lets through, over the input's: 2 (6.02 dB).
    static let allowedAmplitudeRatio: Float = 2
    /// Below this wet power (−120 dB) nothing is gated.
    static let silencePower: Float = 1e-12
    /// A gain this close to 1 on steady material is 1 again.
    static let settledGain: Float = 0.99999
    /// An input frame whose power is under this (−100 dBFS) is quiet: a dithered 16-bit file's
    /// floor is not (its samples that are not 0 are at least 1 LSB, −90.3 dBFS).
    static let quietPower: Float = 1e-10
    /// How long the input must have been quiet for its envelope to fall to `quietPower`: as
    /// long as the release. A sound that is not all under `quietPower` is never quiet for that
    /// long unless its power stays under it for 20 ms on end (a tone's power peaks every half
    /// period: under 25 Hz, only if its peaks are within a few dB of `quietPower`).
    static let quietSeconds = 0.02
    /// How fast the input's envelope falls to `quietPower` once the input counts as quiet (a
    /// release of its power, time constant): there the gate cuts what the vocoder still holds
    /// of a sound that stopped, up to −30 dBFS 20 ms after a low note, and falling at once to
    /// `quietPower` the gate closed in its `closeSeconds` and clicked (−78 dBFS above 1 kHz
    /// after a 55 Hz tone at −6 dBFS lowered by 1200 cents; the tail falls about 2.5 dB a
    /// millisecond on its own). Before a hit from silence the input has been quiet far longer.
    static let quietReleaseSeconds = 0.002

    let lookaheadFrames: Int
    /// The input's power envelope by input time, a ring of `capacity` (a power of two).
    let envelope: UnsafeMutablePointer<Float>
    let capacity: Int
    let mask: Int
    private let release: Float, openCoefficient: Float, closeCoefficient: Float
    /// −1/(`quietReleaseSeconds` · rate): the exponent per frame of the quiet release.
    private let quietReleaseRate: Float
    /// The input's envelope as it arrives (in groups of 8 input frames: the same values however
    /// the input was pulled).
    private var inputEnvelope: PeakEnvelope
    /// The wet envelope and the gain (NaN after `reset`: the first frame gated takes its gain at
    /// once, where moving from 1 let the first millisecond through: a hit 5–25 ms into a file
    /// had −27 dB of its smear at the file's start).
    private var outputLevel: Float = 0, gain: Float = .nan
    /// The input's quiet runs (`QuietRuns`) as recorded, and this gate's read position in the
    /// runs it gates against (its own or another gate's).
    private var quietRuns: QuietRuns
    private var quietRead = 0

    /// A gate at `sampleRate` whose envelope ring reaches `reachFrames` frames back from the
    /// newest input (plus its own look-ahead); the times other than the shifter's own for
    /// `TonalityLimit`'s gates.
    init(sampleRate: Double, reachFrames: Int, lookaheadSeconds: Double = TransientGate.lookaheadSeconds,
         openSeconds: Double = TransientGate.openSeconds, closeSeconds: Double = TransientGate.closeSeconds) {
        lookaheadFrames = Int(lookaheadSeconds * sampleRate)
        capacity = powerOfTwo(atLeast: reachFrames + lookaheadFrames + 8)
        mask = capacity - 1
        envelope = .allocate(capacity: capacity)
        release = Float(exp(-1 / (Self.releaseSeconds * sampleRate)))
        inputEnvelope = PeakEnvelope(release: release)
        openCoefficient = Float(1 - exp(-1 / (openSeconds * sampleRate)))
        closeCoefficient = Float(1 - exp(-1 / (closeSeconds * sampleRate)))
        quietReleaseRate = Float(-1 / (Self.quietReleaseSeconds * sampleRate))
        quietRuns = QuietRuns(quietFrames: Int(Self.quietSeconds * sampleRate), spanFrames: capacity)
        reset()
    }

    deinit { envelope.deallocate(); quietRuns.deallocate() }

    /// The input's envelope and quiet runs as values, for the splice and another gate (see `Owned`).
    struct View {
        let envelope: UnsafeMutablePointer<Float>, mask: Int
        let quiet: QuietRuns.View
    }
    var view: View { View(envelope: envelope, mask: mask, quiet: quietRuns.view) }

    @_noLocks
    func reset() {
        envelope.update(repeating: 0, count: capacity)
        inputEnvelope.reset(); outputLevel = 0; gain = .nan
        quietRuns.reset(); quietRead = 0
    }

    /// Follows the input (`right` nil for mono) as input times `time`, `time + 1`, ..., each
    /// call's `time` where the last one ended (0 after `reset`).
    @_noLocks
    func recordInput(left: UnsafePointer<Float>, right: UnsafePointer<Float>?, frameCount: Int, at time: Int) {
        var done = 0
        while done < frameCount {   // in at most two runs of the ring (its end a multiple of 8)
            let slot = (time + done) & mask
            let n = min(frameCount - done, capacity - slot)
            inputEnvelope.follow(left + done, right.map { $0 + done }, count: n, into: envelope + slot)
            done += n
        }
        quietRuns.record(left: left, right: right, frameCount: frameCount, at: time)
    }

    /// Gates the wet block in place; its frame k is input time `firstTime + k` (before 0:
    /// nothing yet, left alone), or `times[k]` when given (a tempo's, never before 0). With
    /// `envelopeOf`, against the input's envelope another gate recorded (the same input and
    /// times; this one then records none).
    @_noLocks
    func process(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?, frameCount: Int, firstTime: Int,
                 times: UnsafePointer<Int>? = nil, envelopeOf source: View? = nil) {
        let from: View
        if let source { from = source } else { from = view }
        let env = from.envelope, mask = from.mask, size = from.mask + 1
        let rho = release, up = openCoefficient, down = closeCoefficient
        let ahead = lookaheadFrames
        let excess = Self.excessPowerRatio, allowed = Self.allowedAmplitudeRatio
        let silence = Self.silencePower, settled = Self.settledGain, quietPower = Self.quietPower
        let runs = from.quiet, quietRate = quietReleaseRate
        /// The input's envelope at u, `released` there, where the input has been quiet since
        /// `quietFrom` (≤ u): released by `quietReleaseSeconds` from there down to `quietPower`.
        @inline(__always) func quietEnvelope(_ released: Float, _ u: Int, _ quietFrom: Int) -> Float {
            let fall = Libm.expf(Float(min(u &- quietFrom, 1 << 20)) * quietRate)
            return min(released, max(quietPower, released * fall))
        }
        var envOut = outputLevel, g0 = gain, runRead = quietRead
        defer { outputLevel = envOut; gain = g0; quietRead = runRead }
        @inline(__always) func gate(_ k: Int, inputTime: Int, _ envOut: inout Float, _ g0: inout Float, _ runRead: inout Int) {
            let wetL = left[k], wetR = right?[k] ?? wetL
            let pOut = right != nil ? 0.5 * (wetL * wetL + wetR * wetR) : wetL * wetL
            let decayed = envOut * rho
            envOut = pOut > decayed ? pOut : decayed
            let u = inputTime + ahead
            let run = runs.run(at: u, read: &runRead)
            let released = env[u & mask]
            let eIn = u >= run.from ? quietEnvelope(released, u, run.from) : released
            var g: Float = 1
            if envOut > silence && excess * eIn < envOut { g = allowed * Libm.squareRoot(eIn / envOut) }
            if g0.isNaN {   // the first frame since `reset`: nothing before it to move from
                g0 = g
                if g0 != 1 {
                    left[k] = wetL * g0
                    right?[k] = wetR * g0
                }
            } else if g != 1 || g0 != 1 {   // (steady, the gain stays 1 without a dependent chain)
                g0 += (g - g0) * (g > g0 ? up : down)
                if g == 1 && g0 > settled { g0 = 1 }
                if g0 != 1 {
                    left[k] = wetL * g0
                    right?[k] = wetR * g0
                }
            }
        }
        // Eight frames at a time while the gain rests at 1 (steady material: nearly always). A
        // frame closes the gate where the output's envelope e tops both the silence floor and
        // `excess` times the input's. e is bounded from above in vector operations: the doubling
        // scan of `PeakEnvelope` (the same maximum of ρ-decayed powers, its products rounded
        // differently: each way at most 9 roundings from the exact value, so the two differ by
        // less than (1 + 2⁻²⁴)¹⁸, 1.1e-6) times 1 + 1e-5. Where the bound closes nothing,
        // e cannot either and the frames pass as they are; only the chunk's last e, which the
        // next frames start from, runs through the recursion of `gate`, with its roundings.
        // Otherwise (or with a NaN, which fails every comparison) the eight go through `gate`
        // itself. The same values as frame by frame.
        let half = SIMD8<Float>(repeating: 0.5)
        let rho1 = SIMD8<Float>(repeating: rho), rho2 = rho1 * rho1, rho4 = rho2 * rho2
        var powers = SIMD8<Float>(), q: Float = 1
        for j in 0..<8 { q *= rho; powers[j] = q }   // ρ^(lane + 1)
        let margin = SIMD8<Float>(repeating: 1.00001), floor = SIMD8<Float>(repeating: silence)
        // (with `times`, the eight envelope values gathered from their slots)
        @inline(__always) func inputTime(_ k: Int) -> Int {
            if let times { return times[k] }
            return firstTime &+ k
        }
        var k = times != nil ? 0 : min(frameCount, max(0, -firstTime))
        while k + 8 <= frameCount {
            let slot = (firstTime &+ k &+ ahead) & mask
            var envIn = SIMD8<Float>(), readable = g0 == 1
            if readable {
                if let times {
                    for j in 0..<8 { envIn[j] = env[(times[k &+ j] &+ ahead) & mask] }
                } else if slot + 8 <= size {
                    envIn = UnsafeRawPointer(env + slot).loadUnaligned(as: SIMD8<Float>.self)
                } else {
                    readable = false
                }
            }
            if readable {
                // where the input has been quiet long enough, at most `quietPower`
                let firstU = inputTime(k) &+ ahead, lastU = inputTime(k &+ 7) &+ ahead
                let run = runs.run(at: firstU, read: &runRead)
                if run.from <= lastU {
                    for j in 0..<8 {
                        let uj = inputTime(k &+ j) &+ ahead
                        if uj >= run.from && uj < run.end { envIn[j] = quietEnvelope(envIn[j], uj, run.from) }
                    }
                }
                let l = UnsafeRawPointer(left + k).loadUnaligned(as: SIMD8<Float>.self)
                var p = l * l
                if let right {
                    let r = UnsafeRawPointer(right + k).loadUnaligned(as: SIMD8<Float>.self)
                    p = half * (p + r * r)
                }
                var bound = pointwiseMaxLanes(p, shiftedUp(p, by: 1) * rho1)
                bound = pointwiseMaxLanes(bound, shiftedUp(bound, by: 2) * rho2)
                bound = pointwiseMaxLanes(bound, shiftedUp(bound, by: 4) * rho4)
                bound = pointwiseMaxLanes(bound, SIMD8<Float>(repeating: envOut) * powers) * margin
                let allowedInput = envIn * excess
                if all((bound .<= floor) .| (bound .<= allowedInput)) {
                    var e = envOut
                    for j in 0..<8 {
                        let decayed = e * rho
                        e = p[j] > decayed ? p[j] : decayed
                    }
                    envOut = e
                    k += 8
                    continue
                }
            }
            for j in k..<(k + 8) { gate(j, inputTime: inputTime(j), &envOut, &g0, &runRead) }
            k += 8
        }
        while k < frameCount { gate(k, inputTime: inputTime(k), &envOut, &g0, &runRead); k += 1 }
    }
}
