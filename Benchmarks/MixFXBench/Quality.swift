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
        let process: (_ input: String, _ output: String, _ cents: Double, _ tempo: Double) throws -> Bool
        /// Shifts `input` by `cents` and plays it at `tempo` (1: the duration kept) into `output`.
        func run(_ input: String, _ output: String, _ cents: Double, tempo: Double = 1) throws -> Bool {
            try process(input, output, cents, tempo)
        }
    }

    static func tools() -> [Tool] {
        var list: [Tool] = [Tool(name: "mixfx") { input, output, cents, tempo in
            let engine = AudioEngine()
            let t = engine.addTrack(source: try SoundFileReader(path: input))
            t.timePitch.pitchCents = cents
            t.timePitch.rate = tempo
            var r = OfflineRenderer(outputPath: output)   // same sample format as the input, like the peers
            r.overwrite = true
            _ = try r.render(engine)
            return true
        }]
        func external(_ name: String, _ exe: String, _ args: @escaping (String, String, Double, Double) -> [String]) {
            guard let path = which(exe) else { return }
            list.append(Tool(name: name) { i, o, c, r in try runProcess(path, args(i, o, c, r)).status == 0 })
        }
        // (a tempo: sox's `tempo` effect, rubberband's -T, soundstretch's -tempo in percent)
        external("sox pitch", "sox") { i, o, c, r in
            [i, "-e", "floating-point", "-b", "32", o] + (c != 0 || r == 1 ? ["pitch", String(c)] : []) + (r != 1 ? ["tempo", String(r)] : [])
        }
        external("rubberband -2", "rubberband") { i, o, c, r in ["-2", "-p", String(c / 100)] + (r != 1 ? ["-T", String(r)] : []) + [i, o] }
        external("rubberband -3", "rubberband") { i, o, c, r in ["-3", "-p", String(c / 100)] + (r != 1 ? ["-T", String(r)] : []) + [i, o] }
        external("soundstretch", "soundstretch") { i, o, c, r in [i, o, "-pitch=\(c / 100)"] + (r != 1 ? ["-tempo=\((r - 1) * 100)"] : []) }
        return list
    }

    /// Per-tool figures for the closing summary (worst cases over the cases run).
    struct Summary {
        var worstCents = 0.0, worstSINAD = Double.infinity, sinads: [Double] = []
        var worstPartialDB = 0.0, worstBetweenDB = -Double.infinity
        var worstPreEcho = -Double.infinity, worstOnsetMS = 0.0, worstDoubledDB = -Double.infinity
        var meanLSD = Double.nan, meanSC = Double.nan, worstLevelDB = Double.nan
        var tempoCents = 0.0, tempoOnsetMS = 0.0, tempoPreEcho = -Double.infinity, tempoLSD: [Double] = []
        var failed = false
    }

    /// The tempos the tempo rows measure (issue #13's).
    static let tempos = [0.5, 0.8, 1.25, 2.0]

    /// Attacks at a tempo: each hit of `input` (onsets `onsets`) should start at T/R in `y`.
    /// The shift is where `y`'s 1 ms RMS first passes half its peak near T/R, less where the
    /// input's does near T (so the hit's own rise does not count), averaged in magnitude over
    /// the hits; pre-echo is the worst energy in the 30 ms before T/R against the 30 ms after.
    static func tempoAttacks(_ y: [Float], input x: [Float], onsets: [Int], tempo: Double, rate: Int)
        -> (meanAbsShiftMS: Double, preEchoDB: Double) {
        let w = Int(0.03 * Double(rate)), ms = rate / 1000
        func halfPeakOffset(_ s: [Float], _ o: Int) -> Int? {
            guard o - w >= 0 && o + w + ms <= s.count else { return nil }
            let env = (o - w..<o + w).map { i in Signals.rms(s[i..<(i + ms)]) }
            let peak = env.max() ?? 0
            return env.firstIndex { $0 > peak / 2 }.map { $0 - w }
        }
        var shifts: [Double] = [], pre = -200.0
        for o in onsets {
            let e = Int((Double(o) / tempo).rounded())
            guard let a = halfPeakOffset(y, e), let b = halfPeakOffset(x, o) else { continue }
            shifts.append(abs(Double(a - b)) / Double(ms))
            pre = max(pre, Signals.db(Signals.rms(y[(e - w)..<e]) / Signals.rms(y[e..<(e + w)])))
        }
        return (shifts.isEmpty ? .nan : shifts.reduce(0, +) / Double(shifts.count), pre)
    }

    /// Runs every section and prints the summary; `recordings` is the round-trip directory (see
    /// Benchmarks/recordings.sh), `bandTimes` the band's wall times by tool name (from run.sh).
    static func run(recordings: String?, bandTimes: [String: Double]) throws {
        let dir = NSTemporaryDirectory() + "mixfx-quality"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let rate = 44_100
        let tools = tools()
        var summary = [Summary](repeating: Summary(), count: tools.count)
        func header(_ first: String) {
            print(first.padding(toLength: 20, withPad: " ", startingAt: 0)
                  + tools.map { $0.name.padding(toLength: 22, withPad: " ", startingAt: 0) }.joined())
        }
        func cell(_ text: String) -> String { text.padding(toLength: 22, withPad: " ", startingAt: 0) }
        /// Runs `tool` on `input` at `cents`; nil (and the tool marked failed) if it produced nothing.
        func output(_ t: Int, _ input: String, _ cents: Double, tempo: Double = 1) throws -> [Float]? {
            let out = "\(dir)/out.wav"
            try? FileManager.default.removeItem(atPath: out)
            guard try tools[t].run(input, out, cents, tempo: tempo), let y = try? AudioFiles.read(out).channels[0] else {
                summary[t].failed = true
                return nil
            }
            return y
        }

        print("steady tones, 44.1 kHz mono float, middle 2 s of 3 s: frequency error (cents) / SINAD (dB)")
        header("tone, shift")
        for (f, c) in [(60.0, 200.0), (440.0, 200.0), (440.0, -1200.0), (1000.0, 700.0), (3000.0, 1200.0),
                       (8000.0, -500.0), (220.0, 2400.0), (100.0, -2400.0)] {
            let input = "\(dir)/tone.wav"
            try AudioFiles.write([Signals.sine(frequencyHz: f, sampleRate: Double(rate), frames: 3 * rate)],
                                 to: input, sampleRate: rate, sampleFormat: .f32)
            var row = "\(Int(f)) Hz \(c > 0 ? "+" : "")\(Int(c)) ct".padding(toLength: 20, withPad: " ", startingAt: 0)
            for t in tools.indices {
                guard let y = try output(t, input, c), y.count > 2 * rate else { row += cell("failed"); continue }
                let body = y[(rate / 2)..<(5 * rate / 2)]
                let expected = f * pow(2, c / 1200)
                let m = Signals.frequency(body, sampleRate: Double(rate))
                let error = Signals.cents(m, expected)
                let sinad = -Signals.residualDB(body, frequencyHz: m, sampleRate: Double(rate))
                summary[t].worstCents = max(summary[t].worstCents, abs(error))
                summary[t].worstSINAD = min(summary[t].worstSINAD, sinad)
                summary[t].sinads.append(sinad)
                row += cell(String(format: "%+.3f / %5.1f", error, sinad))
            }
            print(row)
        }

        print()
        print("harmonic tones (12 partials falling 3 dB each), 1.5 s: worst partial level change (dB) / energy between partials (dB)")
        header("tone, shift")
        for (f0, c) in [(196.0, 300.0), (196.0, -500.0), (55.0, 300.0), (55.0, -500.0)] {
            let levels = (0..<12).map { 0.25 * pow(10, -3 * Double($0) / 20) }
            let x: [Float] = (0..<(3 * rate / 2)).map { n in
                var v = 0.0
                for j in 0..<12 { v += levels[j] * sin(2 * .pi * f0 * Double(j + 1) * Double(n) / Double(rate) + Double(j * j) * 0.7) }
                return Float(v)
            }
            let input = "\(dir)/harmonic.wav"
            try AudioFiles.write([x], to: input, sampleRate: rate, sampleFormat: .f32)
            var row = "\(Int(f0)) Hz \(c > 0 ? "+" : "")\(Int(c)) ct".padding(toLength: 20, withPad: " ", startingAt: 0)
            for t in tools.indices {
                guard let y = try output(t, input, c), y.count > rate / 2 + 8192 else { row += cell("failed"); continue }
                let r = pow(2, c / 1200)
                let fit = Signals.partials(y[(2 * rate / 5)..<(2 * rate / 5 + 8192)],
                                           frequenciesHz: (1...12).map { f0 * r * Double($0) }, sampleRate: Double(rate))
                let worst = zip(fit.amplitudes, levels).map { abs(Signals.db($0 / $1)) }.max()!
                summary[t].worstPartialDB = max(summary[t].worstPartialDB, worst)
                summary[t].worstBetweenDB = max(summary[t].worstBetweenDB, fit.residualDB)
                row += cell(String(format: "%6.3f / %6.1f", worst, fit.residualDB))
            }
            print(row)
        }

        print()
        print("attacks: noise hits every 0.5 s: pre-echo in the 30 ms before each onset (dB re the hit) / onset shift vs the input (ms) / worst 5 ms level 3–60 ms after the onset vs the input's (dB; a doubled attack shows as several dB)")
        header("shift")
        let hits = Signals.hits(rate: rate)
        let input = "\(dir)/hits.wav"
        try AudioFiles.write([hits.signal], to: input, sampleRate: rate, sampleFormat: .f32)
        for c in [-1200.0, -500.0, -200.0, 200.0, 1200.0] {
            var row = "\(c > 0 ? "+" : "")\(Int(c)) ct".padding(toLength: 20, withPad: " ", startingAt: 0)
            for t in tools.indices {
                guard let y = try output(t, input, c) else { row += cell("failed"); continue }
                let a = Signals.attacks(y, input: hits.signal, onsets: hits.onsets, rate: rate)
                summary[t].worstPreEcho = max(summary[t].worstPreEcho, a.preEchoDB)
                summary[t].worstOnsetMS = max(summary[t].worstOnsetMS, abs(a.shiftMS))
                summary[t].worstDoubledDB = max(summary[t].worstDoubledDB, a.doubledDB)
                row += cell(String(format: "%6.1f/%+6.2f/%+5.1f", a.preEchoDB, a.shiftMS, a.doubledDB))
            }
            print(row)
        }

        print()
        print("tempo R (duration 1/R, pitch kept): 440 Hz tone, frequency error (cents) / noise hits every 0.5 s, mean |onset − T/R| (ms) / pre-echo (dB)")
        header("tempo")
        let tone = "\(dir)/tempo-tone.wav"
        try AudioFiles.write([Signals.sine(frequencyHz: 440, sampleRate: Double(rate), frames: 3 * rate)], to: tone, sampleRate: rate, sampleFormat: .f32)
        for tempo in Self.tempos {
            var row = String(format: "%.2f", tempo).padding(toLength: 20, withPad: " ", startingAt: 0)
            for t in tools.indices {
                guard let y = try output(t, tone, 0, tempo: tempo), y.count > rate else { row += cell("failed"); continue }
                let m = Signals.frequency(y[(y.count / 4)..<(3 * y.count / 4)], sampleRate: Double(rate))
                let error = Signals.cents(m, 440)
                guard let h = try output(t, input, 0, tempo: tempo) else { row += cell("failed"); continue }
                let a = Self.tempoAttacks(h, input: hits.signal, onsets: hits.onsets, tempo: tempo, rate: rate)
                summary[t].tempoCents = max(summary[t].tempoCents, abs(error))
                summary[t].tempoOnsetMS = max(summary[t].tempoOnsetMS, a.meanAbsShiftMS)
                summary[t].tempoPreEcho = max(summary[t].tempoPreEcho, a.preEchoDB)
                row += cell(String(format: "%+.3f %6.2f %6.1f", error, a.meanAbsShiftMS, a.preEchoDB))
            }
            print(row)
        }

        if let recordings {
            print()
            let means = try RoundTripBenchmark.run(directory: recordings, tools: tools)
            for (t, m) in means.enumerated() {
                summary[t].meanLSD = m.lsd; summary[t].meanSC = m.sc; summary[t].worstLevelDB = m.worstLevelDB
            }
            for tempo in Self.tempos {
                print()
                let means = try RoundTripBenchmark.run(directory: recordings, tools: tools, tempo: tempo)
                for (t, m) in means.enumerated() { summary[t].tempoLSD.append(m.lsd) }
            }
        }

        print()
        print("summary (worst case over the rows above unless said; band: Benchmarks/run.sh wall time, and its multiple of mixfx's)")
        header("measure")
        func line(_ name: String, _ value: (Summary) -> String) {
            print(name.padding(toLength: 20, withPad: " ", startingAt: 0) + summary.map { cell(value($0)) }.joined())
        }
        line("freq error (ct)") { String(format: "%.3f", $0.worstCents) }
        line("SINAD min / median") { s in
            let sorted = s.sinads.sorted()
            return sorted.isEmpty ? "-" : String(format: "%.1f / %.1f", s.worstSINAD, sorted[sorted.count / 2])
        }
        line("partials (dB)") { String(format: "%.3f", $0.worstPartialDB) }
        line("between (dB)") { String(format: "%.1f", $0.worstBetweenDB) }
        line("pre-echo (dB)") { String(format: "%.1f", $0.worstPreEcho) }
        line("|onset| (ms)") { String(format: "%.2f", $0.worstOnsetMS) }
        line("doubled (dB)") { String(format: "%+.1f", $0.worstDoubledDB) }
        if recordings != nil {
            line("round trip LSD mean") { String(format: "%.2f", $0.meanLSD) }
            line("round trip SC mean") { String(format: "%.1f", $0.meanSC) }
            line("round trip |level|") { String(format: "%.2f", $0.worstLevelDB) }
        }
        line("tempo freq err (ct)") { String(format: "%.3f", $0.tempoCents) }
        line("tempo |onset| (ms)") { String(format: "%.2f", $0.tempoOnsetMS) }
        line("tempo pre-echo (dB)") { String(format: "%.1f", $0.tempoPreEcho) }
        if recordings != nil {
            line("tempo RT LSD by R") { s in s.tempoLSD.map { String(format: "%.2f", $0) }.joined(separator: " ") }
        }
        if let mixfxTime = bandTimes["mixfx"] {
            print("band wall time (s)".padding(toLength: 20, withPad: " ", startingAt: 0) + tools.map { tool in
                guard let t = bandTimes[tool.name] else { return cell("-") }
                return cell(String(format: "%.3f (%.2f×)", t, t / mixfxTime))
            }.joined())
        }
    }
}
