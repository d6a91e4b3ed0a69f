import Foundation
import Testing
import MixFX
import TestSupport

/// `mixfx render --report FILE.json|FILE.html`: valid against the committed schema, numbers that
/// agree with independent measurement, a page that renders in a real browser and plots the
/// report's own numbers.
@Suite struct ReportTests {
    let dir = TempDir("mixfx-report")

    /// Two tracks (a stereo tone pair and a mono noise at 22.05 kHz, so one is resampled), 4 s.
    func tracks() throws -> [String] {
        let a = dir.file("a.wav"), b = dir.file("b.wav")
        let l = Signals.sine(frequencyHz: 330, sampleRate: 44_100, frames: 176_400, amplitude: 0.5)
        let r = Signals.sine(frequencyHz: 495, sampleRate: 44_100, frames: 176_400, amplitude: 0.4)
        try AudioFiles.write([l, r], to: a, sampleRate: 44_100)
        try AudioFiles.write([Signals.noise(frames: 88_200, amplitude: 0.3, seed: 9)], to: b, sampleRate: 22_050)
        return [a, b]
    }

    func object(_ path: String) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as! [String: Any]
    }

    var schema: [String: Any] {
        get throws {
            let r = try MixFXBinary.run(["render", "--report-schema"])
            return try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        }
    }

    /// A report that cannot be written (its folder a full disk) fails the render with nothing
    /// written: the report is written before the mix is committed (the mix was left in place,
    /// without its report, and a retry then needed --force).
    @Test(.enabled(if: ClipPolicyTests.canMountPrivately, "cannot mount a tmpfs in a private mount namespace here (needs root with CAP_SYS_ADMIN)"))
    func aReportThatCannotBeWrittenLeavesNoMix() throws {
        defer { dir.remove() }
        let t = try tracks()
        try FileManager.default.createDirectory(atPath: dir.file("full"), withIntermediateDirectories: true)
        let script = #"mount -t tmpfs -o size=4k none "$1" && (head -c 1048576 /dev/zero > "$1/fill" 2>/dev/null; true) && exec "$2" render "$3" --report "$1/r.html" -o "$4" --quiet"#
        let r = try runProcess(which("unshare")!, ["--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh",
                                                    dir.file("full"), MixFXBinary.path, t[0], dir.file("mix.wav")])
        #expect(r.status == 1 && r.stderr.contains("r.html"), "\(r.status) \(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("mix.wav")))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".mixfx-") }.isEmpty)
        // (with room, the same command writes both)
        let ok = try MixFXBinary.run(["render", t[0], "--report", dir.file("r.html"), "-o", dir.file("mix.wav"), "--quiet"])
        #expect(ok.status == 0 && FileManager.default.fileExists(atPath: dir.file("mix.wav")) && FileManager.default.fileExists(atPath: dir.file("r.html")), "\(ok.stderr)")
    }

    @Test func theJSONReportFollowsItsSchemaAndAgreesWithAnalyze() throws {
        defer { dir.remove() }
        let t = try tracks()
        let out = dir.file("mix.wav"), report = dir.file("report.json")
        let r = try MixFXBinary.run(["render"] + t + ["--pitch", "200", "--treble", "3", "--limit", "-3", "--report", report, "-o", out, "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let obj = try object(report)
        let check = JSONSchemaCheck(schema: try schema)
        #expect(check.violations(obj).isEmpty, "\(check.violations(obj))")
        // the checker can fail: a report missing a field or with a wrong type does not pass
        var broken = obj
        broken["mix"] = ["clippedSamples": "none"]
        #expect(check.violations(broken).count >= 3)
        // every step applied is listed, in order
        let steps = (obj["processing"] as! [[String: Any]]).map { $0["step"] as! String }
        #expect(steps == ["resample", "mix", "limiter", "dither", "convert"], "\(steps)")
        // the mix's measures are those of the written file, measured independently
        let a = try JSONSerialization.jsonObject(with: Data(try MixFXBinary.run(["analyze", out, "--json"]).stdout.utf8)) as! [String: Any]
        let file = (a["files"] as! [[String: Any]])[0]
        let mix = (obj["mix"] as! [String: Any])["measures"] as! [String: Any]
        for key in ["integratedLUFS", "loudnessRangeLU", "truePeakDBTP", "samplePeakDBFS", "correlation", "monoSumLossDB"] {
            let x = try #require(mix[key] as? Double), y = try #require(file[key] as? Double)
            #expect(abs(x - y) < 1e-9, "\(key): report \(x), analyze \(y)")
        }
        #expect((mix["truePeakDBTP"] as! Double) <= -3 + 0.005)
        // tracks: a mono track mixed to stereo is perfectly correlated; the resampled one says so
        let tr = obj["tracks"] as! [[String: Any]]
        #expect(tr.count == 2 && tr[1]["resampled"] as? Bool == true && tr[0]["resampled"] as? Bool == false)
        #expect(abs(((tr[1]["measures"] as! [String: Any])["correlation"] as! Double) - 1) < 1e-6)
        #expect((tr[0]["latencyFrames"] as! Int) > 0)
        // histories: one value per 100 ms
        let h = (obj["mix"] as! [String: Any])["history"] as! [String: Any]
        #expect((h["shortTermLUFS"] as! [Any]).count == 40 && (h["maximum"] as! [Any]).count == 40)
        // an independent validator agrees where it is installed (CI installs it)
        if let python = which("python3"), (try? runProcess(python, ["-c", "import jsonschema"]))?.status == 0 {
            let schemaFile = dir.file("schema.json")
            try Data(try MixFXBinary.run(["render", "--report-schema"]).stdout.utf8).write(to: URL(fileURLWithPath: schemaFile))
            let v = try runProcess(python, ["-c", "import json,sys,jsonschema; jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1]))); print('ok')", schemaFile, report])
            #expect(v.status == 0 && v.stdout.contains("ok"), "\(v.stderr)")
        }
    }

    /// A single neutral track: its measures as mixed are the mix's.
    /// Every step a track goes through is listed in signal order: placement, downmix, speed,
    /// rate conversion, tempo; and the report still follows its schema.
    @Test func theProcessingListsPlacementDownmixSpeedAndTempo() throws {
        defer { dir.remove() }
        let six = dir.file("six.wav"), mono = dir.file("mono.wav")
        try AudioFiles.writeWAV16((0..<6).map { c in Signals.noise(frames: 44_100, amplitude: 0.1, seed: UInt64(c + 1)) },
                                  to: six, sampleRate: 44_100, channelMask: 0x3F)
        try AudioFiles.write([Signals.noise(frames: 48_000, amplitude: 0.2, seed: 7)], to: mono, sampleRate: 48_000)
        let report = dir.file("r.json")
        let r = try MixFXBinary.run(["render", six, mono, "--track", "1:start=0.5,fade-in=0.1,speed=0.9",
                                     "--track", "2:tempo=0.8", "--report", report, "-o", dir.file("m.wav"), "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let obj = try object(report)
        let check = JSONSchemaCheck(schema: try schema)
        #expect(check.violations(obj).isEmpty, "\(check.violations(obj))")
        let steps = (obj["processing"] as? [[String: Any]] ?? []).map { "\($0["step"] ?? "")\($0["track"].map { " \($0)" } ?? "")" }
        #expect(Array(steps.prefix(6)) == ["place 1", "downmix 1", "speed 1", "resample 1", "tempo 2", "mix"], "\(steps)")
    }

    @Test func oneNeutralTrackMeasuresAsTheMix() throws {
        defer { dir.remove() }
        let t = try tracks()
        let report = dir.file("r.json")
        #expect(try MixFXBinary.run(["render", t[0], "--report", report, "-o", dir.file("m.wav"), "--sample-format", "f32", "--quiet"]).status == 0)
        let obj = try object(report)
        let track = ((obj["tracks"] as! [[String: Any]])[0]["measures"] as! [String: Any])
        let mix = (obj["mix"] as! [String: Any])["measures"] as! [String: Any]
        for key in ["integratedLUFS", "truePeakDBTP", "samplePeakDBFS"] {
            #expect(abs((track[key] as! Double) - (mix[key] as! Double)) < 1e-6, "\(key)")
        }
    }

    /// The report is checked before the render: it may not be the output or an input, nor
    /// replace a file without --force, and nothing is written when it is refused.
    @Test func aReportThatCannotBeWrittenStopsTheRenderBeforeItStarts() throws {
        defer { dir.remove() }
        let t = try tracks()
        let out = dir.file("o.wav")
        let same = try MixFXBinary.run(["render"] + t + ["-o", dir.file("x.json"), "--report", dir.file("x.json")])
        #expect(same.status == 2)
        let input = try MixFXBinary.run(["render", t[0], "-o", out, "--report", t[0].replacingOccurrences(of: ".wav", with: ".json")])
        #expect(input.status == 0)   // a .json next to an input is fine
        try FileManager.default.removeItem(atPath: out)
        try Data("keep".utf8).write(to: URL(fileURLWithPath: dir.file("old.json")))
        let exists = try MixFXBinary.run(["render"] + t + ["-o", out, "--report", dir.file("old.json")])
        #expect(exists.status == 2 && exists.stderr.contains("--report"), "\(exists.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(try String(contentsOfFile: dir.file("old.json"), encoding: .utf8) == "keep")
        let wrong = try MixFXBinary.run(["render"] + t + ["-o", out, "--report", dir.file("r.txt")])
        #expect(wrong.status == 2 && wrong.stderr.contains(".json"))
    }

    static let chromium = ["chromium", "chromium-browser"].lazy.compactMap { which($0) }.first

    /// Loads `page` in headless Chromium: its console messages (errors included) and a screenshot.
    func browse(_ page: String, screenshot: String) throws -> (console: [String], status: Int32) {
        let r = try runProcess("/usr/bin/timeout", ["120", ReportTests.chromium!, "--headless", "--no-sandbox", "--disable-gpu",
                                                    "--hide-scrollbars", "--enable-logging=stderr", "--v=0",
                                                    "--window-size=1000,1600", "--screenshot=\(screenshot)", "file://\(page)"])
        return (r.stderr.split(separator: "\n").map(String.init).filter { $0.contains("CONSOLE") }, r.status)
    }

    /// Share of the screenshot's pixels that are not white (python3's zlib decodes the PNG).
    func inkShare(_ png: String) throws -> Double {
        let script = """
        import sys, zlib, struct
        d = open(sys.argv[1], 'rb').read(); i = 8; idat = b''
        while i < len(d):
            n, t = struct.unpack('>I4s', d[i:i+8])
            if t == b'IHDR': w, h, bits, ct = struct.unpack('>IIBB', d[i+8:i+18])
            if t == b'IDAT': idat += d[i+8:i+8+n]
            i += 12 + n
        raw = zlib.decompress(idat); bpp = 4 if ct == 6 else 3; stride = w * bpp
        prev = bytearray(stride); ink = 0; p = 0
        for y in range(h):
            f = raw[p]; line = bytearray(raw[p+1:p+1+stride]); p += 1 + stride
            for x in range(stride):
                a = line[x-bpp] if x >= bpp else 0; b = prev[x]; c = prev[x-bpp] if x >= bpp else 0
                if f == 1: line[x] = (line[x] + a) & 255
                elif f == 2: line[x] = (line[x] + b) & 255
                elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
                elif f == 4:
                    q = a + b - c; pa, pb, pc = abs(q - a), abs(q - b), abs(q - c)
                    line[x] = (line[x] + (a if pa <= pb and pa <= pc else (b if pb <= pc else c))) & 255
            ink += sum(1 for x in range(0, stride, bpp) if min(line[x], line[x+1], line[x+2]) < 200)
            prev = line
        print(ink / (w * h))
        """
        let r = try runProcess(which("python3")!, ["-c", script, png])
        return Double(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    @Test(.enabled(if: chromium != nil && which("python3") != nil, "chromium is not installed (apt-get install chromium)"))
    func theHTMLReportRendersInChromiumAndPlotsTheReportsNumbers() throws {
        defer { dir.remove() }
        let t = try tracks()
        let page = dir.file("report.html"), json = dir.file("report.json")
        let args = ["render"] + t + ["--pitch", "200", "--bass", "6", "--quiet", "--force", "-o", dir.file("mix.wav")]
        #expect(try MixFXBinary.run(args + ["--report", page]).status == 0)
        #expect(try MixFXBinary.run(args + ["--report", json]).status == 0)
        let html = try String(contentsOfFile: page, encoding: .utf8)
        #expect(!html.contains("http://") || !html.contains("src=\"http"), "nothing is fetched")
        #expect(!html.contains("<script>") && !html.contains("src="), "no script runs, nothing is loaded")
        // the browser: no console message, a page that is not blank
        let shot = dir.file("shot.png")
        let b = try browse(page, screenshot: shot)
        #expect(b.status == 0 && FileManager.default.fileExists(atPath: shot))
        #expect(b.console.isEmpty, "\(b.console)")
        let ink = try inkShare(shot)
        #expect(ink > 0.01 && ink < 0.6, "ink \(ink)")
        // the detector can fail: a page with a script error shows up in the console
        let bad = dir.file("bad.html")
        try Data("<html><body><p>x</p><script>console.error('broken page'); nope();</script></body></html>".utf8).write(to: URL(fileURLWithPath: bad))
        #expect(try browse(bad, screenshot: dir.file("bad.png")).console.contains { $0.contains("broken page") })
        // the plotted numbers are the report's: read the mix's loudness line back through the
        // plot's axes and compare it with the JSON report of the same render
        let report = try object(json)
        let series = (((report["mix"] as! [String: Any])["history"] as! [String: Any])["shortTermLUFS"] as! [Any]).map { $0 as? Double }
        let g = try #require(html.firstMatch(of: /<g id="loudness" data-xmax="([^"]+)" data-ymin="([^"]+)" data-ymax="([^"]+)" data-left="([^"]+)" data-top="([^"]+)" data-width="([^"]+)" data-height="([^"]+)">/))
        let xMax = Double(g.1)!, yMin = Double(g.2)!, yMax = Double(g.3)!, left = Double(g.4)!, top = Double(g.5)!, w = Double(g.6)!, h = Double(g.7)!
        var compared = 0
        for line in html.matches(of: /<polyline class="series" data-series="mix-shortTermLUFS" data-first="(\d+)" data-step="([^"]+)"[^>]* points="([^"]+)"/) {
            let first = Int(line.1)!, step = Double(line.2)!
            for (j, point) in line.3.split(separator: " ").enumerated() {
                let xy = point.split(separator: ",").map { Double($0)! }
                let time = (xy[0] - left) / w * xMax, value = yMax - (xy[1] - top) / h * (yMax - yMin)
                let k = first + j
                #expect(abs(time - Double(k + 1) * step) < 0.01)
                if let v = series[k], v > yMin + 0.01, v < yMax - 0.01 {
                    #expect(abs(value - v) < 0.01, "step \(k): plotted \(value), report \(v)")
                    compared += 1
                }
            }
        }
        #expect(compared >= 35, "\(compared) points compared")
        // the page carries the same numbers as data
        let embedded = try #require(html.firstMatch(of: /<script type="application\/json" id="report">(.*)<\/script>/))
        let data = try JSONSerialization.jsonObject(with: Data(String(embedded.1).replacingOccurrences(of: "<\\/", with: "</").utf8)) as! [String: Any]
        let a = (data["mix"] as! [String: Any])["measures"] as! [String: Any], m = (report["mix"] as! [String: Any])["measures"] as! [String: Any]
        #expect(a["integratedLUFS"] as? Double == m["integratedLUFS"] as? Double)
    }

    /// The rows of the page's settings table: `data-key` → the cells' text.
    static func settingsRows(_ html: String) -> [String: [String]] {
        var rows: [String: [String]] = [:]
        guard let table = html.firstMatch(of: /<table id="settings">(.*?)<\/table>/.dotMatchesNewlines()) else { return rows }
        for row in String(table.1).matches(of: /<tr data-key="([^"]+)"><th[^>]*>[^<]*<\/th>(.*?)<\/tr>/) {
            rows[String(row.1)] = String(row.2).matches(of: /<td[^>]*>([^<]*)<\/td>/).map { String($0.1) }
        }
        return rows
    }

    /// Issue #34: the HTML report's first table shows every setting each track was rendered with
    /// (its numbers are the ones given) and the master's and output's; the note beside the mix's
    /// measures that the tracks' were taken before the gain on the whole mix appears exactly
    /// when such a gain was applied.
    @Test func theFirstTableShowsEverySettingAndTheGainNoteAppearsWithTheGain() throws {
        defer { dir.remove() }
        let t = try tracks()
        let one: [(String, Double)] = [("volume", 0.8), ("pan", -0.4), ("bass", 5), ("bass-freq", 80), ("treble", -3),
                                       ("treble-freq", 6000), ("eq-gain", -2), ("pitch", -300), ("tempo", 0.9), ("overlap", 12)]
        let two: [(String, Double)] = [("volume", 1.5), ("pan", 0.6), ("bass", -4), ("bass-slope", 0.5), ("treble", 2.5),
                                       ("treble-freq", 4000), ("pitch", 150), ("start", 0.5), ("trim-in", 0.2), ("trim-out", 1.5),
                                       ("fade-in", 0.1), ("fade-out", 0.3), ("speed", 1.25)]
        func spec(_ values: [(String, Double)]) -> String { values.map { "\($0.0)=\($0.1)" }.joined(separator: ",") }
        func render(masterVolume: String, _ name: String) throws -> (html: String, report: [String: Any]) {
            let page = dir.file(name)
            let r = try MixFXBinary.run(["render"] + t + ["--track", "1:" + spec(one) + ",formant=on", "--track", "2:" + spec(two) + ",treble-bypass=on",
                                                          "--master-volume", masterVolume, "--sample-format", "s24", "--dither", "tpdf", "--rate", "48000",
                                                          "--lfe-gain", "-3", "--report", page, "-o", dir.file(name + ".wav"), "--quiet"])
            #expect(r.status == 0, "\(r.stderr)")
            let html = try String(contentsOfFile: page, encoding: .utf8)
            let embedded = try #require(html.firstMatch(of: /<script type="application\/json" id="report">(.*)<\/script>/))
            let report = try JSONSerialization.jsonObject(with: Data(String(embedded.1).replacingOccurrences(of: "<\\/", with: "</").utf8)) as! [String: Any]
            let check = JSONSchemaCheck(schema: try schema)
            #expect(check.violations(report).isEmpty, "\(check.violations(report))")
            return (html, report)
        }
        let loud = try render(masterVolume: "3", "loud.html")
        // the first table is the settings'
        #expect(loud.html.firstMatch(of: /<table[^>]*>/)?.0 == "<table id=\"settings\">")
        let rows = Self.settingsRows(loud.html)
        // every track parameter of the registry has a row, one cell per track
        for id in ParameterID.trackParameters { #expect(rows[id.spec.key]?.count == 2, "\(id.spec.key): \(rows[id.spec.key] ?? [])") }
        for (track, given) in [one, two].enumerated() {
            for (key, value) in given {
                let cell = rows[key]?[track] ?? ""
                #expect(Double(cell).map { abs($0 - value) <= 1e-6 * max(1, abs(value)) } == true, "track \(track + 1) \(key): '\(cell)', given \(value)")
            }
        }
        // what was not given is the default, and switches read on/off
        #expect(rows["pitch"] == ["-300", "150"] && rows["bass-freq"]?[1] == "55" && rows["tempo"]?[1] == "1" && rows["speed"]?[0] == "1")
        #expect(rows["formant"] == ["on", "off"] && rows["treble-bypass"] == ["off", "on"] && rows["mute"] == ["off", "off"] && rows["solo"] == ["off", "off"])
        #expect(rows["input"] == t && rows["input-format"] == ["2, 44100 (resampled)", "1, 22050 (resampled)"])
        // the master and the output
        #expect(rows["master.volume"] == ["3"] && rows["master.sampleFormat"] == ["s24"] && rows["master.sampleRateHz"] == ["48000"])
        #expect(rows["master.channels"] == ["2 (stereo)"] && rows["master.lfeGainDB"] == ["-3"] && rows["master.dither"] == ["tpdf (TPDF applied)"])
        #expect(rows["master.normalizeLUFS"] == ["off"] && rows["master.limitDBTP"] == ["off"] && rows["master.clipPolicy"] == ["avoid"])
        #expect(rows["master.container"] == ["wav"])
        // the mix clipped: the no-clip gain is in the table and noted beside the mix's measures
        let master = try #require(loud.report["master"] as? [String: Any])
        let gain = try #require(master["gainDB"] as? Double)
        #expect(gain < -1 && master["gainReason"] as? String == "clipping", "\(master)")
        let gainCell = rows["master.gainDB"]?.first ?? ""
        #expect(gainCell.hasSuffix(" (no-clip gain)") && Double(gainCell.split(separator: " ")[0]).map { abs($0 - gain) < 1e-4 } == true, "\(gainCell)")
        let note = try #require(loud.html.firstMatch(of: /<td colspan="10" id="measures-note">([^<]*)<\/td>/))
        #expect(note.1 == "track measures are before the \(String(format: "−%.2f", -gain)) dB no-clip gain (the mix's are after it)", "\(note.1)")
        // beside the mix's row, in the measures table
        #expect(loud.html.contains(/<tr><th>mix<\/th>[^\n]*<\/tr>\n<tr class="note"><td colspan="10" id="measures-note">/))
        // no gain: no note, and the table says 0
        let quiet = try render(masterVolume: "0.2", "quiet.html")
        #expect((quiet.report["master"] as? [String: Any])?["gainDB"] as? Double == 0)
        #expect(!quiet.html.contains("measures-note") && Self.settingsRows(quiet.html)["master.gainDB"] == ["0"])
        #expect(Self.settingsRows(quiet.html)["master.volume"] == ["0.2"])
        // normalizing is a gain too, and says so
        let page = dir.file("norm.html")
        #expect(try MixFXBinary.run(["render", t[0], "--normalize", "-30", "--report", page, "-o", dir.file("norm.wav"), "--quiet"]).status == 0)
        let normalized = try String(contentsOfFile: page, encoding: .utf8)
        #expect(normalized.contains(/id="measures-note">track measures are before the −\d+\.\d\d dB normalizing gain/))
        #expect(Self.settingsRows(normalized)["master.normalizeLUFS"] == ["-30"])
    }
}
