import Foundation
import Testing
@testable import MixFXIO
import MixFXDSP
import TestSupport

/// A report's history keeps at most `historyPointLimit` points: merged in pairs (smaller
/// minimum, larger maximum and true peak, mean short-term energy) with the step doubled, so its
/// memory does not grow with the signal; below the limit every 100 ms step is its own point.
/// Issue #30: `--report` grew by 0.33 MB per track-minute.
@Suite struct AnalysisHistoryTests {
    /// A signal whose level changes every step, so merges that pick the wrong neighbour show.
    static func signal(steps: Int, rate: Int) -> [Float] {
        let stepFrames = rate / 10
        var out = [Float](repeating: 0, count: steps * stepFrames + stepFrames / 3)   // and a part step
        for k in 0..<out.count {
            let step = k / stepFrames
            let level = Float(0.05 + 0.9 * Double((step * 37) % 23) / 22)
            out[k] = level * Float(sin(2 * Double.pi * 440 * Double(k) / Double(rate))) + (step % 5 == 0 ? 0.01 : -0.01)
        }
        return out
    }

    static func history(_ x: [Float], rate: Int, limit: Int) -> AnalysisHistory {
        let block = 1000
        var analyzer = AudioAnalyzer(sampleRate: rate, channelCount: 1, maximumFrameCount: block, keepsHistory: true,
                                     historyPointLimit: limit)
        defer { analyzer.deallocate() }
        let buffer = AudioBuffer(channelCount: 1, capacityFrames: block)
        var done = 0
        while done < x.count {
            let n = min(block, x.count - done)
            for i in 0..<n { buffer.channel(0)[i] = x[done + i] }
            analyzer.process(buffer, frameCount: n)
            done += n
        }
        return analyzer.history!
    }

    static func energy(_ lufs: Double) -> Double { lufs.isFinite ? pow(10, (lufs + 0.691) / 10) : 0 }

    @Test(arguments: [3, 40, 77, 300])
    func mergedPointsAreTheFullSeriesMergedAndBounded(steps: Int) {
        let rate = 8000, limit = 8
        let x = AnalysisHistoryTests.signal(steps: steps, rate: rate)
        let full = AnalysisHistoryTests.history(x, rate: rate, limit: 1 << 20)
        let bounded = AnalysisHistoryTests.history(x, rate: rate, limit: limit)
        #expect(full.minimum.count == steps && full.shortTermLUFS.count == steps)
        // the step doubled as often as needed: the fewest doublings that fit `steps` into `limit`
        var perPoint = 1
        while (steps + perPoint - 1) / perPoint > limit { perPoint *= 2 }
        #expect(bounded.stepSeconds == full.stepSeconds * Double(perPoint), "\(bounded.stepSeconds) s a point for \(steps) steps")
        let points = (steps + perPoint - 1) / perPoint
        for series in [bounded.minimum.count, bounded.maximum.count, bounded.truePeakDBTP.count, bounded.shortTermLUFS.count] {
            #expect(series == points && series <= limit)
        }
        for k in 0..<min(points, bounded.minimum.count) {
            let range = (k * perPoint)..<min(steps, (k + 1) * perPoint)
            #expect(bounded.minimum[k] == full.minimum[range].min()!)
            #expect(bounded.maximum[k] == full.maximum[range].max()!)
            #expect(bounded.truePeakDBTP[k] == full.truePeakDBTP[range].max()!)
            let meanEnergy = range.map { AnalysisHistoryTests.energy(full.shortTermLUFS[$0]) }.reduce(0, +) / Double(range.count)
            #expect(abs(bounded.shortTermLUFS[k] - LoudnessMeter.lufs(energy: meanEnergy)) < 1e-9,
                    "point \(k): \(bounded.shortTermLUFS[k]) LUFS, the mean energy of steps \(range) gives \(LoudnessMeter.lufs(energy: meanEnergy))")
        }
    }

    /// Below the limit the history is the one every step makes, value for value, and its
    /// short-term series is the meter's own (`shortTermSeriesLUFS`).
    @Test func belowTheLimitEveryStepIsAPoint() {
        let rate = 8000
        let x = AnalysisHistoryTests.signal(steps: 64, rate: rate)
        let h = AnalysisHistoryTests.history(x, rate: rate, limit: 64)
        #expect(h.minimum.count == 64 && h.stepSeconds == 0.1)
        // (fed in the analyzer's blocks: a step's energy is summed per block)
        var meter = LoudnessMeter(sampleRate: Double(rate), channelCount: 1)
        x.withUnsafeBufferPointer { p in
            for start in stride(from: 0, to: x.count, by: 1000) {
                meter.measure({ _ in p.baseAddress! + start }, frameCount: min(1000, x.count - start))
            }
        }
        #expect(h.shortTermLUFS == meter.shortTermSeriesLUFS)
    }
}
