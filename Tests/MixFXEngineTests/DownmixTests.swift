import Foundation
import Testing
import MixFX
import TestSupport

/// Sources of any layout mixed down to the mix's one or two channels with ITU-R BS.775's
/// coefficients (see `Downmix`), measured channel by channel through the whole engine.
@Suite struct DownmixTests {
    static let h = 0.70710678

    /// What reaches (left, right) of a stereo mix, or the mono mix (in `left`), from each channel
    /// of `layout` alone: a noise in that channel, silence in the others, the gain measured as
    /// the least-squares ratio of output to input.
    func measuredGains(_ layout: ChannelLayout, mixChannels: Int?, lfeGainDB: Double? = nil) throws -> [(left: Double, right: Double)] {
        let n = layout.speakers.count, frames = 4000
        let x = Signals.noise(frames: frames, amplitude: 0.2, seed: 11)
        return try (0..<n).map { c in
            let channels = (0..<n).map { $0 == c ? x : [Float](repeating: 0, count: frames) }
            let engine = AudioEngine()
            engine.addTrack(source: MemorySource(channels: channels, sampleRate: 48_000, layout: layout))
            engine.outputChannelCount = mixChannels
            engine.lfeGainDB = lfeGainDB
            let out = try renderAll(engine)
            func gain(_ y: [Float]) -> Double {
                let xy = zip(x, y).reduce(0.0) { $0 + Double($1.0) * Double($1.1) }
                let xx = x.reduce(0.0) { $0 + Double($1) * Double($1) }
                // the ratio must explain the whole output: nothing else leaks in
                let residual = zip(x, y).map { abs(Double($1) - xy / xx * Double($0)) }.max()!
                #expect(residual < 1e-6, "channel \(c) of \(layout.name): the output is not a scaled input (residual \(residual))")
                return xy / xx
            }
            return (gain(out[0]), out.count > 1 ? gain(out[1]) : .nan)
        }
    }

    func expectGains(_ got: [(left: Double, right: Double)], _ want: [(Double, Double)], _ what: String) {
        #expect(got.count == want.count)
        for (k, (g, w)) in zip(got, want).enumerated() {
            #expect(abs(g.left - w.0) < 1e-6 && (w.1.isNaN || abs(g.right - w.1) < 1e-6),
                    "\(what), channel \(k + 1): (\(g.left), \(g.right)), expected (\(w.0), \(w.1))")
        }
    }

    @Test func fivePointOneLandsWithBS775sCoefficients() throws {
        let h = Self.h
        let layout = ChannelLayout.usual(channelCount: 6)
        #expect(layout.name == "5.1" && layout.speakerList == "FL FR FC LFE BL BR")
        // stereo: L = FL + 0.7071 FC + 0.7071 BL, R = FR + 0.7071 FC + 0.7071 BR, LFE dropped
        expectGains(try measuredGains(layout, mixChannels: nil), [(1, 0), (0, 1), (h, h), (0, 0), (h, 0), (0, h)], "5.1 → stereo")
        // mono: M = 0.7071 FL + 0.7071 FR + FC + 0.5 BL + 0.5 BR
        expectGains(try measuredGains(layout, mixChannels: 1), [(h, .nan), (h, .nan), (1, .nan), (0, .nan), (0.5, .nan), (0.5, .nan)],
                    "5.1 → mono")
        // the LFE kept at −6 dB: 10^(−6/20) into each side
        let g = pow(10, -6.0 / 20)
        expectGains(try measuredGains(layout, mixChannels: 2, lfeGainDB: -6), [(1, 0), (0, 1), (h, h), (g, g), (h, 0), (0, h)],
                    "5.1 → stereo, LFE at −6 dB")
    }

    @Test func everyUsualLayoutDownmixesByTheTable() throws {
        let h = Self.h
        let cases: [(Int, String, [(Double, Double)])] = [
            (3, "3.0", [(1, 0), (0, 1), (h, h)]),
            (4, "quad", [(1, 0), (0, 1), (h, 0), (0, h)]),
            (5, "5.0", [(1, 0), (0, 1), (h, h), (h, 0), (0, h)]),
            (7, "6.1", [(1, 0), (0, 1), (h, h), (0, 0), (0.5, 0.5), (h, 0), (0, h)]),
            (8, "7.1", [(1, 0), (0, 1), (h, h), (0, 0), (h, 0), (0, h), (h, 0), (0, h)]),
        ]
        for (count, name, want) in cases {
            let layout = ChannelLayout.usual(channelCount: count)
            #expect(layout.name == name)
            expectGains(try measuredGains(layout, mixChannels: nil), want, name)
            // the mono row is √½ of the two stereo rows summed (BS.775's mono equation)
            expectGains(try measuredGains(layout, mixChannels: 1), want.map { (h * ($0.0 + $0.1), .nan) }, "\(name) → mono")
        }
        // a stereo source into a mono mix: 0.7071 (L + R)
        expectGains(try measuredGains(.usual(channelCount: 2), mixChannels: 1), [(h, .nan), (h, .nan)], "stereo → mono")
        // ambisonic B-format (FuMa): cardioids at ±90°, L = 0.7071 W + 0.5 Y, R = 0.7071 W − 0.5 Y
        let bFormat = ChannelLayout([.ambisonicW, .ambisonicX, .ambisonicY, .ambisonicZ], declared: true)
        expectGains(try measuredGains(bFormat, mixChannels: 2), [(h, h), (0, 0), (0.5, -0.5), (0, 0)], "B-format → stereo")
    }

    @Test func stereoAndMonoSourcesAreNotTouched() throws {
        // a stereo source in a stereo mix and a mono source in a mono mix are bit-exact
        let a = Signals.noise(frames: 3000, amplitude: 0.4, seed: 1), b = Signals.noise(frames: 3000, amplitude: 0.4, seed: 2)
        let engine = AudioEngine()
        engine.addTrack(source: MemorySource(channels: [a, b], sampleRate: 48_000))
        let out = try renderAll(engine)
        #expect(out[0] == a && out[1] == b)
        let mono = AudioEngine()
        mono.addTrack(source: MemorySource(channels: [a], sampleRate: 48_000))
        mono.outputChannelCount = 1
        #expect(try renderAll(mono)[0] == a)
    }

    @Test func quadAndFivePointOneMixWithStereo() throws {
        // a quad track, a 5.1 track and a stereo track at 44.1 kHz mixed at 48 kHz: each track
        // downmixed then resampled and summed, the same as the stereo tracks made by hand
        let frames = 6000, h = Float(Self.h)
        let q = (0..<4).map { Signals.noise(frames: frames, amplitude: 0.1, seed: UInt64(20 + $0)) }
        let s = (0..<6).map { Signals.noise(frames: frames, amplitude: 0.1, seed: UInt64(30 + $0)) }
        let st = (0..<2).map { Signals.noise(frames: frames, amplitude: 0.1, seed: UInt64(40 + $0)) }
        let engine = AudioEngine()
        engine.addTrack(source: MemorySource(channels: q, sampleRate: 44_100))
        engine.addTrack(source: MemorySource(channels: s, sampleRate: 48_000))
        engine.addTrack(source: MemorySource(channels: st, sampleRate: 48_000))
        let out = try renderAll(engine)
        let qByHand = [zip(q[0], q[2]).map { $0 + h * $1 }, zip(q[1], q[3]).map { $0 + h * $1 }]
        let reference = AudioEngine()
        reference.addTrack(source: MemorySource(channels: qByHand, sampleRate: 44_100))
        reference.addTrack(source: MemorySource(channels: [(0..<frames).map { s[0][$0] + h * s[2][$0] + h * s[4][$0] },
                                                           (0..<frames).map { s[1][$0] + h * s[2][$0] + h * s[5][$0] }], sampleRate: 48_000))
        reference.addTrack(source: MemorySource(channels: st, sampleRate: 48_000))
        let expected = try renderAll(reference)
        #expect(out.count == 2 && out[0].count == expected[0].count)
        let err = (0..<2).map { c in zip(out[c], expected[c]).map { abs($0 - $1) }.max()! }.max()!
        #expect(err < 1e-6, "largest difference \(err)")
    }

    @Test func tooManyChannelsAndBadSettingsAreRefused() throws {
        let x = [Float](repeating: 0, count: 10)
        let engine = AudioEngine()
        engine.addTrack(source: MemorySource(channels: Array(repeating: x, count: 9), sampleRate: 48_000, name: "nine.wav"))
        #expect(throws: EngineError.self) { try engine.validate() }
        do { _ = try engine.validate() } catch { #expect("\(error)".contains("9 channels (allowed: 1 to 8")) }
        let e2 = AudioEngine()
        e2.addTrack(source: MemorySource(channels: [x, x], sampleRate: 48_000))
        e2.outputChannelCount = 3
        #expect(throws: EngineError.self) { try e2.validate() }
        e2.outputChannelCount = 2
        e2.lfeGainDB = 40
        #expect(throws: EngineError.self) { try e2.validate() }
    }
}
