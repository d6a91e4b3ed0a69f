// libFuzzer targets for mixfx's parsers and file reading (see Fuzz/README.md, `make fuzz`).
//
// One executable serves six targets; MIXFX_FUZZ_TARGET chooses: preset, cli, control, file,
// manifest, numeric.
// Built by scripts/fuzz.sh with -sanitize=fuzzer -D MIXFX_FUZZ; an ordinary build gets a stub
// that says how to build it.
#if MIXFX_FUZZ
import Foundation
@testable import MixFXCLI
import MixFX

nonisolated(unsafe) var target = "preset"
nonisolated(unsafe) var scratchPath = ""

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> Int32 {
    target = ProcessInfo.processInfo.environment["MIXFX_FUZZ_TARGET"] ?? "preset"
    scratchPath = "/dev/shm/mixfx-fuzz-\(getpid())"
    if !FileManager.default.fileExists(atPath: "/dev/shm") { scratchPath = NSTemporaryDirectory() + "mixfx-fuzz-\(getpid())" }
    return 0
}

// SwiftPM links an executable's entry point as <target>_main; here it starts libFuzzer's driver
// (the fuzzer runtime's own `main` is then not linked).
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<Int32>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> Int32) -> Int32

@_cdecl("mixfx_fuzz_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    var count = argc
    var vector: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&count, &vector, { data, size in fuzzOne(data, size) })
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    switch target {
    case "preset": fuzzPreset(bytes)
    case "cli": fuzzCommandLine(bytes)
    case "control": fuzzControl(bytes)
    case "file": fuzzFile(bytes)
    case "manifest": fuzzManifest(bytes)
    case "numeric": fuzzNumeric(bytes)
    default: fatalError("MIXFX_FUZZ_TARGET must be preset, cli, control, file, manifest or numeric")
    }
    return 0
}

/// Any bytes: a preset or a clear error; a preset that parses prints as JSON that parses back to it.
func fuzzPreset(_ bytes: [UInt8]) {
    var warnings: [String] = []
    guard let p = try? Preset.parse(Data(bytes), source: "fuzz", warnings: &warnings) else { return }
    var again: [String] = []
    guard let q = try? Preset.parse(p.jsonData(), source: "round trip", warnings: &again) else {
        fatalError("a preset that parsed did not parse back from its own JSON")
    }
    var expected = p
    expected.name = p.name
    if q.all != p.all || q.tracks != p.tracks || q.masterVolume != p.masterVolume || q.sampleFormat != p.sampleFormat
        || q.sampleRateHz != p.sampleRateHz || q.dither != p.dither || q.clipping != p.clipping
        || q.limitDBTP != p.limitDBTP || q.normalizeLUFS != p.normalizeLUFS {
        fatalError("a preset changed through its own JSON")
    }
}

/// Arguments separated by NUL bytes: render's and play's parsers take or refuse them.
func fuzzCommandLine(_ bytes: [UInt8]) {
    let args = bytes.split(separator: 0, omittingEmptySubsequences: false).prefix(64).map { String(decoding: $0, as: UTF8.self) }
    if let cmd = try? RenderCommand.parse(args) {
        _ = try? cmd.session.resolve(preset: Preset(name: "none"))
    }
    if let cmd = try? PlayCommand.parse(args) {
        _ = try? cmd.session.resolve(preset: Preset(name: "none"))
    }
}

/// A `mixfx batch` manifest: jobs or problems naming their lines, never a crash; every job's
/// fingerprint can be taken (its inputs need not exist).
func fuzzManifest(_ bytes: [UInt8]) {
    let (jobs, problems) = BatchManifest.parse(String(decoding: bytes, as: UTF8.self), directory: "/nonexistent")
    for p in problems where !p.hasPrefix("line ") { fatalError("a manifest problem without its line: \(p)") }
    for j in jobs { _ = j.fingerprint() }
}

/// Lines of the live control protocol.
func fuzzControl(_ bytes: [UInt8]) {
    for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n").prefix(64) {
        _ = try? ControlCommand.parse(String(line), trackCount: 4)
    }
}

/// Any bytes as a sound file: opened by libsndfile through SoundFileReader and rendered through
/// a track (guard, resampler, EQ) for up to 16384 frames, or a clear error.
func fuzzFile(_ bytes: [UInt8]) {
    guard FileManager.default.createFile(atPath: scratchPath, contents: Data(bytes)) else { fatalError("cannot write \(scratchPath)") }
    defer { unlink(scratchPath) }
    guard let reader = try? SoundFileReader(path: scratchPath) else { return }
    let engine = AudioEngine()
    let track = engine.addTrack(source: reader)
    track.eq.bassGain.value = 6
    engine.outputSampleRate = 48_000
    guard let kernel = try? engine.makeKernel(maximumFrameCount: 1024), (try? kernel.start()) != nil else { return }
    var frames = 0
    while frames < 16_384, let n = try? kernel.render(frameCount: 1024), n > 0 {
        for c in 0..<kernel.layout.channelCount {
            for i in 0..<n where !kernel.output.channel(c)[i].isFinite { fatalError("a non-finite sample reached the mix") }
        }
        frames += n
    }
}

/// Reads choices from the fuzzer's bytes (0 once they run out).
struct Choices {
    var bytes: ArraySlice<UInt8>
    mutating func byte() -> UInt8 { bytes.popFirst() ?? 0 }
    mutating func u64() -> UInt64 { (0..<8).reduce(0) { v, _ in v << 8 | UInt64(byte()) } }
    mutating func pick<T>(_ options: [T]) -> T { options[Int(byte()) % options.count] }
    /// A fraction in [0, 1].
    mutating func unit() -> Double { Double(UInt16(byte()) << 8 | UInt16(byte())) / 65535 }

    /// A value for a parameter. With `inRange` one the engine accepts: an edge, just inside
    /// one, the default, a whole number for a whole-number parameter, a value with a long
    /// fraction (a speed of 0.9999 is 9999/10000 to the resampler) or any in between; else also
    /// just outside the edges, zero, tiny and huge magnitudes, subnormals, non-finite values or
    /// any double.
    mutating func value(_ spec: ParameterSpec, inRange: Bool) -> Double {
        let lo = spec.minimum, hi = spec.maximum
        let v: Double
        switch byte() % (inRange ? 10 : 20) {
        case 0: v = lo
        case 1: v = hi
        case 2: v = lo.nextUp
        case 3: v = hi.nextDown
        case 4: v = spec.defaultValue
        case 5: v = lo * (1 + unit() * 1e-6)
        case 6: v = hi * (1 - unit() * 1e-6)
        case 7: v = pick([0.9999, 0.2501, 3.9999, 1.0 / 3, 0.03125, 31.9999, 999_999.9999, 9_999_999.5, 3599.9999])
        case 10: v = lo.nextDown
        case 11: v = hi.nextUp
        case 12: v = 0
        case 13: v = pick([Double.leastNonzeroMagnitude, Double.leastNormalMagnitude / 1000, -Double.leastNormalMagnitude,
                           Double.leastNormalMagnitude, 1e-300, 1e-20])
        case 14: v = pick([Double.greatestFiniteMagnitude, -Double.greatestFiniteMagnitude, 1e300, 1e18, Double(Int.max), 9.3e18])
        case 15: v = pick([Double.infinity, -Double.infinity, Double.nan])
        case 16: v = Double(bitPattern: u64())
        default: v = lo + (hi - lo) * unit()
        }
        guard inRange else { return v }
        let w = spec.isInteger ? v.rounded() : v
        return spec.contains(w) ? w : spec.defaultValue
    }
}

/// A source of any format that makes its samples as they are read (a tone), so a track of 2^40
/// frames costs nothing.
final class ToneSource: AudioSource, @unchecked Sendable {
    let format: SourceFormat
    let name = "tone"
    private var position = 0
    init(_ format: SourceFormat) { self.format = format }
    func read(into buffer: AudioBuffer, offset: Int, frameCount: Int) throws -> Int {
        let n = max(0, min(frameCount, format.frameCount - position))
        for c in 0..<format.channelCount {
            for k in 0..<n { buffer.channel(c)[offset + k] = Float(sin(Double((position + k) % 1000) * 0.05 + Double(c))) * 0.5 }
        }
        position += n
        return n
    }
    func seek(toFrame frame: Int) throws { position = min(max(0, frame), format.frameCount) }
}

/// Sessions built from fuzzed values of every numeric setting at and around their edges (every
/// `ParameterID`, the source and output rates, lengths, channels, the LFE gain, the Slurm
/// variables): planning never traps; what the engine accepts has lengths ≥ 0, a finite EQ curve,
/// text that parses back, and a short render (at its start, or just before its end) of finite
/// samples.
func fuzzNumeric(_ bytes: [UInt8]) {
    var r = Choices(bytes: bytes[...])
    let intEdges = ["0", "1", "-1", "3", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
                    "99999999999999999999", " 2", "+3", "0x10", ""]
    var env: [String: String] = [:]
    for key in ["SLURM_ARRAY_TASK_ID", "MIXFX_SHARD_INDEX", "JOB_COMPLETION_INDEX", "MIXFX_SHARD_COUNT"] where r.byte() % 3 == 0 {
        env[key] = r.byte() % 2 == 0 ? r.pick(intEdges) : String(Int(bitPattern: UInt(r.u64())))
    }
    let flagCount: Int? = r.pick([nil, 1, 4, Int.max, Int(bitPattern: UInt(r.u64()))])
    if let shard = try? BatchCommand.environmentShard(count: flagCount.map { max(1, $0) }, environment: env) {
        if !(shard.index >= 0 && shard.index < shard.count) { fatalError("shard \(shard) out of range") }
    }

    // mostly sessions the engine accepts (their planning is what must not overflow), some not
    let inRange = r.byte() % 4 != 0
    func pick<T>(_ valid: [T], _ invalid: [T]) -> T { r.pick(inRange ? valid : valid + invalid) }
    let engine = AudioEngine()
    var tracks: [Track] = []
    for _ in 0..<(1 + Int(r.byte() % 3)) {
        let rate = pick([1000, 1001, 8000, 22050, 44100, 44101, 48000, 96000, 192_000, 384_000, 767_999, 768_000,
                         1000 + Int(r.u64() % 767_001)], [999, 768_001, 0])
        let length = pick([0, 1, 2, 4095, 48_000, 1 << 40, (1 << 40) - 1, Int(r.u64() % (1 << 40))],
                          [(1 << 40) + 1, -1, Int(bitPattern: UInt(r.u64()))])
        let channels = pick([1, 2, 6, 8], [9, 0])
        let track = engine.addTrack(source: ToneSource(SourceFormat(sampleRate: rate, channelCount: channels, frameCount: length)))
        for id in ParameterID.trackParameters where r.byte() % 2 == 0 {
            track.parameter(id)?.value = r.value(id.spec, inRange: inRange)
        }
        tracks.append(track)
    }
    if r.byte() % 2 == 0 { engine.mainMixer.outputVolume = r.value(ParameterID.masterVolume.spec, inRange: inRange) }
    if r.byte() % 3 == 0 { engine.masterLimiter = LimiterNode(ceilingDBTP: r.value(ParameterID.limiterCeilingDBTP.spec, inRange: inRange)) }
    engine.outputSampleRate = pick([nil, 8000, 8001, 44100, 44101, 65536, 192_001, 200_001, 384_000, 8000 + Int(r.u64() % 376_001)],
                                   [7999, 384_001, Int(bitPattern: UInt(r.u64()))])
    engine.outputChannelCount = pick([nil, 1, 2], [3, 0])
    engine.lfeGainDB = pick([nil, -60, 20, r.unit() * 80 - 60], [20.000001, -Double.leastNormalMagnitude / 1000, Double.nan])

    // the values as the command line would write them: accepted exactly when in range
    for t in tracks {
        for id in ParameterID.trackParameters where !id.spec.isBoolean {
            let v = t.parameter(id)!.value
            let parsed = try? SessionOptions.value(String(v), id: id, flag: "--\(id.spec.key)")
            if id.spec.contains(v) != (parsed != nil) || (parsed != nil && parsed != v) {
                fatalError("--\(id.spec.key) \(v): parsed as \(String(describing: parsed)), in range: \(id.spec.contains(v))")
            }
        }
    }

    let layout: EngineLayout
    do { layout = try engine.validate() } catch {
        if error.description.isEmpty { fatalError("an engine error without a message") }
        return
    }
    if layout.frameCount < 0 || layout.trackFrameCounts.contains(where: { $0 < 0 }) { fatalError("a negative length: \(layout.trackFrameCounts)") }
    for c in Container.allCases { _ = c.sampleRateProblem(layout.sampleRate) }
    for t in tracks {
        let svg = EQCurveCommand.eqCurveSVG(t.eq.settings, sampleRate: Double(layout.sampleRate))
        if svg.range(of: "(?<![a-z])(nan|inf)", options: .regularExpression) != nil { fatalError("a non-finite EQ curve for \(t.eq.settings)") }
    }
    var renderer = OfflineRenderer(outputPath: scratchPath + r.pick([".wav", ".flac", ".ogg", ".aiff", ".au"]), sampleFormat: nil)
    renderer.overwrite = true
    _ = try? renderer.plan(engine)

    // a short render, where cheap: at the start or just before the end
    guard let kernel = try? engine.makeKernel(maximumFrameCount: 256, mode: r.byte() % 4 == 0 ? .live : .offline) else { return }
    kernel.parallelTracks = false
    let at = r.byte() % 2 == 0 ? 0 : max(0, layout.frameCount - 300)
    guard (try? kernel.seek(toFrame: at)) != nil else { return }
    for _ in 0..<2 {
        guard let n = try? kernel.render(frameCount: 256) else { return }
        for c in 0..<kernel.layout.channelCount {
            for i in 0..<n where !kernel.output.channel(c)[i].isFinite { fatalError("a non-finite sample reached the mix") }
        }
    }
}
#else
@main struct MixFXFuzz {
    static func main() {
        print("mixfx-fuzz is built for fuzzing by scripts/fuzz.sh (make fuzz); this build is a stub")
    }
}
#endif
