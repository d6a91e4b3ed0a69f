// libFuzzer targets for mixfx's parsers and file reading (see Fuzz/README.md, `make fuzz`).
//
// One executable serves five targets; MIXFX_FUZZ_TARGET chooses: preset, cli, control, file,
// manifest.
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
    default: fatalError("MIXFX_FUZZ_TARGET must be preset, cli, control, file or manifest")
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
#else
@main struct MixFXFuzz {
    static func main() {
        print("mixfx-fuzz is built for fuzzing by scripts/fuzz.sh (make fuzz); this build is a stub")
    }
}
#endif
