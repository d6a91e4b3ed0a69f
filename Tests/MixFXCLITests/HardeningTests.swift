import Foundation
import Testing
import MixFX
import TestSupport

/// Bad input and faults: nothing lost, nothing hangs, every error names what is wrong.
@Suite struct HardeningTests {
    let dir = TempDir("mixfx-hard")

    func files() throws -> Set<String> { Set(try FileManager.default.contentsOfDirectory(atPath: dir.path)) }
    /// The render's hidden temporary output (`.out.wav.mixfx-PID-N.tmp`); not the spill, which
    /// has a name for the instant between its creation and its unlinking.
    func temporaryOutputs() throws -> [String] { try files().filter { $0.hasPrefix(".mixfx-") && $0.hasSuffix(".tmp") } }

    func noise(_ name: String, frames: Int = 44_100, channels: Int = 2, format: SampleFormat = .s16, seed: UInt64 = 1) throws -> String {
        let path = dir.file(name)
        let chans = (0..<channels).map { c in
            Signals.noise(frames: frames, amplitude: 0.25, seed: seed &+ UInt64(c) &* 7919).map { ($0 * 32768).rounded() / 32768 }
        }
        try AudioFiles.write(chans, to: path, sampleRate: 44_100, sampleFormat: format)
        return path
    }

    // MARK: non-finite input

    /// One NaN, ∞ or absurd value in a float input is replaced by silence at the source and
    /// counted per track: the rest of the mix is exactly the mix of the input with zeros there.
    @Test func nonFiniteSamplesAreReplacedCountedAndPoisonNothing() throws {
        defer { dir.remove() }
        var x = Signals.noise(frames: 60_000, amplitude: 0.3, seed: 9)
        let bad: [(Int, Float)] = [(10_000, .nan), (20_000, .infinity), (30_000, -.infinity), (40_000, 1e30), (50_000, -2e6)]
        var zeroed = x
        for (i, v) in bad { x[i] = v; zeroed[i] = 0 }
        let hostile = dir.file("hostile.wav"), clean = dir.file("clean.wav"), other = try noise("other.wav", frames: 50_000)
        try AudioFiles.writeFloatWAVVerbatim([x, x], to: hostile, sampleRate: 44_100)
        try AudioFiles.write([zeroed, zeroed], to: clean, sampleRate: 44_100, sampleFormat: .f32)
        let settings = ["--pitch", "200", "--bass", "6", "--sample-format", "f32"]
        let a = dir.file("a.wav"), b = dir.file("b.wav")
        let r = try MixFXBinary.run(["render", hostile, other, "-o", a, "--json"] + settings)
        #expect(r.status == 0, "\(r.stderr)")
        let summary = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        #expect(summary["trackReplacedSamples"] as? [Int] == [10, 0])   // five values on two channels
        #expect(r.stderr.contains("track 1 (\(hostile)): 10 input samples") && r.stderr.contains("replaced by silence"), "\(r.stderr)")
        #expect(try MixFXBinary.run(["render", clean, other, "-o", b, "--quiet"] + settings).status == 0)
        let ya = try AudioFiles.read(a).channels, yb = try AudioFiles.read(b).channels
        #expect(ya.allSatisfy { $0.allSatisfy(\.isFinite) })
        #expect(ya == yb, "the hostile samples changed more than themselves")
        #expect(Signals.rms(ya[0][45_000...]) > 0.05)   // not silenced after them
    }

    /// What reaches the device is finite too (through the raw tap: no clock, no PulseAudio).
    @Test func playNeverSendsANaNToTheDevice() throws {
        defer { dir.remove() }
        var x = Signals.noise(frames: 48_000, amplitude: 0.3, seed: 5)
        for (k, v) in [Float.nan, .infinity, -.infinity, 1e20].enumerated() { x[5_000 + 9_000 * k] = v }
        let hostile = dir.file("hostile.wav"), tap = dir.file("tap.raw")
        try AudioFiles.writeFloatWAVVerbatim([x], to: hostile, sampleRate: 48_000)
        let r = try MixFXBinary.run(["play", hostile, "--device", "mixfx_tap", "--no-ui", "--json", "--sample-format", "f32",
                                     "--pitch", "200", "--bass", "6"], environment: ALSARig.environment(tap: tap))
        #expect(r.status == 0, "\(r.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(r.stdout[r.stdout.firstIndex(of: "{")!...].utf8)) as! [String: Any]
        #expect(report["trackReplacedSamples"] as? [Int] == [4])
        let data = try Data(contentsOf: URL(fileURLWithPath: tap))
        let y: [Float] = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        #expect(y.count == 48_000 && y.allSatisfy(\.isFinite))
        #expect(Signals.rms(y[40_000...]) > 0.05)
    }

    // MARK: where outputs go

    /// Without /proc (a chroot, a sandbox), mixfx still reads its arguments (Swift's
    /// CommandLine reads /proc/self/cmdline: mixfx printed its usage and rendered nothing) and
    /// its umask (read from /proc/self/status, an output was given 0644 under umask 077).
    @Test(.enabled(if: ClipPolicyTests.canMountPrivately, "cannot unmount /proc in a private mount namespace here (needs root with CAP_SYS_ADMIN)"))
    func theArgumentsAreReadWithoutProc() throws {
        defer { dir.remove() }
        let input = try noise("in.wav")
        let r = try runProcess(which("unshare")!, ["--mount", "--propagation", "private", "/bin/sh", "-c",
                                                    "umount -l /proc && ! [ -e /proc/self/cmdline ] && umask 077 && exec \"$1\" render \"$2\" --bass 3 -o \"$3\" --quiet",
                                                    "sh", MixFXBinary.path, input, dir.file("out.wav")])
        #expect(r.status == 0 && !r.stdout.contains("usage"), "\(r.status): \(r.stdout) \(r.stderr)")
        #expect(try files().contains("out.wav"))
        var st = stat()
        #expect(stat(dir.file("out.wav"), &st) == 0 && st.st_mode & 0o777 == 0o600, "mode \(String(st.st_mode & 0o777, radix: 8))")
    }

    /// A track written into while it is read (another program re-exporting it in place) makes
    /// the render fail naming it, exit 1, nothing written: the mix would hold two versions.
    @Test func anInputChangedWhileReadIsAnError() throws {
        defer { dir.remove() }
        let input = try noise("in.wav", frames: 44_100 * 60)
        let p = try InteractiveProcess(MixFXBinary.path, ["render", input, "--pitch", "200", "--overlap", "16", "-o", dir.file("out.wav")],
                                       environment: ProcessInfo.processInfo.environment)
        var started = false
        for _ in 0..<5000 where !started {
            usleep(1_000)
            started = !(try temporaryOutputs()).isEmpty
        }
        #expect(started)
        let fd = open(input, O_WRONLY)
        #expect(fd >= 0 && pwrite(fd, "XXXX", 4, 1_000_000) == 4)
        close(fd)
        #expect(p.wait() == 1, "\(p.stderr)")
        #expect(p.stderr.contains("in.wav") && p.stderr.contains("changed by another program"), "\(p.stderr)")
        #expect(try !files().contains("out.wav") && temporaryOutputs().isEmpty)
    }

    @Test func outputsThatAreNotRegularFilesAreRefused() throws {
        defer { dir.remove() }
        let input = try noise("in.wav")
        let fifo = dir.file("pipe.wav")
        #expect(mkfifo(fifo, 0o644) == 0)
        try FileManager.default.createDirectory(atPath: dir.file("folder.wav"), withIntermediateDirectories: false)
        #expect(symlink(dir.file("nowhere.wav"), dir.file("dangling.wav")) == 0)
        for (out, words) in [("pipe.wav", "FIFO"), ("folder.wav", "directory"), ("dangling.wav", "nowhere.wav")] {
            let before = try files()
            let r = try MixFXBinary.run(["render", input, "-o", dir.file(out), "--force"])
            #expect(r.status == 2 && r.stderr.contains(out) && r.stderr.contains(words), "\(out): \(r.stderr)")
            #expect(try files() == before)
        }
        var st = stat()
        #expect(lstat(fifo, &st) == 0 && (st.st_mode & S_IFMT) == S_IFIFO)
    }

    /// A replaced file keeps its permission bits but set-user-ID, set-group-ID and sticky; a
    /// symbolic link at the output is refused, with --force too (a link someone planted would
    /// send the render elsewhere): the file it points to and the link stay as they were.
    @Test func replacingAFileKeepsItsPermissionsAndNeverFollowsALink() throws {
        defer { dir.remove() }
        let input = try noise("in.wav")
        let out = dir.file("out.wav")
        #expect(try MixFXBinary.run(["render", input, "-o", out, "-q"]).status == 0)
        #expect(chmod(out, 0o600) == 0)
        #expect(try MixFXBinary.run(["render", input, "-o", out, "-q", "--volume", "0.5", "--force"]).status == 0)
        var st = stat()
        #expect(stat(out, &st) == 0 && st.st_mode & 0o7777 == 0o600)
        #expect(chmod(out, 0o6755) == 0)
        #expect(try MixFXBinary.run(["render", input, "-o", out, "-q", "--volume", "0.5", "--force"]).status == 0)
        #expect(stat(out, &st) == 0 && st.st_mode & 0o7777 == 0o755, "mode \(String(st.st_mode & 0o7777, radix: 8))")
        let before = try Data(contentsOf: URL(fileURLWithPath: out))
        let link = dir.file("link.wav")
        #expect(symlink(out, link) == 0)
        for force in [false, true] {
            let r = try MixFXBinary.run(["render", input, "-o", link, "-q", "--volume", "0.25"] + (force ? ["--force"] : []))
            #expect(r.status == 2 && r.stderr.contains("'\(link)' is a symbolic link") && r.stderr.contains("never writes through a link"), "\(r.stderr)")
        }
        #expect(lstat(link, &st) == 0 && (st.st_mode & S_IFMT) == S_IFLNK)
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == before)
        // the other writers go through the same check: a report
        let notes = dir.file("notes.json")
        try Data("{\"mine\": 1}".utf8).write(to: URL(fileURLWithPath: notes))
        #expect(symlink(notes, dir.file("report.json")) == 0)
        let report = try MixFXBinary.run(["render", input, "-o", dir.file("o2.wav"), "-q", "--report", dir.file("report.json"), "--force"])
        #expect(report.status == 2 && report.stderr.contains("symbolic link"), "\(report.stderr)")
        #expect(try String(contentsOfFile: notes, encoding: .utf8) == "{\"mine\": 1}" && !FileManager.default.fileExists(atPath: dir.file("o2.wav")))
        // and a link to an input is still refused as one
        #expect(symlink(input, dir.file("in-link.wav")) == 0)
        let r = try MixFXBinary.run(["render", input, "-o", dir.file("in-link.wav"), "--force"])
        #expect(r.status == 2 && r.stderr.contains("symbolic link"))
    }

    /// The final step never replaces a file another process created meanwhile (without force).
    @Test func aFileThatAppearsWhileWritingIsKept() throws {
        defer { dir.remove() }
        let path = dir.file("race.json")
        let out = try OutputFile(path: path, inputs: [], overwrite: false)
        let tmp = try out.createTemporary()
        #expect(write(tmp.descriptor, "ours", 4) == 4)
        try Data("theirs".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: OutputFileError.appeared(path: path)) { try out.commit(tmp) }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "theirs")
        #expect(try files() == ["race.json"])
        // with overwrite, the new file replaces it
        let forced = try OutputFile(path: dir.file("new.json"), inputs: [], overwrite: true)
        let tmp2 = try forced.createTemporary()
        #expect(write(tmp2.descriptor, "ours", 4) == 4)
        try Data("theirs".utf8).write(to: URL(fileURLWithPath: dir.file("new.json")))
        try forced.commit(tmp2)
        #expect(try String(contentsOfFile: dir.file("new.json"), encoding: .utf8) == "ours")
        #expect(try files() == ["race.json", "new.json"])
    }

    /// A WAV too large for 32-bit sizes is written as RF64; AIFF and AU are refused up front.
    @Test func outputsLargerThanTheContainerHolds() throws {
        defer { dir.remove() }
        let long = dir.file("long.w64")
        let frames = 1_100_000_000   // 6.9 hours of stereo: 4.4 GB at 16 bits
        try SparseFiles.silentW64(long, frames: frames, channels: 2, sampleRate: 44_100)
        let claimed = try SoundFileReader(path: long).format.frameCount
        #expect(claimed == frames)   // libsndfile takes it
        let r = try MixFXBinary.run(["render", long, "-o", dir.file("big.wav"), "--dry-run", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let plan = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        #expect(plan["container"] as? String == "rf64" && plan["frames"] as? Int == frames)
        let small = try MixFXBinary.run(["render", long, "-o", dir.file("big.wav"), "--dry-run", "--json", "--sample-format", "s16", "--rate", "8000"])
        #expect((try JSONSerialization.jsonObject(with: Data(small.stdout.utf8)) as! [String: Any])["container"] as? String == "wav")
        for ext in ["aiff", "au"] {
            let e = try MixFXBinary.run(["render", long, "-o", dir.file("big.\(ext)")])
            #expect(e.status == 2 && e.stderr.contains("more than \(ext) can hold") && e.stderr.contains(".w64"), "\(e.stderr)")
        }
        #expect(try files() == ["long.w64"])
    }

    /// Found by the file fuzz target: an Ogg file whose header gives no length (libsndfile
    /// says SF_COUNT_MAX frames) overflowed the length at the output rate and trapped.
    @Test func aFileOfUnknownLengthIsRefused() throws {
        defer { dir.remove() }
        let seed = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fuzz/corpus/file/regression-unknown-length.ogg").path
        let r = try MixFXBinary.run(["render", seed, "-o", dir.file("o.wav")])
        #expect(r.status == 1 && r.stderr.contains("regression-unknown-length.ogg") && r.stderr.contains("its length is unknown"), "\(r.stderr)")
        #expect(try files().isEmpty)
    }

    // MARK: hangs and signals

    @Test func aFIFOInputIsRefusedAtOnce() throws {
        defer { dir.remove() }
        let fifo = dir.file("in.wav")
        #expect(mkfifo(fifo, 0o644) == 0)
        let t0 = Date()
        let r = try MixFXBinary.run(["render", fifo, "-o", dir.file("o.wav")])
        #expect(Date().timeIntervalSince(t0) < 5)
        #expect(r.status == 1 && r.stderr.contains("'\(fifo)'") && r.stderr.contains("FIFO"), "\(r.stderr)")
    }

    /// Every signal that ends mixfx ends a render cleanly: a message, exit 128 + the signal,
    /// and no temporary or partial file.
    @Test(arguments: [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE,
                      SIGVTALRM, SIGPROF, SIGPWR, SIGSTKFLT, __libc_current_sigrtmin() + 1, __libc_current_sigrtmax()])
    func signalsStopARenderCleanly(signal: Int32) throws {
        defer { dir.remove() }
        let long = dir.file("long.w64")
        try SparseFiles.silentW64(long, frames: 44_100 * 1200, channels: 2, sampleRate: 44_100)
        let p = try InteractiveProcess(MixFXBinary.path, ["render", long, "--pitch", "300", "-o", dir.file("out.wav")],
                                       environment: ProcessInfo.processInfo.environment)
        let end = Date() + 60   // (under the full suite's load, starting can take seconds)
        while try temporaryOutputs().isEmpty && Date() < end { usleep(2000) }   // the temporary file exists: it renders
        #expect(try temporaryOutputs().count == 1)
        kill(p.process.processIdentifier, signal)
        let status = p.wait(timeout: 10)
        #expect(status == 128 + signal, "\(p.stderr)")
        #expect(p.stderr.contains("interrupted by ") && p.stderr.contains("no output was written"), "\(p.stderr)")
        #expect(try files() == ["long.w64"], "left behind: \((try? files().sorted()) ?? [])")
    }

    /// A fatal error (out of memory traps the same way, through the runtime) is one line after
    /// the runtime's, exit 70, and no temporary file: the crash handler's path, driven by a
    /// signal a fatal error raises.
    @Test(.disabled(if: Sanitizer.name != nil, "under a sanitizer the fatal signals are the sanitizer's"),
          arguments: [SIGSEGV, SIGILL, SIGTRAP, SIGABRT])
    func aFatalErrorLeavesNoPartialFile(signal: Int32) throws {
        defer { dir.remove() }
        let long = dir.file("long.w64")
        try SparseFiles.silentW64(long, frames: 44_100 * 1200, channels: 2, sampleRate: 44_100)
        var env = ProcessInfo.processInfo.environment
        env["MIXFX_BACKTRACE"] = nil
        let p = try InteractiveProcess(MixFXBinary.path, ["render", long, "--pitch", "300", "-o", dir.file("out.wav")], environment: env)
        let end = Date() + 60   // (under the full suite's load, starting can take seconds)
        while try temporaryOutputs().isEmpty && Date() < end { usleep(2000) }
        #expect(try temporaryOutputs().count == 1)
        kill(p.process.processIdentifier, signal)
        #expect(p.wait(timeout: 10) == 70, "\(p.stderr)")
        let lines = p.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("internal failure") && lines[0].contains("nothing was written"), "\(p.stderr)")
        #expect(try files() == ["long.w64"], "left behind: \((try? files().sorted()) ?? [])")
    }

    /// A file-size limit (`ulimit -f`) is a write error with a message, not a silent exit 153.
    @Test(.disabled(if: Sanitizer.name != nil, "a sanitizer's runtime needs files larger than the limit"))
    func aFileSizeLimitIsAnErrorNotASignal() throws {
        defer { dir.remove() }
        let input = try noise("in.wav", frames: 441_000)
        let r = try runProcess("/bin/sh", ["-c", "ulimit -f 100; exec \"$0\" render \"$1\" -o \"$2\"", MixFXBinary.path, input, dir.file("o.wav")])
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains("'\(dir.file("o.wav"))'") && r.stderr.contains("ulimit -f"), "\(r.stderr)")
        #expect(try files() == ["in.wav"])
    }

    @Test func impossibleDeviceSettingsAreRefused() throws {
        defer { dir.remove() }
        let input = try noise("in.wav")
        let r = try MixFXBinary.run(["play", input, "--buffer-ms", "20", "--period-ms", "40", "--no-ui"])
        #expect(r.status == 2 && r.stderr.contains("--period-ms") && r.stderr.contains("two periods"), "\(r.stderr)")
        let past = try MixFXBinary.run(["play", input, "--start", "5", "--no-ui", "--device", "mixfx_tap"],
                                       environment: ALSARig.environment(tap: dir.file("t.raw")))
        #expect(past.status == 2 && past.stderr.contains("--start") && past.stderr.contains("past the end"), "\(past.stderr)")
    }

    /// `save FILE` on the control input goes by the output rules: never an input, never an
    /// existing file without --force.
    @Test(.enabled(if: ALSARig.pulseServer != nil, Comment(rawValue: ALSARig.pulseMissingReason)))
    func theSaveCommandNeverDestroysAFile() throws {
        defer { dir.remove() }
        let input = try noise("in.wav", frames: 44_100 * 4)
        let original = try Data(contentsOf: URL(fileURLWithPath: input))
        try Data("{}".utf8).write(to: URL(fileURLWithPath: dir.file("old.json")))
        let p = try InteractiveProcess(MixFXBinary.path, ["play", input, "--device", "mixfx_pulse", "--no-ui"],
                                       environment: ALSARig.environment(tap: dir.file("t.raw")))
        p.send("save \(input)")
        p.send("save \(input) --force")
        p.send("save \(dir.file("old.json"))")
        p.send("track 1 pitch 300")
        p.send("save \(dir.file("new.json"))")
        p.send("save \(dir.file("old.json")) --force")
        #expect(p.waitForLine(startingWith: "ok save \(dir.file("old.json")) --force") != nil, "\(p.stderr)")
        p.send("quit")
        #expect(p.wait() == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: input)) == original)
        let errors = p.stderr.split(separator: "\n")
        #expect(errors.filter { $0.contains("is one of the inputs") }.count == 2, "\(p.stderr)")
        #expect(errors.contains { $0.contains("old.json' exists; use --force") }, "\(p.stderr)")
        var warnings: [String] = []
        for name in ["new.json", "old.json"] {
            let saved = try PresetLibrary().loadFile(dir.file(name), warnings: &warnings)
            #expect(saved.tracks.first?[.pitchCents] == 300)
        }
        #expect(try files() == ["in.wav", "old.json", "new.json", "t.raw"] || (try files()) == ["in.wav", "old.json", "new.json"])
    }

    /// Nor over the file the device records into (`--device file:'rec.json',raw`), --force or
    /// not: ALSA would go on writing into the unlinked file and the recording would be lost.
    @Test func theSaveCommandNeverWritesOverTheDevicesFile() throws {
        defer { dir.remove() }
        let input = try noise("in.wav", frames: 44_100 * 2)
        let p = try InteractiveProcess(MixFXBinary.path, ["play", input, "--device", "file:'\(dir.file("rec.json"))',raw", "--no-ui", "--loop"],
                                       environment: ProcessInfo.processInfo.environment)
        p.send("save \(dir.file("rec.json")) --force")
        p.send("save \(dir.file("s.json"))")
        #expect(p.waitForLine(startingWith: "ok save \(dir.file("s.json"))") != nil, "\(p.stderr)")
        p.send("quit")
        #expect(p.wait() == 0, "\(p.stderr)")
        #expect(p.stderr.contains("rec.json': the playback device (--device) writes to it"), "\(p.stderr)")
        let recorded = try #require(FileManager.default.contents(atPath: dir.file("rec.json")))
        #expect(recorded.count > 10_000 && recorded.first != UInt8(ascii: "{"), "\(recorded.count) bytes")
    }
}
