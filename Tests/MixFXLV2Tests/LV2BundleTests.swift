import Foundation
import MixFX
import Testing
import TestSupport

/// The bundle as hosts see it: its TTL says what the parameter registry says, our declaration
/// of the LV2 ABI is LV2's, and Debian's lilv tools (lv2ls, lv2info, lv2apply) find the bundle
/// installed in a temporary prefix and render files through it; the C host counts the
/// allocations of `run`.
@Suite struct LV2BundleTests {
    static let lilv = which("lv2apply") != nil && which("lv2ls") != nil && which("lv2info") != nil
    static let lilvMissing = "lilv-utils (lv2ls, lv2info, lv2apply) is not installed"

    /// A control input as mixfx.ttl declares it.
    struct TTLPort: Equatable, CustomStringConvertible {
        var index: Int, symbol: String, minimum: Double, maximum: Double, defaultValue: Double
        var description: String { "\(index) \(symbol) \(minimum)…\(maximum) (\(defaultValue))" }
    }

    /// The control input ports of mixfx.ttl: each `:name` block with lv2:InputPort.
    static func ttlControlInputs() throws -> [TTLPort] {
        let text = try String(contentsOfFile: LV2Rig.ttlPath, encoding: .utf8)
        var ports: [TTLPort] = []
        for block in text.components(separatedBy: "\n\n") where block.contains("lv2:ControlPort, lv2:InputPort") {
            func value(_ key: String) -> String? {
                block.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix(key + " ") }
                    .map { $0.trimmingCharacters(in: .whitespaces).dropFirst(key.count + 1).trimmingCharacters(in: CharacterSet(charactersIn: " ;.\"")) }
            }
            ports.append(TTLPort(index: Int(value("lv2:index") ?? "") ?? -1, symbol: value("lv2:symbol") ?? "?",
                                 minimum: Double(value("lv2:minimum") ?? "") ?? .nan, maximum: Double(value("lv2:maximum") ?? "") ?? .nan,
                                 defaultValue: Double(value("lv2:default") ?? "") ?? .nan))
        }
        return ports
    }

    @Test func theTTLsControlPortsAreTheRegistrysParameters() throws {
        // symbol = the registry's key with _ for - (cents, semitones and formant as Rubber Band's)
        func port(_ index: Int, _ id: ParameterID, symbol: String? = nil) -> TTLPort {
            let s = id.spec
            return TTLPort(index: index, symbol: symbol ?? String(s.key.map { $0 == "-" ? "_" : $0 }), minimum: s.minimum,
                           maximum: s.maximum, defaultValue: s.defaultValue)
        }
        let cents = ParameterID.pitchCents.spec
        let expected = [
            port(1, .pitchCents, symbol: "cents"),
            TTLPort(index: 2, symbol: "semitones", minimum: cents.minimum / 100, maximum: cents.maximum / 100, defaultValue: 0),
            port(3, .preserveFormants, symbol: "formant"),
            port(4, .bassGainDB), port(5, .bassFrequencyHz), port(6, .trebleGainDB), port(7, .trebleFrequencyHz),
            TTLPort(index: 8, symbol: "wet", minimum: 0, maximum: 1, defaultValue: 1),
        ]
        let ttl = try Self.ttlControlInputs()
        #expect(ttl == expected, "mixfx.ttl: \(ttl)")
    }

    @Test(.enabled(if: which("gcc") != nil, "gcc is missing"),
          .enabled(if: FileManager.default.fileExists(atPath: "/usr/include/lv2/core/lv2.h"), "lv2-dev (LV2's own header) is not installed"))
    func ourDeclarationOfTheLV2ABILaysOutAsLV2sHeader() throws {
        let r = try runProcess(which("gcc")!, ["-fsyntax-only", "-Wall", "-Werror", "-I", LV2Rig.root + "/Sources/CLV2/include",
                                               LV2Rig.root + "/Tests/lv2/abi-check.c"])
        #expect(r.status == 0, "\(r.stderr)")
    }

    /// The bundle's Turtle against LV2's own vocabularies (Debian's lv2-dev installs them under
    /// /usr/lib/lv2): every class, property and range as LV2 defines it.
    @Test(.enabled(if: which("sord_validate") != nil, "sord_validate is missing (apt-get install sordi)"),
          .enabled(if: FileManager.default.fileExists(atPath: "/usr/lib/lv2/core.lv2/lv2core.ttl"), "lv2-dev (LV2's vocabularies) is not installed"))
    func theBundlesTurtleValidatesAgainstLV2sVocabularies() throws {
        let specs = ["core", "units", "port-groups", "port-props", "schemas"].flatMap { name -> [String] in
            let dir = "/usr/lib/lv2/\(name).lv2"
            return ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.hasSuffix(".ttl") }.map { dir + "/" + $0 }
        }
        let bundle = ["manifest.ttl", "mixfx.ttl"].map { LV2Rig.root + "/Sources/MixFXLV2/bundle/" + $0 }
        let r = try runProcess(which("sord_validate")!, specs + bundle)
        #expect(r.status == 0 && (r.stdout + r.stderr).contains("Found 0 errors among"), "\(r.stdout)\(r.stderr)")
    }

    /// lv2lint (not in Debian 12: built from its source, `MIXFX_LV2LINT` or on PATH) finds no
    /// failure in the installed bundle; packagers' mode (-Mpack), as a distribution would run it.
    @Test(.enabled(if: LV2Rig.unavailable == nil, "\(LV2Rig.unavailable ?? "")"),
          .enabled(if: LV2BundleTests.lv2lint != nil, "lv2lint is not installed (it is not packaged in Debian 12; build it from its source and set MIXFX_LV2LINT)"))
    func lv2lintFindsNoFailure() throws {
        let dir = TempDir("mixfx-lv2lint")
        defer { dir.remove() }
        let path = try LV2Rig.installBundle(prefix: dir.file("prefix"))
        let r = try runProcess(LV2BundleTests.lv2lint!, ["-Mpack", "-I", path + "/mixfx.lv2/", LV2Rig.mono, LV2Rig.stereo],
                               environment: LV2Rig.environment(lv2Path: path + ":/usr/lib/lv2"))
        #expect(r.status == 0 && !r.stdout.contains("[FAIL]"), "\(r.stdout)\(r.stderr)")
    }

    static var lv2lint: String? { ProcessInfo.processInfo.environment["MIXFX_LV2LINT"] ?? which("lv2lint") }

    @Test(.enabled(if: LV2Rig.unavailable == nil, "\(LV2Rig.unavailable ?? "")"), .enabled(if: lilv, "\(lilvMissing)"))
    func lv2lsAndLv2infoFindBothPluginsInATemporaryPrefix() throws {
        let dir = TempDir("mixfx-lv2")
        defer { dir.remove() }
        let path = try LV2Rig.installBundle(prefix: dir.file("prefix"))
        #expect(FileManager.default.fileExists(atPath: path + "/mixfx.lv2/mixfx.so"))
        let ls = try runProcess(which("lv2ls")!, [], environment: LV2Rig.environment(lv2Path: path))
        #expect(ls.stdout.split(separator: "\n").map(String.init).sorted() == [LV2Rig.mono, LV2Rig.stereo], "\(ls.stdout)")
        for uri in [LV2Rig.mono, LV2Rig.stereo] {
            let info = try runProcess(which("lv2info")!, [uri], environment: LV2Rig.environment(lv2Path: path))
            #expect(info.status == 0)
            #expect(info.stdout.contains("Has latency:       yes, reported by port 0"), "\(info.stdout)")
            #expect(info.stdout.contains("Optional Features: http://lv2plug.in/ns/lv2core#hardRTCapable"))
            #expect(!info.stdout.contains("Required Features"), "no feature is required")
        }
    }

    @Test(.enabled(if: LV2Rig.unavailable == nil, "\(LV2Rig.unavailable ?? "")"), .enabled(if: lilv, "\(lilvMissing)"))
    func lv2applyShiftsASineWithinATenthOfACentAndPutsAClickAtTheLatency() throws {
        let dir = TempDir("mixfx-lv2")
        defer { dir.remove() }
        let path = try LV2Rig.installBundle(prefix: dir.file("prefix"))
        let rate = 48_000, latency = try PluginInstance(LV2Rig.mono, sampleRate: Double(rate)).latency
        let sine = Signals.sine(frequencyHz: 440, sampleRate: Double(rate), frames: 4 * rate)
        let y = try LV2Rig.lv2apply(LV2Rig.mono, [sine], sampleRate: rate, controls: [("cents", 100)], lv2Path: path, dir: dir)[0]
        #expect(y.count == sine.count)
        let error = Signals.cents(Signals.frequency(y[(y.count / 2)..<(y.count - 4096)], sampleRate: Double(rate)), 440 * pow(2, 100.0 / 1200))
        #expect(abs(error) < 0.1, "\(error) cents off")

        let at = 3000
        let click = LV2Signals.click(at: at, frames: at + latency + 10_000)
        let z = try LV2Rig.lv2apply(LV2Rig.mono, [click], sampleRate: rate, controls: [("cents", 100)], lv2Path: path, dir: dir)[0]
        #expect(abs(LV2Signals.peakIndex(z) - (at + latency)) <= 1, "the click at \(LV2Signals.peakIndex(z)), latency \(latency)")
    }

    @Test(.enabled(if: LV2Rig.unavailable == nil, "\(LV2Rig.unavailable ?? "")"), .enabled(if: lilv, "\(lilvMissing)"))
    func lv2applyRendersStereoAsTheInProcessHostDoes() throws {
        // lv2apply runs one frame at a time; the same library in this process with 512-frame
        // blocks gives the same bytes (the output does not depend on the host's blocks)
        let dir = TempDir("mixfx-lv2")
        defer { dir.remove() }
        let path = try LV2Rig.installBundle(prefix: dir.file("prefix"))
        let rate = 44_100
        let l = Signals.noise(frames: 3 * rate, amplitude: 0.3, seed: 3), r = Signals.sine(frequencyHz: 330, sampleRate: Double(rate), frames: 3 * rate)
        let controls: [(String, Double)] = [("semitones", -5), ("cents", 30), ("bass", 4), ("treble_freq", 3000), ("treble", -3),
                                            ("wet", 0.8)]
        let y = try LV2Rig.lv2apply(LV2Rig.stereo, [l, r], sampleRate: rate, controls: controls, lv2Path: path, dir: dir)
        let p = try PluginInstance(LV2Rig.stereo, sampleRate: Double(rate))
        (p[.semitones], p[.cents], p[.bass], p[.trebleFreq], p[.treble], p[.wet]) = (-5, 30, 4, 3000, -3, 0.8)
        let expected = p.process([l, r])
        #expect(y.count == 2)
        #expect(y == expected)
        let steady = y[1][(3 * rate / 2)..<(3 * rate - 4096)]
        // (the right channel: the sine's shifted tone under the 20 % dry share)
        #expect(Signals.power(steady, hz: 330 * pow(2, -470.0 / 1200), sampleRate: Double(rate))
                > 10 * Signals.power(steady, hz: 330, sampleRate: Double(rate)))
    }

    @Test(.enabled(if: LV2Rig.unavailable == nil, "\(LV2Rig.unavailable ?? "")"), .enabled(if: which("gcc") != nil, "gcc is missing"),
          .disabled(if: Sanitizer.name != nil, Sanitizer.reason))
    func runAllocatesNothingFromTheFirstCall() throws {
        // the C host with the allocation counter preloaded: every run call, random host blocks
        // (1 … 4096 frames), pitch and EQ on, mono and stereo
        let dir = TempDir("mixfx-lv2")
        defer { dir.remove() }
        let path = try LV2Rig.installBundle(prefix: dir.file("prefix"))
        let host = try #require(LV2Rig.buildHost(in: dir.path))
        let counter = try #require(ALSARig.allocationCounterLibrary(in: dir.path))
        let input = dir.file("in.f32")
        let x = Signals.noise(frames: 5 * 48_000, amplitude: 0.3)
        try Data(bytes: x.flatMap { [$0, -$0] }, count: 8 * x.count).write(to: URL(fileURLWithPath: input))
        var env = ProcessInfo.processInfo.environment
        env["LD_PRELOAD"] = counter
        for (uri, channels, audio) in [(LV2Rig.mono, 1, "9,10"), (LV2Rig.stereo, 2, "9,10,11,12")] {
            let r = try runProcess(host, [path + "/mixfx.lv2/mixfx.so", uri, "48000", String(channels), input, dir.file("out.f32"),
                                          "ports=\(channels == 1 ? 11 : 13)", "audio=\(audio)", "latency=0", "blocks=random",
                                          "1=-700", "3=1", "4=5", "5=80", "6=-3", "7=5800", "8=0.9"], environment: env)
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.contains("run_allocations 0\n"), "\(uri): \(r.stdout)")
            #expect(r.stdout.contains("latency "), "\(r.stdout)")
        }
    }
}
