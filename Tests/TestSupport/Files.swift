import Foundation
import MixFX
import Testing

/// A fresh directory under /tmp, removed by `remove()`.
public struct TempDir: Sendable {
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
        unlink(path)   // (the writer creates files exclusively)
        let w = try SoundFileWriter(path: path, format: OutputFormat(
            container: Container.from(path: path)!, sampleFormat: sampleFormat,
            sampleRate: sampleRate, channelCount: channels.count))
        if frames > 0 { try w.write(buffer, frameCount: frames) }
        try w.close()
    }

    /// Writes a 32-bit float WAV byte for byte, by hand: every value as given, NaN and ∞
    /// included (mixfx's own writer never writes those).
    public static func writeFloatWAVVerbatim(_ channels: [[Float]], to path: String, sampleRate: Int) throws {
        let ch = channels.count, frames = channels[0].count
        var d = Data()
        func u32(_ v: Int) { d.append(contentsOf: (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) }) }
        func u16(_ v: Int) { d.append(contentsOf: (0..<2).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) }) }
        d.append(contentsOf: Array("RIFF".utf8)); u32(36 + frames * ch * 4); d.append(contentsOf: Array("WAVEfmt ".utf8))
        u32(16); u16(3); u16(ch); u32(sampleRate); u32(sampleRate * ch * 4); u16(ch * 4); u16(32)
        d.append(contentsOf: Array("data".utf8)); u32(frames * ch * 4)
        for i in 0..<frames { for c in 0..<ch { u32(Int(channels[c][i].bitPattern)) } }
        try d.write(to: URL(fileURLWithPath: path))
    }

    /// Writes a 16-bit WAV byte for byte: WAVE_FORMAT_EXTENSIBLE with `channelMask` (WAV's
    /// speaker bits: FL 0x1, FR 0x2, FC 0x4, LFE 0x8, BL 0x10, BR 0x20, ..., SL 0x200, SR 0x400)
    /// when given, else plain PCM with no layout declared.
    public static func writeWAV16(_ channels: [[Float]], to path: String, sampleRate: Int, channelMask: Int?) throws {
        let ch = channels.count, frames = channels[0].count
        var d = Data()
        func u32(_ v: Int) { d.append(contentsOf: (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) }) }
        func u16(_ v: Int) { d.append(contentsOf: (0..<2).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) }) }
        let fmtSize = channelMask == nil ? 16 : 40
        d.append(contentsOf: Array("RIFF".utf8)); u32(20 + fmtSize + frames * ch * 2); d.append(contentsOf: Array("WAVEfmt ".utf8))
        u32(fmtSize); u16(channelMask == nil ? 1 : 0xFFFE); u16(ch); u32(sampleRate); u32(sampleRate * ch * 2); u16(ch * 2); u16(16)
        if let mask = channelMask {
            u16(22); u16(16); u32(mask)
            // KSDATAFORMAT_SUBTYPE_PCM: 00000001-0000-0010-8000-00aa00389b71
            d.append(contentsOf: [0x01, 0, 0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0xAA, 0, 0x38, 0x9B, 0x71])
        }
        d.append(contentsOf: Array("data".utf8)); u32(frames * ch * 2)
        for i in 0..<frames {
            for c in 0..<ch { u16(Int(max(-32768, min(32767, (channels[c][i] * 32768).rounded())))) }
        }
        try d.write(to: URL(fileURLWithPath: path))
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
    let errDone = DispatchSemaphore(value: 0)
    let errThread = Thread {
        errData = err.fileHandleForReading.readDataToEndOfFile()
        errDone.signal()
    }
    errThread.start()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    errDone.wait()   // (a semaphore, not polling isFinished: it orders the write to errData)
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

public enum SparseFiles {
    /// A 16-bit W64 file at `path` whose header claims `frames` frames of silence, made sparse
    /// (the data is a hole: no disk space, instant), for tests of very long inputs.
    public static func silentW64(_ path: String, frames: Int, channels: Int, sampleRate: Int) throws {
        try AudioFiles.write(Array(repeating: [Float](repeating: 0, count: 8), count: channels), to: path, sampleRate: sampleRate)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        // the data chunk: its GUID starts "data" f3 ac d3 11; an 8-byte size (header included) follows the GUID
        let guid: [UInt8] = Array("data".utf8) + [0xF3, 0xAC, 0xD3, 0x11]
        guard let at = (0..<(bytes.count - 24)).first(where: { Array(bytes[$0..<$0 + 8]) == guid }) else {
            throw CocoaError(.fileReadCorruptFile)
        }
        let dataBytes = frames * channels * 2
        func put(_ value: Int, at offset: Int) {
            for k in 0..<8 { bytes[offset + k] = UInt8(truncatingIfNeeded: value >> (8 * k)) }
        }
        let total = at + 24 + dataBytes
        put(24 + dataBytes, at: at + 16)
        put(total, at: 16)   // the riff chunk's size: the whole file
        let header = Data(bytes[0..<(at + 24)])
        try header.write(to: URL(fileURLWithPath: path))
        guard truncate(path, off_t(total)) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }
}

/// The sanitizer the suite runs under (`scripts/test.sh --sanitize=...` sets MIXFX_SANITIZER), or
/// nil. Measurements of memory and of malloc calls mean nothing there: those tests are disabled.
public enum Sanitizer {
    public static var name: String? { ProcessInfo.processInfo.environment["MIXFX_SANITIZER"] }
    public static var reason: Comment { "under the \(name ?? "") sanitizer memory use and malloc calls are the sanitizer's" }
}
