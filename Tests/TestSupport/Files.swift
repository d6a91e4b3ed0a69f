import Foundation
import MixFX

/// A fresh directory under /tmp, removed by `remove()`.
public struct TempDir {
    public let path: String

    public init(_ label: String = "mixfx-test") {
        let p = NSTemporaryDirectory() + "\(label)-\(UUID().uuidString.prefix(8))"
        try! FileManager.default.createDirectory(atPath: p, withIntermediateDirectories: true)
        path = p
    }

    public func file(_ name: String) -> String { path + "/" + name }

    public func remove() { try? FileManager.default.removeItem(atPath: path) }
}

public enum AudioFiles {
    /// Writes planar channels to `path` (format from the extension).
    public static func write(_ channels: [[Float]], to path: String, sampleRate: Int,
                             sampleFormat: SampleFormat = .s16) throws {
        let frames = channels[0].count
        let buffer = AudioBuffer(channelCount: channels.count, capacityFrames: max(1, frames))
        for (c, ch) in channels.enumerated() { for i in 0..<frames { buffer.channel(c)[i] = ch[i] } }
        let w = try SoundFileWriter(path: path, format: OutputFormat(
            container: Container.from(path: path)!, sampleFormat: sampleFormat,
            sampleRate: sampleRate, channelCount: channels.count))
        if frames > 0 { try w.write(buffer, frameCount: frames) }
        try w.close()
    }

    /// Reads a whole file as planar floats.
    public static func read(_ path: String) throws -> (channels: [[Float]], format: SourceFormat) {
        let r = try SoundFileReader(path: path)
        let f = r.format
        let buffer = AudioBuffer(channelCount: f.channelCount, capacityFrames: max(1, f.frameCount))
        var done = 0
        while done < f.frameCount {
            let n = try r.read(into: buffer, offset: done, frameCount: f.frameCount - done)
            if n == 0 { break }
            done += n
        }
        let channels = (0..<f.channelCount).map { Array(UnsafeBufferPointer(start: buffer.channel($0), count: done)) }
        return (channels, f)
    }
}

/// Runs the built `mixfx` executable.
public enum MixFXBinary {
    /// `.build/<config>/mixfx`, beside the test bundle.
    public static var path: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        // The test runner may live inside a .xctest bundle directory.
        while !FileManager.default.fileExists(atPath: dir.appendingPathComponent("mixfx").path) && dir.path != "/" {
            dir = dir.deletingLastPathComponent()
        }
        return dir.appendingPathComponent("mixfx").path
    }

    public struct Result {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    public static func run(_ args: [String], cwd: String? = nil, environment: [String: String]? = nil) throws -> Result {
        try runProcess(path, args, cwd: cwd, environment: environment)
    }
}

public func runProcess(_ exe: String, _ args: [String], cwd: String? = nil,
                       environment: [String: String]? = nil) throws -> MixFXBinary.Result {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: exe)
    p.arguments = args
    if let cwd { p.currentDirectoryURL = URL(fileURLWithPath: cwd) }
    if let environment { p.environment = environment }
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    p.standardInput = FileHandle.nullDevice
    try p.run()
    // Read both pipes to the end before waiting, so a chatty child never blocks.
    nonisolated(unsafe) var errData = Data()
    let errThread = Thread { errData = err.fileHandleForReading.readDataToEndOfFile() }
    errThread.start()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    while errThread.isExecuting || !errThread.isFinished { usleep(1000) }
    return .init(status: p.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                 stderr: String(decoding: errData, as: UTF8.self))
}

/// Whether an executable is on PATH (for optional oracles such as sox).
public func which(_ name: String) -> String? {
    for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
        let p = "\(dir)/\(name)"
        if FileManager.default.isExecutableFile(atPath: p) { return p }
    }
    return nil
}
