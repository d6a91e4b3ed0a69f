import Foundation
import Testing
@testable import MixFXDSP
import TestSupport

/// A streaming shifter following a tempo map and a pitch map gives the same bytes whatever
/// blocks it is asked for. The engine relies on it: offline, a lane's shifter renders in
/// chunks of one size, live in another, and a live session plays what the render wrote.
/// The input is noise hits after silence, so the transient gate and splice act: the input's
/// envelope (scanned eight frames at a time) and where a splice lands (the local tempo at a
/// block's last frame) are what once followed the blocks.
@Suite struct StreamingBlockTests {
    static let rate = 44_100.0

    /// Decaying noise hits every 3 001 frames, over a quiet tone from the middle on.
    static func hits(frames n: Int) -> [Float] {
        let noise = Signals.noise(frames: n, amplitude: 0.5, seed: 11)
        var x = [Float](repeating: 0, count: n)
        for start in stride(from: 500, to: n - 2_000, by: 3_001) {
            for i in 0..<2_000 { x[start + i] = noise[start + i] * Float(exp(-Double(i) / 300)) }
        }
        for i in (n / 2)..<n { x[i] += 0.05 * Float(sin(2 * Double.pi * 220 * Double(i) / rate)) }
        return x
    }

    /// The shifter's output for `x`, in blocks of the sizes `blocks` (repeated), a tempo lane
    /// from `tempi.0` to `tempi.1` over the output and a pitch lane from `cents.0` to
    /// `cents.1` over the input; `bounded`: told these bounds (`StreamingBounds`), as an offline
    /// lane's shifter is.
    static func render(_ x: [Float], blocks: [Int], frames: Int, tempi: (Double, Double) = (1.3, 0.7),
                       cents: (Double, Double) = (-500, 700), bounded: Bool = false) -> [Float] {
        let length = Double(frames)
        let tempoMap = TempoMap(stepFrames: 32, untilPosition: Double(x.count) + 4_096) { tempi.0 + (tempi.1 - tempi.0) * min(1, $0 / length) }
        let pitchMap = PitchMap(stepFrames: 32, count: x.count / 32 + 2) { cents.0 + (cents.1 - cents.0) * Double($0 * 32) / Double(x.count) }
        // (the maps' own ranges, as the engine takes them)
        let bounds = StreamingBounds(pitchCents: pitchMap.minimumCents...pitchMap.maximumCents,
                                     tempo: tempoMap.minimumTempo...tempoMap.maximumTempo)
        let ps = PitchShifter()
        ps.prepare(ProcessSpec(sampleRate: rate, maximumFrameCount: 1024, channelCount: 1),
                   settings: PitchShifterSettings(pitchCents: cents.0), mode: .streaming, bounds: bounded ? bounds : nil)
        // (tempo 1 throughout: no tempo map, the whole-time path)
        if tempi != (1, 1) { ps.setTempoMap(tempoMap, originFrame: 0) }
        ps.setPitchMap(pitchMap, originFrame: 0)
        return ps.streamed(x, frames: frames, blocks: blocks)
    }

    /// Also at the top of the range (+2400 cents at tempo 0.8), where a splice reads the input
    /// furthest ahead of the blocks' times.
    @Test(arguments: [((1.3, 0.7), (-500.0, 700.0)), ((0.8, 0.8), (2_400.0, 2_300.0))])
    func theOutputDoesNotDependOnTheBlocks(tempi: (Double, Double), cents: (Double, Double)) {
        let x = Self.hits(frames: 4 * 44_100)
        let frames = 3 * 44_100
        let reference = Self.render(x, blocks: [256], frames: frames, tempi: tempi, cents: cents)
        #expect(reference.allSatisfy { $0.isFinite })
        // (the hits come through: the splice and gate had onsets to act on)
        #expect(reference.map { abs($0) }.max()! > 0.2)
        for blocks in [[1024], [100], [1], [37, 512, 3, 1000, 64]] {
            let y = Self.render(x, blocks: blocks, frames: frames, tempi: tempi, cents: cents)
            let differing = zip(y, reference).filter { $0 != $1 }.count
            #expect(differing == 0, "blocks \(blocks): \(differing) samples differ from blocks of 256")
        }
    }

    /// Told the pitches and tempos it will meet, the shifter sizes its buffers for them alone
    /// (`StreamingBounds`); the output is the same bytes as sized for the whole live range, in
    /// any blocks. Also a raised pitch lane at tempo 1 without a tempo map (the reader at whole
    /// times).
    @Test(arguments: [((1.3, 0.7), (-500.0, 700.0)), ((0.8, 0.8), (2_400.0, 2_300.0)), ((1.0, 1.0), (100.0, 300.0))])
    func theOutputDoesNotDependOnTheBounds(tempi: (Double, Double), cents: (Double, Double)) {
        let x = Self.hits(frames: 4 * 44_100)
        let frames = 3 * 44_100
        let reference = Self.render(x, blocks: [256], frames: frames, tempi: tempi, cents: cents)
        #expect(reference.map { abs($0) }.max()! > 0.2)
        for blocks in [[1024], [37, 512, 3, 1000, 64]] {
            let y = Self.render(x, blocks: blocks, frames: frames, tempi: tempi, cents: cents, bounded: true)
            let differing = zip(y, reference).filter { $0 != $1 }.count
            #expect(differing == 0, "bounded, blocks \(blocks): \(differing) samples differ from unbounded blocks of 256")
        }
    }

    /// A shifter told its bounds keeps within them: the render-side setters clamp to the bounds
    /// (with 0 cents and tempo 1), and a map beyond them is refused before it runs, where a frame
    /// beyond them would outrun the buffers sized for the bounds.
    @Test func aBoundedShifterKeepsWithinItsBounds() async {
        let spec = ProcessSpec(sampleRate: Self.rate, maximumFrameCount: 1024, channelCount: 1)
        let ps = PitchShifter()
        ps.prepare(spec, settings: PitchShifterSettings(pitchCents: 150), mode: .streaming,
                   bounds: StreamingBounds(pitchCents: 100...300, tempo: 0.8...1.25))
        ps.setPitchCents(1_200)
        #expect(ps.settings.pitchCents == 300)
        ps.setPitchCents(-700)
        #expect(ps.settings.pitchCents == 0)
        ps.holdPitch(2_000)
        #expect(ps.settings.pitchCents == 300)
        ps.setTempo(3)
        #expect(ps.settings.tempo == 1.25)
        ps.setTempo(0.5)
        #expect(ps.settings.tempo == 0.8)
        // unbounded (live): the live ranges
        let live = PitchShifter()
        live.prepare(spec, settings: PitchShifterSettings(pitchCents: 150), mode: .streaming)
        live.setPitchCents(1_200)
        #expect(live.settings.pitchCents == 1_200)
        await #expect(processExitsWith: .failure) {
            let p = PitchShifter()
            p.prepare(ProcessSpec(sampleRate: 44_100, maximumFrameCount: 1024, channelCount: 1),
                      settings: PitchShifterSettings(pitchCents: 150), mode: .streaming, bounds: StreamingBounds(pitchCents: 100...300))
            p.setPitchMap(PitchMap(stepFrames: 32, count: 100) { 100 + Double($0) * 10 }, originFrame: 0)   // up to +1090
        }
        await #expect(processExitsWith: .failure) {
            let p = PitchShifter()
            p.prepare(ProcessSpec(sampleRate: 44_100, maximumFrameCount: 1024, channelCount: 1),
                      settings: PitchShifterSettings(pitchCents: 150), mode: .streaming, bounds: StreamingBounds(pitchCents: 100...300))
            p.setTempoMap(TempoMap(stepFrames: 16, untilPosition: 10_000) { _ in 2 }, originFrame: 0)
        }
    }
}
