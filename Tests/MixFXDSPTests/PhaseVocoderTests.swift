import Testing
@testable import MixFXDSP
import TestSupport

/// The vocoder on its own: its hop rule.
@Suite struct PhaseVocoderTests {
    /// Runs a vocoder at `cents` over `x` (mono, 44.1 kHz, blocks of 1024, overlap 8), sized as a
    /// streaming shifter's (which meets every ratio), its reader keeping up with all that is
    /// final; returns the frames it ran.
    static func framesRun(_ x: [Float], cents: Double, rate: Double = 44_100, block: Int = 1024, overlap: Int = 8) -> Int {
        let spec = ProcessSpec(sampleRate: rate, maximumFrameCount: block, channelCount: 1)
        let plan = PitchShifterPlan(spec, settings: PitchShifterSettings(pitchCents: cents), mode: .streaming)
        let history = InputHistory(channelCount: 1, frames: plan.historyFrames, slack: plan.historySlackFrames)
        let vocoder = PhaseVocoder(sampleRate: rate, maximumFrameCount: block, channelCount: 1, overlap: overlap,
                                   maxRatio: plan.maxStretch, latencyFrames: plan.stretchedLagFrames,
                                   readHalfTaps: plan.maxHalfTaps, inputHistory: history)
        var measure = ScratchCarver(nil)
        vocoder.bindScratch(&measure)
        let workspace = PitchShifterWorkspace(byteCount: measure.byteCount)
        var carver = ScratchCarver(workspace.base)
        vocoder.bindScratch(&carver)
        vocoder.reset(pitchCents: cents)
        x.withUnsafeBufferPointer { p in
            var i = 0
            while i < p.count {
                let n = min(block, p.count - i)
                history.write(left: p.baseAddress! + i, right: nil, frameCount: n, at: i)
                vocoder.append(frameCount: n, readPosition: Double(vocoder.finalStretchedEnd))
                i += n
            }
        }
        return vocoder.framesRun
    }

    /// The larger hop is N/overlap whichever way the pitch moves: raising it costs no more frames
    /// than not shifting, lowering it by r costs r times as many.
    @Test func framesFollowTheHopRule() {
        let x = Signals.noise(frames: 88_200)
        func frames(_ cents: Double) -> Int { Self.framesRun(x, cents: cents) }
        let neutral = frames(0)
        #expect(neutral == 88_200 / 512 - 3)   // frames whose window the input completes: A + N/2 ≤ input
        #expect(frames(200) <= neutral + 1 && frames(200) >= neutral - 1)
        #expect(frames(1200) <= neutral + 1 && frames(1200) >= neutral - 1)
        #expect(abs(Double(frames(-1200)) - Double(neutral) / 2) <= 1)
        // above +1200 the synthesis hop stops at a quarter frame, so the analysis hop shortens
        #expect(abs(Double(frames(2400)) - 2 * Double(neutral)) <= 2)
    }

    /// Below an overlap of 4 no hop narrows the highs (`SpectralWindowing`), so no hop is moved
    /// to a whole overlap: at overlap 3 the synthesis hop stays N/3 (the quarter-frame bound is
    /// below it) and raising by r runs r times the frames of no shift (moved to N/4, it ran
    /// 1.6 times as many).
    @Test func overlapThreeKeepsTheHopRule() {
        let x = Signals.noise(frames: 88_200)
        let neutral = Self.framesRun(x, cents: 0, overlap: 3), raised = Self.framesRun(x, cents: 300, overlap: 3)
        let r = PitchShifterSettings.ratio(cents: 300)
        #expect(abs(Double(raised) - Double(neutral) * r) <= 2, "\(raised) frames at +300 cents against \(neutral) at 0")
    }
}
