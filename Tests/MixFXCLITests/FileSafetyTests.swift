import Foundation
import Testing
@testable import MixFXCLI
@testable import MixFXIO
@testable import MixFXFiles
import MixFX
import TestSupport

/// A user's files are safe around mixfx whatever is in the folder, the manifest or the
/// environment: every written file is created exclusively, nothing is written over a file read
/// (decided by identity, not spelling), nothing over an existing file without --force, names
/// are bytes, and messages are one line.
@Suite struct FileSafetyTests {
    let dir = TempDir("mixfx-files")

    func tone(_ name: String, seconds: Double = 0.5, hz: Float = 440) throws -> String {
        let path = dir.file(name)
        let n = Int(44_100 * seconds)
        let x = (0..<n).map { i in (0.25 * sin(2 * Float.pi * hz * Float(i) / 44_100) * 32768).rounded() / 32768 }
        try AudioFiles.write([x, x], to: path, sampleRate: 44_100, sampleFormat: .s16)
        return path
    }

    func bytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }
    func names() -> Set<String> { Set((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []) }
    /// Runs mixfx through /bin/sh, so arguments can be any bytes (printf escapes).
    func shell(_ script: String) throws -> MixFXBinary.Result {
        try runProcess("/bin/sh", ["-c", script, MixFXBinary.path], cwd: dir.path)
    }

    // MARK: temporary files

    /// The temporary output has an unpredictable name, is created exclusively as a regular file
    /// of mode 0600, and is written through its descriptor: links and FIFOs planted under the
    /// names earlier versions used (or any name) are neither followed nor opened.
    @Test func temporaryFilesAreCreatedExclusivelyUnderUnpredictableNames() throws {
        defer { dir.remove() }
        let out = try OutputFile(path: dir.file("o.wav"), inputs: [], overwrite: false)
        let a = try out.createTemporary(), b = try out.createTemporary()
        #expect(a.path != b.path)
        let random = { (p: String) in String(p.split(separator: "-").last!.dropLast(4)) }
        #expect(random(a.path).count == 12 && random(a.path) != random(b.path))
        var st = stat()
        #expect(lstat(a.path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG && (st.st_mode & 0o777) == 0o600)
        a.discard(); b.discard()
        #expect(names().isEmpty)

        // a render beside planted links and FIFOs at every predictable name of the old scheme
        let input = try tone("in.wav")
        let victim = dir.file("victim.txt")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        for n in 1...4 {
            for pid in 1...400 { symlink(victim, dir.file(".o.wav.mixfx-\(pid)-\(n).tmp")) }
        }
        mkfifo(dir.file(".o.wav.mixfx-fifo.tmp"), 0o644)
        let t0 = Date()
        let r = try MixFXBinary.run(["render", input, "-o", dir.file("o.wav"), "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(Date().timeIntervalSince(t0) < 30)
        #expect(String(decoding: bytes(victim)!, as: UTF8.self) == "precious")
        var lst = stat()
        #expect(lstat(dir.file("o.wav"), &lst) == 0 && (lst.st_mode & S_IFMT) == S_IFREG)
        #expect(try AudioFiles.read(dir.file("o.wav")).format.frameCount == 22_050)
    }

    /// What a SIGKILLed render or batch left is removed by the next run in that folder: only
    /// mixfx's own names of this host, not locked by a live writer (whatever the process number
    /// in the name: another PID namespace, a container's PID 1), untouched for 10 s, and never a
    /// file the run reads.
    @Test func aRerunRemovesTheTemporariesOfDeadProcesses() throws {
        defer { dir.remove() }
        _ = try tone("in.wav")
        let dead = try runProcess("/bin/sh", ["-c", "echo $$"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let host = TemporaryOutput.hostTag
        let stale = ".mixfx-\(host)-\(dead)-abcdefghijkl.tmp"
        let pidOne = ".mixfx-\(host)-1-abcdefghijkm.tmp"                  // a container's PID 1, gone
        let locked = ".mixfx-\(host)-\(dead)-abcdefghijkn.tmp"           // a live writer elsewhere
        let fresh = ".mixfx-\(host)-\(dead)-abcdefghijko.tmp"            // made an instant ago
        let salvaged = ".mixfx-\(host)-\(dead)-abcdefghijkp.tmp"         // a leftover read as a track
        let otherHost = ".mixfx-elsewhere-\(dead)-abcdefghijkl.tmp"
        let unrelated = ".mixfx-notes.tmp"
        let shared = ".mixfx-\(host)-\(dead)-abcdefghijkq.tmp"          // given the name, then made readable
        let linked = ".mixfx-\(host)-\(dead)-abcdefghijkr.tmp"          // killed after linking its output
        for n in [stale, pidOne, locked, fresh, otherHost, unrelated, shared, linked] {
            try Data("x".utf8).write(to: URL(fileURLWithPath: dir.file(n)))
            #expect(chmod(dir.file(n), n == shared ? 0o644 : 0o600) == 0)   // (mixfx makes them 0600)
        }
        #expect(link(dir.file(linked), dir.file("kept-link")) == 0)
        try FileManager.default.copyItem(atPath: dir.file("in.wav"), toPath: dir.file(salvaged))
        #expect(chmod(dir.file(salvaged), 0o600) == 0)
        let old = [timeval(tv_sec: time(nil) - 60, tv_usec: 0), timeval(tv_sec: time(nil) - 60, tv_usec: 0)]
        for n in [stale, pidOne, locked, salvaged, otherHost, unrelated, shared, linked] { #expect(utimes(dir.file(n), old) == 0) }
        let fd = open(dir.file(locked), O_RDONLY)
        defer { close(fd) }
        #expect(flock(fd, LOCK_EX | LOCK_NB) == 0)
        try Data("{\"tracks\": [\"\(salvaged)\"], \"output\": \"o.wav\"}\n".utf8).write(to: URL(fileURLWithPath: dir.file("m.jsonl")))
        let r = try MixFXBinary.run(["batch", dir.file("m.jsonl"), "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!names().contains(stale) && !names().contains(pidOne) && !names().contains(linked), "\(names())")
        #expect(names().isSuperset(of: [locked, fresh, salvaged, otherHost, unrelated, shared, "kept-link", "o.wav"]), "\(names())")
        #expect(bytes(dir.file("kept-link")) == Data("x".utf8))
        // no output is given such a name (a later run would take it for a leftover)
        let named = try MixFXBinary.run(["render", dir.file("in.wav"), "-o", dir.file(".mixfx-\(host)-1-abcdefghijks.tmp"), "--type", "wav"])
        #expect(named.status == 2 && named.stderr.contains("temporary files"), "\(named.stderr)")
        // hosts whose names differ only in other characters, or past the first letters, differ
        let tags = ["vm-1", "vm1", "mixfx-render-partition-a-node17", "mixfx-render-partition-a-node18", ""].map { TemporaryOutput.tag(ofHost: Array($0.utf8)) }
        #expect(Set(tags).count == tags.count && tags.allSatisfy { $0.allSatisfy { $0.isLetter || $0.isNumber } }, "\(tags)")
        // a render's own temporary is locked while it is written
        #expect(mkdir(dir.file("sub"), 0o755) == 0)
        let out = try OutputFile(path: dir.file("sub/p.wav"), inputs: [], overwrite: false)
        let tmp = try out.createTemporary()
        let other = open(tmp.path, O_RDONLY)
        defer { close(other) }
        #expect(flock(other, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK)
        #expect(utimes(tmp.path, old) == 0)
        #expect(OutputFile.removeStaleTemporaries(besides: dir.file("sub/p.wav")) == 0 && FileManager.default.fileExists(atPath: tmp.path))
        tmp.discard()
    }

    /// A folder entry's name is read up to its NUL, never the whole 256-byte `d_name` field:
    /// glibc packs the entries of readdir's buffer, so near the buffer's end the field reaches
    /// past it (in a folder of thousands of files the render crashed before it began, when the
    /// buffer ended at a page's end). An entry laid out to end just before a page that cannot
    /// be read: its name is read (copying the field would fault and end the test run).
    @Test func aFolderEntrysNameIsReadOnlyUpToItsEnd() throws {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let base = try #require(mmap(nil, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
        try #require(base != MAP_FAILED)
        defer { munmap(base, 2 * page) }
        #expect(mprotect(base + page, page, PROT_NONE) == 0)
        let name = Array(".mixfx-host-123-abcdefghijkl.tmp".utf8)
        let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        // (on an 8-byte boundary, as glibc lays its records out; the name's NUL at most 7 bytes
        // before the unreadable page)
        let start = (page - (offset + name.count + 1)) & ~7
        let entry = base + start
        entry.initializeMemory(as: UInt8.self, repeating: 0, count: offset + name.count + 1)
        (entry + offset).copyMemory(from: name, byteCount: name.count)
        #expect(FileSystem.entryName(entry.assumingMemoryBound(to: dirent.self)) == String(decoding: name, as: UTF8.self))
    }

    // MARK: identity, not spelling

    /// An output spelled differently from an input (`//`, `./`, a linked folder, a hard link) is
    /// that input: refused even with --force, the input untouched.
    @Test func anInputUnderAnotherSpellingIsNeverWrittenOver() throws {
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.file("in"), withIntermediateDirectories: true)
        let input = try tone("in/a.wav")
        symlink(dir.file("in"), dir.file("linked"))
        link(input, dir.file("hard.wav"))
        let before = bytes(input)
        for spelling in [dir.path + "/in//a.wav", dir.path + "/./in/a.wav", dir.file("linked/a.wav"), dir.file("hard.wav"), "in/../in/a.wav"] {
            let r = try MixFXBinary.run(["render", input, "--bass", "6", "-o", spelling, "--force"], cwd: dir.path)
            #expect(r.status == 2 && r.stderr.contains("is one of the inputs"), "\(spelling): \(r.stderr)")
        }
        #expect(bytes(input) == before)
        // the preset read is an input too
        let preset = dir.file("p.json")
        try Data("{\"schemaVersion\": 1, \"tracks\": [{\"eq\": {\"bass\": {\"gainDB\": 3}}}]}".utf8).write(to: URL(fileURLWithPath: preset))
        let presetBefore = bytes(preset)
        let r = try MixFXBinary.run(["render", input, "--preset", "./p.json", "--report", "p.json", "--force", "-o", "o.wav"], cwd: dir.path)
        #expect(r.status == 2 && r.stderr.contains("--report") && r.stderr.contains("inputs"), "\(r.stderr)")
        #expect(bytes(preset) == presetBefore && !names().contains("o.wav"))
        let o = try MixFXBinary.run(["render", input, "--preset", "./p.json", "-o", "p.json", "--force"], cwd: dir.path)
        #expect(o.status == 2 && o.stderr.contains("inputs"), "\(o.stderr)")
        #expect(bytes(preset) == presetBefore)
    }

    /// The batch sidecar's hash of a file's bytes is the same read from a file or from memory,
    /// for sizes around its 32-byte groups and 1 MiB pieces, and tells any one byte changed.
    @Test func theContentHashIsTheBytes() throws {
        defer { dir.remove() }
        var g = SeededGenerator(seed: 7)
        for size in [0, 1, 7, 8, 31, 32, 33, 1 << 20, (1 << 20) + 5, 3 * (1 << 20) - 1] {
            var bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &g) }
            let path = dir.file("h\(size)")
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let fd = open(path, O_RDONLY)
            defer { close(fd) }
            let h = ContentHash.of(bytes: bytes)
            #expect(ContentHash.of(descriptor: fd) == h, "\(size)")
            if size > 0 {
                bytes[size / 2] ^= 1
                #expect(ContentHash.of(bytes: bytes) != h, "\(size)")
            }
            bytes.append(0)
            #expect(ContentHash.of(bytes: bytes) != h, "\(size)")
        }
    }

    static let canMountExfat: Bool = {
        geteuid() == 0 && ["unshare", "losetup", "mkfs.exfat", "mount.exfat-fuse"].allSatisfy { which($0) != nil }
    }()

    /// On a volume that does not tell case apart but gives each spelling its own inode
    /// (exfat-fuse), `-o A.wav --force` beside the input `a.wav` names the input (and the input
    /// `A.wav` beside `-o a.wav`, or `SUB/a.wav` beside `sub/A.WAV`): refused,
    /// the input untouched (identity alone did not see it, and the render replaced its input).
    /// So are the spellings the names do not tell (`σ.wav` and `ς.wav`, a link to `T.WAV` beside
    /// `-o t.wav`, `T.WAV` on standard input, `>> t.wav` for text): by the file's version.
    /// In a private mount namespace, on a loop device.
    @Test(.enabled(if: canMountExfat, "needs root, unshare, losetup, mkfs.exfat and mount.exfat-fuse (apt-get install exfatprogs exfat-fuse)"))
    func anInputSpelledInAnotherCaseIsNeverWrittenOver() throws {
        defer { dir.remove() }
        let input = try tone("a.wav")
        let script = #"""
        img="$1/ex.img"; m="$1/ex"; mkdir "$m" && truncate -s 16M "$img" && mkfs.exfat "$img" >/dev/null 2>&1 \
          && L=$(losetup -f --show "$img" 2>/dev/null) || { echo "setup: no loop device"; exit 99; }
        trap 'umount "$m" 2>/dev/null; losetup -d "$L"' EXIT
        mount.exfat-fuse "$L" "$m" >/dev/null 2>&1 || { echo "setup: the exfat volume cannot be mounted"; exit 99; }
        cp "$2" "$m/a.wav"
        [ "$(stat -c %i "$m/a.wav")" != "$(stat -c %i "$m/A.wav")" ] && echo "inodes differ"
        mkdir "$m/sub" && cp "$2" "$m/sub/a.wav"
        "$3" render "$m/a.wav" --bass 6 -o "$m/A.wav" --force 2>&1; echo "rc=$?"
        "$3" render "$m/A.wav" --bass 6 -o "$m/a.wav" --force 2>&1; echo "rc=$?"
        "$3" render "$m/SUB/a.wav" --bass 6 -o "$m/sub/A.WAV" --force 2>&1; echo "rc=$?"
        "$3" render "$m/a.wav" --bass 6 -o "$m/b.wav" 2>&1; echo "rc=$?"
        cmp -s "$2" "$m/a.wav" && cmp -s "$2" "$m/sub/a.wav" && echo "the input is whole"
        # spellings the names alone do not tell: σ and ς (one name on exFAT), the input through a
        # link named otherwise, the input on standard input, text appended through another spelling
        cp "$2" "$m/σ.wav"; ln -s "$m/T.WAV" "$1/link.wav"; cp "$2" "$m/T.WAV"
        "$3" render "$m/σ.wav" --bass 6 -o "$m/ς.wav" --force 2>&1; echo "rc=$?"
        "$3" render "$1/link.wav" --bass 6 -o "$m/t.wav" --force 2>&1; echo "rc=$?"
        "$3" render - --bass 6 -o "$m/t.wav" --force < "$m/T.WAV" 2>&1; echo "rc=$?"
        "$3" analyze "$m/T.WAV" --json >> "$m/t.wav" 2>/dev/null; echo "rc=$?"
        cmp -s "$2" "$m/σ.wav" && cmp -s "$2" "$m/T.WAV" && echo "the other inputs are whole"
        """#
        let r = try runProcess(which("unshare")!, ["--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh",
                                                    dir.path, input, MixFXBinary.path])
        if r.status == 99 { try Test.cancel("\(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) here") }
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("inodes differ"), "\(r.stdout)")
        // refused as the input, whichever of the two is spelled otherwise (the folder too);
        // another name of the folder is written
        #expect(lines.filter { $0.hasPrefix("rc=") } == ["rc=2", "rc=2", "rc=2", "rc=0", "rc=2", "rc=2", "rc=2", "rc=2"], "\(r.stdout)")
        #expect(r.stdout.contains("is one of the inputs") && lines.contains("the input is whole"), "\(r.stdout)")
        // (σ and ς by their folded names; the others by the file's version)
        #expect(r.stdout.contains("ς.wav' is one of the inputs") && r.stdout.components(separatedBy: "t.wav' may be the input").count == 3, "\(r.stdout)")
        #expect(lines.contains("the other inputs are whole"), "\(r.stdout)")
    }

    /// On a volume that does not tell case apart (exfat-fuse, an inode per spelling), names in
    /// another case are one file wherever mixfx compares two of its own names: a report named
    /// as the output (`-o mix.json --report MIX.JSON --force` left only the report, exit 0; σ and
    /// ς, which `lowercased()` keeps apart; a folder spelled otherwise, its own inode there), a
    /// batch summary named as a job's output (it replaced the render), a device's file named as
    /// the track being played (`--device "file:'TAKE.WAV',raw" --force` truncated the take), and
    /// a batch job whose output is another job's track (refused before any job renders). And a
    /// killed render's temporary is removed there, where every file shows mode 0777.
    @Test(.enabled(if: canMountExfat, "needs root, unshare, losetup, mkfs.exfat and mount.exfat-fuse (apt-get install exfatprogs exfat-fuse)"))
    func namesInAnotherCaseAreOneFileOnACaseBlindVolume() throws {
        defer { dir.remove() }
        let input = try tone("a.wav")
        let deadPID = try runProcess("/bin/sh", ["-c", "sh -c 'echo $$'"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let leftover = ".mixfx-\(TemporaryOutput.hostTag)-\(deadPID)-abcdefghijkl.tmp"
        let script = #"""
        img="$1/ex.img"; m="$1/ex"; mkdir "$m" && truncate -s 16M "$img" && mkfs.exfat "$img" >/dev/null 2>&1 \
          && L=$(losetup -f --show "$img" 2>/dev/null) || { echo "setup: no loop device"; exit 99; }
        trap 'cd /; umount "$m" 2>/dev/null; losetup -d "$L"' EXIT
        mount.exfat-fuse "$L" "$m" >/dev/null 2>&1 || { echo "setup: the exfat volume cannot be mounted"; exit 99; }
        cd "$m" && cp "$2" a.wav && cp "$2" take.wav
        "$3" render a.wav -o mix.json --type wav --report MIX.JSON --force -q 2>&1; echo "rc=$?"
        "$3" render a.wav -o σ.json --type wav --report ς.json --force -q 2>&1; echo "rc=$?"
        mkdir Out && "$3" render a.wav -o Out/mix.json --type wav --report out/mix.json --force -q 2>&1; echo "rc=$?"
        echo '{"tracks": ["a.wav"], "output": "x.wav"}' > jobs.jsonl
        "$3" batch jobs.jsonl --quiet 2>&1; echo "rc=$?"
        "$3" batch jobs.jsonl --quiet --summary X.WAV --force 2>&1; echo "rc=$?"
        head -c 4 x.wav; echo
        printf 'quit\n' | "$3" play take.wav --device "file:'TAKE.WAV',raw" --no-ui --force 2>&1; echo "rc=$?"
        cmp -s "$2" take.wav && echo "the take is whole"
        printf '%s\n' '{"tracks": ["a.wav"], "output": "ok.wav"}' '{"tracks": ["a.wav"], "output": "A.wav", "args": ["--force"]}' > two.jsonl
        "$3" batch two.jsonl --quiet 2>&1; echo "rc=$?"
        [ -e ok.wav ] || echo "nothing rendered"
        cmp -s "$2" a.wav && echo "the track is whole"
        cp "$2" "$4" && touch -d '1 minute ago' "$4"
        "$3" render a.wav -o b.wav -q 2>&1; echo "rc=$?"
        [ -e "$4" ] || echo "the leftover is gone"
        """#
        let r = try runProcess(which("unshare")!, ["--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh",
                                                    dir.path, input, MixFXBinary.path, leftover])
        if r.status == 99 { try Test.cancel("\(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) here") }
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.hasPrefix("rc=") } == ["rc=2", "rc=2", "rc=2", "rc=0", "rc=2", "rc=2", "rc=2", "rc=0"], "\(r.stdout)")
        #expect(r.stdout.contains("--report: 'MIX.JSON' is the output file") && r.stdout.contains("--summary: 'X.WAV' is line 1's output"), "\(r.stdout)")
        #expect(lines.contains("RIFF") && lines.contains("the take is whole") && r.stdout.contains("a file this session reads"), "\(r.stdout)")
        #expect(r.stdout.contains("(its folder does not tell case apart)") && lines.contains("nothing rendered") && lines.contains("the track is whole"), "\(r.stdout)")
        #expect(lines.contains("the leftover is gone"), "\(r.stdout)")
    }

    /// One file seen under two numbers (an export mounted twice: the inode the same, the device
    /// not; exfat-fuse: the device the same, the inode not) shows one version: such a file at an
    /// output's name is taken for the input. Another file of another version, or on another
    /// device with another inode, is not.
    @Test func aFileSeenUnderOtherNumbersIsTakenForTheInput() throws {
        defer { dir.remove() }
        let input = try tone("a.wav")
        let real = try #require(FileSystem.status(input))
        var inputs = FileIdentitySet()
        inputs.insert(input)
        var otherDevice = real, otherInode = real, elsewhere = real, changed = real
        otherDevice.st_dev &+= 1
        otherInode.st_ino &+= 1
        elsewhere.st_dev &+= 1; elsewhere.st_ino &+= 1
        changed.st_ino &+= 1; changed.st_ctim.tv_nsec = (changed.st_ctim.tv_nsec + 1) % 1_000_000_000
        #expect(inputs.memberSeenAs(otherDevice, onOneDevice: false) == input && inputs.memberSeenAs(otherInode, onOneDevice: true) == input)
        // (one device, another inode: only where the file system may show one file so)
        #expect(inputs.memberSeenAs(otherInode, onOneDevice: false) == nil)
        #expect(inputs.memberSeenAs(elsewhere, onOneDevice: true) == nil && inputs.memberSeenAs(changed, onOneDevice: true) == nil
                && inputs.memberSeenAs(real, onOneDevice: true) == nil)
        #expect(FileVersion.mayBeOneFile(real, otherDevice, onOneDevice: false) && !FileVersion.mayBeOneFile(real, changed, onOneDevice: true))
        // (a view that carries times as floating-point seconds: within a microsecond on another
        // device, not on the same one)
        var viewed = otherDevice, roundedHere = otherInode
        viewed.st_mtim.tv_nsec = (viewed.st_mtim.tv_nsec + 118) % 1_000_000_000
        roundedHere.st_mtim.tv_nsec = (roundedHere.st_mtim.tv_nsec + 118) % 1_000_000_000
        #expect(inputs.memberSeenAs(viewed, onOneDevice: false) == input && inputs.memberSeenAs(roundedHere, onOneDevice: true) == nil)
        // (a copy with its times kept is another version on a volume with change times: written)
        #expect(try runProcess("/bin/cp", ["-p", input, dir.file("copy.wav")]).status == 0)
        let r = try MixFXBinary.run(["render", input, "--bass", "6", "-o", dir.file("copy.wav"), "--force"])
        #expect(r.status == 0, "\(r.stderr)")
    }

    /// Where a file system shows each file under its own numbers (ext4, tmpfs), files that only
    /// share a version are other files: a fresh empty output or log (the same size, 0, and times
    /// within one tick of the file system's clock as another) is written, whatever the timing.
    /// (The first version refused `render a.wav -o "$(mktemp)" --force > log` in 21 of 30 runs.)
    @Test func filesThatOnlyShareAVersionAreOtherFiles() throws {
        defer { dir.remove() }
        _ = try tone("a.wav", seconds: 0.1)
        let script = #"""
        fails=0
        for i in $(seq 30); do
          out=$(mktemp --suffix=.wav -p "$PWD"); : > in.txt
          "$1" render a.wav -o "$out" --force --quiet > log.txt 2> err.txt < in.txt || fails=$((fails+1))
          "$1" analyze a.wav > "$(mktemp -p "$PWD")" 2> "$(mktemp -p "$PWD")" < "$(mktemp -p "$PWD")" || fails=$((fails+1))
        done
        echo "fails=$fails"
        """#
        let r = try runProcess("/bin/bash", ["-c", script, "sh", MixFXBinary.path], cwd: dir.path)
        #expect(r.stdout.contains("fails=0"), "\(r.stdout) \(r.stderr)")
    }

    /// An overlay shows its lower layer's files under their own inodes on another device: the
    /// input read through the overlay is refused as the output at its lower-layer path, and
    /// text printed there too. In a private mount namespace.
    @Test(.enabled(if: ClipPolicyTests.canMountPrivately, "cannot mount an overlay in a private mount namespace here (needs root with CAP_SYS_ADMIN)"))
    func anInputThroughAnOverlayIsNeverWrittenOver() throws {
        defer { dir.remove() }
        for d in ["lower", "upper", "work", "merged"] { try FileManager.default.createDirectory(atPath: dir.file(d), withIntermediateDirectories: true) }
        let input = try tone("lower/a.wav")
        let before = bytes(input)
        let script = #"""
        mount -t overlay overlay -o "lowerdir=$1/lower,upperdir=$1/upper,workdir=$1/work" "$1/merged" || { echo "setup: no overlay"; exit 99; }
        [ "$(stat -c %d "$1/merged/a.wav")" != "$(stat -c %d "$1/lower/a.wav")" ] && echo "devices differ"
        "$2" render "$1/merged/a.wav" --bass 6 -o "$1/lower/a.wav" --force 2>&1; echo "rc=$?"
        "$2" analyze "$1/merged/a.wav" --json >> "$1/lower/a.wav" 2>/dev/null; echo "rc=$?"
        """#
        let r = try runProcess(which("unshare")!, ["--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh", dir.path, MixFXBinary.path])
        if r.status == 99 { try Test.cancel("\(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) here") }
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("devices differ") && lines.filter { $0.hasPrefix("rc=") } == ["rc=2", "rc=2"], "\(r.stdout)")
        #expect(bytes(input) == before)
    }

    /// On a folder that tells case apart, `A.wav` beside the input `a.wav` is another file: with
    /// --force it is replaced, the input kept.
    @Test func anotherCaseIsAnotherFileWhereTheFolderTellsCaseApart() throws {
        defer { dir.remove() }
        let input = try tone("a.wav")
        _ = try tone("A.wav", hz: 660)
        let before = bytes(input)
        let r = try MixFXBinary.run(["render", input, "--bass", "6", "-o", dir.file("A.wav"), "--force"], cwd: dir.path)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(bytes(input) == before && bytes(dir.file("A.wav")) != before)
    }

    /// `mixfx play` refuses an ALSA device whose arguments name a file it reads (the file plugin
    /// truncates its file when the device opens).
    @Test func aDeviceThatWouldWriteOverAnInputIsRefused() throws {
        defer { dir.remove() }
        let input = try tone("IN.wav")
        let before = bytes(input)
        for device in ["file:'IN.wav',raw", "file:FILE=./IN.wav,FORMAT=raw", "tee:default,'\(input)',raw"] {
            let r = try MixFXBinary.run(["play", "IN.wav", "--device", device, "--no-ui"], cwd: dir.path)
            #expect(r.status == 2 && r.stderr.contains("--device") && r.stderr.contains("reads"), "\(device): \(r.stderr)")
        }
        #expect(bytes(input) == before)
        #expect(ALSADeviceString.writes("file:'a,b.raw',raw").files == ["a,b.raw"])
        #expect(ALSADeviceString.writes("default") == ALSADeviceString.Writes())
    }

    // MARK: batch

    func manifest(_ lines: [String], _ name: String = "m.jsonl") throws -> String {
        let path = dir.file(name)
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Two spellings of one file are one file in a manifest: an output that is another job's
    /// input, two outputs in one folder reached through a link, two jobs with one report, a
    /// report that is the manifest. Nothing renders.
    @Test func aManifestsFilesAreComparedByIdentity() throws {
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.file("in"), withIntermediateDirectories: true)
        _ = try tone("in/a.wav"); _ = try tone("b.wav")
        symlink(dir.file("in"), dir.file("linked"))
        let cases: [([String], String)] = [
            (["{\"tracks\": [\"b.wav\"], \"output\": \"in//a.wav\"}", "{\"tracks\": [\"in/a.wav\"], \"output\": \"x.wav\"}"], "track"),
            (["{\"tracks\": [\"b.wav\"], \"output\": \"in/y.wav\"}", "{\"tracks\": [\"b.wav\"], \"output\": \"linked/y.wav\"}"], "also line 1's output"),
            (["{\"tracks\": [\"b.wav\"], \"output\": \"o1.wav\", \"args\": [\"--report\", \"r.json\"]}",
              "{\"tracks\": [\"b.wav\"], \"output\": \"o2.wav\", \"args\": [\"--report=./r.json\"]}"], "also line 1's report"),
            (["{\"tracks\": [\"b.wav\"], \"output\": \"o1.wav\", \"args\": [\"--report\", \"m.json\"]}"], "the manifest"),
            (["{\"tracks\": [\"b.wav\"], \"output\": \"o1.wav\", \"args\": [\"--\", \"in/a.wav\"]}"], "-- has no place"),
        ]
        for (lines, expected) in cases {
            let m = try manifest(lines, "m.json")
            for check in [true, false] {
                let r = try MixFXBinary.run(["batch", m] + (check ? ["--check"] : []))
                #expect(r.status == 2 && r.stderr.contains(expected) && r.stderr.contains("nothing was rendered"), "\(lines): \(r.stderr)")
            }
            #expect(names().filter { $0.hasPrefix("o") || $0.hasPrefix("x") || $0 == "r.json" }.isEmpty)
        }
    }

    /// A sidecar is trusted only when it is mixfx's own and describes the output as it is: a
    /// planted `{}` or a copied sidecar lets the batch replace nothing; a deleted report is
    /// rendered again; a report over an unrelated file needs --force (the batch's, or the job's).
    @Test func onlyATrustedSidecarLetsABatchReplaceFiles() throws {
        defer { dir.remove() }
        _ = try tone("a.wav")
        let out = dir.file("o.wav"), sidecar = dir.file("o.wav.mixfx-batch.json")
        try Data("mine".utf8).write(to: URL(fileURLWithPath: out))
        let m = try manifest(["{\"tracks\": [\"a.wav\"], \"output\": \"o.wav\"}"])
        for planted in ["{}", "{\"generator\": \"mixfx batch\", \"job\": \"1\", \"hash\": \"0\", \"frames\": 22050, \"state\": \"done\"}"] {
            try Data(planted.utf8).write(to: URL(fileURLWithPath: sidecar))
            let r = try MixFXBinary.run(["batch", m, "--quiet"])
            #expect(r.status == 1 && r.stderr.contains("o.wav") && r.stderr.contains("--force"), "\(r.stderr)")
            #expect(bytes(out) == Data("mine".utf8))
            let c = try MixFXBinary.run(["batch", m, "--check"])
            #expect(c.status == 2, "\(c.stderr)")
        }
        // with the job's own --force it is replaced, and the sidecar then vouches for it
        let forced = try manifest(["{\"tracks\": [\"a.wav\"], \"output\": \"o.wav\", \"args\": [\"--force\", \"--report\", \"r.json\"]}"], "f.jsonl")
        #expect(try MixFXBinary.run(["batch", forced, "--quiet"]).status == 0)
        #expect(try AudioFiles.read(out).format.frameCount == 22_050)
        let again = try MixFXBinary.run(["batch", forced, "--json"])
        #expect(again.status == 0 && again.stdout.contains("\"skipped\" : 1"), "\(again.stdout)")
        // a deleted report is rendered again; a replaced output is no longer the sidecar's
        try FileManager.default.removeItem(atPath: dir.file("r.json"))
        let redo = try MixFXBinary.run(["batch", forced, "--json"])
        #expect(redo.status == 0 && redo.stdout.contains("\"done\" : 1") && names().contains("r.json"), "\(redo.stdout)")
        let plain = try manifest(["{\"tracks\": [\"a.wav\"], \"output\": \"o.wav\", \"args\": [\"--bass\", \"3\"]}"], "p.jsonl")
        try FileManager.default.removeItem(atPath: out)
        try Data("someone else's".utf8).write(to: URL(fileURLWithPath: out))
        let r = try MixFXBinary.run(["batch", plain, "--quiet"])
        #expect(r.status == 1 && r.stderr.contains("exists"), "\(r.stderr)")
        #expect(bytes(out) == Data("someone else's".utf8))
        // a report over an unrelated file
        try Data("notes".utf8).write(to: URL(fileURLWithPath: dir.file("notes.json")))
        let rep = try manifest(["{\"tracks\": [\"a.wav\"], \"output\": \"n.wav\", \"args\": [\"--report\", \"notes.json\"]}"], "n.jsonl")
        let rr = try MixFXBinary.run(["batch", rep, "--quiet"])
        #expect(rr.status == 1 && rr.stderr.contains("notes.json"), "\(rr.stderr)")
        #expect(bytes(dir.file("notes.json")) == Data("notes".utf8) && !names().contains("n.wav"))
    }

    /// The summary is checked before anything renders: not the manifest, not a job's file, not
    /// in a missing folder; and `--check` finds an output folder that is missing or read-only.
    @Test func everythingIsCheckedBeforeRendering() throws {
        defer { dir.remove() }
        _ = try tone("a.wav")
        let m = try manifest(["{\"tracks\": [\"a.wav\"], \"output\": \"o.wav\"}"])
        for (summary, expected) in [("m.jsonl", "manifest"), ("o.wav.mixfx-batch.json", "sidecar"), ("nope/s.json", "does not exist")] {
            let r = try MixFXBinary.run(["batch", m, "--summary", summary], cwd: dir.path)
            #expect(r.status == 2 && r.stderr.contains(expected), "\(summary): \(r.stderr)")
            #expect(!names().contains("o.wav"))
        }
        let render = try MixFXBinary.run(["render", "a.wav", "-o", "o.wav", "--report", "nope/r.json"], cwd: dir.path)
        #expect(render.status == 2 && render.stderr.contains("does not exist") && !names().contains("o.wav"), "\(render.stderr)")
        let missing = try manifest(["{\"tracks\": [\"a.wav\"], \"output\": \"nodir/o.wav\"}"], "missing.jsonl")
        let c = try MixFXBinary.run(["batch", missing, "--check"])
        #expect(c.status == 2 && c.stderr.contains("nodir") && c.stderr.contains("does not exist"), "\(c.stderr)")
        if geteuid() != 0 {   // (root writes anywhere)
            try FileManager.default.createDirectory(atPath: dir.file("ro"), withIntermediateDirectories: true)
            chmod(dir.file("ro"), 0o555)
            defer { chmod(dir.file("ro"), 0o755) }
            let ro = try manifest(["{\"tracks\": [\"a.wav\"], \"output\": \"ro/o.wav\"}"], "ro.jsonl")
            let r = try MixFXBinary.run(["batch", ro, "--check"])
            #expect(r.status == 2 && r.stderr.contains("cannot be created"), "\(r.stderr)")
        }
    }

    /// Manifests as editors write them: CRLF line ends; `--report=` and `--preset=` in "args"
    /// from the manifest's folder; an inline preset's unknown key warned about.
    @Test func manifestDetails() throws {
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.file("jobs"), withIntermediateDirectories: true)
        _ = try tone("jobs/a.wav")
        let m = dir.file("jobs/m.jsonl")
        try Data(("{\"tracks\": [\"a.wav\"], \"output\": \"o1.wav\", \"args\": [\"--report=r1.json\"]}\r\n"
                  + "{\"tracks\": [\"a.wav\"], \"output\": \"o2.wav\", \"preset\": {\"schemaVersion\": 1, \"bogus\": 1}}\r\n").utf8)
            .write(to: URL(fileURLWithPath: m))
        let r = try MixFXBinary.run(["batch", m, "--quiet"], cwd: dir.path)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("bogus") && r.stderr.contains("line 2"), "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: dir.file("jobs/r1.json")) && !names().contains("r1.json"))
    }

    // MARK: names are bytes

    /// A name that is not UTF-8 is found as an input and written under exactly its bytes; the
    /// file whose name is the replacement character's spelling is not touched.
    @Test func namesAreBytes() throws {
        defer { dir.remove() }
        _ = try tone("a.wav")
        let r = try shell(#"cp a.wav "$(printf 'in\377.wav')" && printf keep > "out$(printf '\357\277\275').wav" && exec "$0" render "$(printf 'in\377.wav')" -o "$(printf 'out\376.wav')" --quiet"#)
        #expect(r.status == 0, "\(r.stderr)")
        let exact = try runProcess("/bin/sh", ["-c", #"test -f "$(printf 'out\376.wav')" && ls | wc -l"#], cwd: dir.path)
        #expect(exact.status == 0 && exact.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "4", "\(exact.stdout)")
        #expect(bytes(dir.file("out\u{FFFD}.wav")) == Data("keep".utf8))
        let forced = try shell(#"exec "$0" render a.wav -o "$(printf 'out\376.wav')" --bass 3 --force --quiet"#)
        #expect(forced.status == 0 && bytes(dir.file("out\u{FFFD}.wav")) == Data("keep".utf8), "\(forced.stderr)")
        // an error names the bytes it could not use, escaped
        let e = try shell(#"exec "$0" render "$(printf 'gone\377.wav')""#)
        #expect(e.status == 1 && e.stderr.contains("gone\\xff.wav"), "\(e.stderr)")
        #expect(PathBytes.bytes(PathBytes.string([0x61, 0xFF, 0xEF, 0x9E, 0x80, 0xC3, 0xA9])) == [0x61, 0xFF, 0xEF, 0x9E, 0x80, 0xC3, 0xA9])
    }

    /// Round trip of every byte string the mapping could confuse: lone bytes, truncated and
    /// overlong sequences, surrogates, and the private-use characters it uses itself.
    @Test func thePathMappingIsOneToOne() {
        var g = SeededGenerator(seed: 7)
        let interesting: [UInt8] = [0x41, 0x80, 0xBF, 0xC0, 0xC1, 0xC3, 0xA9, 0xE0, 0xED, 0xA0, 0xEF, 0x9E, 0x9F, 0xF0, 0xF4, 0x90, 0xFF, 0x2F, 0x00 + 0x20]
        for _ in 0..<20_000 {
            let b = (0..<Int.random(in: 1...8, using: &g)).map { _ in interesting.randomElement(using: &g)! }
            #expect(PathBytes.bytes(PathBytes.string(b)) == b, "\(b)")
        }
        #expect(PathBytes.string(Array("été.wav".utf8)) == "été.wav")
    }

    /// A name with a newline and a terminal escape is shown escaped: one error, one line.
    @Test func messagesAreOneLineWhateverTheNames() throws {
        defer { dir.remove() }
        let r = try shell(#"exec "$0" render "$(printf 'x\n\033[31mred.wav')""#)
        #expect(r.status == 1)
        #expect(r.stderr.split(separator: "\n").count == 1 && !r.stderr.contains("\u{1B}") && r.stderr.contains("x\\n\\x1b[31mred.wav"), "\(r.stderr)")
    }

    // MARK: the standard streams

    /// A lost stdout is a failure, said on stderr; a closed stderr or stdout is no trap.
    @Test func theStandardStreamsNeverTrap() throws {
        defer { dir.remove() }
        _ = try tone("a.wav")
        let full = try shell(#"exec "$0" render a.wav -o j.wav --json > /dev/full"#)
        #expect(full.status == 1 && full.stderr.contains("standard output"), "\(full.stderr)")
        let closedErr = try shell(#"exec "$0" render missing.wav 2>&-"#)
        #expect(closedErr.status == 1)
        let fullErr = try shell(#"exec "$0" render missing.wav 2>/dev/full"#)
        #expect(fullErr.status == 1)
        let closedOut = try shell(#"exec "$0" render a.wav -o k.wav --json >&-"#)
        #expect(closedOut.status == 1, "\(closedOut.stderr)")
    }

    // MARK: reading

    /// A file cut short while mixfx reads it (after its length was read from the header) is an
    /// error naming it, not silence at the end.
    @Test func anInputCutWhileReadIsAnError() throws {
        defer { dir.remove() }
        let input = try tone("a.wav", seconds: 2)
        let reader = try SoundFileReader(path: input)
        #expect(reader.format.frameCount == 88_200)
        let h = FileHandle(forWritingAtPath: input)!
        try h.truncate(atOffset: 44 + 4 * 30_000)
        try h.close()
        let buffer = AudioBuffer(channelCount: 2, capacityFrames: 4096)
        var read = 0
        let error = #expect(throws: SoundFileError.self) {
            while true {
                let n = try reader.read(into: buffer, offset: 0, frameCount: 4096)
                if n == 0 { break }
                read += n
            }
        }
        #expect(read <= 30_000)
        #expect("\(error!)".contains("a.wav") && "\(error!)".contains("ended at frame 30000"), "\(String(describing: error))")
    }

    /// A link loop is said to be one; a preset with a byte-order mark reads; a preset that is a
    /// link to nothing is not listed as available, and naming it says what it is.
    @Test func inputsProblemsAreNamed() throws {
        defer { dir.remove() }
        symlink(dir.file("l1"), dir.file("l2")); symlink(dir.file("l2"), dir.file("l1"))
        let loop = try MixFXBinary.run(["render", dir.file("l1")])
        #expect(loop.status == 1 && loop.stderr.contains("loop"), "\(loop.stderr)")
        _ = try tone("a.wav")
        try Data([0xEF, 0xBB, 0xBF] + Array("{\"schemaVersion\": 1}".utf8)).write(to: URL(fileURLWithPath: dir.file("bom.json")))
        let bom = try MixFXBinary.run(["render", "a.wav", "--preset", "bom.json", "-o", "o.wav", "--quiet"], cwd: dir.path)
        #expect(bom.status == 0, "\(bom.stderr)")
        try FileManager.default.createDirectory(atPath: dir.file("presets"), withIntermediateDirectories: true)
        symlink(dir.file("nowhere.json"), dir.file("presets/ghost.json"))
        var env = ProcessInfo.processInfo.environment
        env["MIXFX_PRESET_PATH"] = dir.file("presets")
        let list = try MixFXBinary.run(["presets"], environment: env)
        #expect(list.status == 0 && !list.stdout.contains("ghost"), "\(list.stdout)")
        let ghost = try MixFXBinary.run(["render", "a.wav", "--preset", "ghost", "-o", "g.wav"], cwd: dir.path, environment: env)
        #expect(ghost.status != 0 && ghost.stderr.contains("does not exist") && !ghost.stderr.contains("available: ghost"), "\(ghost.stderr)")
        let fifo = dir.file("f.json")
        mkfifo(fifo, 0o644)
        let t0 = Date()
        let f = try MixFXBinary.run(["render", "a.wav", "--preset", fifo, "-o", "h.wav"], cwd: dir.path)
        #expect(f.status != 0 && f.stderr.contains("FIFO") && Date().timeIntervalSince(t0) < 10, "\(f.stderr)")
        let fm = try MixFXBinary.run(["batch", fifo])
        #expect(fm.status == 2 && fm.stderr.contains("FIFO"), "\(fm.stderr)")
    }

    // MARK: Ogg

    /// The same render into an Ogg file is the same bytes (the stream serial comes from the
    /// session), and the rewritten pages are valid (their CRCs check: the file decodes whole).
    @Test func oggOutputIsDeterministic() throws {
        defer { dir.remove() }
        _ = try tone("a.wav", seconds: 3)
        // (the identity includes the output's name: both render to the same name)
        let a = try MixFXBinary.run(["render", "a.wav", "--pitch", "100", "-o", "x.ogg", "--quiet"], cwd: dir.path)
        let first = bytes(dir.file("x.ogg"))
        let b = try MixFXBinary.run(["render", "a.wav", "--pitch", "100", "-o", "x.ogg", "--quiet", "--force"], cwd: dir.path)
        #expect(a.status == 0 && b.status == 0)
        #expect(first == bytes(dir.file("x.ogg")))
        let bytesOfPage = [UInt8](first!)
        #expect(OggStreamSerial.checksum(bytesOfPage[0..<22] + [0, 0, 0, 0] + bytesOfPage[26..<(27 + Int(bytesOfPage[26]) + bytesOfPage[27..<(27 + Int(bytesOfPage[26]))].reduce(0) { $0 + Int($1) })])
                == UInt32(bytesOfPage[22]) | UInt32(bytesOfPage[23]) << 8 | UInt32(bytesOfPage[24]) << 16 | UInt32(bytesOfPage[25]) << 24)
        #expect(try AudioFiles.read(dir.file("x.ogg")).format.frameCount == 3 * 44_100)
        if which("sox") != nil {
            let s = try runProcess(which("sox")!, [dir.file("x.ogg"), "-n", "stat"])
            #expect(s.status == 0 && !s.stderr.lowercased().contains("crc"), "\(s.stderr)")
        }
        // the same from another folder, with absolute paths, through a linked folder, and as a
        // batch's job (the serial came from the paths as typed)
        try FileManager.default.createDirectory(atPath: dir.file("sub"), withIntermediateDirectories: true)
        symlink(dir.path, dir.file("sub/up"))
        let elsewhere = try MixFXBinary.run(["render", dir.file("a.wav"), "--pitch", "100", "-o", dir.file("sub/x.ogg"), "--quiet"], cwd: "/")
        #expect(elsewhere.status == 0 && bytes(dir.file("sub/x.ogg")) == first, "\(elsewhere.stderr)")
        try FileManager.default.createDirectory(atPath: dir.file("y"), withIntermediateDirectories: true)
        let viaLink = try MixFXBinary.run(["render", "up/a.wav", "--pitch", "100", "-o", "up/y/x.ogg", "--quiet"], cwd: dir.file("sub"))
        #expect(viaLink.status == 0 && bytes(dir.file("y/x.ogg")) == first, "\(viaLink.stderr)")
        try Data(#"{"tracks": ["a.wav"], "output": "z/x.ogg", "args": ["--pitch", "100"]}"#.utf8).write(to: URL(fileURLWithPath: dir.file("m.jsonl")))
        try FileManager.default.createDirectory(atPath: dir.file("z"), withIntermediateDirectories: true)
        let batch = try MixFXBinary.run(["batch", dir.file("m.jsonl"), "--quiet"])
        #expect(batch.status == 0 && bytes(dir.file("z/x.ogg")) == first, "\(batch.stderr)")
        // another song of the same layout (the same names, another take) has another serial, so
        // the two files can be chained
        try FileManager.default.createDirectory(atPath: dir.file("s2"), withIntermediateDirectories: true)
        _ = try tone("s2/a.wav", seconds: 2, hz: 550)
        #expect(try MixFXBinary.run(["render", "a.wav", "--pitch", "100", "-o", "x.ogg", "--quiet"], cwd: dir.file("s2")).status == 0)
        let serial = { (d: Data?) in d.map { Array($0[14..<18]) } }
        #expect(serial(bytes(dir.file("s2/x.ogg"))) != nil && serial(bytes(dir.file("s2/x.ogg"))) != serial(first))
    }
    // MARK: what may be replaced, and when

    /// A file that may be replaced only as itself (a batch's own earlier output) is kept when
    /// another file is at the name, at the start or by the commit; a chain of dangling links
    /// names the file at its end.
    @Test func onlyTheVouchedForFileIsReplaced() throws {
        defer { dir.remove() }
        let path = dir.file("o.wav")
        try Data("ours".utf8).write(to: URL(fileURLWithPath: path))
        let ours = FileIdentity(path: path)
        let out = try OutputFile(path: path, inputs: FileIdentitySet(), overwrite: true, onlyReplacing: ours)
        let tmp = try out.createTemporary()
        #expect(write(tmp.descriptor, "new", 3) == 3)
        // the user puts their own file there while mixfx writes
        try Data("theirs".utf8).write(to: URL(fileURLWithPath: dir.file("x")))
        #expect(rename(dir.file("x"), path) == 0)
        #expect(throws: OutputFileError.appeared(path: path)) { try out.commit(tmp) }
        #expect(bytes(path) == Data("theirs".utf8))
        #expect(throws: OutputFileError.exists(path: path)) { _ = try OutputFile(path: path, inputs: FileIdentitySet(), overwrite: true, onlyReplacing: ours) }
        // the vouched-for file itself is replaced
        let now = FileIdentity(path: path)
        let again = try OutputFile(path: path, inputs: FileIdentitySet(), overwrite: true, onlyReplacing: now)
        let t2 = try again.createTemporary()
        #expect(write(t2.descriptor, "new", 3) == 3)
        try again.commit(t2)
        #expect(bytes(path) == Data("new".utf8))
        #expect(names() == ["o.wav"])
        symlink("l2", dir.file("l1")); symlink("end.wav", dir.file("l2"))
        #expect(FileIdentity(path: dir.file("l1")) == FileIdentity(path: dir.file("end.wav")))
    }

    /// The preset a session reads is an input for `play`'s save and for `eq-curve`; a device
    /// never writes over an existing file without --force; `--check --force` still checks the
    /// sidecar's name; a stray word in "args" or a NUL in a path is refused.
    @Test func moreFilesReadAndWritten() throws {
        defer { dir.remove() }
        _ = try tone("a.wav")
        let preset = dir.file("p.json")
        try Data("{\"schemaVersion\": 1, \"tracks\": [{\"eq\": {\"bass\": {\"gainDB\": 3}}}]}".utf8).write(to: URL(fileURLWithPath: preset))
        let before = bytes(preset)
        try FileManager.default.copyItem(atPath: preset, toPath: dir.file("p.svg"))
        let eq = try MixFXBinary.run(["eq-curve", "--preset", "./p.svg", "-o", "p.svg", "--force"], cwd: dir.path)
        #expect(bytes(dir.file("p.svg")) == before)
        #expect(eq.status != 0 && eq.stderr.contains("inputs"), "\(eq.stderr)")
        let save = try shell(#"(sleep 1; echo "save p.json --force"; sleep 0.5; echo quit) | "$0" play a.wav --preset ./p.json --device null --no-ui --loop"#)
        #expect(save.stdout.contains("inputs") || save.stderr.contains("inputs"), "\(save.stdout) \(save.stderr)")
        #expect(bytes(preset) == before)
        try Data("precious".utf8).write(to: URL(fileURLWithPath: dir.file("keep.txt")))
        let dev = try MixFXBinary.run(["play", "a.wav", "--device", "file:keep.txt,raw", "--no-ui"], cwd: dir.path)
        #expect(dev.status == 2 && dev.stderr.contains("--force"), "\(dev.stderr)")
        #expect(bytes(dir.file("keep.txt")) == Data("precious".utf8))
        try FileManager.default.createDirectory(atPath: dir.file("o.wav.mixfx-batch.json"), withIntermediateDirectories: true)
        let m = try manifest(["{\"tracks\": [\"a.wav\"], \"output\": \"o.wav\"}"])
        let check = try MixFXBinary.run(["batch", m, "--check", "--force"])
        #expect(check.status == 2 && check.stderr.contains("sidecar") && check.stderr.contains("directory"), "\(check.stderr)")
        let stray = try manifest(["{\"tracks\": [\"a.wav\"], \"output\": \"s.wav\", \"args\": [\"--force\", \"a.wav\"]}"], "s.jsonl")
        let r = try MixFXBinary.run(["batch", stray])
        #expect(r.status == 2 && r.stderr.contains("tracks go in"), "\(r.stderr)")
        let nul = try manifest(["{\"tracks\": [\"a.wav\"], \"output\": \"n.wav\\u0000.flac\"}"], "n.jsonl")
        let n = try MixFXBinary.run(["batch", nul])
        #expect(n.status == 2 && n.stderr.contains("NUL"), "\(n.stderr)")
        #expect(!names().contains { $0.hasPrefix("s.wav") || $0.hasPrefix("n.wav") })
    }

    /// What is printed on stdout quotes names escaped too: a summary cannot drive the terminal.
    @Test func stdoutShowsNamesEscaped() throws {
        defer { dir.remove() }
        _ = try tone("a.wav")
        let r = try shell(#"exec "$0" render a.wav -o "$(printf 'o\033[31m\nz.wav')""#)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!r.stdout.contains("\u{1B}") && r.stdout.contains("o\\x1b[31m\\nz.wav"), "\(r.stdout)")
    }
}
