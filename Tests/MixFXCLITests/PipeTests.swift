import Foundation
import Testing
import MixFX
import TestSupport

/// Issue #34's pipes and lossy outputs: `mixfx render -` reads a sound file from stdin (even a
/// pipe, even a WAV of unknown length), `-o - --type T` writes the finished file to stdout, and
/// MP3 and Opus are written through libsndfile.
@Suite struct PipeTests {
    let dir = TempDir("mixfx-pipes")

    /// A 3 s stereo 440 Hz tone as 16-bit WAV and as FLAC (written by mixfx itself).
    func inputs() throws -> (wav: String, flac: String) {
        let wav = dir.file("in.wav"), flac = dir.file("in.flac")
        let tone = Signals.sine(frequencyHz: 440, sampleRate: 44_100, frames: 132_300, amplitude: 0.4)
        try AudioFiles.write([tone, tone.map { $0 * 0.5 }], to: wav, sampleRate: 44_100, sampleFormat: .s16)
        let r = try MixFXBinary.run(["render", wav, "-o", flac, "--quiet"])
        try #require(r.status == 0, "\(r.stderr)")
        return (wav, flac)
    }

    /// Runs `script` in sh with `$M` the built mixfx, in the test's folder.
    func shell(_ script: String) throws -> MixFXBinary.Result {
        try runProcess("/bin/sh", ["-c", script], cwd: dir.path,
                       environment: ProcessInfo.processInfo.environment.merging(["M": MixFXBinary.path]) { $1 })
    }

    func bytes(_ name: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: dir.file(name))) }

    @Test func aPipeInAndOutIsTheSameFileAsTheFileToFileRender() throws {
        defer { dir.remove() }
        _ = try inputs()
        let file = try MixFXBinary.run(["render", dir.file("in.flac"), "--pitch", "200", "--bass", "3", "-o", dir.file("ref.flac"), "--quiet"])
        try #require(file.status == 0, "\(file.stderr)")
        // FLAC through a pipe (cat: no seeking), out as FLAC to a pipe
        let piped = try shell("cat in.flac | \"$M\" render - --pitch 200 --bass 3 -o - --type flac | cat > piped.flac")
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(try bytes("piped.flac") == bytes("ref.flac"))
        // the summary is on stderr, the audio alone on stdout
        #expect(piped.stderr.contains("wrote    standard output  (flac"))
        // a regular file redirected into stdin, WAV to stdout (its header with the exact length)
        let redirected = try shell("\"$M\" render - --pitch 200 --bass 3 -o - --type wav --quiet < in.flac > out.wav")
        #expect(redirected.status == 0, "\(redirected.stderr)")
        let (channels, format) = try AudioFiles.read(dir.file("out.wav"))
        #expect(format.frameCount == 132_300 && channels[0].count == 132_300)
        let (reference, _) = try AudioFiles.read(dir.file("ref.flac"))
        #expect(channels == reference)
        // analyze reads stdin too
        let analyzed = try shell("cat in.wav | \"$M\" analyze - --json")
        #expect(analyzed.status == 0, "\(analyzed.stderr)")
        let files = (try JSONSerialization.jsonObject(with: Data(analyzed.stdout.utf8)) as? [String: Any])?["files"] as? [[String: Any]]
        let peak = try #require(files?.first?["samplePeakDBFS"] as? Double)
        let (original, _) = try AudioFiles.read(dir.file("in.wav"))
        #expect(abs(peak - Signals.db(Double(original[0].map(abs).max()!))) < 1e-9 && files?.first?["frames"] as? Int == 132_300)
    }

    @Test(.enabled(if: which("sox") != nil, "sox is not installed (apt-get install sox)"))
    func aWAVOfUnknownLengthFromSoXIsReadToItsEnd() throws {
        let sox = which("sox")!
        defer { dir.remove() }
        _ = try inputs()
        // sox writes a WAV whose sizes say 2 GiB when it cannot seek back (raw input from a pipe)
        let r = try shell("cat in.wav | \(sox) -t wav - -t raw - | \(sox) -t raw -r 44100 -e signed -b 16 -c 2 - -t wav - 2>/dev/null | tee stream.wav | \"$M\" render - -o - --type wav --quiet > out.wav")
        #expect(r.status == 0, "\(r.stderr)")
        let header = try bytes("stream.wav")
        #expect(header[40..<44] == Data([0x00, 0xF0, 0xFF, 0x7F]), "sox no longer writes an unknown length: the test checks nothing")
        let direct = try MixFXBinary.run(["render", dir.file("in.wav"), "-o", dir.file("direct.wav"), "--quiet"])
        try #require(direct.status == 0)
        #expect(try bytes("out.wav") == bytes("direct.wav"))
    }

    /// A short pipe goes through a temporary folder already under the 64 MiB reserve (a 50 MiB
    /// tmpfs): the reserve is at most half of what is free. (It was refused, "kept 0 MiB of it
    /// ... and it goes on", though the stream had ended.) A full one is named when the output
    /// for standard output does not fit it.
    @Test(.enabled(if: ClipPolicyTests.canMountPrivately, "cannot mount a tmpfs in a private mount namespace here (needs root with CAP_SYS_ADMIN)"))
    func aShortPipeGoesThroughANearlyFullTemporaryFolder() throws {
        defer { dir.remove() }
        _ = try inputs()
        try FileManager.default.createDirectory(atPath: dir.file("tmpd"), withIntermediateDirectories: true)
        let script = #"mount -t tmpfs -o size=50m none "$1/tmpd" && cd "$1" && cat in.wav | TMPDIR="$1/tmpd" "$2" render - -o p.wav --quiet"#
        let r = try runProcess(which("unshare")!, ["--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh", dir.path, MixFXBinary.path])
        #expect(r.status == 0 && FileManager.default.fileExists(atPath: dir.file("p.wav")), "\(r.status) \(r.stderr)")
        // an output for standard output that does not fit the temporary folder: the error names
        // that folder, not '-'
        let long = Signals.sine(frequencyHz: 440, sampleRate: 48_000, frames: 48_000 * 8, amplitude: 0.4)
        try AudioFiles.write([long, long], to: dir.file("long.wav"), sampleRate: 48_000, sampleFormat: .s16)
        let full = #"mount -t tmpfs -o size=1m none "$1/tmpd" && cd "$1" && TMPDIR="$1/tmpd" "$2" render long.wav -o - --type wav --pitch 100 > out.wav"#
        let f = try runProcess(which("unshare")!, ["--mount", "--propagation", "private", "/bin/sh", "-c", full, "sh", dir.path, MixFXBinary.path])
        #expect(f.status == 1 && f.stderr.contains("'\(dir.file("tmpd"))' (TMPDIR") && !f.stderr.contains("'-'"), "\(f.status) \(f.stderr)")
    }

    @Test func misuseIsRefusedAndNothingReachesStdout() throws {
        defer { dir.remove() }
        _ = try inputs()
        let before = try bytes("in.wav")
        for (script, status, words) in [
            ("\"$M\" render in.wav -o - > o", 2, "give --type"),
            ("\"$M\" render in.wav -o x.flac --type wav", 2, "give one container"),
            ("\"$M\" render in.wav -o - --type mpeg > o", 2, "not a container mixfx writes"),
            ("cat in.wav | \"$M\" render - - -o x.wav", 2, "more than once"),
            ("\"$M\" render in.wav -o - --type wav >> in.wav", 2, "standard output is redirected into"),
            ("\"$M\" render - -o in.wav --force < in.wav", 2, "'in.wav' is one of the inputs"),
            // standard input's file is an input for every file written (a report, a manifest's job)
            ("cp in.wav take.json; \"$M\" render - -o o.wav --report take.json --force < take.json; s=$?; cmp -s in.wav take.json || s=99; exit $s", 2, "'take.json' is one of the inputs"),
            ("printf '{\"tracks\": [\"in.wav\"], \"output\": \"jobs.wav\"}\\n' > jobs.wav; \"$M\" batch - --force < jobs.wav; s=$?; grep -q tracks jobs.wav || s=99; exit $s", 2, "is the manifest (standard input's file)"),
            // text printed to standard output never lands in an input
            ("\"$M\" render in.wav --dry-run --json 1<> in.wav", 2, "standard output is redirected into"),
            ("\"$M\" render in.wav --dry-run 1<> in.wav", 2, "standard output is redirected into"),
            ("\"$M\" render in.wav --print-preset >> in.wav", 2, "standard output is redirected into"),
            ("\"$M\" analyze in.wav --json 1<> in.wav", 2, "standard output is redirected into 'in.wav'"),
            ("\"$M\" render in.wav -o o.wav --json >> in.wav", 2, "standard output is redirected into 'in.wav'"),
            ("\"$M\" analyze o --json < in.wav >> in.wav", 2, "standard output is redirected into standard input's file"),
            // a track's map file (`N:FILE`) is read too
            ("printf '0 2\\n' > pm.txt; cp pm.txt pm0.txt; \"$M\" render in.wav --pitchmap 1:pm.txt -o p.wav --json >> pm.txt; s=$?; cmp -s pm.txt pm0.txt || s=99; exit $s", 2, "standard output is redirected into 'pm.txt'"),
            ("printf '0 0\\n' > tm.txt; cp tm.txt tm0.txt; \"$M\" render in.wav --timemap=1:tm.txt -o p.wav --json >> tm.txt; s=$?; cmp -s tm.txt tm0.txt || s=99; exit $s", 2, "standard output is redirected into 'tm.txt'"),
            // a preset found by name (not a path) is read too: nothing is printed into it
            ("mkdir -p pr; \"$M\" render in.wav --bass 3 --print-preset > pr/mine.json; cp pr/mine.json keep.json; MIXFX_PRESET_PATH=$PWD/pr \"$M\" render in.wav --preset mine -o p.wav --json >> pr/mine.json; s=$?; cmp -s keep.json pr/mine.json || s=99; exit $s", 2, "standard output is redirected into"),
            ("mkdir -p pr; \"$M\" render in.wav --bass 3 --print-preset > pr/mine.json; cp pr/mine.json keep.json; MIXFX_PRESET_PATH=$PWD/pr \"$M\" preset show mine >> pr/mine.json; s=$?; cmp -s keep.json pr/mine.json || s=99; exit $s", 2, "standard output is redirected into"),
            ("mkdir -p pr; \"$M\" render in.wav --bass 3 --print-preset > pr/mine.json; cp pr/mine.json keep.json; MIXFX_PRESET_PATH=$PWD/pr \"$M\" presets >> pr/mine.json; s=$?; cmp -s keep.json pr/mine.json || s=99; exit $s", 2, "a preset this command reads"),
            // a batch's summary into a job's track (named in the manifest, not the command line)
            ("printf '{\"tracks\": [\"in.wav\"], \"output\": \"b.wav\"}\\n' > m.jsonl; \"$M\" batch m.jsonl --json >> in.wav", 2, "in.wav', a file the batch reads"),
            // (a bad line's error too, and stderr: nothing is written into the track)
            ("cp in.wav in0.wav; printf '{\"tracks\": [\"in.wav\"], \"output\": \"b.wav\"}\\n{\"bad\": 1}\\n' > m.jsonl; \"$M\" batch m.jsonl --json >> in.wav; s=$?; cmp -s in.wav in0.wav || s=99; exit $s", 2, "a file the batch reads"),
            ("cp in.wav in0.wav; printf '{\"tracks\": [\"in.wav\"], \"output\": \"b.wav\"}\\n{\"bad\": 1}\\n' > m.jsonl; \"$M\" batch m.jsonl 2>> in.wav; s=$?; cmp -s in.wav in0.wav || s=99; echo stderr-was-a-track >&2; exit $s", 2, "stderr-was-a-track"),
            // nor into a file a job writes (its finished output: the next run found it changed)
            ("printf '{\"tracks\": [\"in.wav\"], \"output\": \"b.wav\"}\\n' > m.jsonl; \"$M\" batch m.jsonl -q; cp b.wav b0.wav; \"$M\" batch m.jsonl --json >> b.wav; s=$?; cmp -s b.wav b0.wav || s=99; exit $s", 2, "standard output is redirected into line 1's output"),
            ("printf '{\"tracks\": [\"in.wav\"], \"output\": \"b.wav\"}\\n' > m.jsonl; \"$M\" batch m.jsonl -q; cp b.wav b0.wav; \"$M\" batch m.jsonl 2>> b.wav; s=$?; cmp -s b.wav b0.wav || s=99; echo stderr-was-a-job-output >&2; exit $s", 2, "stderr-was-a-job-output"),
            // play's device never writes standard input's file (the control lines), --force or not
            ("printf 'status\\n' > cmds.txt; cp cmds.txt cmds0.txt; \"$M\" play in.wav --no-ui -q --device \"file:'cmds.txt',raw\" --force < cmds.txt; s=$?; cmp -s cmds.txt cmds0.txt || s=99; exit $s", 2, "cmds.txt"),
            // (stderr into an input: nothing to say it with, exit 2 and the input untouched)
            ("\"$M\" render in.wav -o in.wav --force 2>> in.wav; s=$?; echo stderr-was-an-input >&2; exit $s", 2, "stderr-was-an-input"),
            ("printf 'not audio' | \"$M\" render - -o - --type wav > o", 1, "cannot open '-'"),
            ("\"$M\" play - < in.wav", 2, "cannot be a track"),
            // a render that fails writes nothing to stdout
            ("\"$M\" render in.wav --volume 4 --strict -o - --type wav > o", 1, "clip"),
            // the report where standard output goes: refused before rendering
            ("\"$M\" render in.wav -o - --type wav --report o.json --force -q > o.json", 2, "standard output is redirected into"),
            // closed descriptors are not reused for mixfx's own files
            ("\"$M\" render in.wav -o - --type wav >&-", 1, "standard output is closed"),
            ("\"$M\" render - -o o.wav <&-", 1, "standard input is closed"),
            ("\"$M\" batch - <&-", 2, "standard input is closed"),
            ("mkdir -p d; \"$M\" batch - < d", 2, "standard input is a directory"),
            ("\"$M\" render in.wav -o - --type .mp3 > o", 2, "not a container mixfx writes"),
            // a path that cannot name a file is the command line's mistake: exit 2, as documented
            ("\"$M\" render in.wav -o o/", 2, "so it names a folder"),
            ("\"$M\" render in.wav -o $(printf 'x%.0s' $(seq 256)).wav", 2, "a name holds at most 255"),
            ("ln -s l2 l1; ln -s l1 l2; \"$M\" render in.wav -o l1", 2, "form a loop"),
            // with --json the error's JSON goes to stderr too
            ("\"$M\" render in.wav --volume 4 --strict --json -o - --type wav > o", 1, "{\n  \"error\""),
        ] {
            try? FileManager.default.removeItem(atPath: dir.file("o"))
            let r = try shell(script)
            #expect(r.status == Int32(status), "\(script): \(r.status) \(r.stderr)")
            #expect(r.stderr.contains(words), "\(script): \(r.stderr)")
            if let size = (try? FileManager.default.attributesOfItem(atPath: dir.file("o")))?[.size] as? Int {
                #expect(size == 0, "\(script) wrote \(size) bytes to stdout")
            }
        }
        #expect(try bytes("in.wav") == before)
        #expect(!FileManager.default.fileExists(atPath: dir.file("x.wav")) && !FileManager.default.fileExists(atPath: dir.file("x.flac")))
    }

    /// With stderr closed, a warning must not land in the kept standard input (or any file):
    /// the render is the same as with stderr open.
    @Test func aClosedStderrChangesNothing() throws {
        defer { dir.remove() }
        _ = try inputs()
        for (name, redirect) in [("open.wav", "2>/dev/null"), ("closed.wav", "2>&-")] {
            // (--dither tpdf on float output warns)
            let r = try shell("cat in.wav | \"$M\" render - -o \(name) --sample-format f32 --dither tpdf -q \(redirect)")
            #expect(r.status == 0)
        }
        #expect(try bytes("closed.wav") == bytes("open.wav"))
    }

    /// Lossy output follows the clipping rules of integer output: by default a mix beyond full
    /// scale gets one gain to −1 dBTP, --strict refuses it.
    @Test func lossyOutputGetsTheNoClipGain() throws {
        defer { dir.remove() }
        let (wav, _) = try inputs()
        let r = try MixFXBinary.run(["render", wav, wav, wav, "-o", dir.file("hot.mp3"), "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let gain = try #require(summary["appliedGainDB"] as? Double)
        // three 0.4 tones: the mix peaks at 1.2, brought to −1 dBTP
        #expect(abs(gain - (-1 - Signals.db(1.2))) < 0.05, "\(gain)")
        let strict = try MixFXBinary.run(["render", wav, wav, wav, "-o", dir.file("strict.mp3"), "--strict"])
        #expect(strict.status == 1 && !FileManager.default.fileExists(atPath: dir.file("strict.mp3")), "\(strict.stderr)")
    }

    @Test(.enabled(if: which("python3") != nil, "python3 is not installed (it gives the test a terminal)"))
    func audioToATerminalIsRefused() throws {
        defer { dir.remove() }
        _ = try inputs()
        // stdout a pseudo-terminal: python's pty runs mixfx with it as its terminal
        let script = "import os, pty, sys; sys.exit(os.waitstatus_to_exitcode(pty.spawn([os.environ['M'], 'render', 'in.wav', '-o', '-', '--type', 'wav'])))"
        let r = try shell("python3 -c \"\(script)\" > tty.txt")
        #expect(r.status == 1, "\(r.status) \(r.stderr)")
        let shown = String(decoding: try bytes("tty.txt"), as: UTF8.self)
        #expect(shown.contains("standard output is a terminal"), "\(shown)")
        #expect(!shown.contains("RIFF"))
    }

    @Test func mp3AndOpusAreWrittenAndReadBack() throws {
        defer { dir.remove() }
        let (wav, _) = try inputs()
        for (name, args, rate) in [("out.mp3", [String](), 44_100), ("out.opus", ["--rate", "48000"], 48_000)] {
            let r = try MixFXBinary.run(["render", wav, "--pitch", "200", "-o", dir.file(name), "--quiet"] + args)
            try #require(r.status == 0, "\(name): \(r.stderr)")
            let (channels, format) = try AudioFiles.read(dir.file(name))
            #expect(format.sampleRate == rate && format.channelCount == 2, "\(name): \(format)")
            // libsndfile's decoders give back the frames written (encoder delay and padding removed)
            #expect(format.frameCount == 3 * rate, "\(name): \(format.frameCount) frames")
            let measured = Signals.frequency(channels[0][rate / 2 ..< 5 * rate / 2], sampleRate: Double(rate))
            #expect(abs(Signals.cents(measured, 440 * pow(2, 200.0 / 1200))) < 1, "\(name): \(measured) Hz")
            // the same render into the same file is the same bytes (Opus's Ogg serial is set from
            // the job, as Vorbis's is)
            try FileManager.default.moveItem(atPath: dir.file(name), toPath: dir.file("first-" + name))
            let again = try MixFXBinary.run(["render", wav, "--pitch", "200", "-o", dir.file(name), "--quiet"] + args)
            try #require(again.status == 0)
            #expect(try bytes(name) == bytes("first-" + name), "\(name)")
        }
        // to stdout too
        let piped = try shell("\"$M\" render in.wav --pitch 200 -o - --type mp3 --quiet > piped.mp3")
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(try bytes("piped.mp3") == bytes("first-out.mp3"))
        // what the encoders cannot hold is refused before rendering, naming what they can
        let opus = try MixFXBinary.run(["render", wav, "-o", dir.file("x.opus")])
        #expect(opus.status == 2 && opus.stderr.contains("Opus holds the sample rates 8000, 12000, 16000, 24000, 48000 Hz, not 44100 Hz"), "\(opus.stderr)")
        let mp3 = try MixFXBinary.run(["render", wav, "-o", dir.file("x.mp3"), "--rate", "96000"])
        #expect(mp3.status == 2 && mp3.stderr.contains("MP3 holds the sample rates"), "\(mp3.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("x.mp3")) && !FileManager.default.fileExists(atPath: dir.file("x.opus")))
    }
}
