import Foundation
import Testing
import MixFX
import TestSupport

/// `mixfx batch`: the manifest checked as a whole, renders equal to `mixfx render`'s, shards that
/// cover every job once, and retries that skip what is finished and redo what changed.
@Suite struct BatchTests {
    let dir = TempDir("mixfx-batch")

    /// Six short inputs and a manifest of six jobs (flags, a named preset, an inline preset,
    /// a report, two outputs in a subfolder).
    func setUp() throws -> String {
        try FileManager.default.createDirectory(atPath: dir.file("in"), withIntermediateDirectories: true)
        for i in 1...6 {
            let x = Signals.sine(frequencyHz: 150 * Double(i), sampleRate: 44_100, frames: 30_000, amplitude: 0.3)
            try AudioFiles.write([x, x.map { -$0 }], to: dir.file("in/c\(i).wav"), sampleRate: 44_100)
        }
        let manifest = dir.file("jobs.jsonl")
        try Data("""
        # six jobs
        {"tracks": ["in/c1.wav", "in/c2.wav"], "output": "out/a.wav", "args": ["--bass", "4", "--track", "2:pitch=-300"]}
        {"tracks": ["in/c3.wav"], "output": "out/b.wav", "args": ["--pitch", "-300", "--limit", "-6"], "id": "b"}
        {"tracks": ["in/c4.wav"], "output": "out/c.flac", "preset": "chipmunk"}

        {"tracks": ["in/c5.wav", "in/c6.wav"], "output": "d.wav", "preset": {"schemaVersion": 1, "all": {"pitch": {"cents": 700}}}}
        {"tracks": ["in/c1.wav"], "output": "e.wav", "args": ["--normalize", "-20", "--report", "e.json"], "id": 42}
        {"tracks": ["in/c2.wav"], "output": "f.wav", "args": ["--treble", "-3"]}
        """.utf8).write(to: URL(fileURLWithPath: manifest))
        try FileManager.default.createDirectory(atPath: dir.file("out"), withIntermediateDirectories: true)
        return manifest
    }

    func json(_ text: String) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(text.utf8)) as! [String: Any]
    }

    func statuses(_ r: MixFXBinary.Result) throws -> [String: String] {
        let jobs = try json(r.stdout)["jobs"] as! [[String: Any]]
        return Dictionary(uniqueKeysWithValues: jobs.map { ($0["id"] as! String, $0["status"] as! String) })
    }

    /// Every job's output is the bytes `mixfx render` writes for the same tracks and flags.
    @Test(arguments: [1, 2])
    func jobsRenderAsRenderDoes(jobs: Int) throws {
        defer { dir.remove() }
        let manifest = try setUp()
        let r = try MixFXBinary.run(["batch", manifest, "--jobs", String(jobs), "--json", "--summary", dir.file("summary.json")])
        #expect(r.status == 0, "\(r.stderr)")
        let s = try json(r.stdout)
        #expect(s["done"] as? Int == 6 && s["failed"] as? Int == 0)
        let ids = (s["jobs"] as! [[String: Any]]).map { $0["id"] as! String }
        #expect(ids == ["2", "b", "4", "6", "42", "8"])
        let singles: [(String, [String])] = [
            ("out/a.wav", ["in/c1.wav", "in/c2.wav", "--bass", "4", "--track", "2:pitch=-300"]),
            ("out/b.wav", ["in/c3.wav", "--pitch", "-300", "--limit", "-6"]),
            ("out/c.flac", ["in/c4.wav", "--preset", "chipmunk"]),
            ("e.wav", ["in/c1.wav", "--normalize", "-20"]),
            ("f.wav", ["in/c2.wav", "--treble", "-3"]),
        ]
        for (out, args) in singles {
            let alone = dir.file("alone-" + out.replacingOccurrences(of: "/", with: "-"))
            #expect(try MixFXBinary.run(["render"] + args.map { $0.hasPrefix("in/") ? dir.file($0) : $0 } + ["-o", alone, "--quiet"], cwd: dir.path).status == 0)
            let same = try Data(contentsOf: URL(fileURLWithPath: dir.file(out))) == Data(contentsOf: URL(fileURLWithPath: alone))
            #expect(same, "\(out) differs from mixfx render's")
        }
        // the inline preset shifted job d a fifth up; the report was written beside the manifest
        #expect(FileManager.default.fileExists(atPath: dir.file("e.json")))
        let summary = try json(String(contentsOfFile: dir.file("summary.json"), encoding: .utf8))
        let e = (summary["jobs"] as! [[String: Any]]).first { $0["id"] as? String == "42" }!
        #expect(abs((e["integratedLUFS"] as? Double ?? 0) - -20) < 0.1 && e["clippedSamples"] as? Int == 0)
    }

    /// A manifest with bad lines renders nothing and names every line and what is wrong.
    @Test func badLinesAreNamedAndNothingRenders() throws {
        defer { dir.remove() }
        _ = try setUp()
        let bad = dir.file("bad.jsonl")
        try Data("""
        {"tracks": ["in/c1.wav"], "output": "x.wav", "args": ["--bass", "99"]}
        {"tracks": ["in/c1.wav"]}
        not json
        {"tracks": ["in/c1.wav"], "output": "in/c1.wav"}
        {"tracks": ["in/c1.wav"], "output": "y.wav", "colour": "blue"}
        {"tracks": ["in/c1.wav"], "output": "x.wav", "args": ["-o", "z.wav"]}
        {"tracks": ["in/c1.wav", "in/c2.wav"], "output": "w.wav", "args": ["--track", "3:bass=1"], "preset": "nosuchpreset"}
        """.utf8).write(to: URL(fileURLWithPath: bad))
        let r = try MixFXBinary.run(["batch", bad])
        #expect(r.status == 2)
        for needle in ["line 1: --bass: 99", "line 2: \"output\"", "line 3: not a JSON object", "line 4: the output",
                       "line 5: unknown key \"colour\"", "line 6: \"args\": the output", "line 7:", "nothing was rendered"] {
            #expect(r.stderr.contains(needle), "\(needle) in \(r.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("x.wav")) && !FileManager.default.fileExists(atPath: dir.file("y.wav")))
        #expect(try MixFXBinary.run(["batch", dir.file("nosuch.jsonl")]).status == 2)
    }

    /// `--check` opens and plans every job and writes nothing; a missing input fails the check.
    @Test func checkValidatesWithoutRendering() throws {
        defer { dir.remove() }
        let manifest = try setUp()
        let r = try MixFXBinary.run(["batch", manifest, "--check"])
        #expect(r.status == 0 && r.stdout.contains("checked 6 jobs"), "\(r.stdout) \(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.file("out")).isEmpty)
        try FileManager.default.removeItem(atPath: dir.file("in/c4.wav"))
        let missing = try MixFXBinary.run(["batch", manifest, "--check"])
        #expect(missing.status == 2 && missing.stderr.contains("line 4") && missing.stderr.contains("c4.wav"), "\(missing.stderr)")
        // from stdin, paths from the current folder
        let piped = try runProcess("/bin/sh", ["-c", "\"$0\" batch - --check < jobs.jsonl", MixFXBinary.path], cwd: dir.path)
        #expect(piped.status == 2 && piped.stderr.contains("c4.wav"))
    }

    /// N shards cover every job exactly once, by flag or from Slurm's and Kubernetes' variables.
    @Test func shardsCoverEveryJobOnce() throws {
        defer { dir.remove() }
        let manifest = try setUp()
        var seen: [String] = []
        for i in 0..<4 {
            let r = try MixFXBinary.run(["batch", manifest, "--shard", "\(i)/4", "--json"])
            #expect(r.status == 0, "\(r.stderr)")
            seen += try statuses(r).filter { $0.value == "done" }.map(\.key)
        }
        #expect(seen.sorted() == ["2", "4", "42", "6", "8", "b"])
        // Slurm: task 2 resubmitted alone (`--array=2`: MIN 2, COUNT 1, STEP 1) is shard 2/3,
        // whatever the submission's size; the count from auto/3 or MIXFX_SHARD_COUNT
        var env = ProcessInfo.processInfo.environment
        env["SLURM_ARRAY_TASK_ID"] = "2"; env["SLURM_ARRAY_TASK_MIN"] = "2"; env["SLURM_ARRAY_TASK_COUNT"] = "1"
        env["SLURM_ARRAY_TASK_MAX"] = "2"; env["SLURM_ARRAY_TASK_STEP"] = "1"
        let slurm = try MixFXBinary.run(["batch", manifest, "--shard", "auto/3", "--json", "--force"], environment: env)
        #expect(try statuses(slurm).keys.sorted() == ["4", "8"], "\(slurm.stdout) \(slurm.stderr)")
        let unknownCount = try MixFXBinary.run(["batch", manifest, "--shard", "auto"], environment: env)
        #expect(unknownCount.status == 2 && unknownCount.stderr.contains("MIXFX_SHARD_COUNT"), "\(unknownCount.stderr)")
        env["MIXFX_SHARD_COUNT"] = "3"
        let counted = try MixFXBinary.run(["batch", manifest, "--shard", "auto", "--json", "--force"], environment: env)
        #expect(try statuses(counted).keys.sorted() == ["4", "8"], "\(counted.stdout) \(counted.stderr)")
        // a task past the count, and a count at the integer's edge, are refused (no trap)
        env["SLURM_ARRAY_TASK_ID"] = "3"
        #expect(try MixFXBinary.run(["batch", manifest, "--shard", "auto"], environment: env).status == 2)
        env["SLURM_ARRAY_TASK_ID"] = "9223372036854775807"; env["MIXFX_SHARD_COUNT"] = "99999999999999999999"
        let edge = try MixFXBinary.run(["batch", manifest, "--shard", "auto"], environment: env)
        #expect(edge.status == 2 && edge.stderr.contains("MIXFX_SHARD_COUNT"), "\(edge.stderr)")
        var k8s = ProcessInfo.processInfo.environment
        k8s["JOB_COMPLETION_INDEX"] = "1"
        let indexed = try MixFXBinary.run(["batch", manifest, "--shard", "auto/3", "--json", "--force"], environment: k8s)
        #expect(try statuses(indexed).keys.sorted() == ["42", "b"])
        let lost = try MixFXBinary.run(["batch", manifest, "--shard", "auto"], environment: k8s)
        #expect(lost.status == 2 && lost.stderr.contains("auto/N"), "\(lost.stderr)")
        #expect(try MixFXBinary.run(["batch", manifest, "--shard", "4/4"]).status == 2)
    }

    /// Safe to retry: a second run skips every finished job; a changed job, a deleted output
    /// or a changed input is rendered again; an output no batch wrote is never replaced
    /// without --force; a failed job does not stop the others.
    @Test func retriesSkipWhatIsDoneAndRedoWhatChanged() throws {
        defer { dir.remove() }
        let manifest = try setUp()
        #expect(try MixFXBinary.run(["batch", manifest, "--quiet"]).status == 0)
        let again = try MixFXBinary.run(["batch", manifest, "--json"])
        #expect(try statuses(again).values.allSatisfy { $0 == "skipped" })
        var text = try String(contentsOfFile: manifest, encoding: .utf8)
        text = text.replacingOccurrences(of: "\"--treble\", \"-3\"", with: "\"--treble\", \"-4\"")
        try Data(text.utf8).write(to: URL(fileURLWithPath: manifest))
        try FileManager.default.removeItem(atPath: dir.file("out/a.wav"))
        usleep(20_000)
        let x = Signals.sine(frequencyHz: 500, sampleRate: 44_100, frames: 30_000, amplitude: 0.3)
        try AudioFiles.write([x, x], to: dir.file("in/c3.wav"), sampleRate: 44_100)
        let third = try statuses(try MixFXBinary.run(["batch", manifest, "--json"]))
        #expect(third == ["2": "done", "b": "done", "4": "skipped", "6": "skipped", "42": "skipped", "8": "done"], "\(third)")
        // an output that is not the batch's
        try FileManager.default.removeItem(atPath: dir.file("f.wav"))
        try FileManager.default.removeItem(atPath: dir.file("f.wav.mixfx-batch.json"))
        try Data("mine".utf8).write(to: URL(fileURLWithPath: dir.file("f.wav")))
        try FileManager.default.removeItem(atPath: dir.file("in/c4.wav"))   // and a job that fails
        let fourth = try MixFXBinary.run(["batch", manifest, "--json"])
        #expect(fourth.status == 1)
        let st = try statuses(fourth)
        #expect(st["8"] == "failed" && st["4"] == "failed" && st["2"] == "skipped", "\(st)")
        #expect(try String(contentsOfFile: dir.file("f.wav"), encoding: .utf8) == "mine")
        #expect(fourth.stderr.contains("job 8") && fourth.stderr.contains("--force"), "\(fourth.stderr)")
    }

    /// A batch stopped by a signal keeps what it finished and leaves no temporary file; the
    /// next run renders only the rest.
    @Test func aKilledBatchResumes() throws {
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.file("in"), withIntermediateDirectories: true)
        let x = Signals.noise(frames: 882_000, amplitude: 0.3, seed: 1)   // 20 s each, pitched: a while
        try AudioFiles.write([x, x], to: dir.file("in/n.wav"), sampleRate: 44_100)
        let lines = (0..<20).map { #"{"tracks": ["in/n.wav"], "output": "o\#($0).wav", "args": ["--pitch", "\#(100 * $0 + 100)", "--overlap", "16"]}"# }
        let manifest = dir.file("m.jsonl")
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: manifest))
        let p = try InteractiveProcess(MixFXBinary.path, ["batch", manifest, "--jobs", "1", "--quiet"],
                                       environment: ProcessInfo.processInfo.environment)
        var finished = 0
        for _ in 0..<200 where finished < 2 {
            usleep(50_000)
            finished = (try? FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".wav") && $0.hasPrefix("o") }.count) ?? 0
        }
        kill(p.process.processIdentifier, SIGTERM)
        #expect(p.wait() == 143, "\(p.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        #expect(!files.contains { $0.contains(".mixfx-tmp") || $0.hasPrefix(".") }, "\(files)")
        let done = files.filter { $0.hasPrefix("o") && $0.hasSuffix(".wav") }.count
        #expect(done >= 2 && done < 20, "\(done) finished before the signal")
        let r = try MixFXBinary.run(["batch", manifest, "--json"])
        let s = try json(r.stdout)
        #expect(r.status == 0 && s["skipped"] as? Int == done && s["done"] as? Int == 20 - done, "\(r.stdout)")
    }

    // MARK: what a skip trusts

    /// A 0.5 s stereo s16 tone at `hz` (every tone the same size).
    func tone(_ name: String, hz: Double) throws -> String {
        let x = Signals.sine(frequencyHz: hz, sampleRate: 44_100, frames: 22_050, amplitude: 0.3)
        try AudioFiles.write([x, x], to: dir.file(name), sampleRate: 44_100)
        return dir.file(name)
    }

    func write(_ lines: [String], _ name: String = "m.jsonl") throws -> String {
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: dir.file(name)))
        return dir.file(name)
    }

    func bytes(_ path: String) -> Data? { FileManager.default.contents(atPath: dir.file(path)) }

    /// `mixfx render`'s bytes for `args` (in the test's folder).
    func rendered(_ args: [String]) throws -> Data? {
        let r = try MixFXBinary.run(["render"] + args + ["-o", "ref.wav", "--quiet", "--force"], cwd: dir.path)
        #expect(r.status == 0, "\(r.stderr)")
        return bytes("ref.wav")
    }

    /// `--type` is part of the job: the same output name with another container is rendered
    /// again (it was skipped, leaving a WAV where the manifest names FLAC).
    @Test func theTypeIsPartOfTheJob() throws {
        defer { dir.remove() }
        _ = try tone("a.wav", hz: 440)
        let wav = try write([#"{"tracks": ["a.wav"], "output": "x.bin", "args": ["--type", "wav"]}"#])
        #expect(try statuses(try MixFXBinary.run(["batch", wav, "--json"])) == ["1": "done"])
        #expect(bytes("x.bin")?.prefix(4) == Data("RIFF".utf8))
        let flac = try write([#"{"tracks": ["a.wav"], "output": "x.bin", "args": ["--type", "flac"]}"#])
        let r = try MixFXBinary.run(["batch", flac, "--json"])
        #expect(try r.status == 0 && statuses(r) == ["1": "done"], "\(r.stdout) \(r.stderr)")
        #expect(bytes("x.bin")?.prefix(4) == Data("fLaC".utf8))
        #expect(try statuses(try MixFXBinary.run(["batch", flac, "--json"])) == ["1": "skipped"])
    }

    /// Another recording put at a track's name with the same size and modification time (a
    /// normalised mtime, `touch -r`) is rendered again, whether it replaced the file (a rename,
    /// a relinked take) or was written into it: the input's inode and change time are part of
    /// the job. The output is then the new recording's mix.
    @Test func aReplacedInputIsRenderedAgain() throws {
        defer { dir.remove() }
        let take = try tone("take.wav", hz: 440)
        _ = try tone("other.wav", hz: 660)
        _ = try tone("third.wav", hz: 880)
        let mtime = [timespec(tv_sec: 1, tv_nsec: 0), timespec(tv_sec: 1, tv_nsec: 0)]
        for name in ["take.wav", "other.wav", "third.wav"] { #expect(utimensat(AT_FDCWD, dir.file(name), mtime, 0) == 0) }
        let m = try write([#"{"tracks": ["take.wav"], "output": "mix.wav"}"#])
        #expect(try statuses(try MixFXBinary.run(["batch", m, "--json"])) == ["1": "done"])
        #expect(try statuses(try MixFXBinary.run(["batch", m, "--json"])) == ["1": "skipped"])
        // replaced by a rename: same size, same mtime, another file
        #expect(rename(dir.file("other.wav"), take) == 0)
        let size = try FileManager.default.attributesOfItem(atPath: take)[.size] as? Int
        #expect(try size == (FileManager.default.attributesOfItem(atPath: dir.file("third.wav"))[.size] as? Int))
        let renamed = try MixFXBinary.run(["batch", m, "--json"])
        #expect(try statuses(renamed) == ["1": "done"], "\(renamed.stdout)")
        #expect(try bytes("mix.wav") == rendered([take]))
        let before = bytes("mix.wav")
        // rewritten in place (the same inode) and its mtime set back
        let third = try #require(bytes("third.wav"))
        let fd = open(take, O_WRONLY | O_TRUNC)
        #expect(fd >= 0 && third.withUnsafeBytes { Foundation.write(fd, $0.baseAddress!, $0.count) } == third.count)
        close(fd)
        #expect(utimensat(AT_FDCWD, take, mtime, 0) == 0)
        let rewritten = try MixFXBinary.run(["batch", m, "--json"])
        #expect(try statuses(rewritten) == ["1": "done"], "\(rewritten.stdout)")
        #expect(try bytes("mix.wav") == rendered([take]) && bytes("mix.wav") != before)
    }

    // MARK: a killed run, two runs at once, links

    /// One job (o.wav with its report o.json) rendered by a batch: its manifest, its sidecar's
    /// path and the sidecar as written.
    func aFinishedJobWithAReport() throws -> (manifest: String, sidecarPath: String, sidecar: [String: Any]) {
        _ = try tone("a.wav", hz: 440)
        let m = try write([#"{"tracks": ["a.wav"], "output": "o.wav", "args": ["--report", "o.json"]}"#])
        #expect(try MixFXBinary.run(["batch", m, "--quiet"]).status == 0)
        let sidecarPath = dir.file("o.wav.mixfx-batch.json")
        return (m, sidecarPath, try json(String(contentsOfFile: sidecarPath, encoding: .utf8)))
    }

    /// A job whose report cannot be written (its folder a full file system) fails with neither
    /// file there, as `mixfx render` does (the output was renamed into place before the report
    /// was written); with room, the same batch writes both.
    @Test(.enabled(if: ClipPolicyTests.canMountPrivately, "cannot mount a tmpfs in a private mount namespace here (needs root with CAP_SYS_ADMIN)"))
    func aJobsReportThatCannotBeWrittenLeavesNoOutput() throws {
        defer { dir.remove() }
        _ = try tone("a.wav", hz: 440)
        try FileManager.default.createDirectory(atPath: dir.file("full"), withIntermediateDirectories: true)
        let m = try write([#"{"tracks": ["a.wav"], "output": "o.wav", "args": ["--report", "full/o.json"]}"#])
        let script = #"mount -t tmpfs -o size=4k none "$1" && (head -c 1048576 /dev/zero > "$1/fill" 2>/dev/null; true) && exec "$2" batch "$3" --json"#
        let r = try runProcess(which("unshare")!, ["--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh",
                                                    dir.file("full"), MixFXBinary.path, m])
        #expect(try r.status == 1 && statuses(r) == ["1": "failed"] && (r.stdout + r.stderr).contains("o.json"), "\(r.status) \(r.stdout) \(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("o.wav")))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".mixfx-") }.isEmpty)
        let ok = try MixFXBinary.run(["batch", m, "--json"])
        #expect(try statuses(ok) == ["1": "done"] && bytes("o.wav") != nil && bytes("full/o.json") != nil, "\(ok.stderr)")
    }

    /// The sidecar a run killed (SIGKILL) between renaming its output into place and updating
    /// its sidecar leaves: state "rendering", the output not yet recorded, the finished file
    /// recorded as `pendingOutput` (and likewise for a report). The next run knows the file is
    /// its own and renders the job again (it failed every later run with "exists; use
    /// --force"); another file put at the name is still kept.
    @Test func aSigkillBetweenRenameAndSidecarResumes() throws {
        defer { dir.remove() }
        let (m, sidecarPath, done) = try aFinishedJobWithAReport()
        #expect(done["state"] as? String == "done" && done["pendingOutput"] is NSNull)
        func plant(_ change: (inout [String: Any]) -> Void) throws {
            var s = done
            s["state"] = "rendering"
            change(&s)
            try JSONSerialization.data(withJSONObject: s).write(to: URL(fileURLWithPath: sidecarPath))
        }
        // without the record of the file being renamed, the file is no one's: kept
        try plant { $0["output"] = NSNull() }
        let unknown = try MixFXBinary.run(["batch", m, "--json"])
        #expect(try unknown.status == 1 && statuses(unknown) == ["1": "failed"] && unknown.stderr.contains("exists"), "\(unknown.stderr)")
        // killed after the output's rename (the last run's report still recorded); and after
        // the report's
        try plant { $0["pendingOutput"] = $0["output"]; $0["output"] = NSNull() }
        let afterOutput = try MixFXBinary.run(["batch", m, "--json"])
        #expect(try afterOutput.status == 0 && statuses(afterOutput) == ["1": "done"], "\(afterOutput.stdout) \(afterOutput.stderr)")
        let again = try json(String(contentsOfFile: sidecarPath, encoding: .utf8))
        try JSONSerialization.data(withJSONObject: again.merging(["state": "rendering", "pendingReport": again["report"]!, "report": NSNull()]) { $1 })
            .write(to: URL(fileURLWithPath: sidecarPath))
        let afterReport = try MixFXBinary.run(["batch", m, "--json"])
        #expect(try afterReport.status == 0 && statuses(afterReport) == ["1": "done"], "\(afterReport.stdout) \(afterReport.stderr)")
        #expect(try statuses(try MixFXBinary.run(["batch", m, "--json"])) == ["1": "skipped"])
        // the pending record vouches only for that very file: a copy put at the name is kept
        let now = try json(String(contentsOfFile: sidecarPath, encoding: .utf8))
        let copy = try #require(bytes("o.wav"))
        try FileManager.default.removeItem(atPath: dir.file("o.wav"))
        try copy.write(to: URL(fileURLWithPath: dir.file("o.wav")))
        try JSONSerialization.data(withJSONObject: now.merging(["state": "rendering", "pendingOutput": now["output"]!, "output": NSNull()]) { $1 })
            .write(to: URL(fileURLWithPath: sidecarPath))
        let other = try MixFXBinary.run(["batch", m, "--json"])
        #expect(try other.status == 1 && statuses(other) == ["1": "failed"] && other.stderr.contains("--force"), "\(other.stderr)")
    }

    /// A job another live run holds the lock of is left to it (status busy, exit 1, its pid and
    /// host named, nothing of it written), the other jobs render; a lock file its holder left
    /// when killed is taken over; each run removes its lock files. Two runs of one manifest at
    /// once fail nothing and leave nothing wedged: the next run skips every job.
    @Test func twoRunsAtOnceShareTheJobs() throws {
        defer { dir.remove() }
        _ = try tone("a.wav", hz: 440)
        let m = try write((0..<3).map { #"{"tracks": ["a.wav"], "output": "o\#($0).wav", "args": ["--pitch", "\#($0 * 100)"]}"# })
        let lockPath = dir.file("o1.wav.mixfx-batch.lock")
        let fd = open(lockPath, O_RDWR | O_CREAT | O_EXCL, 0o644)
        #expect(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
        #expect(Foundation.write(fd, "pid 4242 on elsewhere\n", 22) == 22)
        let busy = try MixFXBinary.run(["batch", m, "--json"])
        #expect(try busy.status == 1 && statuses(busy) == ["1": "done", "2": "busy", "3": "done"], "\(busy.stdout)")
        #expect(busy.stderr.contains("job 2") && busy.stderr.contains("pid 4242 on elsewhere"), "\(busy.stderr)")
        #expect(try json(busy.stdout)["busy"] as? Int == 1)
        #expect(bytes("o1.wav") == nil && bytes("o1.wav.mixfx-batch.json") == nil)
        // the holder is gone (its lock file stays, unlocked)
        close(fd)
        let after = try MixFXBinary.run(["batch", m, "--json"])
        #expect(try after.status == 0 && statuses(after) == ["1": "skipped", "2": "done", "3": "skipped"], "\(after.stdout) \(after.stderr)")
        var files = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        #expect(!files.contains { $0.hasSuffix(".lock") }, "\(files)")
        // two runs at once
        for i in 0..<3 { try FileManager.default.removeItem(atPath: dir.file("o\(i).wav")) }
        let runs = try ["s1.json", "s2.json"].map {
            try InteractiveProcess(MixFXBinary.path, ["batch", m, "--jobs", "1", "--quiet", "--summary", dir.file($0)],
                                   environment: ProcessInfo.processInfo.environment)
        }
        var doneCount = 0
        for (run, s) in zip(runs, ["s1.json", "s2.json"]) {
            #expect(run.wait() <= 1, "\(run.stderr)")
            let summary = try json(String(contentsOfFile: dir.file(s), encoding: .utf8))
            #expect(summary["failed"] as? Int == 0, "\(summary) \(run.stderr)")
            doneCount += summary["done"] as? Int ?? 0
        }
        #expect(doneCount == 3)
        let later = try MixFXBinary.run(["batch", m, "--json"])
        #expect(try later.status == 0 && statuses(later).values.allSatisfy { $0 == "skipped" }, "\(later.stdout)")
        files = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        #expect(!files.contains { $0.hasSuffix(".lock") }, "\(files)")
    }

    /// A job whose lock another run still holds but whose sidecar already says done (the holder
    /// records "done" before it unlocks) is skipped, not reported busy.
    @Test func aJobFinishedByTheHolderIsSkippedNotBusy() throws {
        defer { dir.remove() }
        _ = try tone("a.wav", hz: 440)
        let m = try write([#"{"tracks": ["a.wav"], "output": "o.wav"}"#, #"{"tracks": ["a.wav"], "output": "p.wav"}"#])
        #expect(try MixFXBinary.run(["batch", m, "--quiet"]).status == 0)
        try FileManager.default.removeItem(atPath: dir.file("p.wav"))
        for name in ["o.wav", "p.wav"] {
            let fd = open(dir.file(name + ".mixfx-batch.lock"), O_RDWR | O_CREAT | O_EXCL, 0o644)
            #expect(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
        }
        let r = try MixFXBinary.run(["batch", m, "--json"])
        #expect(try r.status == 1 && statuses(r) == ["1": "skipped", "2": "busy"], "\(r.stdout)")
    }

    /// A job finished on another node of a cluster, where the shared file system's device has
    /// another number (NFS clients number an export as they mount it), is still the job's own:
    /// skipped when done, replaced when the run was killed before its bookkeeping, never
    /// "exists; use --force". A file whose inode, size or time differs is still kept.
    @Test func aJobFinishedOnAnotherNodeIsItsOwn() throws {
        defer { dir.remove() }
        let (m, sidecarPath, done) = try aFinishedJobWithAReport()
        func elsewhere(_ record: Any?) -> Any {
            var r = record as! [String: Any]
            r["device"] = String(UInt64(r["device"] as! String)! &+ 977)
            return r
        }
        func plant(_ s: [String: Any]) throws {
            try JSONSerialization.data(withJSONObject: s).write(to: URL(fileURLWithPath: sidecarPath))
        }
        try plant(done.merging(["output": elsewhere(done["output"]), "report": elsewhere(done["report"])]) { $1 })
        let skipped = try MixFXBinary.run(["batch", m, "--json"])
        #expect(try skipped.status == 0 && statuses(skipped) == ["1": "skipped"], "\(skipped.stdout) \(skipped.stderr)")
        // killed between the rename and its sidecar's update, on the other node
        try plant(done.merging(["state": "rendering", "pendingOutput": elsewhere(done["output"]), "output": NSNull(),
                                "report": elsewhere(done["report"])]) { $1 })
        let resumed = try MixFXBinary.run(["batch", m, "--json"])
        #expect(try resumed.status == 0 && statuses(resumed) == ["1": "done"], "\(resumed.stdout) \(resumed.stderr)")
        // a record of another file (another inode) vouches for nothing
        let now = try json(String(contentsOfFile: sidecarPath, encoding: .utf8))
        var other = now["output"] as! [String: Any]
        other["inode"] = String(UInt64(other["inode"] as! String)! &+ 1)
        try plant(now.merging(["hash": "0", "output": other]) { $1 })
        let kept = try MixFXBinary.run(["batch", m, "--json"])
        #expect(try kept.status == 1 && statuses(kept) == ["1": "failed"] && kept.stderr.contains("--force"), "\(kept.stderr)")
    }

    /// An output the user edited after the batch wrote it is the user's, even with its size and
    /// mtime kept (`touch -r`, a tagger keeping times): not skipped as done, not replaced when the
    /// job changes; `--force` replaces it. One whose change time moved with its bytes the same
    /// (a snapshot's hard link, `chmod`, a backup restoring access times) is still the batch's.
    @Test func anOutputChangedSinceTheBatchIsKept() throws {
        defer { dir.remove() }
        _ = try tone("a.wav", hz: 440)
        let m = try write([#"{"tracks": ["a.wav"], "output": "o.wav"}"#, #"{"tracks": ["a.wav"], "output": "p.wav"}"#,
                           #"{"tracks": ["a.wav"], "output": "q.wav"}"#])
        #expect(try MixFXBinary.run(["batch", m, "--quiet"]).status == 0)
        var st = stat()
        #expect(stat(dir.file("o.wav"), &st) == 0)
        let times = [st.st_atim, st.st_mtim]
        usleep(20_000)
        // o.wav: a byte changed in place, the mtime set back; p.wav: read-only; q.wav: linked
        // into a snapshot
        let fd = open(dir.file("o.wav"), O_WRONLY)
        #expect(fd >= 0 && pwrite(fd, "X", 1, 100) == 1)
        close(fd)
        #expect(utimensat(AT_FDCWD, dir.file("o.wav"), times, 0) == 0)
        #expect(chmod(dir.file("p.wav"), 0o444) == 0)
        #expect(link(dir.file("q.wav"), dir.file("snapshot-q.wav")) == 0)
        let edited = try #require(bytes("o.wav"))
        let r = try MixFXBinary.run(["batch", m, "--json"])
        #expect(try r.status == 1 && statuses(r) == ["1": "failed", "2": "skipped", "3": "skipped"], "\(r.stdout) \(r.stderr)")
        #expect(r.stderr.contains("--force") && bytes("o.wav") == edited, "\(r.stderr)")
        // (the sidecar now records p.wav as it is: the next run need not read it again)
        var p = stat()
        #expect(stat(dir.file("p.wav"), &p) == 0)
        let record = try json(String(contentsOfFile: dir.file("p.wav.mixfx-batch.json"), encoding: .utf8))["output"] as? [String: Any]
        #expect(record?["changedNanoseconds"] as? String == String(Int64(p.st_ctim.tv_sec) * 1_000_000_000 + Int64(p.st_ctim.tv_nsec)))
        let forced = try MixFXBinary.run(["batch", m, "--json", "--force"])
        #expect(try forced.status == 0 && statuses(forced)["1"] == "done", "\(forced.stdout) \(forced.stderr)")
        #expect(bytes("o.wav") != edited)
    }

    /// The output a batch's sidecar vouches for, edited in place while the job renders again
    /// (its settings changed), is kept: the commit finds it changed and discards the render.
    @Test func anOutputEditedWhileTheJobRendersIsKept() throws {
        defer { dir.remove() }
        let x = Signals.noise(frames: 44_100 * 60, amplitude: 0.3, seed: 5)
        try AudioFiles.write([x, x], to: dir.file("n.wav"), sampleRate: 44_100)
        let first = try write([#"{"tracks": ["n.wav"], "output": "o.wav", "args": ["--pitch", "100"]}"#])
        #expect(try MixFXBinary.run(["batch", first, "--quiet"]).status == 0)
        let m = try write([#"{"tracks": ["n.wav"], "output": "o.wav", "args": ["--pitch", "200", "--overlap", "16"]}"#])
        let p = try InteractiveProcess(MixFXBinary.path, ["batch", m, "--jobs", "1", "--json"], environment: ProcessInfo.processInfo.environment)
        // (rendering: its temporary output holds audio; the sidecar's temporary, written before
        // the render opens its output, is a few hundred bytes)
        var rendering = false
        for _ in 0..<5000 where !rendering {
            usleep(1_000)
            rendering = (try? FileManager.default.contentsOfDirectory(atPath: dir.path))?.contains {
                var st = stat()
                return $0.hasPrefix(".mixfx-") && $0.hasSuffix(".tmp") && stat(dir.file($0), &st) == 0 && st.st_size > 100_000
            } ?? false
        }
        #expect(rendering)
        let fd = open(dir.file("o.wav"), O_WRONLY)
        #expect(fd >= 0 && pwrite(fd, "X", 1, 100) == 1)
        close(fd)
        let edited = try #require(bytes("o.wav"))
        #expect(p.wait() == 1, "\(p.stdout) \(p.stderr)")
        #expect(p.stderr.contains("changed by another process"), "\(p.stderr)")
        #expect(bytes("o.wav") == edited)
    }

    /// `--summary` replaces without --force only a summary of the same manifest and shard
    /// (another manifest's, or another shard's, is kept); a summary that cannot be written
    /// makes the run fail (exit 1) though every job is done.
    @Test func theSummaryIsOnlyThisBatchs() throws {
        defer { dir.remove() }
        _ = try tone("a.wav", hz: 440)
        let m1 = try write([#"{"tracks": ["a.wav"], "output": "o.wav"}"#], "m1.jsonl")
        let m2 = try write([#"{"tracks": ["a.wav"], "output": "p.wav"}"#], "m2.jsonl")
        #expect(try MixFXBinary.run(["batch", m1, "--quiet", "--summary", dir.file("s.json")]).status == 0)
        let first = try #require(bytes("s.json"))
        let other = try MixFXBinary.run(["batch", m2, "--quiet", "--summary", dir.file("s.json")])
        #expect(other.status == 2 && other.stderr.contains("--force") && bytes("s.json") == first, "\(other.stderr)")
        let shard = try MixFXBinary.run(["batch", m1, "--quiet", "--shard", "1/2", "--summary", dir.file("s.json")])
        #expect(shard.status == 2 && bytes("s.json") == first, "\(shard.stderr)")
        #expect(try MixFXBinary.run(["batch", m1, "--quiet", "--summary", dir.file("s.json")]).status == 0)
        #expect(try json(String(contentsOfFile: dir.file("s.json"), encoding: .utf8))["skipped"] as? Int == 1)
        #expect(try MixFXBinary.run(["batch", m2, "--quiet", "--force", "--summary", dir.file("s.json")]).status == 0)
        // two folders' jobs.jsonl, each named as it is from its folder; one manifest by two
        // spellings; two streams on stdin
        for (f, cents) in [("A", 100), ("B", 200)] {
            try FileManager.default.createDirectory(atPath: dir.file(f), withIntermediateDirectories: true)
            try Data(#"{"tracks": ["../a.wav"], "output": "o.wav", "args": ["--pitch", "\#(cents)"]}"#.utf8).write(to: URL(fileURLWithPath: dir.file(f + "/jobs.jsonl")))
        }
        #expect(try MixFXBinary.run(["batch", "jobs.jsonl", "--quiet", "--summary", "../t.json"], cwd: dir.file("A")).status == 0)
        let fromA = try #require(bytes("t.json"))
        let fromB = try MixFXBinary.run(["batch", "jobs.jsonl", "--quiet", "--summary", "../t.json"], cwd: dir.file("B"))
        #expect(fromB.status == 2 && bytes("t.json") == fromA, "\(fromB.stderr)")
        #expect(try MixFXBinary.run(["batch", dir.file("A/jobs.jsonl"), "--quiet", "--summary", dir.file("t.json")]).status == 0)
        // the project moved: the same manifest's bytes
        #expect(rename(dir.file("A"), dir.file("A2")) == 0)
        #expect(try MixFXBinary.run(["batch", "jobs.jsonl", "--quiet", "--summary", "../t.json"], cwd: dir.file("A2")).status == 0)
        let piped = { (m: String) throws -> Int32 in
            try runProcess("/bin/sh", ["-c", "exec \"$1\" batch - --quiet --summary u.json < \"$2\"", "sh", MixFXBinary.path, m], cwd: self.dir.path).status
        }
        #expect(try piped(m1) == 0 && piped(m1) == 0)
        #expect(try piped(m2) == 2)
    }

    @Test(.enabled(if: ClipPolicyTests.canMountPrivately, "cannot mount a tmpfs in a private mount namespace here (needs root with CAP_SYS_ADMIN)"))
    func aSummaryNotWrittenFailsTheRun() throws {
        defer { dir.remove() }
        _ = try tone("a.wav", hz: 440)
        let m = try write([#"{"tracks": ["a.wav"], "output": "o.wav"}"#])
        try FileManager.default.createDirectory(atPath: dir.file("full"), withIntermediateDirectories: true)
        // the summary's folder a full disk (a 4 KiB tmpfs filled)
        let script = #"mount -t tmpfs -o size=4k none "$1" && (head -c 1048576 /dev/zero > "$1/fill" 2>/dev/null; true) && exec "$2" batch "$3" --quiet --summary "$1/s.json""#
        let r = try runProcess(which("unshare")!, ["--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh",
                                                    dir.file("full"), MixFXBinary.path, m])
        #expect(r.status == 1 && r.stderr.contains("--summary"), "\(r.status) \(r.stderr)")
        #expect(bytes("o.wav") != nil)
    }

    /// A file at a job's lock name that no batch left there (notes, or a hard link to another
    /// file) is kept and the job refused, --force or not; an empty one or a "pid ..." one (a
    /// killed run's) is taken over.
    @Test func aFileAtTheLockNameIsKeptUnlessABatchLeftIt() throws {
        defer { dir.remove() }
        _ = try tone("a.wav", hz: 440)
        _ = try tone("keep.wav", hz: 300)
        let keep = try #require(bytes("keep.wav"))
        let m = try write([#"{"tracks": ["a.wav"], "output": "x.wav"}"#, #"{"tracks": ["a.wav"], "output": "y.wav"}"#,
                           #"{"tracks": ["a.wav"], "output": "z.wav"}"#])
        try Data("precious notes".utf8).write(to: URL(fileURLWithPath: dir.file("x.wav.mixfx-batch.lock")))
        #expect(link(dir.file("keep.wav"), dir.file("y.wav.mixfx-batch.lock")) == 0)
        try Data("pid 1 on elsewhere\n".utf8).write(to: URL(fileURLWithPath: dir.file("z.wav.mixfx-batch.lock")))
        for extra in [[], ["--force"]] {
            let r = try MixFXBinary.run(["batch", m] + extra)
            #expect(r.status == 1 && r.stderr.contains("is not a mixfx batch's lock file"), "\(r.stderr)")
            #expect(try String(contentsOfFile: dir.file("x.wav.mixfx-batch.lock"), encoding: .utf8) == "precious notes")
            #expect(bytes("keep.wav") == keep && bytes("y.wav.mixfx-batch.lock") == keep)
            #expect(!FileManager.default.fileExists(atPath: dir.file("x.wav")) && !FileManager.default.fileExists(atPath: dir.file("y.wav")))
        }
        #expect(FileManager.default.fileExists(atPath: dir.file("z.wav")) && !FileManager.default.fileExists(atPath: dir.file("z.wav.mixfx-batch.lock")))
        // --check says so too, and of a folder at a lock name; a lock a batch left passes
        try FileManager.default.createDirectory(atPath: dir.file("z.wav.mixfx-batch.lock"), withIntermediateDirectories: false)
        try Data("pid 1 on elsewhere\n".utf8).write(to: URL(fileURLWithPath: dir.file("w.wav.mixfx-batch.lock")))
        let check = try MixFXBinary.run(["batch", m, "--check", "--force"])
        #expect(check.status == 2 && check.stderr.contains("job 1 ") && check.stderr.contains("job 2 ") && check.stderr.contains("job 3 ")
                && check.stderr.contains("'\(dir.file("z.wav.mixfx-batch.lock"))' is a directory"), "\(check.stderr)")
        let w = try MixFXBinary.run(["batch", try write([#"{"tracks": ["a.wav"], "output": "w.wav"}"#], "w.jsonl"), "--check"])
        #expect(w.status == 0, "\(w.stderr)")
        // a job whose folder is missing is told so by name (not through its lock file's name)
        let missing = try MixFXBinary.run(["batch", try write([#"{"tracks": ["a.wav"], "output": "nofolder/o.wav"}"#], "n.jsonl")])
        #expect(missing.status == 1 && missing.stderr.contains("the folder") && missing.stderr.contains("does not exist")
                && !missing.stderr.contains("lock file"), "\(missing.stderr)")
    }

    /// A symbolic link at a job's output, sidecar or report name is refused, with or without
    /// --force, by `--check` and by the run, naming the link; the file it points to is kept,
    /// whatever a forged sidecar says about it; a link at the sidecar's name is no sidecar.
    @Test func aLinkAtAJobsNameIsRefused() throws {
        defer { dir.remove() }
        _ = try tone("a.wav", hz: 440)
        _ = try tone("precious.wav", hz: 300)
        try Data("my thesis".utf8).write(to: URL(fileURLWithPath: dir.file("thesis.txt")))
        let precious = try #require(bytes("precious.wav"))
        // a forged sidecar that records the link's target as the output it wrote
        #expect(symlink("precious.wav", dir.file("x.wav")) == 0)
        var st = stat()
        #expect(stat(dir.file("precious.wav"), &st) == 0)
        let record: [String: Any] = ["device": String(st.st_dev), "inode": String(st.st_ino), "size": Int(st.st_size),
                                     "modifiedNanoseconds": String(Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec))]
        try JSONSerialization.data(withJSONObject: ["generator": "mixfx batch", "job": "1", "hash": "0", "frames": 1, "state": "done",
                                                    "output": record, "report": NSNull()])
            .write(to: URL(fileURLWithPath: dir.file("x.wav.mixfx-batch.json")))
        #expect(symlink("thesis.txt", dir.file("y.wav.mixfx-batch.json")) == 0)
        #expect(symlink("thesis.txt", dir.file("z.json")) == 0)
        let cases: [(String, String)] = [(#"{"tracks": ["a.wav"], "output": "x.wav"}"#, "the output"),
                                         (#"{"tracks": ["a.wav"], "output": "y.wav"}"#, "the sidecar"),
                                         (#"{"tracks": ["a.wav"], "output": "z.wav", "args": ["--report", "z.json"]}"#, "the report")]
        for (line, what) in cases {
            let m = try write([line])
            for extra in [["--check"], [], ["--force"], ["--check", "--force"]] {
                let r = try MixFXBinary.run(["batch", m] + extra)
                #expect(r.status == (extra.contains("--check") ? 2 : 1), "\(line) \(extra): \(r.stdout) \(r.stderr)")
                #expect(r.stderr.contains("\(what) '") && r.stderr.contains("symbolic link"), "\(r.stderr)")
                #expect(!r.stdout.contains("all can be rendered"))
            }
        }
        #expect(bytes("precious.wav") == precious && bytes("thesis.txt") == Data("my thesis".utf8))
        #expect(bytes("y.wav") == nil && bytes("z.wav") == nil)
    }
}
