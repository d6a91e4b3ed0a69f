import Foundation
import MixFX
import TestSupport

/// `mixfx-bench --lv2 RECORDINGS URI=LATENCY...` (run by Benchmarks/lv2-compare.sh): LV2 pitch
/// plugins compared through the same host, Debian's lv2apply, on the same files. Each plugin
/// is given with the latency its port reports; the measures are those of `--quality`:
///
/// - where a click lands, against the reported latency (frames);
/// - steady tones (440 Hz, 4 s at 48 kHz): frequency error (cents) and SINAD (dB);
/// - round trips (+400 then −400 cents) of the recordings in RECORDINGS (mono WAVs): LSD and SC.
///
/// lv2apply neither pads nor trims: each input gets the latency in silence at its end, and the
/// output loses as many frames at its start (the reported latency).
enum LV2Comparison {
    static func tool(uri: String, latency: Int) -> QualityBenchmark.Tool {
        let name = uri.hasPrefix("https://mixfx.dev") ? "mixfx.lv2" : "rubberband-lv2 " + (uri.split(separator: "#").last.map(String.init) ?? "")
        return QualityBenchmark.Tool(name: name) { input, output, cents, tempo in
            guard tempo == 1 else { return false }
            let x = try AudioFiles.read(input)
            let padded = output + ".in.wav", raw = output + ".out.wav"
            defer { unlink(padded); unlink(raw) }
            try AudioFiles.write(x.channels.map { $0 + [Float](repeating: 0, count: latency) }, to: padded,
                                 sampleRate: x.format.sampleRate, sampleFormat: .f32)
            // mixfx's cents port takes the whole shift; Rubber Band's takes −100…100 beside whole semitones
            let semitones = (cents / 100).rounded(.towardZero)
            let controls = name == "mixfx.lv2" ? ["-c", "cents", String(cents)]
                : ["-c", "semitones", String(Int(semitones)), "-c", "cents", String(Int((cents - 100 * semitones).rounded()))]
            let r = try runProcess(which("lv2apply")!, ["-i", padded, "-o", raw] + controls + [uri])
            guard r.status == 0 else { print("lv2apply \(uri): \(r.stderr)"); return false }
            let y = try AudioFiles.read(raw).channels
            try AudioFiles.write(y.map { Array($0.dropFirst(latency)) }, to: output, sampleRate: x.format.sampleRate, sampleFormat: .f32)
            return true
        }
    }

    static func run(recordings: String, plugins: [(uri: String, latency: Int)]) throws {
        let rate = 48_000
        let work = try workDirectory("mixfx-lv2-compare")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let tools = plugins.map { tool(uri: $0.uri, latency: $0.latency) }
        func cell(_ s: String) -> String { s.padding(toLength: 26, withPad: " ", startingAt: 0) }
        print(cell("") + tools.map { cell($0.name) }.joined())
        print(cell("reported latency") + plugins.map { cell("\($0.latency) frames") }.joined())

        // a click at 1 s, through at +300 cents and 0 (after trimming, it should be at 48000)
        let clickIn = work + "/click.wav"
        var click = [Float](repeating: 0, count: 3 * rate)
        click[rate] = 0.9
        try AudioFiles.write([click], to: clickIn, sampleRate: rate, sampleFormat: .f32)
        for cents in [0.0, 300] {
            var row = cell("click at \(Int(cents)) c: off by")
            for t in tools {
                let out = work + "/click-out.wav"
                guard try t.run(clickIn, out, cents) else { row += cell("failed"); continue }
                let y = try AudioFiles.read(out).channels[0]
                let peak = y.indices.max { abs(y[$0]) < abs(y[$1]) }!
                row += cell("\(peak - rate) frames")
            }
            print(row)
        }

        let sineIn = work + "/sine.wav"
        try AudioFiles.write([Signals.sine(frequencyHz: 440, sampleRate: Double(rate), frames: 4 * rate)], to: sineIn,
                             sampleRate: rate, sampleFormat: .f32)
        for cents in [100.0, 400, -700, 1200] {
            var row = cell("440 Hz at \(Int(cents)) c")
            for t in tools {
                let out = work + "/sine-out.wav"
                guard try t.run(sineIn, out, cents) else { row += cell("failed"); continue }
                let y = try AudioFiles.read(out).channels[0]
                let steady = y[rate..<(3 * rate)]
                let hz = 440 * pow(2, cents / 1200)
                let error = Signals.cents(Signals.frequency(steady, sampleRate: Double(rate)), hz)
                row += cell(String(format: "%+.3f c, SINAD %.1f dB", error, -Signals.residualDB(steady, frequencyHz: hz, sampleRate: Double(rate))))
            }
            print(row)
        }
        try RoundTripBenchmark.run(directory: recordings, tools: tools, cents: 400)
    }
}
