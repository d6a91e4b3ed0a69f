import Foundation
import Testing
@testable import MixFXCLI
import TestSupport

/// The Dockerfile (the README's Kubernetes recipe runs its image): built with podman or docker
/// where one can build and run containers, then `mixfx --version` and a render of the demo
/// band run in it, the render the same bytes as this build's. Where no engine can, the test is
/// skipped with the reason (no engine; an engine that answers no `info`; the base images not in
/// its store and no registry reachable to pull them); it never passes without the image.
@Suite struct ContainerImageTests {
    let dir = TempDir("mixfx-container")
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// The images the Dockerfile starts from (its `ARG ..._IMAGE=` defaults).
    static func baseImages() throws -> [String] {
        let text = try String(contentsOfFile: repository + "/Dockerfile", encoding: .utf8)
        return text.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("ARG "), line.contains("_IMAGE="), let eq = line.firstIndex(of: "=") else { return nil }
            return String(line[line.index(after: eq)...])
        }
    }

    /// The first line of a failed command's output, for a skip's reason.
    static func firstLine(_ r: MixFXBinary.Result) -> String {
        (r.stderr + r.stdout).split(separator: "\n").first { !$0.isEmpty }.map(String.init) ?? "exit status \(r.status)"
    }

    /// An engine that answers, with every base image in its store (pulled if a registry can be
    /// reached); else why none can build the image.
    static func engine() throws -> (path: String, problem: String?) {
        var problems: [String] = []
        for name in ["podman", "docker"] {
            guard let path = which(name) else { problems.append("\(name) is not installed"); continue }
            let info = try runProcess(path, ["info"])
            guard info.status == 0 else { problems.append("\(name) info: \(firstLine(info))"); continue }
            var missing: String?
            for image in try baseImages() {
                if try runProcess(path, ["image", "inspect", image]).status == 0 { continue }
                let pull = try runProcess("/usr/bin/timeout", ["300", path, "pull", "-q", image])
                if pull.status != 0 { missing = "\(image) is not in \(name)'s store and cannot be pulled (no container registry reachable? \(firstLine(pull)))"; break }
            }
            if let missing { problems.append(missing); continue }
            return (path, nil)
        }
        return ("", problems.joined(separator: "; "))
    }

    @Test func theImageBuildsAndRendersTheDemo() throws {
        let (engine, problem) = try Self.engine()
        if let problem { try Test.cancel("no container engine can build the image here: \(problem)") }
        defer { dir.remove() }
        let tag = "localhost/mixfx-test:\(UUID().uuidString.prefix(8).lowercased())"
        let build = try runProcess(engine, ["build", "-t", tag, "-f", Self.repository + "/Dockerfile", Self.repository])
        try #require(build.status == 0, "\(engine) build: \(build.stdout.suffix(3000))\(build.stderr.suffix(3000))")
        defer { _ = try? runProcess(engine, ["rmi", "-f", tag]) }

        let version = try runProcess(engine, ["run", "--rm", tag, "--version"])
        #expect(version.status == 0 && version.stdout == "mixfx \(MixFXCommand.version)\n", "\(version.stderr)")

        // the demo band, rendered in the container into a mounted folder, and here
        let out = dir.file("out")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let tracks = ["1-drums.flac", "2-bass.flac", "3-chords.flac", "4-lead.flac"]
        let run = try runProcess(engine, ["run", "--rm", "-v", Self.repository + "/Demo:/demo:ro", "-v", out + ":/out", tag, "render"]
                                 + tracks.map { "/demo/" + $0 } + ["--preset", "demo", "-o", "/out/band.wav", "--quiet"])
        try #require(run.status == 0, "\(engine) run ... render: \(run.stderr)")
        let here = dir.file("band.wav")
        let local = try MixFXBinary.run(["render"] + tracks.map { Self.repository + "/Demo/" + $0 } + ["--preset", "demo", "-o", here, "--quiet"])
        try #require(local.status == 0, "\(local.stderr)")
        let a = try Data(contentsOf: URL(fileURLWithPath: out + "/band.wav")), b = try Data(contentsOf: URL(fileURLWithPath: here))
        #expect(a.count > 44 && a == b, "the container's render is \(a.count) bytes, this build's \(b.count); they differ")
    }
}
