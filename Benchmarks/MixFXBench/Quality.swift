import Foundation
import MixFX
import TestSupport

/// `mixfx-bench --quality`: the same signals through mixfx's shifter and the peers (sox pitch,
/// rubberband -2/-3, soundstretch; Signalsmith Stretch at its default and with its 8 kHz
/// tonality limit, and Bungee, through their Python packages and the adapters in
/// Benchmarks/peers; whichever are installed, each missing one named), measured the same way.
///
/// - steady tones: frequency error (cents) and SINAD (dB) over the middle of a 3 s tone;
/// - attacks: noise hits every 0.5 s from silence; pre-echo = energy in the 30 ms before each
///   onset relative to the hit's first 30 ms (dB), and onset displacement (ms); the same hits
///   over a bed of low tones, pre-echo above 4 kHz (where a gate on the whole band cannot see it);
/// - white noise: its level after a shift or a tempo change;
/// - round trips of recordings (RoundTrip.swift), with ViSQOL's score where visqol-python is
///   installed.
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
        /// mixfx through its engine, with a tonality limit (Hz, 0: none) where it applies (tempo 1).
        func mixfx(_ name: String, tonalityLimitHz: Double) -> Tool {
            Tool(name: name) { input, output, cents, tempo in
                let engine = AudioEngine()
                let t = engine.addTrack(source: try SoundFileReader(path: input))
                t.timePitch.pitchCents = cents
                t.timePitch.rate = tempo
                if tempo == 1 { t.timePitch.tonalityParameter.value = tonalityLimitHz }
                var r = OfflineRenderer(outputPath: output)   // same sample format as the input, like the peers
                r.overwrite = true
                _ = try r.render(engine)
                return true
            }
        }
        var list: [Tool] = [mixfx("mixfx", tonalityLimitHz: 0), mixfx("mixfx 8k", tonalityLimitHz: 8000)]
        func external(_ name: String, _ exe: String, _ args: @escaping (String, String, Double, Double) -> [String]) {
            guard let path = which(exe) else { print("(skipped: \(name): \(exe) is not installed)"); return }
            list.append(Tool(name: name) { i, o, c, r in try runProcess(path, args(i, o, c, r)).status == 0 })
        }
        /// A peer run by its adapter in Benchmarks/peers (`ADAPTER.py IN OUT --cents C --tempo R`).
        func python(_ name: String, _ script: String, package: String, _ extra: [String] = []) {
            let adapter = "\(peers)/\(script)"
            guard let py = which("python3"), (try? runProcess(py, [adapter, "--check"]))?.status == 0 else {
                print("(skipped: \(name): needs python3 with `pip install \(package) soundfile`)"); return
            }
            list.append(Tool(name: name) { i, o, c, r in
                try runProcess(py, [adapter, i, o, "--cents", String(c), "--tempo", String(r)] + extra).status == 0
            })
        }
        // (a tempo: sox's `tempo` effect, rubberband's -T, soundstretch's -tempo in percent)
        external("sox pitch", "sox") { i, o, c, r in
            [i, "-e", "floating-point", "-b", "32", o] + (c != 0 || r == 1 ? ["pitch", String(c)] : []) + (r != 1 ? ["tempo", String(r)] : [])
        }
        external("rubberband -2", "rubberband") { i, o, c, r in ["-2", "-p", String(c / 100)] + (r != 1 ? ["-T", String(r)] : []) + [i, o] }
        external("rubberband -3", "rubberband") { i, o, c, r in ["-3", "-p", String(c / 100)] + (r != 1 ? ["-T", String(r)] : []) + [i, o] }
        external("soundstretch", "soundstretch") { i, o, c, r in [i, o, "-pitch=\(c / 100)"] + (r != 1 ? ["-tempo=\((r - 1) * 100)"] : []) }
        // (Signalsmith's tonality limit: its README's 8000/sampleRate, issue #32's best on music)
        python("signalsmith", "signalsmith.py", package: "python-stretch")
        python("signalsmith 8k", "signalsmith.py", package: "python-stretch", ["--tonality-limit", "8000"])
        python("bungee", "bungee.py", package: "bungee-python")
        return list
    }

    /// Benchmarks/peers: the adapters of the Python peers and the ViSQOL scorer.
    static let peers = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("peers").path

    /// Benchmarks/peers/visqol_mos.py if visqol-python imports, else nil (and a line saying so).
    static func visqol() -> String? {
        let script = "\(peers)/visqol_mos.py"
        guard let py = which("python3"), (try? runProcess(py, [script, "--check"]))?.status == 0 else {
            print("(skipped: the ViSQOL rows: need python3 with `pip install visqol-python`)"); return nil
        }
        return script
    }

    /// Per-tool figures for the closing summary (worst cases over the cases run).
    struct Summary {
        var worstCents = 0.0, worstSINAD = Double.infinity, sinads: [Double] = []
        var worstPartialDB = 0.0, worstBetweenDB = -Double.infinity
        var worstPreEcho = -Double.infinity, worstOnsetMS = 0.0, worstDoubledDB = -Double.infinity
        var worstBedPreEcho = -Double.infinity
        var meanLSD = Double.nan, meanSC = Double.nan, worstLevelDB = Double.nan
        var lsd300 = Double.nan, sc300 = Double.nan, level300 = Double.nan, mos300 = Double.nan
        var noiseDB: [Double] = []
        var tempoCents = 0.0, tempoOnsetMS = 0.0, tempoPreEcho = -Double.infinity, tempoLSD: [Double] = []
        var tempoMOS: [Double] = []
        var failed = false
    }

    /// The tempos the tempo rows measure (issue #13's).
    static let tempos = [0.5, 0.8, 1.25, 2.0]
    /// The tempo round trips ViSQOL scores too (issue #32's).
    static let visqolTempos: Set<Double> = [0.8, 1.25]
    /// White noise's shifts (cents, tempo): issue #32's −400 cents and tempo 2, and their mirrors.
    static let noiseCases: [(cents: Double, tempo: Double)] = [(-400, 1), (400, 1), (0, 0.5), (0, 2)]

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
    /// Benchmarks/recordings.sh), `bandTimes` the band's wall times by tool name (from run.sh),
    /// `only` the tools to run by name (nil: every one installed; ViSQOL scores either way).
    static func run(recordings: String?, bandTimes: [String: Double], only: Set<String>? = nil) throws {
        let dir = try workDirectory("mixfx-quality")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let rate = 44_100
        let tools = tools().filter { only?.contains($0.name) ?? true }
        let visqol = recordings != nil ? Self.visqol() : nil
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
        print("attacks: noise hits every 0.5 s: pre-echo in the 30 ms before each onset (dB re the hit) / onset shift vs the input (ms) / worst 5 ms level 3–60 ms after the onset vs the input's (dB; a doubled attack shows as several dB; 5 ms of noise varies, so the hits' envelope exactly with other noise reads about +1)")
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
        print("the same hits over a bed of low tones (nothing above 4 kHz): pre-echo above 4 kHz in the 30 ms before each onset (dB re the 30 ms after)")
        header("shift")
        let bed = Signals.hitsOverBed(rate: rate)
        let bedInput = "\(dir)/hits-bed.wav"
        try AudioFiles.write([bed.signal], to: bedInput, sampleRate: rate, sampleFormat: .f32)
        for c in [-1200.0, -500.0, -200.0, 200.0, 1200.0] {
            var row = "\(c > 0 ? "+" : "")\(Int(c)) ct".padding(toLength: 20, withPad: " ", startingAt: 0)
            for t in tools.indices {
                guard let y = try output(t, bedInput, c) else { row += cell("failed"); continue }
                let pre = Signals.preEchoAbove(y, cutoffHz: 4000, onsets: bed.onsets, rate: rate)
                summary[t].worstBedPreEcho = max(summary[t].worstBedPreEcho, pre)
                row += cell(String(format: "%6.1f", pre))
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

        print()
        print("white noise (uniform, 3 s, −15 dBFS RMS): level of the output's middle two thirds against the input's (dB; 0 keeps it)")
        header("shift")
        let noise = "\(dir)/noise.wav"
        let noiseSignal = Signals.noise(frames: 3 * rate, amplitude: 0.3)
        try AudioFiles.write([noiseSignal], to: noise, sampleRate: rate, sampleFormat: .f32)
        for (c, tempo) in Self.noiseCases {
            var row = (tempo != 1 ? String(format: "tempo %g", tempo) : "\(c > 0 ? "+" : "")\(Int(c)) ct")
                .padding(toLength: 20, withPad: " ", startingAt: 0)
            for t in tools.indices {
                guard let y = try output(t, noise, c, tempo: tempo), y.count > rate / 2 else { row += cell("failed"); continue }
                let level = Signals.db(Signals.rms(y[(y.count / 6)..<(5 * y.count / 6)]) / Signals.rms(noiseSignal[...]))
                summary[t].noiseDB.append(level)
                row += cell(String(format: "%+.2f", level))
            }
            print(row)
        }

        if let recordings {
            print()
            let means = try RoundTripBenchmark.run(directory: recordings, tools: tools)
            for (t, m) in means.enumerated() {
                summary[t].meanLSD = m.lsd; summary[t].meanSC = m.sc; summary[t].worstLevelDB = m.worstLevelDB
            }
            print()
            for (t, m) in try RoundTripBenchmark.run(directory: recordings, tools: tools, cents: 300, visqol: visqol).enumerated() {
                summary[t].lsd300 = m.lsd; summary[t].sc300 = m.sc; summary[t].level300 = m.worstLevelDB; summary[t].mos300 = m.mos
            }
            for tempo in Self.tempos {
                print()
                let means = try RoundTripBenchmark.run(directory: recordings, tools: tools, tempo: tempo,
                                                       visqol: Self.visqolTempos.contains(tempo) ? visqol : nil)
                for (t, m) in means.enumerated() {
                    summary[t].tempoLSD.append(m.lsd)
                    if Self.visqolTempos.contains(tempo) { summary[t].tempoMOS.append(m.mos) }
                }
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
        line("bed pre-echo >4k") { String(format: "%.1f", $0.worstBedPreEcho) }
        line("|onset| (ms)") { String(format: "%.2f", $0.worstOnsetMS) }
        line("doubled (dB)") { String(format: "%+.1f", $0.worstDoubledDB) }
        line("noise −400 ct / T 2") { s in
            s.noiseDB.count == Self.noiseCases.count ? String(format: "%+.2f / %+.2f", s.noiseDB[0], s.noiseDB[3]) : "failed"
        }
        if recordings != nil {
            line("round trip LSD mean") { String(format: "%.2f", $0.meanLSD) }
            line("round trip SC mean") { String(format: "%.1f", $0.meanSC) }
            line("round trip |level|") { String(format: "%.2f", $0.worstLevelDB) }
            line("±300 LSD / SC") { String(format: "%.2f / %.1f", $0.lsd300, $0.sc300) }
            line("±300 |level|") { String(format: "%.2f", $0.level300) }
            if visqol != nil { line("±300 ViSQOL mean") { String(format: "%.3f", $0.mos300) } }
        }
        line("tempo freq err (ct)") { String(format: "%.3f", $0.tempoCents) }
        line("tempo |onset| (ms)") { String(format: "%.2f", $0.tempoOnsetMS) }
        line("tempo pre-echo (dB)") { String(format: "%.1f", $0.tempoPreEcho) }
        if recordings != nil {
            line("tempo RT LSD by R") { s in s.tempoLSD.map { String(format: "%.2f", $0) }.joined(separator: " ") }
            if visqol != nil {
                line("ViSQOL T 0.8 / 1.25") { s in s.tempoMOS.map { String(format: "%.3f", $0) }.joined(separator: " / ") }
            }
        }
        if let mixfxTime = bandTimes["mixfx"] {
            print("band wall time (s)".padding(toLength: 20, withPad: " ", startingAt: 0) + tools.map { tool in
                guard let t = bandTimes[tool.name] else { return cell("-") }
                return cell(String(format: "%.3f (%.2f×)", t, t / mixfxTime))
            }.joined())
        }
    }
}
