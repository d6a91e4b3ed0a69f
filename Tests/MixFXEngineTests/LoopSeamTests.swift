import Foundation
import Testing
import MixFX
import TestSupport

/// Live `--loop` (docs/automation.md "Live playback"): where a pass of the loop is the offline
/// render of the session and where it cannot be. The effects run straight through the seam, so
/// a shifter still wet there reads the next pass with its look-ahead (the render reads silence
/// after the session's end) and carries its state into the next pass (the render starts from
/// silence). A return to 0 cents turns the vocoder's phases back to the input's before its dry
/// fade (up to about 1.7 s below 100 Hz, 0.4 s at 440 Hz): a return that late in a pass
/// leaves the shifter wet at the seam.
/// A source that plays its samples again from frame 0 at their end, for ever (what a live
/// player's feeder does with `--loop`, `StreamingSource`); its length is one pass.
final class LoopingSource: AudioSource, @unchecked Sendable {
    let format: SourceFormat
    let name = "looping"
    private let samples: [Float]
    private var position = 0

    init(_ samples: [Float], sampleRate: Int) {
        self.samples = samples
        format = SourceFormat(sampleRate: sampleRate, channelCount: 1, frameCount: samples.count, channelLayout: nil)
    }

    func read(into buffer: AudioBuffer, offset: Int, frameCount: Int) throws -> Int {
        let out = buffer.channel(0) + offset
        for i in 0..<frameCount { out[i] = samples[(position + i) % samples.count] }
        position += frameCount
        return frameCount
    }

    func seek(toFrame frame: Int) throws { position = max(0, frame) }
}

@Suite struct LoopSeamTests {
    static let rate = 48_000.0

    /// How a live loop's passes differ from the offline render of the session.
    struct Difference {
        /// Frames before the seam from which pass 1 is off the render (0: none).
        var pass1Tail: Int
        /// Frames from the start of pass 2 up to its last one off the render within `drySpan`
        /// (the lane at 0 cents there; 0: none), and the largest difference there, in dB under
        /// the tone's peak (−∞: none).
        var pass2Head: Int
        var headDB: Double
        /// Over pass 2 where the lane is off 0 cents (`wet`): the largest difference from the
        /// render of the level (dB) and the pitch (cents) in windows of 4096 frames.
        var wetLevelDB = 0.0, wetCents = 0.0
        /// The same over the frames of pass 2's start off the render (`pass2Head`).
        var headLevelDB = 0.0, headCents = 0.0
    }

    /// A session of `seconds` of a tone (`hz`, peak 0.5) with the pitch lane `lane`, played
    /// live looped (two passes, blocks of 256, the source looping as the feeder loops it)
    /// against its offline render, frame by frame; `drySpan`: the frames of pass 2 measured.
    static func measure(seconds: Int, lane: AutomationLane, hz: Double, drySpan: Int, wet: Range<Int>? = nil) throws -> Difference {
        let pass = seconds * 48_000
        let x = Signals.sine(frequencyHz: hz, sampleRate: rate, frames: pass, amplitude: 0.5)
        func session(looping: Bool) -> AudioEngine {
            let engine = AudioEngine()
            let t = engine.addTrack(source: looping ? LoopingSource(x, sampleRate: 48_000) : MemorySource(channels: [x], sampleRate: 48_000))
            t.automation[.pitchCents] = lane
            return engine
        }
        let offline = try renderAll(session(looping: false), block: 1000)[0]
        let kernel = try session(looping: true).makeKernel(maximumFrameCount: 256, mode: .live)
        kernel.loops = true
        try kernel.start()
        var live: [Float] = []
        while live.count < 2 * pass {
            let n = kernel.render(frameCount: 256)
            live += UnsafeBufferPointer(start: kernel.output.channel(0), count: n)
        }
        let firstOff = (0..<pass).first { live[$0] != offline[$0] }
        let lastOff = (0..<drySpan).last { live[pass + $0] != offline[$0] }
        var worst: Float = 0
        for f in 0..<drySpan { worst = max(worst, abs(live[pass + f] - offline[f])) }
        var d = Difference(pass1Tail: firstOff.map { pass - $0 } ?? 0, pass2Head: lastOff.map { $0 + 1 } ?? 0,
                           headDB: 20 * log10(Double(worst) / 0.5))
        func compare(_ span: Range<Int>) -> (level: Double, cents: Double) {
            var level = 0.0, cents = 0.0
            for c in stride(from: span.lowerBound + 2_048, to: span.upperBound - 2_048, by: 4_800) {
                let a = live[(pass + c - 2_048)..<(pass + c + 2_048)], b = offline[(c - 2_048)..<(c + 2_048)]
                level = max(level, abs(20 * log10(Signals.rms(a) / Signals.rms(b))))
                cents = max(cents, abs(Signals.cents(Signals.frequency(a, sampleRate: rate), Signals.frequency(b, sampleRate: rate))))
            }
            return (level, cents)
        }
        if let wet { (d.wetLevelDB, d.wetCents) = compare(wet) }
        (d.headLevelDB, d.headCents) = compare(0..<d.pass2Head)
        return d
    }

    /// The limit, measured: a return to 0 cents `before` seconds before the seam of a 5 s loop
    /// (the lane −300 cents from 2.5 s, 0 before it). Where the shifter is wet at the seam
    /// (the return's phases still turning back), the end of pass 1 is off the offline render
    /// from the shifter's look-ahead before the seam (it reads the next pass, the render
    /// silence), and pass 2 starts wet, off the render until the phases have turned back and the
    /// dry fade is done: a phase offset of the same tone, not a level (in windows of 4096 frames
    /// within 0.25 dB, the pitch within the turn's 5 cents of a 100 Hz partial's rate,
    /// `ReturnToInputTests`), so sample by sample up to twice the tone. Where the lane is −300
    /// cents pass 2 has the render's level and pitch (within 0.1 dB and 0.5 cents), not its
    /// samples (the vocoder's phases ran on through the seam). Bounded as
    /// documented (docs/automation.md "Live playback"): the end of pass 1 within 4096 frames
    /// (85 ms) of the seam, the start of pass 2 back on the render within 1.8 s; a return 2 s or
    /// more before the seam loops as the render, to the bit, at both ends.
    @Test(arguments: [(0.25, 110.0), (0.5, 110.0), (1.0, 110.0), (1.5, 110.0), (2.0, 110.0),
                      (0.25, 440.0), (0.5, 440.0), (2.0, 440.0), (0.25, 55.0), (1.0, 55.0), (2.0, 55.0)])
    func aReturnToZeroNearTheSeam(before: Double, hz: Double) throws {
        let d = try Self.measure(seconds: 5, lane: AutomationLane([(0, 0), (2.5, -300), (5 - before, 0)], curve: .step), hz: hz, drySpan: 110_000,
                                 wet: 124_800..<Int((5 - before) * Self.rate) - 4_800)
        #expect(d.pass1Tail <= 4_096, "\(before) s, \(hz) Hz: pass 1 off the render in its last \(d.pass1Tail) frames")
        #expect(d.pass2Head <= 86_400, "\(before) s, \(hz) Hz: pass 2 off the render in its first \(d.pass2Head) frames")
        // (the same tone: where the lane is −300 cents, and where the start of pass 2 is still
        // turning its phases back, by at most 5 cents of a partial of at least 100 Hz's)
        #expect(d.wetLevelDB <= 0.1 && d.wetCents <= 0.5, "\(before) s, \(hz) Hz: the wet pass 2 off the render by \(d.wetLevelDB) dB, \(d.wetCents) cents")
        #expect(d.headLevelDB <= 0.25 && d.headCents <= 5 * max(1, 100 / hz) + 0.2, "\(before) s, \(hz) Hz: pass 2's start off the render by \(d.headLevelDB) dB, \(d.headCents) cents")
        if before >= 2 {
            #expect(d.pass1Tail == 0 && d.pass2Head == 0, "\(before) s, \(hz) Hz: \(d.pass1Tail) frames of pass 1, \(d.pass2Head) of pass 2 off the render")
        }
    }
}
