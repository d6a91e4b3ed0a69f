import Foundation
import Testing
import MixFXDSP
import TestSupport

/// The look-ahead true-peak limiter: the ceiling holds on material made to break it, and where it
/// never acts the output is the input, delayed, bit for bit.
@Suite struct LimiterTests {
    static let rate = 48_000.0

    /// Runs planar `channels` through a limiter in blocks of `block` frames, then `latency`
    /// frames of silence, and returns the output with the delay removed (same length as the
    /// input) and the limiter's statistics.
    func limit(_ channels: [[Float]], ceilingDBTP: Double = -1, block: Int = 1024,
               settings: LimiterSettings? = nil) -> (out: [[Float]], reductionDB: Double, limited: Int, latency: Int) {
        var limiter = Limiter()
        limiter.prepare(ProcessSpec(sampleRate: LimiterTests.rate, maximumFrameCount: block, channelCount: channels.count),
                        settings: settings ?? LimiterSettings(ceilingDBTP: ceilingDBTP))
        defer { limiter.deallocate() }
        let latency = limiter.latencyFrames
        let count = channels[0].count
        let buffer = AudioBuffer(channelCount: channels.count, capacityFrames: block)
        var out = channels.map { _ in [Float]() }
        var i = 0
        while i < count + latency {
            let n = min(block, count + latency - i)
            for c in channels.indices {
                for k in 0..<n { buffer.channel(c)[k] = i + k < count ? channels[c][i + k] : 0 }
            }
            limiter.process(buffer, frameCount: n)
            for c in channels.indices { out[c].append(contentsOf: UnsafeBufferPointer(start: buffer.channel(c), count: n)) }
            i += n
        }
        return (out.map { Array($0[latency...]) }, limiter.maximumGainReductionDB, limiter.framesLimited, latency)
    }

    func truePeakDBTP(_ channels: [[Float]]) -> Double {
        var m = TruePeakMeter(channelCount: channels.count, maximumFrameCount: channels[0].count)
        defer { m.deallocate() }
        let copies = channels.map { c in c.withUnsafeBufferPointer { Array($0) } }
        copies[0].withUnsafeBufferPointer { a in
            copies[copies.count - 1].withUnsafeBufferPointer { b in
                m.process({ $0 == 0 ? a.baseAddress! : b.baseAddress! }, frameCount: copies[0].count)
            }
        }
        return m.peakDBTP
    }

    /// Material below the ceiling passes bit for bit (a limiter that is not needed is not there).
    @Test func belowTheCeilingItIsTheInputExactly() {
        var g = SystemRandomNumberGenerator()
        let left = (0..<96_000).map { i in Float(0.4 * sin(Double(i) * 0.031)) + Float.random(in: -0.2...0.2, using: &g) }
        let right = (0..<96_000).map { i in Float(0.6 * sin(Double(i) * 0.0021 + 1)) }
        #expect(truePeakDBTP([left, right]) < -1.2)
        let r = limit([left, right])
        let same = r.out[0] == left && r.out[1] == right   // (not inside #expect: it would diff the arrays)
        #expect(same)
        #expect(r.reductionDB == 0)
        #expect(r.limited == 0)
        #expect(r.latency == 240 + 12 + 11)   // 5 ms at 48 kHz, the interpolator's reach, its delay
    }

    /// Signals made to break a ceiling: a square wave (Gibbs overshoot between samples), a
    /// quarter-rate sine 45° off its crests (true peak 3 dB above every sample), lone
    /// full-scale clicks, a jump from silence to +12 dB, and four full-level tracks summed.
    static let hardCases: [String] = ["square", "quarter-rate sine", "clicks", "jump", "four tracks"]

    static func hard(_ name: String) -> [[Float]] {
        let n = 96_000
        switch name {
        case "square":
            return [(0..<n).map { i in (i / 24) % 2 == 0 ? 1.8 : -1.8 }]
        case "quarter-rate sine":
            return [(0..<n).map { i in Float(1.4 * sin(Double.pi / 2 * Double(i) + Double.pi / 4)) }]
        case "clicks":
            return [(0..<n).map { i in i % 4_801 == 100 ? 1.5 : (i % 4_801 == 101 ? -1.5 : 0) }]
        case "jump":
            return [(0..<n).map { i in i < 30_000 ? 0 : Float(4 * sin(Double(i) * 0.2)) }]
        default:
            var g = SystemRandomNumberGenerator()
            let tracks: [[Float]] = (0..<4).map { t in
                let f = 0.01 + 0.013 * Double(t)
                return (0..<n).map { i in
                    let burst: Float = (i / 3_000 + t) % 3 == 0 ? Float.random(in: -0.5...0.5, using: &g) : 0
                    return Float(0.5 * sin(Double(i) * f)) + Float(0.45 * sin(Double(i) * f * 7.1)) + burst
                }
            }
            let left = (0..<n).map { i in tracks.reduce(0) { $0 + $1[i] } }
            let right = (0..<n).map { i in tracks[0][i] - tracks[1][i] + tracks[2][i] + tracks[3][i] }
            return [left, right]
        }
    }

    @Test(arguments: hardCases, [-1.0, -6.0, 0.0])
    func theCeilingHolds(material: String, ceilingDBTP: Double) {
        let x = LimiterTests.hard(material)
        #expect(truePeakDBTP(x) > ceilingDBTP + 1, "the material must exceed the ceiling")
        let r = limit(x, ceilingDBTP: ceilingDBTP)
        let peak = truePeakDBTP(r.out)
        #expect(peak <= ceilingDBTP + 0.001, "\(material) at \(ceilingDBTP) dBTP: output \(peak) dBTP")
        #expect(r.reductionDB > 0 && r.limited > 0)
    }

    /// A steady sine 6 dB over a −1 dBTP ceiling is brought to the ceiling, not further: the gain
    /// reduction is 7 dB and the level settles within 0.1 dB of the ceiling.
    @Test func aSteadyToneIsBroughtToTheCeilingNotBelow() {
        let x = [(0..<96_000).map { i in Float(2 * sin(2 * Double.pi * 441 * Double(i) / LimiterTests.rate)) }]
        let r = limit(x, ceilingDBTP: -1)
        #expect(abs(r.reductionDB - (6.0206 + 1)) < 0.05, "\(r.reductionDB) dB")
        let tail = Array(r.out[0][48_000..<90_000])
        let level = 20 * log10(Double(tail.map(abs).max()!))
        #expect(level <= -1 + 0.001 && level > -1.1, "\(level) dBFS")
    }

    /// The gain falls before a peak (attack within the look-ahead, so the peak itself is
    /// already at the ceiling) and recovers after it: quickly after an isolated click, slowly
    /// after seconds of dense limiting (the program-dependent release).
    @Test func attackIsAheadAndReleaseFollowsTheProgram() {
        let quiet: Float = 0.25
        let n = 5 * 48_000
        // a quiet sine with one click at 1 s
        var isolated = (0..<n).map { i in quiet * Float(sin(Double(i) * 0.05)) }
        isolated[48_000] = 1.5
        // the same sine after two seconds of a loud one
        let dense = (0..<n).map { i in (i < 96_000 ? 8 : 1) * quiet * Float(sin(Double(i) * 0.05)) }
        let a = limit([isolated]).out[0], b = limit([dense]).out[0]
        /// Seconds after `from` until the output's gain (output over input) is back within
        /// 0.5 dB of 1 for good.
        func recovery(_ y: [Float], _ x: [Float], from: Int) -> Double {
            var last = from
            for i in from..<n where abs(x[i]) > 0.1 && abs(y[i] / x[i]) < pow(10, -0.5 / 20) { last = i }
            return Double(last - from) / LimiterTests.rate
        }
        // before the click: the gain already falls within the look-ahead, and not earlier
        let before = (48_000 - 240)..<48_000
        #expect(before.contains { abs(a[$0]) < abs(isolated[$0]) * 0.99 && abs(isolated[$0]) > 0.05 })
        let untouchedBefore = (0..<(48_000 - 240 - 24)).allSatisfy { a[$0] == isolated[$0] }
        #expect(untouchedBefore)
        let afterClick = recovery(a, isolated, from: 48_000)
        let afterDense = recovery(b, dense, from: 96_000)
        #expect(afterClick < 0.25, "\(afterClick) s after a click")
        #expect(afterDense > 2 * afterClick && afterDense < 3, "\(afterDense) s after dense limiting, \(afterClick) s after a click")
    }

    /// Hostile samples are silence to the limiter: the output is that of zeros in their place
    /// (no NaN or ∞ stays in its state, the gain does not stick at 0 after an ∞).
    @Test func hostileSamplesAreSilence() {
        var x = LimiterTests.hard("four tracks")
        var zeroed = x
        for (k, v) in [Float.nan, .infinity, -.infinity, 1e30, -.nan].enumerated() {
            x[k % 2][10_000 + k * 7_000] = v
            zeroed[k % 2][10_000 + k * 7_000] = 0
        }
        let a = limit(x).out, b = limit(zeroed).out
        let same = a == b
        #expect(same && a.allSatisfy { $0.allSatisfy(\.isFinite) })
    }

    /// The output does not depend on how the signal is cut into blocks.
    @Test func blockSizeDoesNotChangeTheOutput() {
        let x = LimiterTests.hard("four tracks")
        let a = limit(x, block: 4096).out, b = limit(x, block: 37).out
        let same = a == b
        #expect(same)
    }
}
