import Foundation
import Testing

/// The compiler's realtime check (`@_noAllocation`/`@_noLocks`, docs/realtime.md) holds the
/// engine's render entry points, `RenderKernel.render(frameCount:)` and
/// `TrackKernel.render(frameCount:into:)`, and everything they call: compiled again here from
/// the engine's sources (against the built modules, `swiftc -emit-sil`, where the check runs),
/// they pass as they are, and fail with the check's diagnostic when a temporary array is made
/// in a function that only those entry points reach (the mix's meter, `RenderKernel.finish`;
/// the EQ's smoothing, `EQKernel.process(target:…)`). So the marks are not decoration: a change
/// that allocates on the render path does not build.
@Suite struct RealtimeCheckTests {
    /// The package's root (from this file's path).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// swiftc and the release build's modules, when both are there.
    static let toolchain: (swiftc: String, modules: String, moduleMap: String)? = {
        let fm = FileManager.default
        let candidates = [ProcessInfo.processInfo.environment["SWIFTC"], "/opt/swift/usr/bin/swiftc", "/usr/bin/swiftc"]
            + (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/swiftc" }
        guard let swiftc = candidates.compactMap({ $0 }).first(where: { fm.isExecutableFile(atPath: $0) }) else { return nil }
        let build = root.appendingPathComponent(".build/release")
        let modules = build.appendingPathComponent("Modules").path
        let moduleMap = build.appendingPathComponent("CPUFeatures.build/module.modulemap").path
        guard fm.fileExists(atPath: modules + "/MixFXDSP.swiftmodule"), fm.fileExists(atPath: moduleMap) else { return nil }
        return (swiftc, modules, moduleMap)
    }()

    /// Compiles the engine's sources to SIL (the mandatory passes, the realtime check among
    /// them), with `edits` (file name → (text to find, text to put before it)) applied to a
    /// copy; returns the exit status and the diagnostics.
    func compileEngine(_ edits: [String: (find: String, insert: String)] = [:]) throws -> (status: Int32, output: String) {
        let tool = try #require(RealtimeCheckTests.toolchain)
        let fm = FileManager.default
        let sources = RealtimeCheckTests.root.appendingPathComponent("Sources/MixFXEngine")
        let copy = fm.temporaryDirectory.appendingPathComponent("mixfx-realtime-check-\(UUID().uuidString)")
        try fm.createDirectory(at: copy, withIntermediateDirectories: true)
        defer { try? fm.removeItem(at: copy) }
        var files: [String] = []
        for name in try fm.contentsOfDirectory(atPath: sources.path) where name.hasSuffix(".swift") {
            var text = try String(contentsOf: sources.appendingPathComponent(name), encoding: .utf8)
            if let edit = edits[name] {
                let range = try #require(text.range(of: edit.find), "\(name) no longer holds \(edit.find)")
                text.insert(contentsOf: edit.insert, at: range.lowerBound)
            }
            let path = copy.appendingPathComponent(name).path
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            files.append(path)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool.swiftc)
        process.arguments = ["-emit-sil", "-wmo", "-parse-as-library", "-module-name", "MixFXEngine", "-package-name", "mixfx",
                             "-swift-version", "6", "-I", tool.modules, "-Xcc", "-fmodule-map-file=\(tool.moduleMap)",
                             "-Xcc", "-I" + RealtimeCheckTests.root.appendingPathComponent("Sources/CPUFeatures/include").path,
                             "-o", "/dev/null"] + files
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Whether `output` holds the realtime check's refusal of the function at `file`.
    func refusesAllocation(_ output: String, in file: String) -> Bool {
        output.split(separator: "\n").contains {
            $0.contains(file) && $0.contains("error:")
                && ($0.contains("can cause metadata allocation or locks") || $0.contains("can cause locking")
                    || $0.contains("allocation"))
        }
    }

    @Test(.enabled(if: RealtimeCheckTests.toolchain != nil,
                   "skipped: swiftc or the release build's modules (.build/release/Modules) not found"))
    func theEngineAsItIsPasses() throws {
        let (status, output) = try compileEngine()
        #expect(status == 0, "\(output)")
        #expect(!output.contains("error:"))
    }

    @Test(.enabled(if: RealtimeCheckTests.toolchain != nil,
                   "skipped: swiftc or the release build's modules (.build/release/Modules) not found"))
    func anAllocationUnderRenderKernelRenderFails() throws {
        // `finish` (the mix's meter) is reached only from `render(frameCount:)`, through `mix`
        let (status, output) = try compileEngine([
            "RenderKernel.swift": (find: "        var peak: Float = 0, sumL: Float = 0, sumR: Float = 0\n",
                                   insert: "        let probe = [n, outChannels]; precondition(probe.count == 2)\n")])
        #expect(status != 0)
        #expect(refusesAllocation(output, in: "RenderKernel.swift"), "\(output)")
    }

    @Test(.enabled(if: RealtimeCheckTests.toolchain != nil,
                   "skipped: swiftc or the release build's modules (.build/release/Modules) not found"))
    func anAllocationUnderTrackKernelRenderFails() throws {
        // the EQ's smoothing, reached from `TrackKernel.render` through `runEffects`
        let (status, output) = try compileEngine([
            "TrackKernel.swift": (find: "        let target = effective(raw)\n",
                                  insert: "        let probe = [frameCount]; precondition(probe.count == 1)\n")])
        #expect(status != 0)
        #expect(refusesAllocation(output, in: "TrackKernel.swift"), "\(output)")
    }
}
