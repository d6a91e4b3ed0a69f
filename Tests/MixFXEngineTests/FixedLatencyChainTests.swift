import Testing
import MixFX
import TestSupport

/// The chain a plugin runs (`FixedLatencyChain`): its latency is enough for every pitch and
/// every change, so the shifter never asks for input that has not arrived. (The plugin's own
/// tests, in MixFXLV2Tests, check where a click lands, the pitch and the bit-exact paths.)
@Suite struct FixedLatencyChainTests {
    @Test(arguments: [44_100.0, 48_000.0, 96_000.0])
    func randomChangesOfEverySettingNeverStarveTheShifter(rate: Double) {
        let chain = FixedLatencyChain(sampleRate: rate, channelCount: 2)
        var g = SeededGenerator(seed: UInt64(rate))
        let x = Signals.noise(frames: 8 * Int(rate), amplitude: 0.3)
        let l = UnsafeMutablePointer<Float>.allocate(capacity: 4096), r = UnsafeMutablePointer<Float>.allocate(capacity: 4096)
        defer { l.deallocate(); r.deallocate() }
        var settings = FixedLatencyChain.Settings(pitchCents: -2400)
        chain.reset(settings)
        var done = 0, peak: Float = 0
        while done < x.count {
            let n = min(Int.random(in: 1...4096, using: &g), x.count - done)
            for i in 0..<n { l[i] = x[done + i]; r[i] = -x[done + i] }
            if Int.random(in: 0..<8, using: &g) == 0 {
                // the extremes often: the lowest pitch needs the most look-ahead
                settings.pitchCents = [-2400, 2400, 0, Double.random(in: -2400...2400, using: &g)][Int.random(in: 0..<4, using: &g)]
                settings.preserveFormants = Bool.random(using: &g)
                settings.eq.bass.gainDB = Double.random(in: -12...12, using: &g)
                settings.eq.treble.frequencyHz = Double.random(in: 1000...20_000, using: &g)
                settings.wet = Float.random(in: 0...1, using: &g)
            }
            chain.process(inLeft: l, inRight: r, outLeft: l, outRight: r, frameCount: n, settings: settings)
            for i in 0..<n { peak = max(peak, abs(l[i]), abs(r[i])) }
            done += n
        }
        #expect(chain.starvedFrames == 0)
        #expect(peak.isFinite && peak > 0.05 && peak < 4, "\(peak)")
        #expect(chain.latencyFrames == DSPCopy.active.latencyOfALiveShifter(sampleRate: rate) + FixedLatencyChain.blockFrames - 1)
    }
}

extension DSPCopy {
    /// A streaming shifter's `liveLatencyFrames` at `rate`.
    func latencyOfALiveShifter(sampleRate rate: Double) -> Int {
        let s = makePitchShifter()
        s.prepare(ProcessSpec(sampleRate: rate, maximumFrameCount: FixedLatencyChain.blockFrames, channelCount: 1),
                  settings: PitchShifterSettings(), mode: .streaming, sharesWorkspace: false, bounds: nil)
        return s.liveLatencyFrames
    }
}
