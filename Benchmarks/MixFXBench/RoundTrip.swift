import Foundation
import MixFX
import TestSupport

/// `mixfx-bench --roundtrip DIR`: every recording in DIR (see Benchmarks/recordings.sh) shifted up
/// by an interval and back down by the same interval with each tool, then compared with the
/// original after alignment (channels averaged):
///
/// - LSD, log-spectral distance (dB): per STFT frame (2048 points, hop 512, Hann) the RMS over
///   bins of 10·log10 P_x − 10·log10 P_y (powers floored at 80 dB below the file's loudest
///   bin), averaged over the frames within 50 dB of the loudest; lower is closer;
/// - SC, spectral convergence (dB): 20·log10(‖|X| − |Y|‖ / ‖|X|‖) over all frames; lower is closer;
/// - level change (dB): RMS of the round trip against the original;
/// - with `visqol` (the path of Benchmarks/peers/visqol_mos.py), ViSQOL's MOS-LQO in its audio
///   mode of the same aligned stretch of the round trip against the same stretch of the original
///   (1 to about 4.75; higher is closer), in a second table.
enum RoundTripBenchmark {
    /// Prints the table; returns each tool's mean LSD and SC, its worst |level change| and its
    /// mean ViSQOL score (nan without `visqol`).
    @discardableResult
    static func run(directory: String, tools: [QualityBenchmark.Tool], cents: Double = 400, tempo: Double? = nil,
                    visqol: String? = nil) throws
        -> [(lsd: Double, sc: Double, worstLevelDB: Double, mos: Double)] {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory)
            .filter { $0.hasSuffix(".wav") }.sorted()
        let work = try workDirectory("mixfx-roundtrip")
        defer { try? FileManager.default.removeItem(atPath: work) }
        if let tempo {
            print("round trip tempo \(tempo) then \(String(format: "%.4g", 1 / tempo)): LSD (dB) / SC (dB) / level change (dB); lower LSD and SC are closer")
        } else {
            print("round trip +\(Int(cents)) then −\(Int(cents)) cents: LSD (dB) / SC (dB) / level change (dB); lower LSD and SC are closer")
        }
        print("recording".padding(toLength: 14, withPad: " ", startingAt: 0)
              + tools.map { $0.name.padding(toLength: 24, withPad: " ", startingAt: 0) }.joined())
        var sums = [Double](repeating: 0, count: tools.count * 2)
        var worstLevel = [Double](repeating: 0, count: tools.count)
        var pairs: [(tool: Int, file: String, ref: String, deg: String)] = []
        for file in files {
            let input = directory + "/" + file
            let x = mono(try AudioFiles.read(input).channels)
            var row = String(file.dropLast(4)).padding(toLength: 14, withPad: " ", startingAt: 0)
            for (t, tool) in tools.enumerated() {
                let up = "\(work)/up.wav", back = "\(work)/back.wav"
                try? FileManager.default.removeItem(atPath: up)
                try? FileManager.default.removeItem(atPath: back)
                // a pitch round trip (+c, −c), or a tempo one (R, 1/R)
                let (c1, r1, c2, r2) = tempo.map { (0.0, $0, 0.0, 1 / $0) } ?? (cents, 1.0, -cents, 1.0)
                guard try tool.run(input, up, c1, tempo: r1), try tool.run(up, back, c2, tempo: r2),
                      let y = try? mono(AudioFiles.read(back).channels) else {
                    row += "failed".padding(toLength: 24, withPad: " ", startingAt: 0); continue
                }
                let m = measure(x, y)
                if visqol != nil {
                    // the stretches measure compared, for ViSQOL after the table
                    let margin = 2205 + 132, n = min(x.count, y.count)
                    let ref = "\(work)/vq-\(t)-\(file)-ref.wav", deg = "\(work)/vq-\(t)-\(file)-deg.wav"
                    try AudioFiles.write([Array(x[margin..<(n - margin)])], to: ref, sampleRate: 44_100, sampleFormat: .f32)
                    try AudioFiles.write([Array(y[(margin + m.lag)..<(n - margin + m.lag)])], to: deg, sampleRate: 44_100, sampleFormat: .f32)
                    pairs.append((t, file, ref, deg))
                }
                sums[2 * t] += m.lsd; sums[2 * t + 1] += m.sc
                worstLevel[t] = max(worstLevel[t], abs(m.levelDB))
                row += String(format: "%5.2f / %6.1f / %+5.2f", m.lsd, m.sc, m.levelDB)
                    .padding(toLength: 24, withPad: " ", startingAt: 0)
            }
            print(row)
        }
        var row = "mean".padding(toLength: 14, withPad: " ", startingAt: 0)
        for t in tools.indices {
            row += String(format: "%5.2f / %6.1f", sums[2 * t] / Double(files.count), sums[2 * t + 1] / Double(files.count))
                .padding(toLength: 24, withPad: " ", startingAt: 0)
        }
        print(row)
        let mos = try visqol.map { try scoreViSQOL(pairs, script: $0, tools: tools, files: files) }
            ?? [Double](repeating: .nan, count: tools.count)
        return tools.indices.map { (sums[2 * $0] / Double(files.count), sums[2 * $0 + 1] / Double(files.count), worstLevel[$0], mos[$0]) }
    }

    /// Scores `pairs` with ViSQOL (one python process for them all), prints them by recording and
    /// tool, and returns each tool's mean (nan where a pair was not scored).
    static func scoreViSQOL(_ pairs: [(tool: Int, file: String, ref: String, deg: String)], script: String,
                            tools: [QualityBenchmark.Tool], files: [String]) throws -> [Double] {
        print("ViSQOL MOS-LQO of the same round trips (audio mode, 48 kHz; higher is closer; a file against itself scores about 4.7)")
        let r = try runProcess(which("python3") ?? "/usr/bin/python3", [script] + pairs.flatMap { [$0.ref, $0.deg] })
        let scores = r.stdout.split(separator: "\n").compactMap { Double($0) }
        guard r.status == 0, scores.count == pairs.count else {
            print("(ViSQOL failed: \(r.stderr.split(separator: "\n").last ?? ""))")
            return [Double](repeating: .nan, count: tools.count)
        }
        var byTool = [[Double]](repeating: [], count: tools.count)
        for file in files {
            var row = String(file.dropLast(4)).padding(toLength: 14, withPad: " ", startingAt: 0)
            for t in tools.indices {
                let i = pairs.firstIndex { $0.tool == t && $0.file == file }
                if let i { byTool[t].append(scores[i]) }
                row += (i.map { String(format: "%.3f", scores[$0]) } ?? "failed").padding(toLength: 24, withPad: " ", startingAt: 0)
            }
            print(row)
        }
        let means = byTool.map { $0.count == files.count ? $0.reduce(0, +) / Double($0.count) : .nan }
        print("mean".padding(toLength: 14, withPad: " ", startingAt: 0)
              + means.map { String(format: "%.3f", $0).padding(toLength: 24, withPad: " ", startingAt: 0) }.joined())
        return means
    }

    static func mono(_ channels: [[Float]]) -> [Float] {
        guard channels.count > 1 else { return channels[0] }
        return (0..<channels[0].count).map { i in channels.reduce(0) { $0 + $1[i] } / Float(channels.count) }
    }

    /// Aligns `y` to `x` and measures it. A shifter changes phases, so the waveforms of a round
    /// trip need not correlate, but its energy stays where it was: the lag of the largest
    /// cross-correlation of the 2 ms energy envelopes (within ±50 ms at 44.1 kHz) and the
    /// tool's own alignment (lag 0: every tool's latency is compensated) are each searched
    /// within ±3 ms in 0.25 ms steps, and the lag of the lowest SC is refined in steps of one
    /// frame (±5), the same search for every tool. (The envelopes alone missed by 200 frames on
    /// speech, where nothing near the true lag was then tried.) Every lag is measured over the
    /// same stretch of `x` (all but the first and last 53 ms), so its spectrogram is computed
    /// once. `lag`: where that stretch of `x` is in `y`.
    static func measure(_ x: [Float], _ y: [Float]) -> (lsd: Double, sc: Double, levelDB: Double, lag: Int) {
        let coarse = bestLag(envelope(x), envelope(y), maxLag: 2205)
        let margin = 2205 + 132, n = min(x.count, y.count)
        let a = Array(x[margin..<(n - margin)])
        let pa = spectrogram(a)
        var best: (lsd: Double, sc: Double, levelDB: Double, lag: Int)?
        var tried = Set<Int>()
        func tryLag(_ lag: Int) {
            guard abs(lag) <= margin, tried.insert(lag).inserted else { return }
            let b = Array(y[(margin + lag)..<(n - margin + lag)])
            let m = measure(pa, spectrogram(b), level: Signals.db(Signals.rms(b[...]) / Signals.rms(a[...])))
            if best == nil || m.sc < best!.sc { best = (m.lsd, m.sc, m.levelDB, lag) }
        }
        for centre in [coarse, 0] {
            for lag in stride(from: centre - 132, through: centre + 132, by: 11) { tryLag(lag) }
        }
        let found = best!.lag
        for lag in (found - 5)...(found + 5) { tryLag(lag) }
        return best!
    }

    /// LSD and SC of the spectrogram `pb` against `pa`.
    static func measure(_ pa: [[Double]], _ pb: [[Double]], level: Double) -> (lsd: Double, sc: Double, levelDB: Double) {
        let loudest = pa.flatMap { $0 }.max() ?? 1
        let floor = loudest * 1e-8
        let frameEnergy = pa.map { $0.reduce(0, +) }
        let loudestFrame = frameEnergy.max() ?? 1
        var lsd = 0.0, frames = 0, diff = 0.0, ref = 0.0
        for (f, (u, v)) in zip(pa, pb).enumerated() {
            for k in u.indices {
                let d = u[k].squareRoot() - v[k].squareRoot()
                diff += d * d; ref += u[k]
            }
            guard frameEnergy[f] > loudestFrame * 1e-5 else { continue }
            var s = 0.0
            for k in u.indices {
                let d = 10 * log10(max(u[k], floor)) - 10 * log10(max(v[k], floor))
                s += d * d
            }
            lsd += (s / Double(u.count)).squareRoot(); frames += 1
        }
        return (lsd / Double(max(frames, 1)), 10 * log10(max(diff, 1e-30) / max(ref, 1e-30)), level)
    }

    /// Mean of x² over the 2 ms (88 samples) from each sample on, less its overall mean.
    static func envelope(_ x: [Float]) -> [Float] {
        let w = 88
        var sums = [Double](repeating: 0, count: x.count + 1)
        for i in x.indices { sums[i + 1] = sums[i] + Double(x[i]) * Double(x[i]) }
        let e = x.indices.map { i in (sums[min(x.count, i + w)] - sums[i]) / Double(w) }
        let mean = e.reduce(0, +) / Double(max(e.count, 1))
        return e.map { Float($0 - mean) }
    }

    /// Power spectra of Hann-windowed 2048-point frames, hop 512.
    static func spectrogram(_ x: [Float]) -> [[Double]] {
        let n = 2048, fft = RealFFT(size: n)
        let w = (0..<n).map { Float(0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(n))) }
        var frame = [Float](repeating: 0, count: n)
        var re = [Float](repeating: 0, count: n / 2 + 1), im = re
        var out: [[Double]] = []
        var s = 0
        while s + n <= x.count {
            for i in 0..<n { frame[i] = x[s + i] * w[i] }
            fft.forward(frame, re: &re, im: &im)
            out.append((0...(n / 2)).map { Double(re[$0]) * Double(re[$0]) + Double(im[$0]) * Double(im[$0]) })
            s += 512
        }
        return out
    }

    /// The lag L in ±maxLag maximising Σ x[i]·y[i + L] (by FFT).
    static func bestLag(_ x: [Float], _ y: [Float], maxLag: Int) -> Int {
        var m = 1
        while m < x.count + y.count { m *= 2 }
        let fft = RealFFT(size: m)
        var xa = x + [Float](repeating: 0, count: m - x.count), ya = y + [Float](repeating: 0, count: m - y.count)
        var xr = [Float](repeating: 0, count: m / 2 + 1), xi = xr, yr = xr, yi = xr
        fft.forward(&xa, re: &xr, im: &xi)
        fft.forward(&ya, re: &yr, im: &yi)
        // corr[L] = Σ x[i]·y[i + L]: spectrum conj(X)·Y
        var cr = xr, ci = xi
        for k in 0...(m / 2) {
            cr[k] = xr[k] * yr[k] + xi[k] * yi[k]
            ci[k] = xr[k] * yi[k] - xi[k] * yr[k]
        }
        var corr = [Float](repeating: 0, count: m)
        fft.inverse(re: cr, im: ci, output: &corr)
        var best = 0, bestValue = -Float.infinity
        for lag in -maxLag...maxLag {
            let v = corr[(lag + m) % m]
            if v > bestValue { bestValue = v; best = lag }
        }
        return best
    }
}
