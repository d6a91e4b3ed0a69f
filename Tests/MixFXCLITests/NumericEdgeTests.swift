import Foundation
import Testing
import MixFX
@testable import MixFXCLI
import TestSupport

/// Numeric settings at the edges of what is accepted (issue #30): no trap, no silent wrong
/// answer, and a refusal names the flag, the value and what is allowed (exit status 2). The
/// sessions are the ones the `numeric` fuzz target and the issue found.
@Suite struct NumericEdgeTests {
    let dir = TempDir("mixfx-numeric")

    func tone(_ name: String, rate: Int, seconds: Double = 1, channels: Int = 2) throws -> String {
        let path = dir.file(name)
        let frames = Int(Double(rate) * seconds)
        let x = Signals.sine(frequencyHz: Double(rate) / 20, sampleRate: Double(rate), frames: frames, amplitude: 0.3)
        try AudioFiles.write(Array(repeating: x, count: channels), to: path, sampleRate: rate)
        return path
    }

    func dryRun(_ args: [String]) throws -> [String: Any] {
        let r = try MixFXBinary.run(["render"] + args + ["--dry-run", "--json"])
        #expect(r.status == 0, "\(args): \(r.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    }

    /// A 44101 Hz file placed 10⁶ s into the mix at speed 0.9999, rendered at 384 kHz: the
    /// resampler's rate pair is 44101·9999 → 384000·10000 (reduced), and the placed length times
    /// it passed 2^63 (exit 70). The length is now the formula's: ceil(placed · out / in) frames,
    /// start + 1/speed seconds.
    @Test func aLongPlacementAtAnOddRateAndSpeedIsPlannedNotTrapped() throws {
        defer { dir.remove() }
        let input = try tone("odd.wav", rate: 44_101)
        for (start, speed) in [(1_000_000.0, 0.9999), (1_000_000, 0.25), (999_999.5, 4)] {
            let plan = try dryRun([input, "--track", "1:start=\(start),speed=\(speed)", "--rate", "384000", "-o", dir.file("o.wav")])
            let (p, q) = Varispeed.fraction(speed)
            let placed = Double(Int((start * 44_101 * speed).rounded()) + 44_101)
            let expected = (placed * Double(384_000 * q) / Double(44_101 * p)).rounded(.up)
            let frames = try #require(plan["frames"] as? Int)
            #expect(abs(Double(frames) - expected) <= 1, "start \(start) speed \(speed): \(frames) frames, formula \(expected)")
            let seconds = try #require(plan["durationSeconds"] as? Double)
            #expect(abs(seconds - (start + 1 / speed)) < 1e-3, "\(seconds) s")
        }
    }

    /// The longest and slowest sessions the ranges allow: the whole trim range, the slowest
    /// tempo and speed, the highest output rate. Planned without a trap, as long as the formula.
    @Test func theSlowestLongestSessionIsPlanned() throws {
        defer { dir.remove() }
        let input = try tone("low.wav", rate: 8000, seconds: 2)
        let plan = try dryRun([input, "--track", "1:start=1000000,tempo=0.03125,speed=0.25,fade-in=3600,fade-out=3600",
                               "--rate", "384000", "-o", dir.file("o.w64")])
        // silence start·R·speed·tempo source frames, then the file; ×48·4 by the resampler, ×32 by the tempo
        let placed = (1_000_000 * 8000 * 0.25 * 0.03125).rounded() + 16_000
        let expected = (placed * 48 * 4 * 32).rounded()
        let frames = try #require(plan["frames"] as? Int)
        #expect(abs(Double(frames) - expected) <= 32, "\(frames) frames, formula \(expected)")
    }

    /// A very short render whose placement and speed make the resampler's position large: the
    /// samples are the tone's, finite and at its level.
    @Test func anOddRatePairRendersTheTone() throws {
        defer { dir.remove() }
        let input = try tone("odd.wav", rate: 44_101, seconds: 0.5, channels: 1)
        let out = dir.file("o.wav")
        let r = try MixFXBinary.run(["render", input, "--track", "1:start=0.25,speed=0.9999", "--rate", "384000",
                                     "--sample-format", "f32", "-o", out, "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let y = try AudioFiles.read(out).channels[0]
        #expect(y.allSatisfy { $0.isFinite })
        let startFrame = Int(0.25 * 384_000)
        #expect(Signals.rms(y[0..<(startFrame - 4000)]) == 0)
        // a full-scale-0.3 sine: RMS 0.3/√2 in the middle of the played segment
        let middle = y[(startFrame + 40_000)..<(startFrame + 140_000)]
        #expect(abs(Signals.rms(middle) - 0.3 / 2.0.squareRoot()) < 0.003, "\(Signals.rms(middle))")
    }

    /// Slurm's task id at the integer's edge with a count from auto/N: refused, naming it.
    @Test func slurmVariablesAtTheIntegerEdgesAreRefusedNotTrapped() throws {
        defer { dir.remove() }
        let input = try tone("a.wav", rate: 8000, seconds: 0.1)
        let manifest = dir.file("jobs.jsonl")
        try "{\"tracks\": [\"\(input)\"], \"output\": \"\(dir.file("o.wav"))\"}\n".write(toFile: manifest, atomically: true, encoding: .utf8)
        for id in ["9223372036854775807", "-9223372036854775808", "9223372036854775808"] {
            var env = ProcessInfo.processInfo.environment
            env["SLURM_ARRAY_TASK_ID"] = id
            let r = try MixFXBinary.run(["batch", manifest, "--shard", "auto/4"], environment: env)
            #expect(r.status == 2 && r.stderr.contains("SLURM_ARRAY_TASK_ID") && r.stderr.contains(id), "\(id): \(r.status) \(r.stderr)")
        }
    }

    /// The shard index from the environment: digits only (`+1`, ` 01 `, `1e0` refused, naming
    /// the variable); MIXFX_SHARD_INDEX, when set, chooses over the schedulers' own, which must
    /// otherwise agree.
    @Test func shardVariablesAreDigitsAndMixfxsOwnChooses() throws {
        for bad in ["+1", " 01 ", "1e0", "", "0x1"] {
            #expect(throws: CLIError.self) { try BatchCommand.environmentShard(count: 4, environment: ["SLURM_ARRAY_TASK_ID": bad]) }
            do { _ = try BatchCommand.environmentShard(count: 4, environment: ["MIXFX_SHARD_INDEX": bad]) } catch {
                #expect(error.message.contains("MIXFX_SHARD_INDEX='\(bad)' is not a whole number"), "\(error.message)")
            }
        }
        #expect(try BatchCommand.environmentShard(count: 4, environment: ["SLURM_ARRAY_TASK_ID": "01"]) == (1, 4))
        let both = ["SLURM_ARRAY_TASK_ID": "1", "JOB_COMPLETION_INDEX": "2"]
        do { _ = try BatchCommand.environmentShard(count: 4, environment: both); Issue.record("disagreeing indices were accepted") } catch {
            #expect(error.message.contains("disagree; set MIXFX_SHARD_INDEX to choose"), "\(error.message)")
        }
        var chosen = both
        chosen["MIXFX_SHARD_INDEX"] = "3"
        #expect(try BatchCommand.environmentShard(count: 4, environment: chosen) == (3, 4))
    }

    /// A subnormal slope made every coefficient NaN and the mix silent, with exit 0. The slopes
    /// allowed are 0.0001 to 1; below is refused, naming the flag, the value and the range.
    @Test func aSlopeBelowTheRangeIsRefusedAndTheEdgeFilters() throws {
        defer { dir.remove() }
        let input = try tone("a.wav", rate: 48_000, channels: 1)
        for (flag, value) in [("--bass-slope", "1e-310"), ("--treble-slope", "5e-324"), ("--bass-slope", "9e-05"), ("--bass-slope", "0")] {
            let r = try MixFXBinary.run(["render", input, flag, value, "--bass", "6", "--treble", "6", "-o", dir.file("o.wav")])
            #expect(r.status == 2 && r.stderr.contains(flag) && r.stderr.contains(value) && r.stderr.contains("from 0.0001 to 1"),
                    "\(flag) \(value): \(r.status) \(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir.file("o.wav")))
        }
        // at the edge the shelf is the formula's: a tone at 2.4 kHz, +12 dB low shelf at 100 Hz
        let out = dir.file("edge.wav")
        let r = try MixFXBinary.run(["render", input, "--bass", "12", "--bass-freq", "100", "--bass-slope", "0.0001",
                                     "--sample-format", "f32", "-o", out, "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let y = try AudioFiles.read(out).channels[0], x = try AudioFiles.read(input).channels[0]
        let measured = Signals.db(Signals.rms(y[24_000...]) / Signals.rms(x[24_000...]))
        let formula = BiquadCoefficients.shelf(.low, frequencyHz: 100, gainDB: 12, slope: 0.0001, sampleRate: 48_000)
            .magnitudeDB(atHz: 2400, sampleRate: 48_000)
        #expect(abs(measured - formula) < 0.01 && formula > 3, "measured \(measured) dB, formula \(formula) dB")
    }

    /// `eq-curve` applies render's rule for corners: one above Nyquist at the curve's rate is
    /// refused with render's message; at the edges of every range the curve holds no NaN.
    @Test func eqCurveRefusesWhatRenderRefusesAndIsFiniteAtTheEdges() throws {
        defer { dir.remove() }
        let input = try tone("a.wav", rate: 48_000, seconds: 0.1)
        let settings = ["--treble", "6", "--treble-freq", "20000", "--rate", "32000"]
        let render = try MixFXBinary.run(["render", input, "-o", dir.file("o.wav")] + settings)
        let curve = try MixFXBinary.run(["eq-curve", "-o", dir.file("c.svg")] + settings)
        #expect(render.status == 2 && curve.status == 2, "\(render.stderr) \(curve.stderr)")
        #expect(curve.stderr.contains("--treble-freq: 20000 Hz is not below the Nyquist frequency 16000 Hz"), "\(curve.stderr)")
        let tail = { (s: String) in s.components(separatedBy: "--treble-freq:").last! }
        #expect(tail(render.stderr) == tail(curve.stderr), "render: \(render.stderr) eq-curve: \(curve.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("c.svg")))
        // the default treble corner (5800 Hz) above an 8 kHz curve's Nyquist, once the shelf is active
        let byDefault = try MixFXBinary.run(["eq-curve", "--treble", "3", "--rate", "8000", "-o", dir.file("d.svg")])
        #expect(byDefault.status == 2 && byDefault.stderr.contains("that is the default: set --treble-freq")
                && !byDefault.stderr.contains("--track"), "\(byDefault.stderr)")
        // a flat band there is no error, as in render
        #expect(try MixFXBinary.run(["eq-curve", "--bass", "3", "--rate", "8000", "-o", dir.file("e.svg")]).status == 0)
        for edge in [["--bass", "-96", "--bass-freq", "20", "--bass-slope", "0.0001", "--treble", "24", "--treble-freq", "3999",
                      "--treble-slope", "0.0001", "--eq-gain", "-96", "--rate", "8000"],
                     ["--bass", "24", "--bass-freq", "24000", "--bass-slope", "1", "--treble", "-96", "--treble-freq", "20",
                      "--eq-gain", "24", "--rate", "384000"]] {
            let out = dir.file("edge.svg")
            let r = try MixFXBinary.run(["eq-curve", "-o", out, "--force"] + edge)
            #expect(r.status == 0, "\(edge): \(r.stderr)")
            let svg = try String(contentsOfFile: out, encoding: .utf8)
            #expect(svg.range(of: "(?<![a-z])(nan|inf)", options: .regularExpression) == nil, "\(edge)")
        }
    }

    /// A 1000 Hz input (allowed as a source) mixes at 1000 Hz unless --rate says otherwise: the
    /// refusal names --rate and the rates allowed; with --rate the file renders.
    @Test func aLowInputRateNamesRate() throws {
        defer { dir.remove() }
        let input = try tone("low.wav", rate: 1000, channels: 1)
        let r = try MixFXBinary.run(["render", input, "-o", dir.file("o.wav")])
        #expect(r.status == 2 && r.stderr.contains("--rate") && r.stderr.contains("1000 Hz")
                && r.stderr.contains("8000 to 384000 Hz") && r.stderr.contains("highest input rate"), "\(r.status) \(r.stderr)")
        #expect(try MixFXBinary.run(["render", input, "--rate", "8000", "-o", dir.file("o.wav"), "--quiet"]).status == 0)
    }

    /// A decimal beyond the largest double is a number out of range, not "not a number".
    @Test func aHugeDecimalIsOutOfRange() throws {
        defer { dir.remove() }
        let input = try tone("a.wav", rate: 8000, seconds: 0.1)
        for (args, flag, allowed) in [(["--bass", "1e309"], "--bass", "from -96 to 24 dB"),
                                      (["--pitch=1e400"], "--pitch", "from -2400 to 2400 cents"),
                                      (["--track", "1:start=1e400"], "start", "from 0 to 1000000 s"),
                                      (["--tempo", "-1e309%"], "--tempo", "3.125% to 3200%"),
                                      (["--lfe-gain", "1e309"], "--lfe-gain", "-60 to 20 dB")] {
            let r = try MixFXBinary.run(["render", input, "-o", dir.file("o.wav")] + args)
            #expect(r.status == 2 && r.stderr.contains(flag) && r.stderr.contains("is out of range") && r.stderr.contains(allowed)
                    && !r.stderr.contains("not a number"), "\(args): \(r.stderr)")
        }
    }

    /// The container's own rate limits are checked before rendering, by name and number:
    /// Ogg/Vorbis up to 200 kHz, FLAC above 65535 Hz only in tens of Hz.
    @Test func containerRatesAreCheckedBeforeRendering() throws {
        defer { dir.remove() }
        let input = try tone("a.wav", rate: 48_000, seconds: 0.2)
        for (out, rate, words) in [("x.ogg", "384000", ["Ogg/Vorbis", "up to 200000 Hz", "384000 Hz", "--rate"]),
                                   ("x.ogg", "200001", ["Ogg/Vorbis", "up to 200000 Hz"]),
                                   ("x.flac", "192001", ["FLAC", "multiples of 10 Hz", "192001 Hz", "--rate 192000"])] {
            for extra in [[], ["--dry-run"]] {
                let r = try MixFXBinary.run(["render", input, "-o", dir.file(out), "--rate", rate] + extra)
                #expect(r.status == 2 && words.allSatisfy { r.stderr.contains($0) }, "\(out) \(rate) \(extra): \(r.status) \(r.stderr)")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["a.wav"])
        }
        // the rates at the limits are written
        for (out, rate) in [("y.ogg", 200_000), ("y.flac", 192_000), ("z.flac", 65_535), ("y.caf", 384_000)] {
            let r = try MixFXBinary.run(["render", input, "-o", dir.file(out), "--rate", "\(rate)", "--quiet"])
            #expect(r.status == 0, "\(out) \(rate): \(r.stderr)")
            #expect(try AudioFiles.read(dir.file(out)).format.sampleRate == rate)
        }
    }
}
