import Foundation
import MixFX
import Synchronization

/// One render of a `mixfx batch` manifest, parsed and resolved (nothing opened yet).
struct BatchJob {
    /// The job's id (`"id"`, default its line number) and its line in the manifest.
    var id: String
    var line: Int
    /// The render, as `mixfx render` would run it (tracks, flags, preset, output).
    var command: RenderCommand
    var resolved: ResolvedSession
    var warnings: [String]

    var output: String { command.output }

    /// The sidecar that says a finished output is this job's (`OUTPUT.mixfx-batch.json`).
    var sidecarPath: String { output + ".mixfx-batch.json" }

    /// The lock a run holds on the job while it works on it (`OUTPUT.mixfx-batch.lock`, see
    /// `BatchJobLock`).
    var lockPath: String { output + ".mixfx-batch.lock" }

    /// What the job writes: its output, its sidecar, its lock and its report (if any).
    var writtenFiles: [(what: String, path: String)] {
        [("output", output), ("sidecar", sidecarPath), ("lock file", lockPath)] + (command.reportPath.map { [("report", $0)] } ?? [])
    }

    /// A hash of everything the output's and the report's bytes depend on: mixfx's version, the
    /// output and report paths, the container (`--type`: `out/x.bin` may be any), the resolved
    /// settings (every track value and lane, sample format and rate, channels, dither, clipping,
    /// limiter, normalisation) and each input's path and what is at it: inode, size,
    /// modification and change times to the nanosecond (FNV-1a, 64 bits). The change time
    /// (ctime) is set by the system whenever a file is written, replaced or renamed, and no
    /// `touch` or archive can set it back, so another recording put at a track's name (the
    /// same size and a normalised mtime: `tar --mtime`, a store's mtime 1, a relinked take) is
    /// rendered again. (Not the device: a network file system's device number is given by
    /// each client when it mounts, so it differs between the machines of a cluster, and every
    /// job would be rendered again on another node; inode and ctime come from the server.)
    ///
    /// Where the times cannot tell two versions apart, the input's bytes are hashed too
    /// (`ContentHash`): a file whose modification and change times are both whole seconds
    /// (exFAT and FAT, as on a recorder's SD card or a USB disk, have no change time of their
    /// own, it is reported as the mtime, in whole or 2-second steps; an old file system without
    /// nanoseconds), where `cp -p` of another take of the same length made in the same second
    /// keeps inode, size, mtime and ctime. A file system with nanosecond times costs nothing more.
    func fingerprint() -> String {
        var text = "mixfx \(MixFXCommand.version)\u{1F}\(output)\u{1F}\(command.reportPath ?? "")\u{1F}"
        text += "type \(command.container?.rawValue ?? "from the name")\u{1F}"
        text += String(decoding: resolved.effectivePreset().jsonData(), as: UTF8.self)
        for input in resolved.inputs {
            text += "\u{1F}\(input)"
            if let st = FileSystem.status(input) {
                // (not the inode where the bytes are hashed: such volumes number files afresh at
                // each mount)
                text += BatchJob.timesAreCoarse(st) ? "\u{1F}\u{1F}\(st.st_size)" : "\u{1F}\(st.st_ino)\u{1F}\(st.st_size)"
                text += "\u{1F}\(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)\u{1F}\(st.st_ctim.tv_sec).\(st.st_ctim.tv_nsec)"
                if BatchJob.timesAreCoarse(st) { text += "\u{1F}bytes " + BatchJob.contentHash(input, st) }
            } else {
                text += "\u{1F}missing"
            }
        }
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in text.utf8 { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }
        return String(h, radix: 16)
    }

    /// The hash of a track's bytes, once per run for each file and version (a stem shared by
    /// many jobs is read once).
    static func contentHash(_ path: String, _ st: stat) -> String {
        let key = [UInt64(st.st_dev), UInt64(st.st_ino)] + [Int64(st.st_size), Int64(st.st_mtim.tv_sec), Int64(st.st_mtim.tv_nsec),
                                                              Int64(st.st_ctim.tv_sec), Int64(st.st_ctim.tv_nsec)].map { UInt64(bitPattern: $0) }
        if let known = hashes.withLock({ $0[key] }) { return known }
        guard let hash = ContentHash.of(regularFile: path).map({ String($0, radix: 16) }) else { return "unreadable" }
        hashes.withLock { $0[key] = hash }
        return hash
    }
    private static let hashes = Mutex<[[UInt64]: String]>([:])

    /// Whether a file's times cannot tell its versions apart: the modification and change
    /// times are both whole seconds (no nanoseconds: exFAT, FAT, a file system of whole-second
    /// times); a file system with nanosecond times gives both whole seconds only by chance (a
    /// `touch -d` or `tar` sets the mtime's, never the ctime's).
    static func timesAreCoarse(_ st: stat) -> Bool {
        st.st_mtim.tv_nsec == 0 && st.st_ctim.tv_nsec == 0
    }
}

/// `mixfx batch`'s manifest: JSON Lines, one render per line. Each line is an object with
/// `"tracks"` (paths), `"output"` (a path), and optionally `"args"` (`mixfx render` flags, as on
/// the command line), `"preset"` (a name, a path, or a preset object) and `"id"`. Relative paths
/// (tracks, output, a preset path, `--report`, `--preset`, `--pitchmap` and `--timemap` in args) are taken from the
/// manifest's folder. Blank lines and lines starting with `#` are skipped.
enum BatchManifest {
    /// A manifest larger than this is refused before it is read (the limit is stated).
    static let maximumBytes = 256 << 20
    static let maximumLineBytes = 1 << 20
    static let keys: Set<String> = ["tracks", "output", "args", "preset", "id"]

    /// Every job of `text`, or every problem found (each names its line). `manifestPath` is the
    /// manifest's file (nil: stdin), which no job may write.
    static func parse(_ text: String, directory: String, manifestPath: String? = nil) -> (jobs: [BatchJob], problems: [String]) {
        var jobs: [BatchJob] = []
        var problems: [String] = []
        // (CRLF line ends, as Windows editors write them, end a line too: to Swift "\r\n" is one
        // Character, not "\n")
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
        for (index, raw) in lines.enumerated() {
            let lineNumber = index + 1
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            do throws(CLIError) {
                jobs.append(try job(line, lineNumber: lineNumber, directory: directory))
            } catch {
                problems.append("line \(lineNumber): \(error.message)")
            }
        }
        problems += fileClashes(jobs, manifestPath: manifestPath)
        var ids: [String: Int] = [:]
        for j in jobs {
            if let first = ids[j.id] { problems.append("line \(j.line): id '\(j.id)' is also line \(first)'s") } else { ids[j.id] = j.line }
        }
        return (jobs, problems)
    }

    /// Every file a job writes (output, sidecar, report) is written by no other job, and is no
    /// file any job reads (tracks, preset files) nor the manifest. Files are compared by identity
    /// (`FileIdentity`), so `out//a.wav`, `./out/a.wav` and a linked folder's `a.wav` are one.
    static func fileClashes(_ jobs: [BatchJob], manifestPath: String?) -> [String] {
        var problems: [String] = []
        var read: [FileIdentity: String] = [:]
        // (and by their folder and lower-case name, for the same check on a volume that does
        // not tell case apart, where each spelling may show its own inode)
        var readFolded: [String: (path: String, what: String)] = [:]
        // (each folder resolved once: many jobs write into one)
        var resolvedFolders: [String: String] = [:]
        func foldedName(_ path: String) -> String? {
            let folder = FileIdentity.folder(of: path)
            guard let real = resolvedFolders[folder] ?? FileSystem.resolved(folder) else { return nil }
            resolvedFolders[folder] = real
            return FileSystem.foldedCase(real) + "/" + FileSystem.foldedCase(FileIdentity.name(of: path))
        }
        func reads(_ path: String, _ what: String) {
            let id = FileIdentity(path: path)
            guard read[id] == nil else { return }
            read[id] = what
            if let key = foldedName(path), readFolded[key] == nil { readFolded[key] = (path, what) }
        }
        if let manifestPath {
            reads(manifestPath, "the manifest")
        } else if let stdin = StandardInput.fileIdentity {
            // (a manifest redirected from a file, `batch - < m.jsonl`: that file)
            read[stdin] = "the manifest (standard input's file)"
        }
        for j in jobs {
            for i in j.resolved.inputs { reads(i, "line \(j.line)'s track '\(i)'") }
            let maps = Set(j.command.session.pitchMaps.map(\.path) + j.command.session.timeMaps.map(\.path))
            for p in j.command.presetFiles { reads(p, "line \(j.line)'s \(maps.contains(p) ? "map" : "preset") '\(p)'") }
        }
        var written: [FileIdentity: String] = [:]
        // (and by their names folded to lower case: on a volume that does not tell case apart,
        // `out/x.wav` and `out/X.wav` are one file)
        var folded: [String: (path: String, what: String)] = [:]
        var caseBlind: [String: Bool] = [:]
        for j in jobs {
            for (what, path) in j.writtenFiles {
                let id = FileIdentity(path: path)
                let foldedRead = foldedName(path).flatMap { readFolded[$0] }.flatMap { FileSystem.mayBeOneName($0.path, path) ? $0 : nil }
                if let r = read[id] {
                    problems.append("line \(j.line): the \(what) '\(path)' is \(r); a batch never writes over a file it reads")
                } else if let r = foldedRead {
                    problems.append("line \(j.line): the \(what) '\(path)' is \(r.what) (its folder does not tell case apart); a batch never writes over a file it reads")
                } else {
                    // (written files by their folder and name: other tasks of an array job may
                    // be replacing them while this checks, see `FileIdentity.inFolder`)
                    let named = FileIdentity.inFolder(path) ?? id
                    if let w = written[named] {
                        problems.append("line \(j.line): the \(what) '\(path)' is also \(w)")
                    } else {
                        written[named] = "line \(j.line)'s \(what) '\(path)'"
                        if let key = foldedName(path) {
                            if let other = folded[key] {
                                let folder = FileIdentity.folder(of: path)
                                let blind = caseBlind[folder] ?? FileSystem.sameFileInAnotherCase(other.path, path)
                                caseBlind[folder] = blind
                                // (one problem a line: its sidecar and lock follow its output)
                                if blind && !(problems.last?.hasPrefix("line \(j.line): ") ?? false) {
                                    problems.append("line \(j.line): the \(what) '\(path)' is also \(other.what) (its folder does not tell case apart)")
                                }
                            } else {
                                folded[key] = (path, "line \(j.line)'s \(what) '\(path)'")
                            }
                        }
                    }
                }
            }
        }
        return problems
    }

    /// A path of the manifest as mixfx holds names (`PathBytes`: a manifest is UTF-8 text, so a
    /// private-use character in it is that character's bytes), relative ones from the manifest's
    /// folder. Joined, not tidied: `link/../x.wav` is left for the system to resolve through the
    /// link, as `mixfx render` would.
    static func resolve(_ path: String, _ directory: String) -> String {
        let p = PathBytes.string(Array(path.utf8))
        return p.hasPrefix("/") ? p : (directory.hasSuffix("/") ? directory : directory + "/") + p
    }

    static func job(_ line: String, lineNumber: Int, directory: String) throws(CLIError) -> BatchJob {
        guard line.utf8.count <= maximumLineBytes else {
            throw .usage("\(line.utf8.count) bytes is more than a manifest line may hold (\(maximumLineBytes >> 20) MiB)")
        }
        let value: JSONValue
        do { value = try JSONValue.parse(Array(line.utf8)) } catch {
            throw .usage("not a JSON object (\(error.problem) at column \(error.column))")
        }
        guard case .object(let obj) = value else { throw .usage("not a JSON object") }
        func hasNUL(_ v: JSONValue) -> Bool {
            switch v {
            case .string(let s): s.unicodeScalars.contains("\u{0}")
            case .array(let a): a.contains(where: hasNUL)
            default: false
            }
        }
        for key in ["tracks", "output", "args", "preset"] where obj[key].map(hasNUL) == true {
            throw .usage("\"\(key)\": a NUL character (\\u0000) cannot be part of a path or a flag")
        }
        for k in obj.keys.sorted() where !keys.contains(k) {
            throw .usage("unknown key \"\(k)\" (keys: tracks, output, args, preset, id)")
        }
        guard case .array(let trackValues)? = obj["tracks"], !trackValues.isEmpty else {
            throw .usage("\"tracks\" must be a non-empty list of paths")
        }
        var tracks: [String] = []
        for t in trackValues {
            guard case .string(let s) = t, !s.isEmpty else { throw .usage("\"tracks\" must hold paths (strings)") }
            tracks.append(resolve(s, directory))
        }
        guard case .string(let outputText)? = obj["output"], !outputText.isEmpty else { throw .usage("\"output\" must be a path") }
        var args: [String] = []
        if let a = obj["args"] {
            guard case .array(let items) = a else { throw .usage("\"args\" must be a list of strings (mixfx render flags)") }
            for item in items {
                guard case .string(let s) = item else { throw .usage("\"args\" must be a list of strings (mixfx render flags)") }
                args.append(s)
            }
        }
        for (i, a) in args.enumerated() {
            if ["-o", "--output"].contains(a) || a.hasPrefix("--output=") { throw .usage("\"args\": the output is the \"output\" field, not \(a)") }
            if ["--dry-run", "--print-preset", "--json", "--report-schema", "--"].contains(a) {
                throw .usage("\"args\": \(a) has no place in a batch job\(a == "--" ? " (tracks go in \"tracks\")" : "")")
            }
            if !a.hasPrefix("-"), i == 0 || !args[i - 1].hasPrefix("-") {
                throw .usage("\"args\": '\(a)' is not a flag (tracks go in \"tracks\")")
            }
            // paths in flags, from the manifest's folder
            if i > 0 && ["--report", "--preset"].contains(args[i - 1]) && (args[i - 1] == "--report" || looksLikePath(a)) {
                args[i] = resolve(a, directory)
            }
            // a pitch or time map's file, after its track number if any (`2:maps/up.txt`)
            func mapFile(_ v: String) -> String {
                if let colon = v.firstIndex(of: ":"), !v[..<colon].isEmpty, v[..<colon].allSatisfy({ $0.isASCII && $0.isNumber }) {
                    return String(v[...colon]) + resolve(String(v[v.index(after: colon)...]), directory)
                }
                return resolve(v, directory)
            }
            for flag in ["--pitchmap", "--timemap"] {
                if i > 0 && args[i - 1] == flag { args[i] = mapFile(a) }
                if a.hasPrefix(flag + "=") { args[i] = flag + "=" + mapFile(String(a.dropFirst(flag.count + 1))) }
            }
            for flag in ["--report=", "--preset="] where a.hasPrefix(flag) {
                let value = String(a.dropFirst(flag.count))
                if flag == "--report=" || looksLikePath(value) { args[i] = flag + resolve(value, directory) }
            }
        }
        var inline: Preset?
        var presetArgs: [String] = []
        var inlineWarnings: [String] = []
        switch obj["preset"] {
        case nil: break
        case .string(let p)?: presetArgs = ["--preset", looksLikePath(p) ? resolve(p, directory) : p]
        case .object?:
            let data = (try? JSONSerialization.data(withJSONObject: foundation(obj["preset"]!))) ?? Data()
            do { inline = try Preset.parse(data, source: "line \(lineNumber) preset", warnings: &inlineWarnings) } catch {
                throw .usage(SettingFlags.text(error))
            }
        default: throw .usage("\"preset\" must be a preset name, a path or a preset object")
        }
        let id: String
        switch obj["id"] {
        case nil: id = String(lineNumber)
        case .string(let s)?: id = s
        case .number(let n)? where n.rounded() == n && abs(n) < 1e15: id = String(Int(n))
        default: throw .usage("\"id\" must be a string or a whole number")
        }
        guard var command = try RenderCommand.parse(tracks + presetArgs + args) else {
            throw .usage("\"args\": --help has no place in a batch job")
        }
        command.output = resolve(outputText, directory)
        // (a word in "args" that a flag did not take would be one more track)
        if command.session.inputs.count > tracks.count {
            throw .usage("\"args\": '\(command.session.inputs[tracks.count])' is not a flag's value (tracks go in \"tracks\")")
        }
        command.quiet = true
        command.session.inlinePreset = inline
        var warnings: [String] = []
        let preset = try command.session.loadPreset(warnings: &warnings)
        let resolved = try command.session.resolve(preset: preset)
        return BatchJob(id: id, line: lineNumber, command: command, resolved: resolved,
                        warnings: inlineWarnings + warnings + resolved.warnings)
    }

    static func looksLikePath(_ s: String) -> Bool { s.contains("/") || s.hasSuffix(".json") }

    /// A `JSONValue` as Foundation objects (for `JSONSerialization`).
    static func foundation(_ v: JSONValue) -> Any {
        switch v {
        case .null: NSNull()
        case .bool(let b): NSNumber(value: b)
        case .number(let n): NSNumber(value: n)
        case .string(let s): s
        case .array(let a): a.map(foundation)
        case .object(let o): o.mapValues(foundation)
        }
    }
}
