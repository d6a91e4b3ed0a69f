import CMixFX
import Foundation
import MixFX
@testable import MixFXC
import Testing
import TestSupport

/// The exported functions called in process: what they compute, against `mixfx render` and the
/// engine's formulas. (Misuse and allocations: CAPIProgramTests, through C.)
@Suite struct CAPITests {
    let dir = TempDir("mixfx-capi")

    /// Runs `input` (planar) through a time-pitch handle in blocks of `block`, ends the input
    /// (offline) and drains; the output.
    static func run(_ tp: OpaquePointer, _ input: [[Float]], block: Int, offline: Bool) -> [[Float]] {
        let channels = input.count, frames = input[0].count
        var out = Array(repeating: [Float](), count: channels)
        let capacity = 4 * block
        let scratch = (0..<channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: capacity) }
        defer { scratch.forEach { $0.deallocate() } }
        let outputs: [UnsafeMutablePointer<Float>?] = scratch
        func take(_ n: Int) { for c in 0..<channels { out[c] += UnsafeBufferPointer(start: scratch[c], count: n) } }
        let copies = input.map { ch -> UnsafeMutablePointer<Float> in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: max(1, ch.count))
            p.initialize(from: ch, count: ch.count)
            return p
        }
        defer { copies.forEach { $0.deallocate() } }
        var done = 0
        while done < frames {
            let k = min(block, frames - done)
            let inputs: [UnsafePointer<Float>?] = copies.map { UnsafePointer($0 + done) }
            var n = 0
            let s = MixFXC.mixfx_timepitch_process(tp, inputs, k, outputs, capacity, &n)
            #expect(s == MIXFX_OK.rawValue, "\(String(cString: mixfx_last_error()))")
            take(n)
            done += k
        }
        guard offline else { return out }
        #expect(MixFXC.mixfx_timepitch_end_input(tp) == MIXFX_OK.rawValue)
        while true {
            var n = 0
            #expect(MixFXC.mixfx_timepitch_process(tp, nil, 0, outputs, capacity, &n) == MIXFX_OK.rawValue)
            if n == 0 { break }
            take(n)
        }
        return out
    }

    static func make(_ mode: mixfx_mode, channels: Int32 = 2, rate: Double = 48_000, block: Int = 700) throws -> OpaquePointer {
        var tp: OpaquePointer?
        let s = MixFXC.mixfx_timepitch_create(rate, channels, mode, block, &tp)
        try #require(s == MIXFX_OK.rawValue, "\(String(cString: mixfx_last_error()))")
        return try #require(tp)
    }

    /// A stereo test signal: tones and a little noise, with a hit, so the gate and the splice
    /// have work.
    static func signal(frames: Int) -> [[Float]] {
        let noise = Signals.noise(frames: frames, amplitude: 0.05)
        var l = Signals.sine(frequencyHz: 330, sampleRate: 48_000, frames: frames, amplitude: 0.4)
        var r = Signals.sine(frequencyHz: 523, sampleRate: 48_000, frames: frames, amplitude: 0.3)
        for i in 0..<frames { l[i] += noise[i]; r[i] -= noise[i] }
        for i in 20_000..<min(frames, 20_200) { l[i] += 0.4; r[i] -= 0.4 }
        return [l, r]
    }

    /// Offline, fed the whole file with the latency dropped, the processor gives exactly the
    /// samples `mixfx render --pitch` writes (float output: nothing after the mixer changes them).
    @Test(arguments: [["--pitch", "300"], ["--pitch", "-700", "--formant"], ["--tempo", "1.25"], ["--tempo", "0.8", "--pitch", "200"],
                      ["--tempo", "2", "--pitch", "-300"]])
    func offlineIsTheRendersSamples(_ flags: [String]) throws {
        defer { dir.remove() }
        let input = dir.file("in.wav"), rendered = dir.file("out.wav")
        try AudioFiles.write(Self.signal(frames: 60_000), to: input, sampleRate: 48_000, sampleFormat: .f32)
        let r = try MixFXBinary.run(["render", input, "-o", rendered, "--sample-format", "f32", "--quiet"] + flags)
        try #require(r.status == 0, "\(r.stderr)")
        let x = try AudioFiles.read(input).channels, want = try AudioFiles.read(rendered).channels

        let tp = try Self.make(MIXFX_OFFLINE)
        defer { _ = MixFXC.mixfx_timepitch_destroy(tp) }
        func value(_ flag: String) -> Double? { flags.firstIndex(of: flag).map { Double(flags[$0 + 1])! } }
        if let cents = value("--pitch") { #expect(MixFXC.mixfx_timepitch_set_pitch_cents(tp, cents) == MIXFX_OK.rawValue) }
        if let tempo = value("--tempo") { #expect(MixFXC.mixfx_timepitch_set_tempo(tp, tempo) == MIXFX_OK.rawValue) }
        if flags.contains("--formant") { #expect(MixFXC.mixfx_timepitch_set_formants(tp, 1) == MIXFX_OK.rawValue) }
        var latency = -1
        #expect(MixFXC.mixfx_timepitch_latency(tp, &latency) == MIXFX_OK.rawValue)
        let y = Self.run(tp, x, block: 700, offline: true)
        for c in 0..<2 {
            let got = Array(y[c].dropFirst(latency))
            #expect(got.count == want[c].count, "channel \(c): \(got.count) frames, the render \(want[c].count)")
            let differing = zip(got, want[c]).filter { $0 != $1 }.count
            #expect(differing == 0, "channel \(c): \(differing) samples differ from mixfx render \(flags)")
        }
    }

    /// Live at 0 cents the output is the input, exactly, `latency` frames late; at +700 cents a
    /// sine comes out 700 cents higher (within 0.1 cent), and every call gives back as many
    /// frames as it took.
    @Test func liveIsExactAtZeroAndShiftsASine() throws {
        let tp = try Self.make(MIXFX_LIVE, channels: 1, block: 256)
        defer { _ = MixFXC.mixfx_timepitch_destroy(tp) }
        var latency = 0
        #expect(MixFXC.mixfx_timepitch_latency(tp, &latency) == MIXFX_OK.rawValue)
        let x = Signals.noise(frames: 48_000, amplitude: 0.5)
        let y = Self.run(tp, [x], block: 256, offline: false)[0]
        #expect(y.count == x.count)
        #expect(y.prefix(latency).allSatisfy { $0 == 0 })
        #expect(Array(y.dropFirst(latency)) == Array(x.prefix(x.count - latency)), "not the input delayed by \(latency) frames")

        #expect(MixFXC.mixfx_timepitch_reset(tp) == MIXFX_OK.rawValue)
        #expect(MixFXC.mixfx_timepitch_set_pitch_cents(tp, 700) == MIXFX_OK.rawValue)
        let sine = Signals.sine(frequencyHz: 440, sampleRate: 48_000, frames: 96_000)
        let shifted = Self.run(tp, [sine], block: 256, offline: false)[0]
        #expect(shifted.count == sine.count)
        let measured = Signals.frequency(shifted[48_000...], sampleRate: 48_000)
        let off = Signals.cents(measured, 440 * pow(2, 700.0 / 1200))
        #expect(abs(off) < 0.1, "measured \(measured) Hz: \(off) cents off")
        #expect(Handle.processor(tp).underrunFrames == 0)
    }

    /// An offline tempo gives round(n/R) frames with the pitch kept (a sine within 0.1 cent).
    @Test func offlineTempoKeepsThePitchAndTheLength() throws {
        let tp = try Self.make(MIXFX_OFFLINE, channels: 1, block: 512)
        defer { _ = MixFXC.mixfx_timepitch_destroy(tp) }
        #expect(MixFXC.mixfx_timepitch_set_tempo(tp, 0.75) == MIXFX_OK.rawValue)
        let sine = Signals.sine(frequencyHz: 440, sampleRate: 48_000, frames: 48_001)
        let y = Self.run(tp, [sine], block: 512, offline: true)[0]
        #expect(y.count == Int((48_001 / 0.75).rounded()))
        let off = Signals.cents(Signals.frequency(y[8_000..<56_000], sampleRate: 48_000), 440)
        #expect(abs(off) < 0.1, "\(off) cents off")
        #expect(Handle.processor(tp).underrunFrames == 0)
    }

    /// Values out of range name the value and the registry's range; no handle is made.
    @Test func errorsNameTheValueAndTheRange() throws {
        let tp = try Self.make(MIXFX_OFFLINE)
        defer { _ = MixFXC.mixfx_timepitch_destroy(tp) }
        #expect(MixFXC.mixfx_timepitch_set_pitch_cents(tp, 3000) == MIXFX_ERR_RANGE.rawValue)
        let spec = ParameterID.pitchCents.spec
        #expect(String(cString: mixfx_last_error()) == "mixfx_timepitch_set_pitch_cents: cents: \(spec.problem(with: 3000)!) (allowed: \(spec.allowedText))")
        var none: OpaquePointer?
        #expect(MixFXC.mixfx_shelf_eq_create(44_100, 2, &none) == MIXFX_OK.rawValue)
        defer { _ = MixFXC.mixfx_shelf_eq_destroy(none) }
        #expect(MixFXC.mixfx_shelf_eq_set_bass(none, 0, 23_000) == MIXFX_ERR_RANGE.rawValue)
        #expect(String(cString: mixfx_last_error()).contains("23000") && String(cString: mixfx_last_error()).contains("Nyquist"))
        var eq: OpaquePointer? = OpaquePointer(bitPattern: 1)
        #expect(MixFXC.mixfx_shelf_eq_create(7, 2, &eq) == MIXFX_ERR_RANGE.rawValue)
        #expect(eq == nil)
    }

    /// The EQ's measured gain at a few frequencies is the engine's formula
    /// (`ShelfEQSettings.responseDB`), within 0.02 dB.
    @Test func shelfEQResponseIsTheFormula() throws {
        var eqHandle: OpaquePointer?
        #expect(MixFXC.mixfx_shelf_eq_create(44_100, 1, &eqHandle) == MIXFX_OK.rawValue)
        let eq = try #require(eqHandle)
        defer { _ = MixFXC.mixfx_shelf_eq_destroy(eq) }
        #expect(MixFXC.mixfx_shelf_eq_set_bass(eq, 6, 120) == MIXFX_OK.rawValue)
        #expect(MixFXC.mixfx_shelf_eq_set_treble(eq, -4.5, 4000) == MIXFX_OK.rawValue)
        #expect(MixFXC.mixfx_shelf_eq_set_gain(eq, -1) == MIXFX_OK.rawValue)
        let settings = ShelfEQSettings(bass: .init(frequencyHz: 120, gainDB: 6), treble: .init(frequencyHz: 4000, gainDB: -4.5),
                                       globalGainDB: -1)
        for hz in [40.0, 120, 1000, 4000, 12_000] {
            #expect(MixFXC.mixfx_shelf_eq_reset(eq) == MIXFX_OK.rawValue)
            let x = Signals.sine(frequencyHz: hz, sampleRate: 44_100, frames: 44_100, amplitude: 0.25)
            var y = x
            x.withUnsafeBufferPointer { xp in
                y.withUnsafeMutableBufferPointer { yp in
                    let inputs: [UnsafePointer<Float>?] = [xp.baseAddress]
                    let outputs: [UnsafeMutablePointer<Float>?] = [yp.baseAddress]
                    #expect(MixFXC.mixfx_shelf_eq_process(eq, inputs, outputs, x.count) == MIXFX_OK.rawValue)
                }
            }
            let measured = Signals.db(Signals.rms(y[22_050...]) / Signals.rms(x[22_050...]))
            let formula = settings.responseDB(atHz: hz, sampleRate: 44_100)
            #expect(abs(measured - formula) < 0.02, "\(hz) Hz: measured \(measured) dB, formula \(formula) dB")
        }
    }
}

extension Handle {
    /// The processor behind a handle (tests).
    static func processor(_ handle: OpaquePointer) -> TimePitchProcessor {
        try! object(handle, .timePitch, as: TimePitchProcessor.self, argument: "tp")
    }
}
