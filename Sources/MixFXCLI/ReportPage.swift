import Foundation
import MixFX

/// `mixfx render --report FILE.html`: the JSON report as one self-contained page (inline SVG and
/// CSS; no script runs, nothing is fetched). The plots are drawn from the report object itself,
/// which the page also carries (`<script type="application/json" id="report">`, data, not code),
/// and every plot area states its axes as data- attributes, so a test can read the points back.
enum ReportPage {
    static let colors = ["#1f6fd0", "#d0641f", "#2a9d3a", "#9b3fc0", "#c0392b", "#16a0a0", "#7f8c1d", "#8e5a2b"]
    static let mixColor = "#111"

    static func html(_ report: [String: Any], session: ResolvedSession, sampleRate: Double) -> String {
        let tracks = report["tracks"] as? [[String: Any]] ?? []
        let mix = report["mix"] as? [String: Any] ?? [:]
        let output = report["output"] as? [String: Any] ?? [:]
        let duration = output["durationSeconds"] as? Double ?? 0
        let names = tracks.map { "track \($0["track"] as? Int ?? 0)" }
        var body = "<h1>mixfx render report</h1>\n"
        body += "<p class=\"sub\">\(escape(output["path"] as? String ?? "")) · \(escape(output["container"] as? String ?? "")), \(escape(output["sampleFormat"] as? String ?? "")), \(output["sampleRateHz"] as? Int ?? 0) Hz, \(output["channels"] as? Int == 1 ? "mono" : "stereo") · \(String(format: "%.3f s", duration))</p>\n"
        body += settingsTable(report)
        // measures
        body += "<h2>Measures</h2>\n<table id=\"measures\"><tr><th></th><th>input</th><th>integrated (LUFS)</th><th>range (LU)</th><th>true peak (dBTP)</th><th>sample peak (dBFS)</th><th>at full scale</th><th>DC offset</th><th>correlation</th><th>mono loss (dB)</th></tr>\n"
        func row(_ name: String, _ input: String, _ m: [String: Any]?, extra: String = "") -> String {
            let m = m ?? [:]
            let dc = (m["dcOffset"] as? [Double] ?? []).map { String(format: "%.5f", $0) }.joined(separator: " / ")
            return "<tr><th>\(escape(name))</th><td>\(escape(input))</td><td>\(num(m["integratedLUFS"]))</td><td>\(num(m["loudnessRangeLU"]))</td><td>\(num(m["truePeakDBTP"], 2))</td><td>\(num(m["samplePeakDBFS"], 2))</td><td>\(m["samplesAtFullScale"] as? Int ?? 0)\(extra)</td><td>\(dc)</td><td>\(num(m["correlation"], 2))</td><td>\(num(m["monoSumLossDB"], 2))</td></tr>\n"
        }
        for (i, t) in tracks.enumerated() { body += row(names[i], t["input"] as? String ?? "", t["measures"] as? [String: Any]) }
        body += row("mix", output["path"] as? String ?? "", mix["measures"] as? [String: Any],
                    extra: " (clipped \(mix["clippedSamples"] as? Int ?? 0))")
        if let note = measuresNote(report) {
            body += "<tr class=\"note\"><td colspan=\"10\" id=\"measures-note\">\(escape(note))</td></tr>\n"
        }
        body += "</table>\n"
        // processing
        body += "<h2>Processing</h2>\n<ol id=\"processing\">\n"
        for step in report["processing"] as? [[String: Any]] ?? [] {
            let name = step["step"] as? String ?? ""
            let details = step.filter { $0.key != "step" }.sorted { $0.key < $1.key }
                .map { "\($0.key) \(value($0.value))" }.joined(separator: ", ")
            body += "<li><b>\(escape(name))</b> \(escape(details))</li>\n"
        }
        body += "</ol>\n"
        if let timing = report["timing"] as? [String: Any] {
            body += "<p>Rendered in \(num(timing["elapsedSeconds"], 2)) s (\(num(timing["speedTimesRealTime"], 1))× real time).</p>\n"
        }
        // loudness over time: every track and the mix on one plot
        var loudness: [Series] = []
        for (i, t) in tracks.enumerated() {
            if let h = t["history"] as? [String: Any] {
                loudness.append(Series(id: "track\(i + 1)-shortTermLUFS", name: names[i], color: colors[i % colors.count],
                                       step: h["stepSeconds"] as? Double ?? 0.1, values: levels(h["shortTermLUFS"])))
            }
        }
        if let h = mix["history"] as? [String: Any] {
            loudness.append(Series(id: "mix-shortTermLUFS", name: "mix", color: mixColor, step: h["stepSeconds"] as? Double ?? 0.1,
                                   values: levels(h["shortTermLUFS"]), width: 2.5))
        }
        body += "<h2>Short-term loudness</h2>\n"
        body += plot(id: "loudness", title: "Short-term loudness (3 s window, BS.1770-4)", duration: duration,
                     yLabel: "LUFS", yMin: -60, yMax: 0, yStep: 10, series: loudness, references: [])
        // the automation lanes, on the loudness plot's time axis
        let lanes = session.lanes
        if !lanes.isEmpty {
            body += "<h2>Automation</h2>\n<p>Each lane against time, on the loudness plot's time axis (breakpoints as dots).</p>\n"
            for lane in lanes { body += lanePlot(lane, duration: duration, color: laneColor(lane)) }
        }
        // true-peak excursions of the mix
        if let h = mix["history"] as? [String: Any] {
            let tp = levels(h["truePeakDBTP"])
            // the safe ceiling (the registry's: −1 dBTP), written with a minus sign
            let ceiling = SessionOption.safeCeilingDBTP, ceilingText = fmt(ceiling).replacingOccurrences(of: "-", with: "−")
            let over = tp.compactMap { $0 }.filter { $0 > ceiling }.count
            let step = h["stepSeconds"] as? Double ?? 0.1
            body += "<h2>Mix true peak</h2>\n<p>Largest true peak in each \(stepText(step)); \(over) of \(tp.count) steps above \(ceilingText) dBTP.</p>\n"
            body += plot(id: "truepeak", title: "Mix true peak per \(stepText(step)) (4× oversampled)", duration: duration,
                         yLabel: "dBTP", yMin: -30, yMax: 6, yStep: 6,
                         series: [Series(id: "mix-truePeakDBTP", name: "mix", color: mixColor, step: step, values: tp)],
                         references: [(0, "0 dBTP", "#c0392b"), (ceiling, "\(ceilingText) dBTP", "#e08e0b")])
        }
        // waveforms
        body += "<h2>Waveforms</h2>\n"
        for (i, t) in tracks.enumerated() {
            if let h = t["history"] as? [String: Any] {
                body += waveform(id: "track\(i + 1)-waveform", title: "\(names[i]): \(t["input"] as? String ?? "") (as mixed)",
                                 history: h, duration: duration, color: colors[i % colors.count])
            }
        }
        if let h = mix["history"] as? [String: Any] {
            body += waveform(id: "mix-waveform", title: "mix", history: h, duration: duration, color: mixColor)
        }
        // EQ curves
        body += "<h2>EQ response of each track</h2>\n"
        for (i, values) in session.tracks.enumerated() {
            var svg = EQCurveCommand.eqCurveSVG(EQCurveCommand.eqSettings(values), sampleRate: sampleRate)
            svg = svg.replacingOccurrences(of: "id=\"plot\"", with: "id=\"track\(i + 1)-eq\"")
                .replacingOccurrences(of: "id=\"response\"", with: "id=\"track\(i + 1)-eq-response\"")
                .replacingOccurrences(of: "<title>EQ response</title>", with: "<title>EQ response, track \(i + 1)</title>")
            body += "<h3>track \(i + 1)</h3>\n" + svg
        }
        let data = String(decoding: (try? JSONSerialization.data(withJSONObject: report, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data(), as: UTF8.self)
            .replacingOccurrences(of: "</", with: "<\\/")
        return """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
        <title>mixfx report: \(escape(output["path"] as? String ?? ""))</title>
        <style>
        body { font-family: sans-serif; margin: 24px; color: #222; background: white; }
        h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 28px; } h3 { font-size: 14px; }
        .sub { color: #555; }
        table { border-collapse: collapse; font-size: 13px; }
        th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
        td:nth-child(2) { text-align: left; }
        #settings td { text-align: right; } #settings th { text-align: left; } #settings th.group { text-align: left; background: #f2f2f2; }
        tr.note td { text-align: left; font-style: italic; }
        svg { display: block; margin: 6px 0; }
        </style>
        </head>
        <body>
        \(body)<script type="application/json" id="report">\(data)</script>
        </body>
        </html>

        """
    }

    /// The first table: every setting each track was rendered with (the registry's parameters,
    /// by key, from the report's `settings`) and what the master bus and the output applied (the
    /// report's `master` and `output`). Each row carries its key as `data-key`; numbers are
    /// plain decimals, units in the row's heading.
    static func settingsTable(_ report: [String: Any]) -> String {
        let tracks = report["tracks"] as? [[String: Any]] ?? []
        let master = report["master"] as? [String: Any] ?? [:]
        let output = report["output"] as? [String: Any] ?? [:]
        var out = "<h2>Settings</h2>\n<table id=\"settings\">\n<tr><th>setting</th>"
        out += tracks.map { "<th>track \($0["track"] as? Int ?? 0)</th>" }.joined() + "</tr>\n"
        func row(_ key: String, _ heading: String, title: String = "", _ cells: [String]) -> String {
            "<tr data-key=\"\(escape(key))\"><th\(title.isEmpty ? "" : " title=\"\(escape(title))\"")>\(escape(heading))</th>"
                + cells.map { "<td>\(escape($0))</td>" }.joined() + "</tr>\n"
        }
        out += row("input", "input", tracks.map { $0["input"] as? String ?? "" })
        out += row("input-format", "input: channels, rate (Hz)", tracks.map {
            "\($0["channels"] as? Int ?? 0), \($0["sampleRateHz"] as? Int ?? 0)\($0["resampled"] as? Bool == true ? " (resampled)" : "")"
        })
        // (a setting an automation lane replaces says so: "0 (lane)")
        let laned = Set((report["automation"] as? [[String: Any]] ?? []).compactMap { l in
            (l["track"] as? Int).map { "\($0):\(l["parameter"] as? String ?? "")" }
        })
        for id in ParameterID.trackParameters {
            let spec = id.spec
            let unit = spec.unit.isEmpty ? "" : " (\(spec.unit))"
            out += row(spec.key, spec.key + unit, title: spec.summary, tracks.map { t in
                let v = (t["settings"] as? [String: Any])?[spec.key]
                let lane = laned.contains("\(t["track"] as? Int ?? 0):\(spec.key)") ? " (lane)" : ""
                return (v.map { settingText($0) } ?? "–") + lane
            })
        }
        let span = max(tracks.count, 1)
        func masterRow(_ key: String, _ heading: String, _ value: String) -> String {
            "<tr data-key=\"master.\(key)\"><th>\(escape(heading))</th><td colspan=\"\(span)\">\(escape(value))</td></tr>\n"
        }
        out += "<tr><th colspan=\"\(span + 1)\" class=\"group\">master and output</th></tr>\n"
        let integer = ["s16", "s24", "s32"].contains(output["sampleFormat"] as? String ?? "")
        let gain = master["gainDB"] as? Double ?? 0
        let masterLane = (report["automation"] as? [[String: Any]] ?? []).contains { $0["parameter"] as? String == ParameterID.masterVolume.spec.key }
        out += masterRow("volume", "master volume (×)", settingText(master["volume"] ?? 1.0) + (masterLane ? " (lane)" : ""))
        out += masterRow("normalizeLUFS", "normalize to (LUFS)", (master["normalizeLUFS"] as? Double).map(settingText) ?? "off")
        out += masterRow("limitDBTP", "limiter ceiling (dBTP)", (master["limitDBTP"] as? Double).map(settingText) ?? "off")
        out += masterRow("clipPolicy", "clipping", integer ? master["clipPolicy"] as? String ?? "" : "none (float output is not changed)")
        out += masterRow("gainDB", "gain on the whole mix (dB)",
                         gain == 0 ? "0" : "\(settingText(gain)) (\(master["gainReason"] as? String == "normalize" ? "normalize" : "no-clip gain"))")
        let dither = master["dither"] as? String ?? ""
        out += masterRow("dither", "dither", "\(dither) (\(master["ditherApplied"] as? Bool == true ? "TPDF applied" : "none applied"))")
        out += masterRow("sampleFormat", "sample format", output["sampleFormat"] as? String ?? "")
        let channels = output["channels"] as? Int ?? 0
        out += masterRow("channels", "channels", "\(channels) (\(channels == 1 ? "mono" : "stereo"))")
        out += masterRow("lfeGainDB", "LFE in downmixes (dB)", (master["lfeGainDB"] as? Double).map(settingText) ?? "dropped")
        out += masterRow("sampleRateHz", "output rate (Hz)", "\(output["sampleRateHz"] as? Int ?? 0)")
        out += masterRow("container", "container", output["container"] as? String ?? "")
        return out + "</table>\n"
    }

    /// A setting's value in the table: on/off, or the number as it is (up to 6 significant digits).
    static func settingText(_ any: Any) -> String {
        switch any {
        case let b as Bool: b ? "on" : "off"
        case let d as Double: d.rounded() == d && abs(d) < 1e9 ? String(Int(d)) : String(format: "%g", d)
        case let i as Int: String(i)
        default: "\(any)"
        }
    }

    /// Beside the mix's measures, when the tracks' were taken before a gain on the whole mix:
    /// "track measures are before the −2.30 dB no-clip gain (the mix's are after it)".
    static func measuresNote(_ report: [String: Any]) -> String? {
        let master = report["master"] as? [String: Any] ?? [:]
        guard let gain = master["gainDB"] as? Double, gain != 0 else { return nil }
        let name = master["gainReason"] as? String == "normalize" ? "normalizing" : "no-clip"
        let limiter = master["limitDBTP"] is Double ? " and the limiter" : ""
        let text = String(format: "%+.2f", gain).replacingOccurrences(of: "-", with: "−")
        return "track measures are before the \(text) dB \(name) gain\(limiter) (the mix's are after it)"
    }

    struct Series {
        var id: String
        var name: String
        var color: String
        var step: Double
        var values: [Double?]
        var width = 1.5
        /// The time of each value, seconds (nil: value k at (k + 1)·step).
        var times: [Double]? = nil
    }

    /// A history's step in words: "100 ms", or (a long session's merged points) "1.6 s".
    static func stepText(_ seconds: Double) -> String {
        seconds < 1 ? "\(Int((seconds * 1000).rounded())) ms" : String(format: "%.1f s", seconds)
    }

    /// A line plot of series over time (x: seconds, value k at (k + 1)·step, the end of its
    /// step; a last point past the duration, one covering less than a step, at the end).
    /// Values beyond the axis are drawn at its edge; nulls break the line.
    static func plot(id: String, title: String, duration: Double, yLabel: String, yMin: Double, yMax: Double,
                     yStep: Double, series: [Series], references: [(Double, String, String)], height: Double = 320) -> String {
        let width = 900.0, left = 64.0, top = 30.0, plotW = 700.0, plotH = height - 80
        let xMax = max(duration, 0.1)
        func x(_ t: Double) -> Double { left + plotW * min(max(t / xMax, 0), 1) }
        func y(_ v: Double) -> Double { top + plotH * (yMax - min(max(v, yMin), yMax)) / (yMax - yMin) }
        var out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" font-family=\"sans-serif\" font-size=\"12\">\n"
        out += "<text x=\"\(n2(left))\" y=\"18\" font-size=\"13\">\(escape(title))</text>\n"
        out += "<g id=\"\(id)\" data-xmax=\"\(xMax)\" data-ymin=\"\(yMin)\" data-ymax=\"\(yMax)\" data-left=\"\(left)\" data-top=\"\(top)\" data-width=\"\(plotW)\" data-height=\"\(plotH)\">\n"
        out += "<rect x=\"\(n2(left))\" y=\"\(n2(top))\" width=\"\(n2(plotW))\" height=\"\(n2(plotH))\" fill=\"none\" stroke=\"#888\"/>\n"
        for v in stride(from: yMin, through: yMax, by: yStep) {
            out += "<line x1=\"\(n2(left))\" y1=\"\(n2(y(v)))\" x2=\"\(n2(left + plotW))\" y2=\"\(n2(y(v)))\" stroke=\"#e4e4e4\"/>"
            out += "<text x=\"\(n2(left - 6))\" y=\"\(n2(y(v) + 4))\" text-anchor=\"end\">\(fmt(v))</text>\n"
        }
        for t in timeTicks(xMax) {
            out += "<line x1=\"\(n2(x(t)))\" y1=\"\(n2(top))\" x2=\"\(n2(x(t)))\" y2=\"\(n2(top + plotH))\" stroke=\"#eee\"/>"
            out += "<text x=\"\(n2(x(t)))\" y=\"\(n2(top + plotH + 16))\" text-anchor=\"middle\">\(fmt(t))</text>\n"
        }
        for (i, (v, label, color)) in references.enumerated() {
            // labels below the legend, one line each, so close lines do not overlap
            out += "<line x1=\"\(n2(left))\" y1=\"\(n2(y(v)))\" x2=\"\(n2(left + plotW))\" y2=\"\(n2(y(v)))\" stroke=\"\(color)\" stroke-dasharray=\"5 4\"/>"
            let ly = top + 14 + Double(series.count + i) * 16
            out += "<line x1=\"\(n2(left + plotW + 10))\" y1=\"\(n2(ly))\" x2=\"\(n2(left + plotW + 34))\" y2=\"\(n2(ly))\" stroke=\"\(color)\" stroke-dasharray=\"5 4\"/>"
            out += "<text x=\"\(n2(left + plotW + 40))\" y=\"\(n2(ly + 4))\" fill=\"\(color)\">\(escape(label))</text>\n"
        }
        out += "<text x=\"\(n2(left + plotW / 2))\" y=\"\(n2(height - 20))\" text-anchor=\"middle\">time (s)</text>\n"
        out += "<text x=\"16\" y=\"\(n2(top + plotH / 2))\" text-anchor=\"middle\" transform=\"rotate(-90 16 \(n2(top + plotH / 2)))\">\(escape(yLabel))</text>\n"
        for s in series {
            // one polyline per run of values (nulls break it); data-first is the run's first step
            var run: [String] = [], first = 0
            func flush() {
                if !run.isEmpty {
                    out += "<polyline class=\"series\" data-series=\"\(s.id)\" data-first=\"\(first)\" data-step=\"\(s.step)\" fill=\"none\" stroke=\"\(s.color)\" stroke-width=\"\(s.width)\" points=\"\(run.joined(separator: " "))\"/>\n"
                }
                run = []
            }
            for (k, v) in s.values.enumerated() {
                guard let v else { flush(); continue }
                if run.isEmpty { first = k }
                run.append("\(n2(x(s.times?[k] ?? Double(k + 1) * s.step))),\(n2(y(v)))")
            }
            flush()
        }
        out += "</g>\n"
        // legend
        for (i, s) in series.enumerated() {
            let ly = top + 14 + Double(i) * 16
            out += "<line x1=\"\(n2(left + plotW + 10))\" y1=\"\(n2(ly))\" x2=\"\(n2(left + plotW + 34))\" y2=\"\(n2(ly))\" stroke=\"\(s.color)\" stroke-width=\"\(s.width)\"/>"
            out += "<text x=\"\(n2(left + plotW + 40))\" y=\"\(n2(ly + 4))\">\(escape(s.name))</text>\n"
        }
        return out + "</svg>\n"
    }

    /// A lane's plot id: "track2-pitch-lane", "master-volume-lane".
    static func laneID(_ lane: PresetLane) -> String {
        if case .track(let i) = lane.target { return "track\(i + 1)-\(lane.id.spec.key)-lane" }
        return "\(lane.id.spec.key)-lane"
    }

    /// A track's lane in the track's colour, the master's in the mix's.
    static func laneColor(_ lane: PresetLane) -> String {
        if case .track(let i) = lane.target { return colors[i % colors.count] }
        return mixColor
    }

    /// The points that draw `lane` from 0 to `duration` s exactly: the ends, every breakpoint
    /// (a step drawn as a vertical at its end), and 64 points inside each curved segment
    /// (db on a gain, exp, scurve); each value is the lane's own (`AutomationLane.value`).
    static func lanePoints(_ lane: PresetLane, duration: Double) -> [(seconds: Double, value: Double)] {
        let scale = lane.id.spec.automation ?? .linear, b = lane.lane.breakpoints
        var times: [Double] = [0, duration]
        for (i, p) in b.enumerated() {
            times.append(p.seconds)
            if i + 1 < b.count, p.curve != .step, p.curve != .linear, !(p.curve == .db && scale == .decibels) {
                let t1 = b[i + 1].seconds
                times += (1..<64).map { p.seconds + (t1 - p.seconds) * Double($0) / 64 }
            }
        }
        var out: [(Double, Double)] = []
        let index = Dictionary(b.enumerated().map { ($1.seconds, $0) }, uniquingKeysWith: { a, _ in a })
        for t in Set(times.filter { $0 >= 0 && $0 <= duration }).sorted() {
            if let i = index[t], i > 0, b[i - 1].curve == .step {
                out.append((t, b[i - 1].value))   // the step's vertical
            }
            out.append((t, lane.lane.value(at: t, scale: scale)))
        }
        return out
    }

    /// One lane against time, in `plot`'s style and frame (the same time axis as the loudness
    /// plot): its values in the parameter's unit, the axis spanning the lane's range, a dot at
    /// each breakpoint inside the mix. The polyline's points are (time, value) in the frame the
    /// group's data- attributes give.
    static func lanePlot(_ lane: PresetLane, duration: Double, color: String) -> String {
        let spec = lane.id.spec, values = lane.lane.breakpoints.map(\.value)
        var lo = values.min()!, hi = values.max()!
        if lo == hi { lo -= max(1, abs(lo) * 0.1); hi += max(1, abs(hi) * 0.1) }
        let raw = (hi - lo) / 5, magnitude = pow(10, floor(log10(raw)))
        let step = [1.0, 2, 2.5, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? raw
        let yMin = (lo / step).rounded(.down) * step, yMax = (hi / step).rounded(.up) * step
        let unit = spec.unit.isEmpty ? "" : " (\(spec.unit))"
        let points = lanePoints(lane, duration: duration)
        let series = Series(id: laneID(lane), name: lane.name, color: color, step: 0, values: points.map(\.value),
                            width: 2, times: points.map(\.seconds))
        var svg = plot(id: laneID(lane), title: "\(lane.name)\(unit): \(lane.lane.breakpoints.count) breakpoint\(lane.lane.breakpoints.count == 1 ? "" : "s")",
                       duration: duration, yLabel: spec.key + unit, yMin: yMin, yMax: yMax, yStep: step, series: [series], references: [],
                       height: 200)
        // the breakpoints as dots, inside the plot's group
        let left = 64.0, top = 30.0, plotW = 700.0, plotH = 120.0, xMax = max(duration, 0.1)
        var dots = ""
        for p in lane.lane.breakpoints where p.seconds <= duration {
            let x = left + plotW * p.seconds / xMax, y = top + plotH * (yMax - p.value) / (yMax - yMin)
            dots += "<circle class=\"breakpoint\" cx=\"\(n2(x))\" cy=\"\(n2(y))\" r=\"3\" fill=\"\(color)\"/>\n"
        }
        if let end = svg.range(of: "</g>\n", options: .backwards) { svg.insert(contentsOf: dots, at: end.lowerBound) }
        return svg
    }

    /// A waveform overview: the band between each step's smallest and largest sample (100 ms,
    /// or more in a long session, see `AnalysisHistory`), at the step's end as in `plot`.
    static func waveform(id: String, title: String, history h: [String: Any], duration: Double, color: String) -> String {
        let lo = (h["minimum"] as? [Double]) ?? [], hi = (h["maximum"] as? [Double]) ?? []
        let step = h["stepSeconds"] as? Double ?? 0.1
        let extreme = max(1, (lo.map(abs) + hi.map(abs)).max() ?? 1)
        let range = extreme > 1 ? extreme.rounded(.up) : 1
        let width = 900.0, height = 130.0, left = 64.0, top = 22.0, plotW = 700.0, plotH = 80.0
        let xMax = max(duration, 0.1)
        func x(_ t: Double) -> Double { left + plotW * min(max(t / xMax, 0), 1) }
        func y(_ v: Double) -> Double { top + plotH * (range - v) / (2 * range) }
        var out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" font-family=\"sans-serif\" font-size=\"11\">\n"
        out += "<text x=\"\(n2(left))\" y=\"14\" font-size=\"12\">\(escape(title))</text>\n"
        out += "<g id=\"\(id)\" data-xmax=\"\(xMax)\" data-ymin=\"\(-range)\" data-ymax=\"\(range)\" data-left=\"\(left)\" data-top=\"\(top)\" data-width=\"\(plotW)\" data-height=\"\(plotH)\">\n"
        out += "<rect x=\"\(n2(left))\" y=\"\(n2(top))\" width=\"\(n2(plotW))\" height=\"\(n2(plotH))\" fill=\"none\" stroke=\"#888\"/>\n"
        for v in [-range, 0, range] {
            out += "<line x1=\"\(n2(left))\" y1=\"\(n2(y(v)))\" x2=\"\(n2(left + plotW))\" y2=\"\(n2(y(v)))\" stroke=\"#e4e4e4\"/>"
            out += "<text x=\"\(n2(left - 6))\" y=\"\(n2(y(v) + 4))\" text-anchor=\"end\">\(fmt(v))</text>\n"
        }
        for t in timeTicks(xMax) {
            out += "<text x=\"\(n2(x(t)))\" y=\"\(n2(top + plotH + 14))\" text-anchor=\"middle\">\(fmt(t))</text>\n"
        }
        if !hi.isEmpty {
            let upper = hi.enumerated().map { "\(n2(x(Double($0.offset + 1) * step))),\(n2(y($0.element)))" }
            let lower = lo.enumerated().reversed().map { "\(n2(x(Double($0.offset + 1) * step))),\(n2(y($0.element)))" }
            out += "<polygon class=\"waveform\" fill=\"\(color)\" fill-opacity=\"0.75\" points=\"\((upper + lower).joined(separator: " "))\"/>\n"
        }
        out += "<text x=\"\(n2(left + plotW + 8))\" y=\"\(n2(top + plotH / 2 + 4))\">full scale = 1; time (s)</text>\n"
        return out + "</g>\n</svg>\n"
    }

    /// About six round tick times from 0 to `duration` seconds.
    static func timeTicks(_ duration: Double) -> [Double] {
        let raw = duration / 6
        let magnitude = pow(10, floor(log10(max(raw, 1e-3))))
        let step = [1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? raw
        return Array(stride(from: 0, through: duration, by: step))
    }

    static func levels(_ any: Any?) -> [Double?] { (any as? [Any] ?? []).map { $0 as? Double } }

    static func n2(_ v: Double) -> String { String(format: "%.2f", v) }

    static func num(_ any: Any?, _ digits: Int = 1) -> String {
        guard let v = any as? Double else { return any is NSNull ? "−∞" : "–" }
        return String(format: "%.\(digits)f", v)
    }

    static func value(_ any: Any) -> String {
        switch any {
        case let b as Bool: b ? "yes" : "no"
        case let d as Double: d.rounded() == d && abs(d) < 1e9 ? String(Int(d)) : String(format: "%.3g", d)
        default: "\(any)"
        }
    }

    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
