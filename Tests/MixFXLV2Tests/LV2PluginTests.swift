import Foundation
import Testing
import TestSupport

/// The plugin as a host runs it, in this process (the library dlopen'ed, its descriptor's
/// functions called): the latency it reports is where a click lands, the pitch is right, the
/// neutral and dry paths are the delayed input bit for bit, the output does not depend on the
/// host's block sizes, and restored port values give the same output as a fresh instance.
@Suite(.enabled(if: LV2Rig.unavailable == nil, "\(LV2Rig.unavailable ?? "")"))
struct LV2PluginTests {
    static let rate = 48_000.0

    @Test func theLatencyPortIsWhereAClickLandsAtEveryPitch() throws {
        let latency = try PluginInstance(LV2Rig.mono).latency
        #expect(latency > 0 && latency < Int(0.3 * Self.rate), "\(latency)")
        for cents: Float in [0, 100, 700, -1200, 2400, -2400] {
            let p = try PluginInstance(LV2Rig.mono)
            p[.cents] = cents
            #expect(p.latency == latency, "the latency does not change with the pitch")
            let at = 6000
            let y = p.process([LV2Signals.click(at: at, frames: at + latency + 20_000)])[0]
            let peak = LV2Signals.peakIndex(y)
            #expect(abs(peak - (at + latency)) <= 1, "\(cents) cents: the click at \(peak), expected \(at + latency)")
        }
    }

    @Test func aSineComesOutShiftedWithinATenthOfACent() throws {
        let x = Signals.sine(frequencyHz: 440, sampleRate: Self.rate, frames: 4 * Int(Self.rate))
        // cents alone, and semitones adding to cents (-3 st + 50 c = -250 c), as Rubber Band's ports add
        for (cents, semitones, expected) in [(Float(100), Float(0), 100.0), (50, -3, -250), (0, 7, 700)] {
            let p = try PluginInstance(LV2Rig.mono)
            p[.cents] = cents
            p[.semitones] = semitones
            let y = p.process([x])[0]
            let steady = y[(y.count / 2)..<(y.count - 4096)]
            let error = Signals.cents(Signals.frequency(steady, sampleRate: Self.rate), 440 * pow(2, expected / 1200))
            #expect(abs(error) < 0.1, "\(cents) c + \(semitones) st: \(error) cents off")
        }
    }

    @Test func aNaNFromTheHostIsReplacedAndPoisonsNothing() throws {
        var x = Signals.sine(frequencyHz: 440, sampleRate: Self.rate, frames: 2 * Int(Self.rate))
        x[1000] = .nan
        x[2000] = .infinity
        x[3000] = 1e30
        let p = try PluginInstance(LV2Rig.mono)
        p[.cents] = 700
        p[.bass] = 6
        let y = p.process([x])[0]
        let bad = y.filter { !$0.isFinite }.count
        #expect(bad == 0, "\(bad) non-finite samples")
        // and it is the output of the same input with those samples silent
        var clean = x
        for i in [1000, 2000, 3000] { clean[i] = 0 }
        let q = try PluginInstance(LV2Rig.mono)
        q[.cents] = 700
        q[.bass] = 6
        #expect(q.process([clean])[0] == y)
    }

    @Test func dryIsTheInputDelayedByTheLatencyBitForBit() throws {
        let x = Signals.noise(frames: 30_000, amplitude: 0.4)
        let p = try PluginInstance(LV2Rig.mono)
        p[.cents] = 700
        p[.bass] = 6
        p[.wet] = 0
        let latency = p.latency
        #expect(p.process([x])[0] == LV2Signals.delayed(x, by: latency))
    }

    @Test func neutralSettingsAreTheInputDelayedByTheLatencyBitForBit() throws {
        let x = Signals.noise(frames: 30_000, amplitude: 0.4)
        let p = try PluginInstance(LV2Rig.stereo)
        let latency = p.latency
        let y = p.process([x, x.map { -0.5 * $0 }])
        #expect(y[0] == LV2Signals.delayed(x, by: latency))
        #expect(y[1] == LV2Signals.delayed(x.map { -0.5 * $0 }, by: latency))
    }

    @Test func theOutputIsTheSameBytesForAnyHostBlockSizes() throws {
        let x = Signals.noise(frames: 40_000, amplitude: 0.3)
        func render(_ blocks: @escaping (Int) -> Int) throws -> [Float] {
            let p = try PluginInstance(LV2Rig.mono)
            p[.cents] = 350
            p[.treble] = -4
            return p.process([x], blocks: blocks)[0]
        }
        var g = SeededGenerator(seed: 7)
        let sizes = (0..<2000).map { _ in Int.random(in: 1...3000, using: &g) }
        let reference = try render { _ in 256 }
        #expect(try render { _ in 1 } == reference, "one frame at a time (lv2apply)")
        #expect(try render { _ in 8192 } == reference, "blocks longer than the chain's")
        #expect(try render { sizes[$0 % sizes.count] } == reference, "random sizes")
    }

    @Test func restoredPortValuesGiveTheSameOutputAsAFreshInstance() throws {
        // All state is in the control ports: a host that restores them (and activates) gets
        // what a fresh instance at those values makes, whatever the instance did before.
        let before = Signals.noise(frames: 20_000, amplitude: 0.3, seed: 1)
        let x = Signals.noise(frames: 30_000, amplitude: 0.3, seed: 2)
        func set(_ p: PluginInstance) {
            p[.cents] = -450; p[.formant] = 1; p[.bass] = 3; p[.bassFreq] = 120; p[.treble] = -2; p[.trebleFreq] = 4000; p[.wet] = 0.7
        }
        let used = try PluginInstance(LV2Rig.stereo)
        used[.cents] = 1200
        _ = used.process([before, before])
        set(used)
        used.restart()
        let fresh = try PluginInstance(LV2Rig.stereo)
        set(fresh)
        #expect(used.process([x, x.reversed()]) == fresh.process([x, x.reversed()]))
    }

    @Test func stereoShiftsEachChannelOnItsOwn() throws {
        let frames = 3 * Int(Self.rate)
        let l = Signals.sine(frequencyHz: 440, sampleRate: Self.rate, frames: frames)
        let r = Signals.sine(frequencyHz: 660, sampleRate: Self.rate, frames: frames)
        let p = try PluginInstance(LV2Rig.stereo)
        p[.semitones] = 2
        let y = p.process([l, r])
        let ratio = pow(2, 200.0 / 1200)
        for (c, hz) in [(0, 440.0), (1, 660.0)] {
            let steady = y[c][(frames / 2)..<(frames - 4096)]
            let error = Signals.cents(Signals.frequency(steady, sampleRate: Self.rate), hz * ratio)
            #expect(abs(error) < 0.1, "channel \(c): \(error) cents off")
        }
    }

    @Test func controlsOutOfRangeAreHeldAtTheEdgesAndNaNIsTheDefault() throws {
        let x = Signals.noise(frames: 20_000, amplitude: 0.3)
        func render(_ cents: Float, _ semitones: Float, wet: Float = 1) throws -> [Float] {
            let p = try PluginInstance(LV2Rig.mono)
            p[.cents] = cents
            p[.semitones] = semitones
            p[.wet] = wet
            return p.process([x])[0]
        }
        #expect(try render(2400, 0) == render(9000, 0))
        #expect(try render(2400, 0) == render(100, 24), "the sum is held within the pitch's range")
        #expect(try render(0, 0) == render(.nan, .nan, wet: .nan), "NaN: the defaults")
    }

    @Test func everyControlInputIsHeard() throws {
        // each control away from its default changes the output (the ports are wired)
        let x = Signals.noise(frames: 20_000, amplitude: 0.3)
        func render(_ port: Port?, _ value: Float) throws -> [Float] {
            let p = try PluginInstance(LV2Rig.mono)
            (p[.cents], p[.bass], p[.treble]) = (300, 3, -3)   // (a corner is heard where its band is not 0 dB)
            if let port { p[port] = value }
            return p.process([x])[0]
        }
        let reference = try render(nil, 0)
        for (port, value) in [(Port.cents, 310), (.semitones, 1), (.formant, 1), (.bass, 6), (.bassFreq, 300), (.treble, -6),
                              (.trebleFreq, 2000), (.wet, 0.5)] as [(Port, Float)] {
            #expect(try render(port, value) != reference, "\(port) = \(value) changes nothing")
        }
    }
}
