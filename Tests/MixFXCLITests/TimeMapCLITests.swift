import Foundation
import Testing
import MixFX
import TestSupport

/// `mixfx render --timemap [N:]FILE` (Rubber Band's time map): the output's length is the last
/// line's target, clicks land on their mapped frames within 1 ms, a placed and trimmed track
/// starts its map at its trim-in, bad files are refused by file:line; and `rubberband
/// --timemap` with the same file, side by side.
@Suite struct TimeMapCLITests {
    static let rate = 48_000
    /// Clicks every 0.25 s of a 4 s file, and a map slowing, speeding up and slowing again
    /// (tempos 0.667, 2, 0.571, 1.2) whose last line is the file's end.
    static let onsets = Array(stride(from: 12_000, to: 186_000, by: 12_000))
    static let map = [(0, 0), (48_000, 72_000), (96_000, 96_000), (144_000, 180_000), (192_000, 220_000)]
    static let mapText = "# source target\n" + map.dropFirst().map { "\($0.0) \($0.1)" }.joined(separator: "\n") + "\n"

    /// T(F): the map, piecewise linear.
    static func mapped(_ f: Double) -> Double {
        for (a, b) in zip(map, map.dropFirst()) where f <= Double(b.0) {
            return Double(a.1) + (f - Double(a.0)) * Double(b.1 - a.1) / Double(b.0 - a.0)
        }
        return .nan
    }

    func clicks(_ dir: TempDir) throws -> String {
        var x = [Float](repeating: 0, count: 4 * Self.rate)
        for o in Self.onsets { x[o] = 0.75 }
        let path = dir.file("clicks.wav")
        try AudioFiles.write([x], to: path, sampleRate: Self.rate)
        return path
    }

    /// The worst distance, frames, of each click from where `expected` puts it (the loudest
    /// sample within ±20 ms).
    static func worstLanding(_ y: [Float], _ expected: [Double]) -> Double {
        var worst = 0.0
        for e in expected {
            let c = Int(e.rounded()), w = rate / 50
            var best = max(0, c - w)
            for i in max(0, c - w)..<min(y.count, c + w) where abs(y[i]) > abs(y[best]) { best = i }
            worst = max(worst, abs(Double(best) - e))
        }
        return worst
    }

    @Test func clicksLandOnTheMapAndTheLengthIsTheLastTarget() throws {
        let dir = TempDir("mixfx-timemap")
        defer { dir.remove() }
        let input = try clicks(dir), mapFile = dir.file("map.txt"), out = dir.file("out.wav")
        try Self.mapText.write(toFile: mapFile, atomically: true, encoding: .utf8)
        let r = try MixFXBinary.run(["render", input, "--timemap", mapFile, "-o", out, "--sample-format", "f32", "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let (y, format) = try AudioFiles.read(out)
        #expect(format.frameCount == 220_000)
        let worst = Self.worstLanding(y[0], Self.onsets.map { Self.mapped(Double($0)) })
        #expect(worst <= Double(Self.rate) / 1000, "a click lands \(worst) frames from its mapped frame")

        // placed at 0.5 s, trimmed to 1 s ..: file frame F at 0.5 s + T(F) − T(48 000)
        let placed = dir.file("placed.wav")
        let p = try MixFXBinary.run(["render", input, "--timemap", "1:" + mapFile, "--track", "1:start=0.5,trim=1..", "-o", placed,
                                     "--sample-format", "f32", "--quiet"])
        #expect(p.status == 0, "\(p.stderr)")
        let (z, zf) = try AudioFiles.read(placed)
        let origin = Self.mapped(48_000)
        #expect(zf.frameCount == 24_000 + 220_000 - Int(origin))
        let later = Self.onsets.filter { $0 > 48_000 }.map { 24_000 + Self.mapped(Double($0)) - origin }
        #expect(Self.worstLanding(z[0], later) <= Double(Self.rate) / 1000)
        // silence before the track (below −120 dB), but for the vocoder's pre-echo of the
        // click on its first frame (under −60 dB, within 40 ms)
        #expect(z[0][..<22_000].allSatisfy { abs($0) < 1e-6 })
        #expect(z[0][22_000..<23_900].allSatisfy { abs($0) < 0.001 })
    }

    @Test func badMapsAreRefusedByLine() throws {
        let dir = TempDir("mixfx-timemap-bad")
        defer { dir.remove() }
        let input = try clicks(dir)
        let cases: [(String, String)] = [
            ("48000 72000\n96000 x\n", ":2: '96000 x' is not two frame numbers (allowed: lines SOURCEFRAME TARGETFRAME"),
            ("48000 72000\n40000 96000\n", ":2: source frame 40000 is not after line 1 (48000 72000)"),
            ("\n48000 72000\n96000 72000\n", ":3: target frame 72000 is not after line 2 (48000 72000)"),
            ("48000 4800\n", ":1: from the start to here 48000 source frames take 4800 target frames, a tempo of 10 (allowed: tempos ΔSOURCE/ΔTARGET from 0.25 to 4)"),
            ("48000 72000\n200000 240000\n", ":2: source frame 200000 is past the end of track 1 (\(input)) (192000 frames) (allowed: source frames from 0 to 192000)"),
            ("# nothing\n", ": no points"),
        ]
        for (i, (text, message)) in cases.enumerated() {
            let mapFile = dir.file("bad\(i).txt"), out = dir.file("out\(i).wav")
            try text.write(toFile: mapFile, atomically: true, encoding: .utf8)
            let r = try MixFXBinary.run(["render", input, "--timemap", mapFile, "-o", out])
            #expect(r.status == 2 && r.stderr.contains("--timemap \(mapFile)\(message)"), "\(text): \(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out))
        }
        let missing = try MixFXBinary.run(["render", input, "--timemap", dir.file("none.txt"), "-o", dir.file("x.wav")])
        #expect(missing.status == 2 && missing.stderr.contains("--timemap: \(dir.file("none.txt")): no such file"), "\(missing.stderr)")
        // a map file is opened once and checked on the descriptor: a FIFO is refused, never read
        // (nothing writes to it, so reading it would wait for ever), and so is one for --pitchmap
        let fifo = dir.file("map.fifo")
        try #require(mkfifo(fifo, 0o600) == 0)
        let timeFIFO = try MixFXBinary.run(["render", input, "--timemap", fifo, "-o", dir.file("x.wav")])
        #expect(timeFIFO.status == 2 && timeFIFO.stderr.contains("--timemap: \(fifo): it is a FIFO"), "\(timeFIFO.stderr)")
        let pitchFIFO = try MixFXBinary.run(["render", input, "--pitchmap", fifo, "-o", dir.file("x.wav")])
        #expect(pitchFIFO.status == 2 && pitchFIFO.stderr.contains("--pitchmap: \(fifo): it is a FIFO"), "\(pitchFIFO.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("x.wav")))
        let good = try Self.writeMap(dir)
        let track = try MixFXBinary.run(["render", input, "--timemap", "3:" + good, "-o", dir.file("x.wav")])
        #expect(track.status == 2 && track.stderr.contains("--timemap 3:\(good): there are 1 track(s); track numbers go from 1 to 1"), "\(track.stderr)")
        // one lane per parameter: a time map and a tempo lane on the same track are refused
        let both = try MixFXBinary.run(["render", input, "--timemap", good, "--automate", "1:tempo=1@0,2@1", "-o", dir.file("x.wav")])
        #expect(both.status == 2 && both.stderr.contains("and --automate tempo both give track 1 a tempo lane: give one"), "\(both.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("x.wav")))
        // play reads the map as render does: a bad one is refused the same way
        let bad = dir.file("bad.txt")
        try "0 0\n100 50\n90 60\n".write(toFile: bad, atomically: true, encoding: .utf8)
        let play = try MixFXBinary.run(["play", input, "--timemap", bad, "--device", "null", "--no-ui"])
        let render = try MixFXBinary.run(["render", input, "--timemap", bad, "-o", dir.file("x.wav")])
        #expect(play.status == 2 && play.stderr == render.stderr && play.stderr.contains("--timemap \(bad)"), "\(play.stderr)")
    }

    /// Maps written on Windows (CRLF line ends) read as the same map: the same bytes as the LF
    /// file's render, for --timemap and --pitchmap.
    @Test func mapsWithCRLFLineEndsRead() throws {
        let dir = TempDir("mixfx-timemap-crlf")
        defer { dir.remove() }
        let input = try clicks(dir)
        for (flag, text) in [("--timemap", "48000 72000\n96000 96000\n"), ("--pitchmap", "0 0\n48000 3\n96000 -2\n")] {
            let lf = dir.file("lf.txt"), crlf = dir.file("crlf.txt")
            try text.write(toFile: lf, atomically: true, encoding: .utf8)
            try text.replacingOccurrences(of: "\n", with: "\r\n").write(toFile: crlf, atomically: true, encoding: .utf8)
            let a = dir.file("lf.wav"), b = dir.file("crlf.wav")
            let r1 = try MixFXBinary.run(["render", input, flag, lf, "-o", a, "--quiet", "--force"])
            let r2 = try MixFXBinary.run(["render", input, flag, crlf, "-o", b, "--quiet", "--force"])
            #expect(r1.status == 0 && r2.status == 0, "\(flag): \(r1.stderr) \(r2.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: a)) == Data(contentsOf: URL(fileURLWithPath: b)), "\(flag)")
        }
    }

    static func writeMap(_ dir: TempDir) throws -> String {
        let path = dir.file("good-map.txt")
        try mapText.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A time map is a session option, as `--pitchmap` is: `--print-preset` writes it as the
    /// track's tempo lane (steps), and the printed preset renders the very bytes of the flag;
    /// a batch job takes it, its path from the manifest's folder, with the same bytes again;
    /// `--dry-run` lists it; the map file counts as an input (never written over).
    @Test func aTimeMapTravelsInPresetsAndBatch() throws {
        let dir = TempDir("mixfx-timemap-preset")
        defer { dir.remove() }
        let input = try clicks(dir), mapFile = try Self.writeMap(dir), flagged = dir.file("flag.wav")
        let r = try MixFXBinary.run(["render", input, "--timemap", mapFile, "-o", flagged, "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let printed = try MixFXBinary.run(["render", input, "--timemap", mapFile, "--print-preset"])
        #expect(printed.status == 0, "\(printed.stderr)")
        let preset = try JSONSerialization.jsonObject(with: Data(printed.stdout.utf8)) as! [String: Any]
        let lanes = try #require(preset["automation"] as? [[String: Any]])
        #expect(lanes.count == 1 && lanes[0]["parameter"] as? String == "tempo" && lanes[0]["track"] as? Int == 1, "\(printed.stdout)")
        // a step at each line's target time, the segment's tempo ΔSOURCE/ΔTARGET
        let points = try #require(lanes[0]["breakpoints"] as? [[String: Any]])
        let expected = zip(Self.map, Self.map.dropFirst()).map { (a, b) in
            (Double(a.1) / Double(Self.rate), Double(b.0 - a.0) / Double(b.1 - a.1)) }
        #expect(points.count == expected.count + 1, "\(points)")
        for (p, e) in zip(points, expected) {
            #expect(abs((p["seconds"] as? Double ?? -1) - e.0) < 1e-12 && abs((p["value"] as? Double ?? -1) - e.1) < 1e-12, "\(p) against \(e)")
        }
        let presetFile = dir.file("p.json"), fromPreset = dir.file("preset.wav")
        try printed.stdout.write(toFile: presetFile, atomically: true, encoding: .utf8)
        let q = try MixFXBinary.run(["render", input, "--preset", presetFile, "-o", fromPreset, "--quiet"])
        #expect(q.status == 0, "\(q.stderr)")
        let a = try Data(contentsOf: URL(fileURLWithPath: flagged)), b = try Data(contentsOf: URL(fileURLWithPath: fromPreset))
        #expect(a == b && a.count > 220_000 * 2)
        // batch: the map's path from the manifest's folder, the job's output the same bytes
        try FileManager.default.createDirectory(atPath: dir.file("maps"), withIntermediateDirectories: true)
        try Self.mapText.write(toFile: dir.file("maps/m.txt"), atomically: true, encoding: .utf8)
        let manifest = dir.file("jobs.jsonl")
        try #"{"tracks": ["clicks.wav"], "output": "batch.wav", "args": ["--timemap", "1:maps/m.txt"]}"#
            .write(toFile: manifest, atomically: true, encoding: .utf8)
        let job = try MixFXBinary.run(["batch", manifest], cwd: NSTemporaryDirectory())
        #expect(job.status == 0, "\(job.stderr)")
        #expect((try? Data(contentsOf: URL(fileURLWithPath: dir.file("batch.wav")))) == a)
        // a job whose output is another job's map is refused, the map named as one
        let clash = dir.file("clash.jsonl")
        try (#"{"tracks": ["clicks.wav"], "output": "b2.wav", "args": ["--timemap", "maps/m.txt"]}"# + "\n"
             + #"{"tracks": ["clicks.wav"], "output": "maps/m.txt", "args": ["--type", "wav"]}"#).write(toFile: clash, atomically: true, encoding: .utf8)
        let refused = try MixFXBinary.run(["batch", clash], cwd: NSTemporaryDirectory())
        #expect(refused.status == 2 && refused.stderr.contains("is line 1's map '"), "\(refused.stderr)")
        #expect(try String(contentsOfFile: dir.file("maps/m.txt"), encoding: .utf8) == Self.mapText)
        // the dry run lists the lane
        let dry = try MixFXBinary.run(["render", input, "--timemap", mapFile, "--dry-run"])
        #expect(dry.stdout.contains("lane     track 1 tempo: "), "\(dry.stdout)")
        // the map is an input: never the output
        let over = try MixFXBinary.run(["render", input, "--timemap", mapFile, "-o", mapFile, "--type", "wav", "--force"])
        let kept = try String(contentsOfFile: mapFile, encoding: .utf8)
        #expect(over.status == 2 && kept == Self.mapText, "\(over.stderr)")
    }

    /// Noise hits from silence under the map: nothing in the 30 ms before each hit's mapped
    /// frame above −70 dB of the 30 ms after it. The splice reads a hit from silence without its
    /// interpolator's precursor here too (listed times), where a hit read a hair before its
    /// onset keeps the onset's own sample (cut there, clicks landing at an integer plus a
    /// rounding vanished).
    @Test func hitsUnderAMapKeepNoPrecursor() throws {
        let dir = TempDir("mixfx-timemap-hits")
        defer { dir.remove() }
        let h = Signals.hits(rate: Self.rate)
        let input = dir.file("hits.wav"), mapFile = try Self.writeMap(dir), out = dir.file("out.wav")
        try AudioFiles.write([Array(h.signal[..<192_000])], to: input, sampleRate: Self.rate, sampleFormat: .f32)
        let r = try MixFXBinary.run(["render", input, "--timemap", mapFile, "-o", out, "--sample-format", "f32", "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let y = try AudioFiles.read(out).0[0]
        let w = Self.rate * 3 / 100
        var worst = -Double.infinity
        for o in h.onsets where o < 186_000 {
            let q = Int(Self.mapped(Double(o)).rounded(.down))
            let before = y[(q - w)..<q].reduce(0.0) { $0 + Double($1 * $1) }
            let after = y[q..<(q + w)].reduce(0.0) { $0 + Double($1 * $1) }
            worst = max(worst, 10 * log10(max(before, 1e-30) / after))
        }
        #expect(worst < -70, "pre-echo \(worst) dB before a hit under the map")
    }

    /// With `--speed v` the map's times are the speed's too: file frame F lands on T(F)/v of
    /// the mix, and the length is the last target over v.
    @Test func aTimeMapFollowsTheSpeed() throws {
        let dir = TempDir("mixfx-timemap-speed")
        defer { dir.remove() }
        let input = try clicks(dir), mapFile = try Self.writeMap(dir), out = dir.file("out.wav")
        let r = try MixFXBinary.run(["render", input, "--timemap", mapFile, "--speed", "2", "-o", out, "--sample-format", "f32", "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let (y, format) = try AudioFiles.read(out)
        #expect(format.frameCount == 110_000)
        let worst = Self.worstLanding(y[0], Self.onsets.map { Self.mapped(Double($0)) / 2 })
        #expect(worst <= Double(Self.rate) / 1000, "a click lands \(worst) frames from its mapped frame")
    }

    /// The same clicks and map through `rubberband --timemap FILE -D` (the map's duration):
    /// mixfx's length and click timing asserted, rubberband's printed beside them (Rubber Band
    /// 3.1.2 here: the same length, clicks 2–12 ms off their mapped frames).
    @Test(.enabled(if: which("rubberband") != nil, "rubberband is not installed (apt-get install rubberband-cli)"))
    func sideBySideWithRubberBand() throws {
        let dir = TempDir("mixfx-timemap-rb")
        defer { dir.remove() }
        let input = try clicks(dir), mapFile = dir.file("map.txt")
        try Self.mapText.write(toFile: mapFile, atomically: true, encoding: .utf8)
        let ours = dir.file("mixfx.wav"), theirs = dir.file("rubberband.wav")
        let r = try MixFXBinary.run(["render", input, "--timemap", mapFile, "-o", ours, "--sample-format", "f32", "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let rb = try runProcess(which("rubberband")!, ["-M", mapFile, "-D", String(220_000.0 / Double(Self.rate)), input, theirs])
        #expect(rb.status == 0, "\(rb.stderr)")
        let expected = Self.onsets.map { Self.mapped(Double($0)) }
        let (y, yf) = try AudioFiles.read(ours)
        let (z, zf) = try AudioFiles.read(theirs)
        let mine = Self.worstLanding(y[0], expected), other = Self.worstLanding(z[0], expected)
        print("timemap side by side: mixfx \(yf.frameCount) frames, clicks within \(mine / 48) ms; rubberband \(zf.frameCount) frames, clicks within \(other / 48) ms")
        #expect(yf.frameCount == 220_000 && mine <= 48)
    }
}
