import Foundation

/// The project's ALSA test rig (Tests/alsa): a config with a raw file tap (`mixfx_tap`), a
/// private PulseAudio null sink for real-time pacing and underruns (`mixfx_pulse`), and a tap
/// in front of it (`mixfx_pulse_tap`). Each test runs `mixfx play` as a child process with its
/// own environment, so tests can run in parallel with their own tap files.
public enum ALSARig {
    public static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("alsa").path

    public static var configPath: String { directory + "/asound-mixfx.conf" }

    /// The PulseAudio server `scripts/test.sh` (make test) started, or nil with the reason.
    public static var pulseServer: String? {
        ProcessInfo.processInfo.environment["PULSE_SERVER"]
    }

    /// Whether this system grants SCHED_FIFO to this user (root or an rtprio limit; a container
    /// without CAP_SYS_NICE refuses it).
    public static let realtimeAllowed: Bool = {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/chrt")
        p.arguments = ["-f", "1", "true"]
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return false }
        p.waitUntilExit()
        return p.terminationStatus == 0
    }()

    /// Each thread of process `pid`: its name and scheduling policy (0 normal, 1 FIFO, 2 RR),
    /// read from /proc (the field after the parenthesised name, counted from `stat(5)`).
    public static func threadPolicies(of pid: Int32) -> [(tid: Int32, name: String, policy: Int)] {
        let dir = "/proc/\(pid)/task"
        let tids = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        return tids.compactMap { t in
            guard let stat = try? String(contentsOfFile: "\(dir)/\(t)/stat", encoding: .utf8),
                  let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")"), let tid = Int32(t) else { return nil }
            let name = String(stat[stat.index(after: open)..<close])
            let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
            // fields[0] is stat's field 3 (state); policy is field 41
            guard fields.count > 38, let policy = Int(fields[38]) else { return nil }
            return (tid, name, policy)
        }
    }

    public static let pulseMissingReason = "PulseAudio test server not running (run the suite with `make test`, which starts it)"

    /// The environment for a child `mixfx` using the rig, with its own tap file.
    public static func environment(tap: String) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["ALSA_CONFIG_PATH"] = configPath
        env["MIXFX_TAP_FILE"] = tap
        return env
    }

    /// Builds the allocation counter to preload (needs gcc); nil if it cannot.
    public static func allocationCounterLibrary(in dir: String) -> String? {
        guard let gcc = which("gcc") else { return nil }
        let out = dir + "/libmixfx-alloccount.so"
        let r = try? runProcess(gcc, ["-O2", "-shared", "-fPIC", "-o", out, directory + "/alloccount.c"])
        return r?.status == 0 ? out : nil
    }

    /// Waits (up to `timeout` seconds) until the tap file holds `frames` frames of `bytesPerFrame`
    /// bytes: "played for about so long", measured on what was played rather than on the clock
    /// (slower builds, such as the sanitizers', start later).
    public static func waitForTap(_ path: String, frames: Int, bytesPerFrame: Int, timeout: Double = 15) {
        let started = Date()
        func held() -> Int { ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0) / bytesPerFrame }
        while held() < frames && Date().timeIntervalSince(started) < timeout { usleep(10_000) }
    }

    /// Interleaved 16-bit samples of a raw tap file.
    public static func readS16(_ path: String) throws -> [Int16] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }
}

/// A running child process whose stdin we write to over time.
public final class InteractiveProcess: @unchecked Sendable {
    public let process = Process()
    private let input = Pipe(), output = Pipe(), errors = Pipe()
    private var outData = Data(), errData = Data()
    private let lock = NSLock()

    public init(_ exe: String, _ args: [String], environment: [String: String]) throws {
        process.executableURL = URL(fileURLWithPath: exe)
        process.arguments = args
        process.environment = environment
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        output.fileHandleForReading.readabilityHandler = { [weak self] h in
            let d = h.availableData
            self?.lock.withLock { self?.outData.append(d) }
        }
        errors.fileHandleForReading.readabilityHandler = { [weak self] h in
            let d = h.availableData
            self?.lock.withLock { self?.errData.append(d) }
        }
        try process.run()
    }

    public func send(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    public func closeInput() { try? input.fileHandleForWriting.close() }

    public var stdout: String { lock.withLock { String(decoding: outData, as: UTF8.self) } }
    public var stderr: String { lock.withLock { String(decoding: errData, as: UTF8.self) } }

    /// Waits for an acknowledged line starting with `prefix` on stdout; returns it.
    public func waitForLine(startingWith prefix: String, timeout: Double = 10) -> String? {
        let end = Date() + timeout
        while Date() < end {
            if let line = stdout.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) { return String(line) }
            usleep(5000)
        }
        return nil
    }

    public func wait(timeout: Double = 60) -> Int32 {
        let end = Date() + timeout
        while process.isRunning && Date() < end { usleep(10_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        usleep(50_000)   // let the readability handlers drain
        output.fileHandleForReading.readabilityHandler = nil
        errors.fileHandleForReading.readabilityHandler = nil
        lock.withLock {
            outData.append(output.fileHandleForReading.readDataToEndOfFile())
            errData.append(errors.fileHandleForReading.readDataToEndOfFile())
        }
        return process.terminationStatus
    }
}
