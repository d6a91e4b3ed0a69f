import Foundation
import MixFX
import TestSupport

/// `mixfx-bench --quality`: the same signals through mixfx's shifter and the peers (sox pitch,
/// rubberband -2/-3, soundstretch, whichever are installed), measured the same way.
///
/// - steady tones: frequency error (cents) and SINAD (dB) over the middle of a 3 s tone;
/// - attacks: noise hits every 0.5 s from silence; pre-echo = energy in the 30 ms before each
///   onset relative to the hit's first 30 ms (dB), and onset displacement (ms).
enum QualityBenchmark {
    struct Tool {
        let name: String
        let run: (_ input: String, _ output: String, _ cents: Double) throws -> Bool
    }

    static func tools() -> [Tool] {
        var list: [Tool] = [Tool(name: "mixfx") { input, output, cents in
            let engine = AudioEngine()
            let t = engine.addTrack(source: try SoundFileReader(path: input))
            t.timePitch.pitchCents = cents
            var r = OfflineRenderer(outputPath: output)   // same sample format as the input, like the peers
            r.overwrite = true
            _ = try r.render(engine)
            return true
        }]
        func external(_ name: String, _ exe: String, _ args: @escaping (String, String, Double) -> [String]) {
            guard let path = which(exe) else { return }
            list.append(Tool(name: name) { i, o, c in try runProcess(path, args(i, o, c)).status == 0 })
        }
        external("sox pitch", "sox") { i, o, c in [i, "-e", "floating-point", "-b", "32", o, "pitch", String(c)] }
        external("rubberband -2", "rubberband") { i, o, c in ["-2", "-p", String(c / 100), i, o] }
        external("rubberband -3", "rubberband") { i, o, c in ["-3", "-p", String(c / 100), i, o] }
        external("soundstretch", "soundstretch") { i, o, c in [i, o, "-pitch=\(c / 100)"] }
        return list
    }

    static func run() throws {
        let dir = NSTemporaryDirectory() + "mixfx-quality"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let rate = 44_100
        let tools = tools()
        print("steady tones, 44.1 kHz mono, middle 2 s of 3 s: frequency error (cents) / SINAD (dB)")
        print("tone, shift".padding(toLength: 20, withPad: " ", startingAt: 0)
              + tools.map { $0.name.padding(toLength: 22, withPad: " ", startingAt: 0) }.joined())
        for (f, c) in [(60.0, 200.0), (440.0, 200.0), (440.0, -1200.0), (1000.0, 700.0), (3000.0, 1200.0),
                       (8000.0, -500.0), (220.0, 2400.0), (100.0, -2400.0)] {
            let input = "\(dir)/tone.wav"
            try AudioFiles.write([Signals.sine(frequencyHz: f, sampleRate: Double(rate), frames: 3 * rate)],
                                 to: input, sampleRate: rate, sampleFormat: .f32)
            var row = "\(Int(f)) Hz \(c > 0 ? "+" : "")\(Int(c)) ct".padding(toLength: 20, withPad: " ", startingAt: 0)
            for tool in tools {
                let out = "\(dir)/out.wav"
                try? FileManager.default.removeItem(atPath: out)
                guard try tool.run(input, out, c), let y = try? AudioFiles.read(out).channels[0], y.count > 2 * rate else {
                    row += "failed".padding(toLength: 22, withPad: " ", startingAt: 0); continue
                }
                let body = y[(rate / 2)..<(5 * rate / 2)]
                let expected = f * pow(2, c / 1200)
                let m = Signals.frequency(body, sampleRate: Double(rate))
                let cell = String(format: "%+.3f / %5.1f", Signals.cents(m, expected), -Signals.residualDB(body, frequencyHz: m, sampleRate: Double(rate)))
                row += cell.padding(toLength: 22, withPad: " ", startingAt: 0)
            }
            print(row)
        }
        print()
        print("attacks: noise hits every 0.5 s; pre-echo in the 30 ms before each onset (dB re the hit) / onset shift vs the input (ms) / worst 5 ms level 3–60 ms after the onset vs the input's (dB; a doubled attack shows as several dB)")
        print("shift".padding(toLength: 20, withPad: " ", startingAt: 0)
              + tools.map { $0.name.padding(toLength: 22, withPad: " ", startingAt: 0) }.joined())
        let hits = Signals.hits(rate: rate)
        let input = "\(dir)/hits.wav"
        try AudioFiles.write([hits.signal], to: input, sampleRate: rate, sampleFormat: .f32)
        for c in [-1200.0, -500.0, -200.0, 200.0, 1200.0] {
            var row = "\(c > 0 ? "+" : "")\(Int(c)) ct".padding(toLength: 20, withPad: " ", startingAt: 0)
            for tool in tools {
                let out = "\(dir)/out.wav"
                try? FileManager.default.removeItem(atPath: out)
                guard try tool.run(input, out, c), let y = try? AudioFiles.read(out).channels[0] else {
                    row += "failed".padding(toLength: 22, withPad: " ", startingAt: 0); continue
                }
                let a = Signals.attacks(y, input: hits.signal, onsets: hits.onsets, rate: rate)
                row += String(format: "%6.1f/%+6.2f/%+5.1f", a.preEchoDB, a.shiftMS, a.doubledDB)
                    .padding(toLength: 22, withPad: " ", startingAt: 0)
            }
            print(row)
        }
    }
}
