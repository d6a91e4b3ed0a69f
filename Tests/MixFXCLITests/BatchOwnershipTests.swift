import Foundation
import Testing
import MixFX
import TestSupport

/// `mixfx batch` where its files meet other things: an output another manifest wrote, a copied
/// manifest's summary, a stream sent into another shard's output, and an exFAT volume (times in
/// whole seconds, no change time, names that do not tell case apart).
@Suite struct BatchOwnershipTests {
    let dir = TempDir("mixfx-batch-own")

    func tone(_ name: String, hz: Double, seconds: Double = 0.5) throws -> String {
        let x = Signals.sine(frequencyHz: hz, sampleRate: 44_100, frames: Int(44_100 * seconds), amplitude: 0.3)
        try AudioFiles.write([x, x], to: dir.file(name), sampleRate: 44_100)
        return dir.file(name)
    }

    func write(_ lines: [String], _ name: String) throws -> String {
        try FileManager.default.createDirectory(atPath: URL(fileURLWithPath: dir.file(name)).deletingLastPathComponent().path,
                                                withIntermediateDirectories: true)
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: dir.file(name)))
        return dir.file(name)
    }

    func bytes(_ path: String) -> Data? { FileManager.default.contents(atPath: dir.file(path)) }

    func mkdir(_ names: String...) throws {
        for n in names { try FileManager.default.createDirectory(atPath: dir.file(n), withIntermediateDirectories: true) }
    }

    /// Two manifests naming one output (two projects sharing an output folder): the second
    /// keeps the first's finished render (the job fails, naming the other project) unless
    /// --force; the first manifest, run again, edited in place or moved with its project, still
    /// replaces or skips its own; a copy of it in another project is another manifest; another
    /// manifest in the same project is the same.
    @Test func anotherManifestsOutputIsKeptWithoutForce() throws {
        defer { dir.remove() }
        try mkdir("shared", "projA", "projB", "projC")
        _ = try tone("projA/take.wav", hz: 440)
        _ = try tone("projB/other.wav", hz: 880)
        _ = try tone("projC/take.wav", hz: 660)
        let a = try write([#"{"tracks": ["take.wav"], "output": "../shared/final.wav", "id": "A-master"}"#], "projA/jobs.jsonl")
        let b = try write([#"{"tracks": ["other.wav"], "output": "../shared/final.wav", "id": "B-master", "args": ["--pitch", "500"]}"#], "projB/jobs.jsonl")
        #expect(try MixFXBinary.run(["batch", a, "--quiet"]).status == 0)
        let first = try #require(bytes("shared/final.wav"))
        let other = try MixFXBinary.run(["batch", b, "--quiet"])
        #expect(other.status == 1 && other.stderr.contains("--force") && other.stderr.contains("a manifest in '\(dir.file("projA"))'")
                && other.stderr.contains("A-master"), "\(other.stderr)")
        #expect(bytes("shared/final.wav") == first)
        let checked = try MixFXBinary.run(["batch", b, "--check"])
        #expect(checked.status == 2 && checked.stderr.contains("a manifest in '\(dir.file("projA"))'"), "\(checked.stderr)")
        // its own manifest: skipped; edited in place (a job added, the settings changed): replaced
        #expect(try MixFXBinary.run(["batch", a, "--quiet"]).status == 0 && bytes("shared/final.wav") == first)
        _ = try write([#"{"tracks": ["take.wav"], "output": "../shared/final.wav", "id": "A-master", "args": ["--bass", "6"]}"#,
                       #"{"tracks": ["take.wav"], "output": "../shared/a2.wav"}"#], "projA/jobs.jsonl")
        let edited = try MixFXBinary.run(["batch", a, "--quiet"])
        #expect(edited.status == 0 && bytes("shared/final.wav") != first, "\(edited.stderr)")
        // moved with its project: still its own
        #expect(rename(dir.file("projA"), dir.file("projA-moved")) == 0)
        let moved = try MixFXBinary.run(["batch", dir.file("projA-moved/jobs.jsonl"), "--quiet"])
        #expect(moved.status == 0, "\(moved.stderr)")
        // a copy of that manifest in another project (its own still there) is another manifest
        try FileManager.default.copyItem(atPath: dir.file("projA-moved/jobs.jsonl"), toPath: dir.file("projC/jobs.jsonl"))
        let third = try #require(bytes("shared/final.wav"))
        let copied = try MixFXBinary.run(["batch", dir.file("projC/jobs.jsonl"), "--quiet"])
        #expect(copied.status == 1 && copied.stderr.contains("projA-moved'") && bytes("shared/final.wav") == third,
                "\(copied.stderr)")
        // --force replaces it, and the output is then the other manifest's
        #expect(try MixFXBinary.run(["batch", b, "--quiet", "--force"]).status == 0 && bytes("shared/final.wav") != third)
        let back = try MixFXBinary.run(["batch", dir.file("projA-moved/jobs.jsonl"), "--quiet"])
        #expect(back.status == 1 && back.stderr.contains("projB'"), "\(back.stderr)")
        // another manifest in the same project (jobs-2 beside jobs): the same project's outputs,
        // replaced where its settings differ
        let before2 = try #require(bytes("shared/final.wav"))
        let b2 = try write([#"{"tracks": ["other.wav"], "output": "../shared/final.wav", "args": ["--pitch", "700"]}"#], "projB/jobs-2.jsonl")
        let second = try MixFXBinary.run(["batch", b2, "--quiet"])
        #expect(second.status == 0 && bytes("shared/final.wav") != before2, "\(second.stderr)")
        // a manifest on stdin is its folder's: a generator adding a job still owns what it wrote
        let piped = { (lines: [String]) throws -> MixFXBinary.Result in
            let m = try self.write(lines, "gen.jsonl")
            return try runProcess("/bin/sh", ["-c", "exec \"$1\" batch - --quiet < \"$2\"", "sh", MixFXBinary.path, m], cwd: self.dir.file("projB"))
        }
        let one = #"{"tracks": ["other.wav"], "output": "../shared/g.wav"}"#
        #expect(try piped([one]).status == 0)
        let grown = try piped([one.replacingOccurrences(of: "}", with: #", "args": ["--bass", "3"]}"#), #"{"tracks": ["other.wav"], "output": "../shared/h.wav"}"#])
        #expect(grown.status == 0, "\(grown.stderr)")
    }

    /// Two manifests with the same bytes (one template copied into two projects) do not share
    /// a summary while both are there; the one project moved still replaces its own.
    @Test func aCopiedManifestsSummaryIsKept() throws {
        defer { dir.remove() }
        try mkdir("projA/out", "projB/out", "shared")
        _ = try tone("projA/t.wav", hz: 440)
        _ = try tone("projB/t.wav", hz: 880)
        let a = try write([#"{"tracks": ["t.wav"], "output": "out/x.wav"}"#], "projA/jobs.jsonl")
        let b = try write([#"{"tracks": ["t.wav"], "output": "out/x.wav"}"#], "projB/jobs.jsonl")
        #expect(try MixFXBinary.run(["batch", a, "--quiet", "--summary", dir.file("shared/s.json")]).status == 0)
        let first = try #require(bytes("shared/s.json"))
        let other = try MixFXBinary.run(["batch", b, "--quiet", "--summary", dir.file("shared/s.json")])
        #expect(other.status == 2 && other.stderr.contains("--force") && bytes("shared/s.json") == first, "\(other.stderr)")
        #expect(rename(dir.file("projA"), dir.file("projA2")) == 0)
        #expect(try MixFXBinary.run(["batch", dir.file("projA2/jobs.jsonl"), "--quiet", "--summary", dir.file("shared/s.json")]).status == 0)
    }

    /// `--shard 0/2 --json >> out/y.wav` where y.wav is shard 1's output is refused (exit 2,
    /// nothing appended), as `--summary out/y.wav` is; shard 1 then skips its finished job.
    @Test func aStreamIntoAnotherShardsFileIsRefused() throws {
        defer { dir.remove() }
        try mkdir("out")
        _ = try tone("a.wav", hz: 440)
        let m = try write([#"{"tracks": ["a.wav"], "output": "out/x.wav"}"#, #"{"tracks": ["a.wav"], "output": "out/y.wav"}"#], "jobs.jsonl")
        #expect(try MixFXBinary.run(["batch", m, "--shard", "1/2", "--quiet"]).status == 0)
        let y = try #require(bytes("out/y.wav"))
        let sidecar = try #require(bytes("out/y.wav.mixfx-batch.json"))
        for redirect in [">>", "2>>"] {
            for what in ["out/y.wav", "out/y.wav.mixfx-batch.json"] {
                let r = try runProcess("/bin/sh", ["-c", "exec \"$1\" batch jobs.jsonl --shard 0/2 --json \(redirect) \(what)", "sh", MixFXBinary.path],
                                       cwd: dir.path)
                #expect(r.status == 2, "\(redirect) \(what): \(r.status) \(r.stderr)")
            }
        }
        #expect(bytes("out/y.wav") == y && bytes("out/y.wav.mixfx-batch.json") == sidecar && bytes("out/x.wav") == nil)
        let again = try MixFXBinary.run(["batch", m, "--shard", "1/2", "--json"])
        #expect(again.status == 0 && again.stdout.contains("\"skipped\" : 1"), "\(again.stdout) \(again.stderr)")
    }

    /// On exFAT (exfat-fuse, in a private mount namespace): a track replaced by `cp -p` of
    /// another take of the same length from the same second (inode, size, mtime and ctime all
    /// kept: exFAT has no change time and whole-second times) is rendered again; two jobs whose
    /// outputs differ only in case are one file there: `--check` and the run refuse them (exit
    /// 2, nothing rendered), where a folder that tells case apart takes them.
    @Test func onExFATAReplacedTrackAndOutputsInAnotherCase() throws {
        defer { dir.remove() }
        let take1 = try tone("take1.wav", hz: 440)
        let take2 = try tone("take2.wav", hz: 880)
        let script = #"""
        img="$1/ex.img"; m="$1/ex"; mkdir "$m" && truncate -s 16M "$img" && mkfs.exfat "$img" >/dev/null 2>&1 \
          && L=$(losetup -f --show "$img" 2>/dev/null) || { echo "setup: no loop device"; exit 99; }
        trap 'cd /; umount "$m" 2>/dev/null; losetup -d "$L"' EXIT
        mount.exfat-fuse "$L" "$m" >/dev/null 2>&1 || { echo "setup: the exfat volume cannot be mounted"; exit 99; }
        cd "$m" && mkdir out && cp "$2" take1.wav && cp "$3" take2.wav && touch -r take1.wav take2.wav && cp -p take1.wav stem.wav
        echo '{"tracks":["stem.wav"],"output":"out/mix.wav"}' > jobs.jsonl
        "$4" batch jobs.jsonl --quiet; echo "rc=$?"
        b=$(stat -c '%i %s %Y %Z' stem.wav); cp -p take2.wav stem.wav
        [ "$b" = "$(stat -c '%i %s %Y %Z' stem.wav)" ] && echo "stat is the same"
        "$4" batch jobs.jsonl --json | grep '"status"'
        "$4" render stem.wav -o ref.wav --quiet && cmp -s ref.wav out/mix.wav && echo "the render is the new take's"
        "$4" batch jobs.jsonl --json | grep '"status"'
        # (mounted again: exfat-fuse numbers the files afresh; the job is still done)
        cd / && umount "$m" && mount.exfat-fuse "$L" "$m" >/dev/null 2>&1 && cd "$m" || exit 98
        "$4" batch jobs.jsonl --json | grep '"status"'
        printf '%s\n' '{"tracks":["take1.wav"],"output":"out/x.wav","id":"A"}' '{"tracks":["take1.wav"],"output":"out/X.wav","id":"B"}' > two.jsonl
        "$4" batch two.jsonl --check 2>&1; echo "rc=$?"
        "$4" batch two.jsonl --quiet 2>&1; echo "rc=$?"
        ls out | grep -ci '^x.wav$'
        """#
        let r = try runProcess(which("unshare")!, ["--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh",
                                                    dir.path, take1, take2, MixFXBinary.path])
        if r.status == 99 { try Test.cancel("\(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) here") }
        let lines = r.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(lines.contains("stat is the same"), "\(r.stdout)")
        #expect(lines.filter { $0.hasPrefix("\"status\"") } == [#""status" : "done","#, #""status" : "skipped","#, #""status" : "skipped","#], "\(r.stdout)")
        #expect(lines.contains("the render is the new take's"), "\(r.stdout)")
        #expect(lines.filter { $0.hasPrefix("rc=") } == ["rc=0", "rc=2", "rc=2"], "\(r.stdout)")
        #expect(r.stdout.contains("does not tell case apart") && lines.last == "0", "\(r.stdout)")
        // where the folder tells case apart, the two outputs are two files
        try mkdir("out")
        let two = try write([#"{"tracks":["take1.wav"],"output":"out/x.wav","id":"A"}"#, #"{"tracks":["take1.wav"],"output":"out/X.wav","id":"B"}"#], "two.jsonl")
        let apart = try MixFXBinary.run(["batch", two, "--check"])
        #expect(apart.status == 0, "\(apart.stderr)")
    }
}
