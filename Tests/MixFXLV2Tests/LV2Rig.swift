import CLV2
import Foundation
import Testing
import TestSupport

/// How the tests reach the plugin as hosts do: the built library (beside the tests), loaded
/// in-process through `lv2_descriptor`, or assembled into a bundle in a temporary prefix for
/// Debian's lilv tools (lv2ls, lv2apply) and the C host (Tests/lv2/lv2-host.c).
enum LV2Rig {
    static let mono = "https://mixfx.dev/lv2/pitch#mono"
    static let stereo = "https://mixfx.dev/lv2/pitch#stereo"
    /// The checkout (for scripts/ and Tests/lv2/).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    static let ttlPath = root + "/Sources/MixFXLV2/bundle/mixfx.ttl"

    /// The plugin library of this build, `libmixfx_lv2.so` beside the test bundle.
    static let libraryPath: String? = {
        var dir = URL(fileURLWithPath: MixFXBinary.path).deletingLastPathComponent()
        for _ in 0..<4 {
            let p = dir.appendingPathComponent("libmixfx_lv2.so").path
            if FileManager.default.fileExists(atPath: p) { return p }
            dir = dir.deletingLastPathComponent()
        }
        return nil
    }()

    /// Why the plugin's tests cannot run, or nil. Under a sanitizer the library is instrumented
    /// for a runtime that a plain host (lv2apply) does not load.
    static var unavailable: String? {
        if Sanitizer.name != nil { return "the plugin is tested in the plain release build (a sanitizer's runtime is not in a host)" }
        return libraryPath == nil ? "libmixfx_lv2.so is not built (swift build -c release)" : nil
    }

    /// Assembles mixfx.lv2 under `prefix`/lib/lv2 with scripts/lv2-bundle.sh (as `make install`
    /// will) and returns the folder to put in LV2_PATH.
    static func installBundle(prefix: String) throws -> String {
        var env = ProcessInfo.processInfo.environment
        env["MIXFX_LV2_LIB"] = libraryPath
        let r = try runProcess("/bin/bash", [root + "/scripts/lv2-bundle.sh", "--prefix", prefix], environment: env)
        guard r.status == 0 else { throw RigError.failed("lv2-bundle.sh: \(r.stderr)") }
        return prefix + "/lib/lv2"
    }

    /// The environment for a lilv tool that finds only the bundle in `lv2Path`.
    static func environment(lv2Path: String) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["LV2_PATH"] = lv2Path
        return env
    }

    /// Runs `lv2apply` on `channels` (written as a float WAV) with `controls` (symbol, value);
    /// returns the output's channels.
    static func lv2apply(_ uri: String, _ channels: [[Float]], sampleRate: Int, controls: [(String, Double)],
                         lv2Path: String, dir: TempDir) throws -> [[Float]] {
        let input = dir.file("in-\(UUID().uuidString.prefix(6)).wav"), output = input.replacingOccurrences(of: "in-", with: "out-")
        try AudioFiles.write(channels, to: input, sampleRate: sampleRate, sampleFormat: .f32)
        let args = ["-i", input, "-o", output] + controls.flatMap { ["-c", $0.0, String($0.1)] } + [uri]
        let r = try runProcess(which("lv2apply")!, args, environment: environment(lv2Path: lv2Path))
        guard r.status == 0 else { throw RigError.failed("lv2apply \(args): \(r.stderr)") }
        return try AudioFiles.read(output).channels
    }

    /// Builds the C host (Tests/lv2/lv2-host.c) into `dir`; nil without gcc.
    static func buildHost(in dir: String) -> String? {
        guard let gcc = which("gcc") else { return nil }
        let out = dir + "/lv2-host"
        let r = try? runProcess(gcc, ["-O2", "-I", root + "/Sources/CLV2/include", "-o", out, root + "/Tests/lv2/lv2-host.c", "-ldl"])
        return r?.status == 0 ? out : nil
    }

    enum RigError: Error { case failed(String) }
}

/// The plugin library loaded into this process, as a host loads it: `dlopen`, `lv2_descriptor`.
/// (It carries its own Swift runtime, hidden: it shares nothing with the tests'.)
final class LoadedPlugin: @unchecked Sendable {
    static let shared: LoadedPlugin? = LV2Rig.libraryPath.flatMap { LoadedPlugin(path: $0) }

    let descriptors: [String: UnsafePointer<LV2Descriptor>]

    private init?(path: String) {
        guard let lib = dlopen(path, RTLD_NOW | RTLD_LOCAL), let sym = dlsym(lib, "lv2_descriptor") else { return nil }
        let entry = unsafeBitCast(sym, to: (@convention(c) (UInt32) -> UnsafePointer<LV2Descriptor>?).self)
        var found: [String: UnsafePointer<LV2Descriptor>] = [:]
        var i: UInt32 = 0
        while let d = entry(i) {
            found[String(cString: d.pointee.URI)] = d
            i += 1
        }
        descriptors = found
    }
}

/// The mono and stereo plugins' port indices (as mixfx.ttl declares them).
enum Port: UInt32 {
    case latency = 0, cents, semitones, formant, bass, bassFreq, treble, trebleFreq, wet
    case inputLeft, outputLeft, inputRight, outputRight
}

/// One instance, driven as a host drives it: ports connected to memory the test owns, control
/// values set there, `run` with host blocks of given sizes.
final class PluginInstance {
    let descriptor: UnsafePointer<LV2Descriptor>
    let handle: LV2Handle
    let channelCount: Int
    /// The control ports' values (the memory the plugin reads and writes).
    let controls = UnsafeMutablePointer<Float>.allocate(capacity: 9)
    private let blockCapacity: Int
    private let inputs: [UnsafeMutablePointer<Float>], outputs: [UnsafeMutablePointer<Float>]

    /// An instance of `uri` at `sampleRate`, its controls at the TTL's defaults, activated.
    init(_ uri: String, sampleRate: Double = 48_000) throws {
        let plugin = try #require(LoadedPlugin.shared, "the plugin library did not load")
        descriptor = try #require(plugin.descriptors[uri], "\(uri) is not in the library")
        channelCount = uri == LV2Rig.stereo ? 2 : 1
        blockCapacity = 8192
        let features = UnsafeMutablePointer<UnsafePointer<LV2Feature>?>.allocate(capacity: 1)
        features[0] = nil
        defer { features.deallocate() }
        handle = try #require(descriptor.pointee.instantiate(descriptor, sampleRate, "/", UnsafePointer(features)))
        let capacity = blockCapacity
        inputs = (0..<channelCount).map { _ in .allocate(capacity: capacity) }
        outputs = (0..<channelCount).map { _ in .allocate(capacity: capacity) }
        for (port, value) in [(Port.cents, 0), (.semitones, 0), (.formant, 0), (.bass, 0), (.bassFreq, 55), (.treble, 0),
                              (.trebleFreq, 5800), (.wet, 1), (.latency, -1)] as [(Port, Float)] {
            controls[Int(port.rawValue)] = value
        }
        for i in 0..<9 { descriptor.pointee.connect_port(handle, UInt32(i), controls + i) }
        descriptor.pointee.connect_port(handle, Port.inputLeft.rawValue, inputs[0])
        descriptor.pointee.connect_port(handle, Port.outputLeft.rawValue, outputs[0])
        if channelCount == 2 {
            descriptor.pointee.connect_port(handle, Port.inputRight.rawValue, inputs[1])
            descriptor.pointee.connect_port(handle, Port.outputRight.rawValue, outputs[1])
        }
        descriptor.pointee.activate(handle)
    }

    deinit {
        descriptor.pointee.deactivate(handle)
        descriptor.pointee.cleanup(handle)
        controls.deallocate()
        (inputs + outputs).forEach { $0.deallocate() }
    }

    subscript(port: Port) -> Float {
        get { controls[Int(port.rawValue)] }
        set { controls[Int(port.rawValue)] = newValue }
    }

    /// What the latency port says after `run(0)`.
    var latency: Int {
        descriptor.pointee.run(handle, 0)
        return Int(self[.latency])
    }

    /// deactivate + activate: the host's reset (a restored session, a transport relocation).
    func restart() {
        descriptor.pointee.deactivate(handle)
        descriptor.pointee.activate(handle)
    }

    /// Runs `channels` through in host blocks of `blocks(k)` frames (k the call's number).
    func process(_ channels: [[Float]], blocks: (Int) -> Int = { _ in 512 }) -> [[Float]] {
        let frames = channels[0].count
        var out = Array(repeating: [Float](repeating: 0, count: frames), count: channelCount)
        var done = 0, call = 0
        while done < frames {
            let n = min(max(1, min(blocks(call), blockCapacity)), frames - done)
            for c in 0..<channelCount { for i in 0..<n { inputs[c][i] = channels[c][done + i] } }
            descriptor.pointee.run(handle, UInt32(n))
            for c in 0..<channelCount { for i in 0..<n { out[c][done + i] = outputs[c][i] } }
            done += n
            call += 1
        }
        return out
    }
}

/// Test signals of the LV2 tests.
enum LV2Signals {
    /// A unit impulse at `at` in `frames` of silence.
    static func click(at: Int, frames: Int) -> [Float] {
        var x = [Float](repeating: 0, count: frames)
        x[at] = 0.9
        return x
    }

    /// Where |x| is largest.
    static func peakIndex(_ x: [Float]) -> Int {
        x.indices.max { abs(x[$0]) < abs(x[$1]) }!
    }

    /// `x` delayed by `frames` (zeros first), as long as `x`.
    static func delayed(_ x: [Float], by frames: Int) -> [Float] {
        Array(([Float](repeating: 0, count: frames) + x).prefix(x.count))
    }
}
