import Foundation
import Testing
@testable import MixFXDSP
import TestSupport

@Suite struct PeakEnvelopeTests {
    /// The envelope of `l` (and `r`, stereo) fed in runs of the lengths `runs` (repeated).
    static func follow(_ l: [Float], _ r: [Float]?, runs: [Int], release rho: Float = 0.999) -> [Float] {
        var envelope = PeakEnvelope(release: rho)
        var e = [Float](repeating: 0, count: l.count)
        var done = 0, k = 0
        let right = r ?? l
        l.withUnsafeBufferPointer { lp in
            right.withUnsafeBufferPointer { rp in
                e.withUnsafeMutableBufferPointer { ep in
                    while done < l.count {
                        let n = min(runs[k % runs.count], l.count - done)
                        envelope.follow(lp.baseAddress! + done, r != nil ? rp.baseAddress! + done : nil, count: n,
                                        into: ep.baseAddress! + done)
                        done += n
                        k += 1
                    }
                }
            }
        }
        return e
    }

    /// The eight-lane peak envelope equals the sample-by-sample recursion e = max(p, ρ·e) to
    /// float rounding, for mono and stereo, odd lengths, bursts and silence, across calls.
    @Test(arguments: [1, 2])
    func peakEnvelopeMatchesTheRecursion(channels: Int) {
        let n = 1001
        var l = Signals.noise(frames: n, amplitude: 0.5, seed: 60), r = Signals.noise(frames: n, amplitude: 0.5, seed: 61)
        for i in 300..<700 { l[i] *= 0.001; r[i] *= 0.001 }   // a quiet stretch: the release shows
        let rho: Float = 0.999
        var expected = [Float](repeating: 0, count: n), e: Float = 0
        for i in 0..<n {
            let p = channels > 1 ? 0.5 * (l[i] * l[i] + r[i] * r[i]) : l[i] * l[i]
            e = max(p, e * rho)
            expected[i] = e
        }
        // (blocks of odd lengths, continued across calls)
        let got = Self.follow(l, channels > 1 ? r : nil, runs: [13, 400, 1, 587], release: rho)
        let worst = zip(got, expected).map { abs($0 - $1) / max($1, 1e-12) }.max()!
        #expect(worst < 1e-5, "worst relative difference \(worst)")
    }

    /// The same values however the signal is cut into runs: the scan works in groups of eight
    /// aligned to the signal's time, and a group's first frames are final before the rest of
    /// it arrives (a streaming shifter's input comes in runs that follow its blocks).
    @Test(arguments: [1, 2])
    func theEnvelopeDoesNotDependOnTheRuns(channels: Int) {
        let n = 5_000
        var l = Signals.noise(frames: n, amplitude: 0.5, seed: 62), r = Signals.noise(frames: n, amplitude: 0.4, seed: 63)
        for i in 1_000..<3_000 { l[i] *= 0.001; r[i] *= 0.002 }
        let right = channels > 1 ? r : nil
        let whole = Self.follow(l, right, runs: [n])
        for runs in [[1], [5, 3, 8, 1, 13, 100], [7], [4_999, 1]] {
            let got = Self.follow(l, right, runs: runs)
            #expect(got == whole, "runs \(runs): \(zip(got, whole).filter { $0 != $1 }.count) values differ")
        }
    }
}
