import Foundation
import Testing
@testable import MixFXCLI
import MixFXIO
import TestSupport

/// `mixfx play --device`: every file an ALSA device string would have the file plugin write, at
/// any nesting, is found the way alsa-lib reads the string, and checked before anything opens
/// (never an input, never an existing file without --force, never through a link, never a name
/// ALSA rewrites or a command); a string that cannot be read with certainty is refused.
@Suite struct DeviceFileTests {
    let dir = TempDir("mixfx-device")

    func files(_ device: String) -> [String]? {
        let w = ALSADeviceString.writes(device)
        return w.unaccounted == nil ? w.files : nil
    }

    /// The grammar of alsa-lib's parse_args: positional and KEY= arguments, both quotes and their
    /// escapes, bare values up to a comma (spaces kept), `{ KEY VALUE }`, values that are devices
    /// in their turn (plug:, tee:'s SLAVE, any definition's argument), `pcm.` names.
    @Test func findsEveryFileAtAnyNesting() {
        #expect(files("default") == [])
        #expect(files("hw:0,0") == [])
        #expect(files("plughw:CARD=PCH,DEV=0") == [])
        #expect(files("dmix:CARD=0,DEV=0") == [])
        #expect(files("file:'a,b.raw',raw") == ["a,b.raw"])
        #expect(files("file:notes") == ["notes"])
        #expect(files("file:in.wav ") == ["in.wav "])
        #expect(files("file:FILE=./IN.wav,FORMAT=raw") == ["./IN.wav"])
        #expect(files("file:FORMAT=raw,0=x.raw") == ["x.raw"])
        #expect(files("pcm.file:notes") == ["notes"])
        #expect(files("plug:'file:in.wav'") == ["in.wav"])
        #expect(files("plug:file:in.wav") == ["in.wav"])
        #expect(files("plug:\"file:'x y.raw',raw\"") == ["x y.raw"])
        #expect(files("tee:default,'copy.raw',raw") == ["copy.raw"])
        #expect(files("tee:\"plug:'file:a.raw'\",b.raw") == ["a.raw", "b.raw"])
        #expect(files("tee:SLAVE='file:a.raw',FILE=b.raw") == ["a.raw", "b.raw"])
        #expect(files(#"file:'\151n.wav'"#) == ["in.wav"])            // octal escape
        #expect(files(#"file:"a\"b.raw""#) == ["a\"b.raw"])
        #expect(files("file:{FILE \"o.raw\" FORMAT raw}") == ["o.raw"])
        #expect(files("plug:{SLAVE=\"file:o.raw\"}") == ["o.raw"])
        #expect(files("file:{ FILE = in.wav ; FORMAT = raw }") == ["in.wav"])
        #expect(files("file:'a%c.wav'") == ["a%c.wav"])
        #expect(files("mydevice:'plug:\"tee:null,deep.raw\"'") == ["deep.raw"])
        #expect(files("rate:SLAVE='file:x.raw'") == ["x.raw"])
        #expect(ALSADeviceString.writes("rec:notes").values == ["notes"])
    }

    /// What cannot be read with certainty is not guessed at: a configuration beyond flat pairs,
    /// arguments alsa-lib's file and tee would not take, a broken string that mentions them, a
    /// nesting deeper than 16; a broken string that writes nothing is left to ALSA.
    @Test func refusesWhatItCannotAccountFor() {
        for device in ["plug:{SLAVE {type file file in.wav}}", "file:{FILE $X}", "file:{FILE {@func getenv vars [X]}}",
                       "file:a.raw,raw,extra", "file:file=a.raw", "file:'in.wav", "file:{FILE x", "plug:'tee:null,\"x.raw'",
                       String(repeating: "plug:", count: 20) + "file:x.raw", #"file:'a\000b'"#] {
            let w = ALSADeviceString.writes(device)
            #expect(w.unaccounted != nil, "\(device): \(w)")
        }
        #expect(ALSADeviceString.writes(String(repeating: "plug:", count: 15) + "file:x.raw").files == ["x.raw"])
        #expect(ALSADeviceString.writes("hw:'0") == ALSADeviceString.Writes())
        #expect(ALSADeviceString.writes("hw:0,") == ALSADeviceString.Writes())
    }

    /// Any name, quoted as alsa-lib reads quotes (a backslash before the quote and before a
    /// backslash), is found again exactly, alone and nested two deep inside plug: and tee:;
    /// arbitrary strings of the grammar's characters never crash the reading.
    @Test func quotedNamesComeBackExactly() {
        var rng = SystemRandomNumberGenerator()
        let alphabet = Array("ab.,=:'\"\\ {}%|$@/\tfiletee")
        func quote(_ s: String, _ q: Character) -> String {
            String(q) + s.map { $0 == q || $0 == "\\" ? "\\\($0)" : String($0) }.joined() + String(q)
        }
        for _ in 0..<2_000 {
            let name = String((0..<Int.random(in: 1...12, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
            let alone = "file:" + quote(name, "'") + ",raw"
            #expect(files(alone) == [name], "\(alone)")
            let nested = "plug:" + quote("tee:" + quote("plug:" + quote(alone, "'"), "\"") + ",other.raw", "'")
            #expect(files(nested) == [name, "other.raw"], "\(nested)")
            let junk = String((0..<Int.random(in: 0...40, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
            _ = ALSADeviceString.writes(junk)
            _ = ALSADeviceString.writes("file:" + junk)
            _ = ALSADeviceString.writes("plug:{" + junk + "}")
        }
    }

    /// alsa-lib itself is the oracle: for names and random strings of the grammar's characters
    /// after file:, tee: and plug: (and in their { } form), every file ALSA's own expansion of the string has a file
    /// plugin write (with the system's alsa.conf, which defines them) is one this reading found,
    /// or the string is refused.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/usr/share/alsa/alsa.conf")
                   && ProcessInfo.processInfo.environment["ALSA_CONFIG_PATH"] == nil))
    func alsaLibWritesNothingThisReadingMissed() {
        var rng = SystemRandomNumberGenerator()
        let alphabet = Array("ab.,=:'\"\\ {}%|$/\tfileFILEteeSLAVEplug")
        var agreed = 0
        for round in 0..<3_000 {
            let junk = String((0..<Int.random(in: 0...30, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
            let (prefix, suffix) = [("file:", ""), ("tee:null,", ""), ("plug:", ""), ("plug:file:", ""), ("tee:", ""),
                                    ("file:{FILE ", "}"), ("plug:{SLAVE ", "}"), ("file:{", "}")][round % 8]
            let device = prefix + junk + suffix
            guard let written = ALSAFilePlugins.files(device: device), !written.isEmpty else { continue }
            let found = ALSADeviceString.writes(device)
            #expect(found.unaccounted != nil || Set(written).isSubset(of: Set(found.files)), "\(device): ALSA \(written), found \(found)")
            if found.unaccounted == nil { agreed += 1 }
        }
        #expect(agreed > 100)   // enough strings alsa-lib took for the comparison to mean something
    }

    /// An ALSA configuration of its own (the whole configuration: nothing on the machine
    /// redirects it), with alsa.conf's file, tee and plug over a null device.
    func environment() throws -> [String: String] {
        let conf = dir.file("asound.conf")
        try Data("""
        pcm.null { type null }
        pcm.file { @args [ FILE FORMAT ] @args.FILE { type string } @args.FORMAT { type string default raw }
                   type file slave.pcm null file $FILE format $FORMAT }
        pcm.tee { @args [ SLAVE FILE FORMAT ] @args.SLAVE { type string } @args.FILE { type string }
                  @args.FORMAT { type string default raw } type file slave.pcm $SLAVE file $FILE format $FORMAT }
        pcm.plug { @args [ SLAVE ] @args.SLAVE { type string } type plug slave.pcm $SLAVE }
        pcm.tapin { type file slave.pcm null file "in.wav" format raw }
        pcm.rec { @args [ F ] @args.F { type string } type file slave.pcm null file $F format raw }
        pcm.tapnotes { type plug slave { pcm { type file slave.pcm null file "notes" format raw } } }
        """.utf8).write(to: URL(fileURLWithPath: conf))
        var env = ProcessInfo.processInfo.environment
        env["ALSA_CONFIG_PATH"] = conf
        return env
    }

    func bytes(_ name: String) -> Data? { FileManager.default.contents(atPath: dir.file(name)) }

    func tone(_ name: String) throws {
        let x = (0..<22_050).map { i in Float((0.25 * sin(2 * Double.pi * 440 * Double(i) / 44_100) * 32768).rounded() / 32768) }
        try AudioFiles.write([x, x], to: dir.file(name), sampleRate: 44_100, sampleFormat: .s16)
    }

    /// The tester's cases (a file plugin inside plug:, ALSA's %c making the input's name, a name
    /// without '.' or '/'), a link, a command, a missing folder and a file written twice: each
    /// refused with exit 2 and a message naming the value, before anything is opened: the
    /// files are unchanged and nothing is created.
    @Test func refusesBeforeAnythingOpens() throws {
        defer { dir.remove() }
        let env = try environment()
        try tone("in.wav")
        try tone("a2.wav")
        try Data("my notes\n".utf8).write(to: URL(fileURLWithPath: dir.file("notes")))
        try Data("precious".utf8).write(to: URL(fileURLWithPath: dir.file("victim.txt")))
        symlink("victim.txt", dir.file("link.raw"))
        let before = ["in.wav", "a2.wav", "notes", "victim.txt"].map { bytes($0) }
        let cases: [(track: String, device: String, extra: [String], says: String)] = [
            ("in.wav", "plug:'file:in.wav'", [], "reads"),
            ("in.wav", "plug:file:in.wav", ["--force"], "reads"),
            ("a2.wav", "file:'a%c.wav'", [], "%c channels"),
            ("in.wav", "file:notes", [], "--force"),
            ("in.wav", "tee:null,link.raw", ["--force"], "symbolic link"),
            ("in.wav", "file:'|cat > piped.raw'", [], "shell command"),
            ("in.wav", "file:nodir/x.raw", [], "does not exist"),
            ("in.wav", "tee:'file:x.raw',./x.raw", [], "twice"),
            ("in.wav", "plug:{SLAVE {type file file in.wav}}", [], "cannot tell"),
            ("in.wav", "tapin", [], "a file plugin of the ALSA configuration"),
            ("in.wav", "plug:tapin", ["--force"], "reads"),
            ("in.wav", "rec:notes", [], "--force"),
            ("in.wav", "plug:'rec:\"a%c.wav\"'", [], "%c channels"),
        ]
        for c in cases {
            let r = try MixFXBinary.run(["play", c.track, "--device", c.device, "--no-ui"] + c.extra, cwd: dir.path, environment: env)
            #expect(r.status == 2, "\(c.device): \(r.status) \(r.stderr)")
            #expect(r.stderr.contains("--device: '\(c.device)'") && r.stderr.contains(c.says), "\(c.device): \(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
        }
        #expect(["in.wav", "a2.wav", "notes", "victim.txt"].map { bytes($0) } == before)
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: dir.path))
        #expect(names == ["asound.conf", "in.wav", "a2.wav", "notes", "victim.txt", "link.raw"])
    }

    /// What is allowed still plays: a new file through plug: (every frame of the half second,
    /// 16-bit stereo at 44.1 kHz), with --force an existing file that is not an input is
    /// replaced, and a tap the ALSA configuration defines writes the file it chose.
    @Test func aNewFileAndForcePlay() throws {
        defer { dir.remove() }
        let env = try environment()
        try tone("in.wav")
        try Data("my notes\n".utf8).write(to: URL(fileURLWithPath: dir.file("notes")))
        let r = try MixFXBinary.run(["play", "in.wav", "--device", "plug:'file:new.raw'", "--no-ui", "--quiet",
                                     "--sample-format", "s16"], cwd: dir.path, environment: env)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(bytes("new.raw")?.count == 22_050 * 2 * 2)
        let f = try MixFXBinary.run(["play", "in.wav", "--device", "file:notes", "--force", "--no-ui", "--quiet",
                                     "--sample-format", "s16"], cwd: dir.path, environment: env)
        #expect(f.status == 0, "\(f.stderr)")
        #expect(bytes("notes")?.count == 22_050 * 2 * 2)
        try Data("my notes\n".utf8).write(to: URL(fileURLWithPath: dir.file("notes")))
        let t = try MixFXBinary.run(["play", "in.wav", "--device", "tapnotes", "--no-ui", "--quiet", "--sample-format", "s16"],
                                    cwd: dir.path, environment: env)
        #expect(t.status == 0, "\(t.stderr)")
        #expect(bytes("notes")?.count == 22_050 * 2 * 2)
    }
}
