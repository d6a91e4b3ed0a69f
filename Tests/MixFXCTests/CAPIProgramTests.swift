import Foundation
import Testing
import TestSupport

/// The C API as C and Python programs see it: installed into a temporary prefix
/// (scripts/capi-install.sh: lib/libmixfx.so.0, lib/libmixfx.so, include/mixfx.h), the header
/// compiled with -std=c99 -Wall -Wextra -Werror -pedantic, every call exercised (misuse
/// included) by Tests/capi/check.c, and a session rendered through ctypes compared byte for
/// byte with `mixfx render`.
@Suite struct CAPIProgramTests {
    let dir = TempDir("mixfx-capi")
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// Installs the built library and header into a temporary prefix; the prefix.
    func installPrefix() throws -> String {
        let prefix = dir.file("prefix")
        let build = URL(fileURLWithPath: MixFXBinary.path).deletingLastPathComponent().path
        let r = try runProcess("/bin/bash", [Self.repository + "/scripts/capi-install.sh", prefix, build])
        try #require(r.status == 0, "capi-install.sh: \(r.stderr)")
        return prefix
    }

    /// check.c built against the prefix; its path.
    func buildCheck(_ prefix: String, gcc: String) throws -> String {
        let exe = dir.file("check")
        let r = try runProcess(gcc, ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-I", prefix + "/include",
                                     Self.repository + "/Tests/capi/check.c", "-L", prefix + "/lib", "-lmixfx", "-lm",
                                     "-Wl,-rpath," + prefix + "/lib", "-o", exe])
        try #require(r.status == 0, "gcc: \(r.stderr)")
        return exe
    }

    func stereoInput() throws -> String {
        let path = dir.file("in.wav")
        try AudioFiles.write([Signals.sine(frequencyHz: 440, sampleRate: 48_000, frames: 24_000),
                              Signals.sine(frequencyHz: 660, sampleRate: 48_000, frames: 24_000)], to: path, sampleRate: 48_000)
        return path
    }

    @Test(.enabled(if: which("gcc") != nil, "gcc is not installed (apt-get install gcc)"))
    func theHeaderCompilesStrictlyAndEveryCallBehaves() throws {
        defer { dir.remove() }
        let prefix = try installPrefix()
        let check = try buildCheck(prefix, gcc: which("gcc")!)
        let r = try runProcess(check, [try stereoInput(), dir.path])
        #expect(r.status == 0 && r.stdout == "ok\n", "check.c: \(r.stdout)\(r.stderr)")
    }

    /// Live processing and the EQ allocate nothing after creation, counted per thread by the
    /// preloaded counter (Tests/alsa/alloccount.c) inside check.c.
    @Test(.enabled(if: which("gcc") != nil, "gcc is not installed (apt-get install gcc)"),
          .disabled(if: Sanitizer.name != nil, Sanitizer.reason))
    func liveProcessingAllocatesNothing() throws {
        defer { dir.remove() }
        let prefix = try installPrefix()
        let check = try buildCheck(prefix, gcc: which("gcc")!)
        let counter = try #require(ALSARig.allocationCounterLibrary(in: dir.path), "the allocation counter did not build")
        var env = ProcessInfo.processInfo.environment
        env["LD_PRELOAD"] = counter
        env["MIXFX_CHECK_ALLOCATIONS"] = "1"
        let r = try runProcess(check, [try stereoInput(), dir.path], environment: env)
        #expect(r.status == 0 && r.stdout == "ok\n", "check.c: \(r.stdout)\(r.stderr)")
    }

    /// A preset session rendered through ctypes is the bytes `mixfx render --preset` writes.
    @Test(.enabled(if: which("python3") != nil, "python3 is not installed (apt-get install python3)"))
    func aPythonRenderIsTheCLIsBytes() throws {
        defer { dir.remove() }
        let prefix = try installPrefix()
        let demo = Self.repository + "/Demo"
        let tracks = ["1-drums.flac", "2-bass.flac", "4-lead.flac"].map { demo + "/" + $0 }
        let preset = Self.repository + "/Presets/demo.json"
        let cli = dir.file("cli.wav"), capi = dir.file("capi.wav")
        let r1 = try MixFXBinary.run(["render"] + tracks + ["--preset", preset, "-o", cli, "--quiet"])
        try #require(r1.status == 0, "mixfx render: \(r1.stderr)")
        let r2 = try runProcess(which("python3")!, [Self.repository + "/Tests/capi/ctypes_render.py", prefix + "/lib/libmixfx.so",
                                                     preset, capi, dir.file("capi.json")] + tracks)
        #expect(r2.status == 0, "ctypes_render.py: \(r2.stdout)\(r2.stderr)")
        let a = try Data(contentsOf: URL(fileURLWithPath: cli)), b = try Data(contentsOf: URL(fileURLWithPath: capi))
        #expect(a.count > 44 && a == b, "mixfx render wrote \(a.count) bytes, the C API \(b.count); they differ")
        let report = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir.file("capi.json"))))
        #expect(report is [String: Any])
    }
}
