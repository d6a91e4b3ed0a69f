import Foundation
import MixFX
import Synchronization

/// `mixfx batch MANIFEST`: many renders in one process, safe to retry, sliceable across machines.
struct BatchCommand {
    /// The flags, in synopsis order.
    enum Flag: CommandFlag {
        case jobs, shard, check, force, summary, quiet, json, help

        var syntax: FlagSyntax {
            switch self {
            case .jobs: FlagSyntax(names: ["-j", "--jobs"], value: "N")
            case .shard: FlagSyntax(names: ["--shard"], value: "I/N|auto|auto/N")
            case .check: FlagSyntax(names: ["--check"])
            case .force: FlagSyntax(names: ["--force"])
            case .summary: FlagSyntax(names: ["--summary"], value: "FILE.json")
            case .quiet: FlagSyntax(names: ["-q", "--quiet"])
            case .json: FlagSyntax(names: ["--json"])
            case .help: helpFlag
            }
        }
    }

    /// The synopsis: every flag the parser takes.
    static var usage: String {
        Synopsis.text([.init("mixfx batch", operands: ["MANIFEST|-"], flags: Flag.allCases.filter { $0 != .help }.map(\.syntax)),
                       Synopsis.helpForm("batch")])
    }

    static let help = """
    \(usage)

    Renders every job of MANIFEST (JSON Lines; - reads it from stdin), one per line:
      {"tracks": ["a.wav", "b.flac"], "output": "out/ab.wav",
       "args": ["--bass", "4", "--track", "2:pitch=-300"], "preset": "demo", "id": "ab"}
    "args" are `mixfx render` flags exactly as on the command line; "preset" is a name, a path or a
    preset object; "id" defaults to the line number. Relative paths are taken from the manifest's
    folder. Blank lines and lines starting with # are skipped. The whole manifest is checked
    before anything renders: a bad line is reported with its number and nothing is written.

      -j, --jobs N      renders at once in this process (default: the cores, here \(ProcessInfo.processInfo.activeProcessorCount));
                        with more than one, each render uses one core, so they never oversubscribe
      --shard I/N       only the jobs whose position (from 0, in manifest order) is I modulo N, so
                        N machines given the same manifest cover every job exactly once
      --shard auto/N    I from the environment: Slurm's SLURM_ARRAY_TASK_ID (as it is, so an
                        array numbered 0 to N-1, and any resubmission of some of its tasks,
                        renders exactly those tasks' shards), a Kubernetes Indexed Job's
                        JOB_COMPLETION_INDEX or MIXFX_SHARD_INDEX; --shard auto takes N from
                        MIXFX_SHARD_COUNT (never from the size of the current submission)
      --check           check everything (files exist and open, flags, presets, outputs unique and
                        not inputs, outputs writable) and render nothing
      --force           replace existing outputs that no batch of this manifest wrote (never an
                        input): another manifest's (one that shares the output folder) too
      --summary FILE    per job: id, status (done, skipped, busy, failed), wall time, error, peak,
                        clipped samples, loudness and true peak (JSON; replaces an earlier
                        summary of mixfx batch, another file only with --force)
      -q, --quiet       no progress line
      --json            print the summary on stdout

    Safe to retry: each output appears only when complete, with a sidecar OUTPUT.mixfx-batch.json
    naming the manifest and holding a hash of the job (settings, --type, inputs' identities,
    sizes and times, and their bytes where the times are whole seconds as on exFAT, mixfx's
    version) and its frame count. A job whose output and sidecar match is skipped, so a killed
    batch (even by SIGKILL) resumes where it stopped; a changed job is rendered again. A failed
    job does not stop the others. While a run works on a job it holds OUTPUT.mixfx-batch.lock; a
    second run of the same jobs at once leaves that job to the first (status busy). A batch
    never writes through a symbolic link at an output's, report's or sidecar's name.

    exit status: 0 every job done or skipped, 1 some failed or were busy in another run, 2 usage
    (a bad manifest or flag), 128+N stopped by signal N (finished outputs stay; the rest is
    rendered on the next run)
    """

    var manifest = ""
    var jobs = ProcessInfo.processInfo.activeProcessorCount
    var shard: (index: Int, count: Int)?
    var shardAutoCount: Int?
    var shardAuto = false
    var check = false, force = false, quiet = false, json = false
    var summaryPath: String?
    /// Which manifest this is (set once it is read): for the summary (`manifestKey`: its path
    /// resolved, or `stdin:` and a hash of the bytes read on standard input), for the outputs
    /// (`ownerKey`: its path resolved, or `stdin:` and the folder a stream was read in, where
    /// its relative paths are taken from), and a hash of its bytes (`manifestBytes`).
    var manifestKey = "", ownerKey = "", manifestBytes = ""

    static func run(_ argv: [String]) throws(CLIError) -> Int32 {
        guard let cmd = try parse(argv) else { HelpLayout.print(help); return 0 }
        return try cmd.execute()
    }

    /// The command the arguments describe (nothing opened yet); nil when they ask for help.
    static func parse(_ argv: [String]) throws(CLIError) -> BatchCommand? {
        var cmd = BatchCommand()
        var args = Arguments(argv)
        while let (name, inline) = args.nextOption() {
            guard let flag = Flag.named(name) else { throw .unknownOption(name, command: "batch", help: help) }
            switch flag {
            case .help: return nil
            case .jobs:
                let text = try args.value(for: name, inline: inline)
                guard let n = Int(text), n >= 1, n <= 256 else { throw .usage("--jobs: '\(text)' is not a whole number from 1 to 256") }
                cmd.jobs = n
            case .shard:
                let text = try args.value(for: name, inline: inline)
                try cmd.parseShard(text)
            case .check: cmd.check = true
            case .force: cmd.force = true
            case .quiet: cmd.quiet = true
            case .json: cmd.json = true
            case .summary: cmd.summaryPath = try args.value(for: name, inline: inline)
            }
        }
        guard args.positionals.count == 1 else {
            throw .usage("batch: give one manifest (a path, or - for stdin); usage: mixfx batch MANIFEST [--jobs N]")
        }
        cmd.manifest = args.positionals[0]
        return cmd
    }

    mutating func parseShard(_ text: String) throws(CLIError) {
        if text == "auto" { shardAuto = true; return }
        if text.hasPrefix("auto/") {
            guard let n = Int(text.dropFirst(5)), n >= 1 else { throw .usage("--shard \(text): N must be a whole number from 1") }
            shardAuto = true
            shardAutoCount = n
            return
        }
        let parts = text.split(separator: "/").map { Int($0) }
        guard parts.count == 2, let i = parts[0], let n = parts[1], n >= 1, i >= 0, i < n else {
            throw .usage("--shard \(text): expected I/N with 0 ≤ I < N (e.g. --shard 0/4), auto or auto/N")
        }
        shard = (i, n)
    }

    /// The shard from the cluster engine's environment (`--shard auto`, `auto/N`).
    ///
    /// The index is the task's identity: `MIXFX_SHARD_INDEX`, a Kubernetes Indexed Job's
    /// `JOB_COMPLETION_INDEX` or Slurm's `SLURM_ARRAY_TASK_ID`, used as it is (never relative to
    /// `SLURM_ARRAY_TASK_MIN`), so a resubmission of any subset of tasks (`--array=1`,
    /// `--array=1,3`, `--array=0-6:2`) renders exactly those tasks' shards. The count is the
    /// manifest's split, the same in every submission: `auto/N` or `MIXFX_SHARD_COUNT`, never
    /// the size of the current submission (`SLURM_ARRAY_TASK_COUNT`).
    func environmentShard() throws(CLIError) -> (index: Int, count: Int) {
        try BatchCommand.environmentShard(count: shardAutoCount, environment: ProcessInfo.processInfo.environment)
    }

    static func environmentShard(count flagCount: Int?, environment env: [String: String]) throws(CLIError) -> (index: Int, count: Int) {
        let flag = flagCount.map { "--shard auto/\($0)" } ?? "--shard auto"
        func int(_ key: String) throws(CLIError) -> Int? {
            guard let text = env[key] else { return nil }
            // (digits only: a sign, spaces or another form is a mistake somewhere)
            guard !text.isEmpty, text.utf8.allSatisfy({ (48...57).contains($0) }), let v = Int(text) else {
                throw .usage("\(flag): \(key)='\(text)' is not a whole number (digits only)")
            }
            return v
        }
        var count = flagCount
        if let n = try int("MIXFX_SHARD_COUNT") {
            guard n >= 1 else { throw .usage("\(flag): MIXFX_SHARD_COUNT=\(n) must be a whole number from 1") }
            if let c = count, c != n { throw .usage("\(flag): MIXFX_SHARD_COUNT=\(n) says otherwise; give one count") }
            count = n
        }
        var found: [(key: String, value: Int)] = []
        for key in ["MIXFX_SHARD_INDEX", "JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID"] {
            if let v = try int(key) { found.append((key, v)) }
        }
        guard let first = found.first else {
            throw .usage("\(flag): no shard index in the environment (MIXFX_SHARD_INDEX, JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID); give --shard I/N")
        }
        // MIXFX_SHARD_INDEX, when set, chooses; the schedulers' own must agree
        if first.key != "MIXFX_SHARD_INDEX", let other = found.first(where: { $0.value != first.value }) {
            throw .usage("\(flag): \(first.key)=\(first.value) and \(other.key)=\(other.value) disagree; set MIXFX_SHARD_INDEX to choose")
        }
        guard let n = count else {
            throw .usage("\(flag): \(first.key) is \(first.value) but the number of shards is not known: give --shard auto/N or set MIXFX_SHARD_COUNT (N is how many shards the manifest is split into, the same in every submission; the size of this submission, SLURM_ARRAY_TASK_COUNT, is not it)")
        }
        guard first.value >= 0 && first.value < n else {
            throw .usage("\(flag): \(first.key)=\(first.value) is not a shard from 0 to \(n - 1) (number the array's tasks from 0: --array=0-\(n - 1))")
        }
        return (first.value, n)
    }

    func readManifest() throws(CLIError) -> (String, String) {
        if manifest == "-" {
            // (closed, or a folder: an error, not an empty manifest that leaves "all done")
            var st = stat()
            guard !StandardDescriptors.wasClosed(0), fstat(0, &st) == 0 else { throw .usage("cannot read the manifest: standard input is closed") }
            if (st.st_mode & S_IFMT) == S_IFDIR { throw .usage("cannot read the manifest: standard input is a directory") }
            var data = Data()
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress!, $0.count) }
                if n < 0 && errno == EINTR { continue }
                guard n >= 0 else { throw .usage("cannot read the manifest from standard input: \(String(cString: strerror(errno)))") }
                if n == 0 { break }
                data.append(contentsOf: buffer[..<n])
                guard data.count <= BatchManifest.maximumBytes else {
                    throw .usage("the manifest on stdin is more than \(BatchManifest.maximumBytes >> 20) MiB")
                }
            }
            return (String(decoding: data, as: UTF8.self), FileSystem.currentFolder())
        }
        // opened once, checked on the descriptor (a FIFO is refused at once: use - for a stream)
        let bytes: [UInt8]
        do { bytes = try RegularFile.read(manifest, maximumBytes: BatchManifest.maximumBytes) } catch {
            switch error.problem {
            case .notRegular(let kind): throw .usage("manifest '\(manifest)' is a \(kind), not a regular file (use - for stdin)")
            case .tooLarge: throw .usage("manifest '\(manifest)' is more than \(BatchManifest.maximumBytes >> 20) MiB")
            default: throw .usage("cannot open manifest '\(manifest)': \(error.reason)")
            }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .usage("manifest '\(manifest)' is not UTF-8 text") }
        let absolute = manifest.hasPrefix("/") ? manifest : FileSystem.currentFolder() + "/" + manifest
        // (its folder as the system sees it: `link/../m.jsonl` is in the link's parent's folder)
        let named = FileIdentity.folder(of: absolute)
        let dir = FileSystem.resolved(named) ?? named
        return (text, dir)
    }

    /// One job's outcome.
    struct Outcome {
        var status = "pending"
        var seconds = 0.0
        var error: String?
        var report: RenderReport?
    }

    func execute() throws(CLIError) -> Int32 {
        let (text, directory) = try readManifest()
        let (all, problems) = BatchManifest.parse(text, directory: directory, manifestPath: manifest == "-" ? nil : manifest)
        // every file any job reads (and the manifest), once: no job writes over one of them
        var reads = FileIdentitySet(manifest == "-" ? [] : [manifest])
        for j in all { for p in j.resolved.inputs + j.command.presetFiles { reads.insert(p) } }
        // what is printed (the summary's JSON, progress, errors: a bad line's too) never lands
        // in a file a job reads or any job of the manifest writes, another shard's too
        // (`--json >> in.wav`, `2>> p.json`, `>> out/x.wav`)
        let sliceNow = try shardAuto ? environmentShard() : (shard ?? (0, 1))
        let ours = all.enumerated().filter { $0.offset % sliceNow.count == sliceNow.index }.map(\.element)
        if let (fd, what) = standardStreamIntoAJobsFile(ours, all: all, reads: reads) {
            if fd == 2 { return 2 }   // (nowhere to say so)
            OutputFile.standardOutputIsAnInput.store(true, ordering: .relaxed)
            throw .usage("standard output is redirected into \(what); send it elsewhere")
        }
        guard problems.isEmpty else {
            for p in problems.dropLast() { Terminal.printError("mixfx: error: \(manifest): \(p)") }
            throw .usage("\(manifest): \(problems.last!)\(problems.count > 1 ? " (\(problems.count) problems; nothing was rendered)" : "; nothing was rendered")")
        }
        let slice = sliceNow
        let mine = all.enumerated().filter { $0.offset % slice.count == slice.index }.map { j in
            var job = j.element
            job.command.otherInputs = reads
            return job
        }
        for j in mine { for w in j.warnings { Terminal.printError("mixfx: warning: job \(j.id) (line \(j.line)): \(w)") } }
        // which manifest this is, for the summary: its path resolved, or the bytes read on stdin
        let manifestBytes = String(ContentHash.of(bytes: Array(text.utf8)), radix: 16)
        let manifestKey = manifest == "-" ? "stdin:" + manifestBytes : "file:" + (FileSystem.resolved(manifest) ?? manifest)
        var me = self
        me.manifestKey = manifestKey
        me.manifestBytes = manifestBytes
        // (outputs belong to the manifest's folder, the project: a manifest edited in place, a
        // new manifest beside it (jobs-2.jsonl after jobs-1.jsonl), a generator that pipes one
        // in from there are all the same batch; another project's folder is another's)
        me.ownerKey = "folder:" + (FileSystem.resolved(directory) ?? directory)
        if let summaryPath { try me.checkSummaryPath(summaryPath, jobs: all, reads: reads, slice: slice, manifestKey: manifestKey, manifestBytes: manifestBytes) }
        if check { return try me.checkAll(mine, total: all.count, slice: slice) }
        return try me.renderAll(mine, total: all.count, slice: slice, manifestKey: manifestKey, manifestBytes: manifestBytes)
    }

    /// Standard error (2) or output (1), when it is a regular file some job reads (`reads`) or
    /// writes, with what that file is ("line 3's output 'x.wav'"); nil when neither is. `jobs`
    /// (this shard's) are looked at file by file; the rest of the manifest (`all`) only where a
    /// file's name is the stream's (`StandardStreams.names`: its name in its folder; by every
    /// file where the stream's name is not known or it has other names, hard links), so a run
    /// of one shard of thousands of jobs does not look at every other shard's files.
    func standardStreamIntoAJobsFile(_ jobs: [BatchJob], all: [BatchJob], reads: FileIdentitySet) -> (Int32, String)? {
        let streams = StandardStreams.regularFiles()
        guard !streams.isEmpty else { return nil }
        for (fd, id) in streams {
            if let r = reads.member(id) { return (fd, "'\(PathBytes.shown(r))', a file the batch reads") }
        }
        func find(_ j: BatchJob, where named: (String) -> Bool) -> (Int32, String)? {
            for (what, p) in j.writtenFiles where named(p) {
                guard let st = FileSystem.status(p), (st.st_mode & S_IFMT) == S_IFREG else { continue }
                let id = FileIdentity.existing(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
                if let s = streams.first(where: { $0.1 == id }) { return (s.0, "line \(j.line)'s \(what) '\(PathBytes.shown(p))'") }
            }
            return nil
        }
        for j in jobs { if let found = find(j, where: { _ in true }) { return found } }
        // the other shards' files: those with the stream's name (folded: a case-blind volume's
        // other spelling), or all where a stream's name is not known
        let names = StandardStreams.names(of: streams.map(\.0))
        for j in all {
            if let names {
                if let found = find(j, where: { names.contains(FileIdentity.name(of: $0).lowercased()) }) { return found }
            } else if let found = find(j, where: { _ in true }) {
                return found
            }
        }
        return nil
    }

    /// `--summary` is no file a job writes or reads, nor the manifest; it may replace an earlier
    /// summary of this batch (the same manifest and shard), anything else only with --force.
    /// (Checked before anything renders.)
    func checkSummaryPath(_ path: String, jobs: [BatchJob], reads: FileIdentitySet, slice: (index: Int, count: Int), manifestKey: String, manifestBytes: String) throws(CLIError) {
        let id = FileIdentity(path: path)
        for j in jobs {
            // (by identity, or by name where the folder does not tell case apart)
            for (what, p) in j.writtenFiles where FileIdentity(path: p) == id || FileSystem.mayBeOneName(p, path) {
                throw .usage("--summary: '\(path)' is line \(j.line)'s \(what); give the summary its own name")
            }
        }
        if manifest != "-" && (FileIdentity(path: manifest) == id || FileSystem.mayBeOneName(manifest, path)) {
            throw .usage("--summary: '\(path)' is the manifest; give the summary its own name")
        }
        if let r = reads.memberByIdentityOrName(path) {
            throw .usage("--summary: '\(path)' is '\(r)', a file the batch reads; give the summary its own name")
        }
        do throws(OutputFileError) { _ = try OutputFile(path: path, inputs: reads, overwrite: force || isOwnSummary(path, slice: slice, manifestKey: manifestKey, manifestBytes: manifestBytes)) } catch {
            throw .usage("--summary: \(SettingFlags.text(error))")
        }
    }

    /// Whether the file at `path` is a summary an earlier run of this batch wrote: the same
    /// manifest (`manifestKey`: its path resolved, or for standard input a hash of the bytes
    /// read; or `manifestBytes`, the same bytes: a moved project) and the same shard. Another manifest's summary (two folders' `jobs.jsonl`, another
    /// stream), or another shard's (two arrays writing `summary-$SLURM_ARRAY_TASK_ID.json` in
    /// one folder), is replaced only with --force. A summary of an older mixfx (without the key)
    /// is this batch's when it names this manifest by identity.
    func isOwnSummary(_ path: String, slice: (index: Int, count: Int), manifestKey: String, manifestBytes: String) -> Bool {
        guard let bytes = try? RegularFile.read(path, maximumBytes: 256 << 20),
              let obj = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
              obj["generator"] as? String == BatchSidecar.generator, obj["jobs"] is [Any],
              let named = obj["manifest"] as? String, let shard = obj["shard"] as? [String: Any],
              shard["index"] as? Int == slice.index, shard["count"] as? Int == slice.count else { return false }
        if let key = obj["manifestKey"] as? String {
            return isThisManifest(key: key, bytes: obj["manifestBytes"] as? String, ours: manifestKey)
        }
        if manifest == "-" || named == "-" { return false }
        return FileIdentity(path: named) == FileIdentity(path: manifest)
    }

    /// Whether a file recorded as written for the manifest `key` (whose bytes hashed to
    /// `bytes`) is this manifest's (`ours`, `manifestKey` or `ownerKey`): the same key (the
    /// manifest's path resolved, edited in place or not), or the same bytes where the manifest
    /// recorded is no longer there (a project moved, a node that mounts the share at another
    /// path) or is this very file by another path. A copy of the manifest that is still there
    /// (one template copied into two projects) is another manifest.
    func isThisManifest(key: String, bytes: String?, ours: String) -> Bool {
        if key == ours { return true }
        if ours.hasPrefix("folder:") {
            // (the project's folder by identity: another spelling of it, or a sidecar that names
            // one of its manifests or streams)
            let folder = key.hasPrefix("file:/") ? FileIdentity.folder(of: String(key.dropFirst(5)))
                : key.hasPrefix("stdin:/") ? String(key.dropFirst(6)) : key.hasPrefix("folder:/") ? String(key.dropFirst(7)) : nil
            if let folder, FileSystem.status(folder) != nil, FileIdentity(path: folder) == FileIdentity(path: String(ours.dropFirst(7))) { return true }
        }
        guard let bytes, bytes == manifestBytes else { return false }
        // (a stream's summary, keyed by its bytes: the same bytes)
        guard key.hasPrefix("file:/") || key.hasPrefix("stdin:/") || key.hasPrefix("folder:/") else { return true }
        let recorded = String(key.drop(while: { $0 != ":" }).dropFirst())
        guard FileSystem.status(recorded) != nil else { return true }
        return key.hasPrefix("file:") && manifest != "-" && FileIdentity(path: recorded) == FileIdentity(path: manifest)
    }

    /// The manifest `key` names, for messages.
    static func describeManifest(_ key: String) -> String {
        if key.hasPrefix("file:") { return "the manifest '\(PathBytes.shown(String(key.dropFirst(5))))'" }
        if key.hasPrefix("folder:") { return "a manifest in '\(PathBytes.shown(String(key.dropFirst(7))))'" }
        if key.hasPrefix("stdin:/") { return "a manifest read on standard input in '\(PathBytes.shown(String(key.dropFirst(6))))'" }
        return "a manifest read on standard input"
    }

    /// `--check`: every job planned (files opened, formats and outputs checked), nothing rendered.
    func checkAll(_ jobs: [BatchJob], total: Int, slice: (index: Int, count: Int)) throws(CLIError) -> Int32 {
        var failures: [String] = []
        for j in jobs {
            do throws(CLIError) {
                try checkNoLinks(j)
                if let reason = BatchJobLock.check(j.lockPath) { throw CLIError.usage(reason) }
                let plan = overwritePlan(j)
                // (another manifest's job that is this very job, done: the run skips it)
                if plan.otherManifest != nil && isDone(j, plan, hash: j.fingerprint()) { continue }
                try checkNotAnotherManifests(j, plan)
                _ = try command(j, plan).prepare(j.resolved, overwrite: plan.output, overwriteReport: plan.report)
                try checkSidecarPath(j, plan)
            } catch {
                failures.append("job \(j.id) (line \(j.line)): \(error.message)")
            }
        }
        for f in failures { Terminal.printError("mixfx: error: \(f)") }
        let sliceText = slice.count > 1 ? " (shard \(slice.index)/\(slice.count) of \(total))" : ""
        if failures.isEmpty {
            if !quiet { print("checked \(jobs.count) job\(jobs.count == 1 ? "" : "s")\(sliceText): all can be rendered") }
            return 0
        }
        throw .usage("\(failures.count) of \(jobs.count) jobs cannot be rendered as they stand; nothing was rendered")
    }

    func renderAll(_ jobs: [BatchJob], total: Int, slice: (index: Int, count: Int), manifestKey: String, manifestBytes: String) throws(CLIError) -> Int32 {
        Terminal.installStopHandlers()
        // what killed batches (SIGKILL, a lost node) left behind in the output folders
        var folders = Set<FileIdentity>()
        for j in jobs where folders.insert(FileIdentity(path: FileIdentity.folder(of: j.output))).inserted {
            OutputFile.removeStaleTemporaries(besides: j.output, inputs: j.command.otherInputs)
        }
        let started = Date()
        let shared = BatchWork(command: self, jobs: jobs)
        let workers = min(jobs.count, self.jobs)
        let parallelTracks = workers == 1
        let done = DispatchGroup()
        for _ in 0..<workers {
            done.enter()
            let t = Thread {
                shared.work(parallelTracks: parallelTracks)
                done.leave()
            }
            t.start()
        }
        let bar = !quiet && !json && Terminal.isTerminal(2)
        while done.wait(timeout: .now() + 0.25) == .timedOut {
            if bar { progress(shared.outcomes.withLock { $0 }, running: shared.running.load(ordering: .relaxed), started: started) }
        }
        if bar { Terminal.writeError("\r\u{1B}[K") }
        let results = shared.outcomes.withLock { $0 }
        let wall = Date().timeIntervalSince(started)
        let counts = Dictionary(grouping: results, by: \.status).mapValues(\.count)
        var summary = summaryObject(jobs, results, wall: wall, total: total, slice: slice)
        summary["manifestKey"] = manifestKey
        summary["manifestBytes"] = manifestBytes
        var summaryFailed = false
        if let summaryPath {
            let reads = jobs.first?.command.otherInputs ?? FileIdentitySet()
            do throws(OutputFileError) {
                try OutputFile.write(Data(jsonText(summary).utf8), to: summaryPath, inputs: reads, overwrite: force || isOwnSummary(summaryPath, slice: slice, manifestKey: manifestKey, manifestBytes: manifestBytes))
            } catch {
                Terminal.printError("mixfx: error: --summary: \(SettingFlags.text(error))")
                summaryFailed = true
            }
        }
        for (j, o) in zip(jobs, results) where o.status == "failed" || o.status == "busy" {
            Terminal.printError("mixfx: \(o.status == "busy" ? "note" : "error"): job \(j.id) (line \(j.line)): \(o.error ?? o.status)")
        }
        if json {
            print(jsonText(summary))
        } else if !quiet {
            print(String(format: "batch    %d job%@%@: %d done, %d skipped, %@%d failed in %.2f s (%.2f jobs/s)",
                         jobs.count, jobs.count == 1 ? "" : "s",
                         slice.count > 1 ? " (shard \(slice.index)/\(slice.count) of \(total))" : "",
                         counts["done"] ?? 0, counts["skipped"] ?? 0,
                         counts["busy"].map { "\($0) busy in another run, " } ?? "", counts["failed"] ?? 0, wall,
                         Double(counts["done"] ?? 0) / max(wall, 1e-9)))
        }
        let signal = stopSignal.load(ordering: .relaxed)
        if signal != 0 {
            throw CLIError(message: "interrupted by \(Terminal.signalName(signal)) after \(counts["done"] ?? 0) job(s); finished outputs stay, and the next run renders the rest", exitCode: 128 + signal)
        }
        // (a summary asked for and not written is a failure: a script reading it must know)
        return (counts["failed"] ?? 0) + (counts["busy"] ?? 0) > 0 || summaryFailed ? 1 : 0
    }

    /// Which of a job's files may be replaced: with `--force` (the batch's or the job's own
    /// `"args"`) any that is not an input; otherwise only the very files the job's trusted
    /// sidecar vouches for (see `BatchSidecar`: the files it recorded, or the ones it was
    /// renaming into place when its run stopped), and only while they are still those files
    /// (`OutputFile.onlyReplacing`: one put at the name meanwhile is kept). The sidecar itself
    /// when it is mixfx's own.
    struct OverwritePlan {
        var sidecarFile: BatchSidecar?
        var output = false, report = false, sidecar = false
        var outputOnly: FileIdentity?, reportOnly: FileIdentity?, sidecarOnly: FileIdentity?
        /// The files at the output's and report's names that the sidecar vouches for.
        var vouchedOutput: FileRecord?, vouchedReport: FileRecord?
        /// The sidecar is another manifest's (its key): its files are replaced only with --force.
        var otherManifest: String?
    }

    /// A sidecar vouches for its files to the manifest whose job wrote them (`isThisManifest`:
    /// the same manifest, edited in place or moved with its project; any of its jobs, as ids
    /// that default to line numbers change when lines are added), not to another manifest
    /// naming the same output (two projects or two arrays sharing an output folder). A sidecar
    /// of an older mixfx, which names no manifest, vouches to any.
    func overwritePlan(_ job: BatchJob) -> OverwritePlan {
        let forced = force || job.command.force
        let s = BatchSidecar.read(job.sidecarPath)
        let other = s?.manifestKey.flatMap { isThisManifest(key: $0, bytes: s?.manifestBytes, ours: ownerKey) ? nil : $0 }
        let output = s?.vouchedOutput(job.output)
        let report = job.command.reportPath.flatMap { s?.vouchedReport($0) }
        let mine = other == nil
        return OverwritePlan(sidecarFile: s, output: forced || mine && output != nil, report: forced || mine && report != nil, sidecar: forced || s != nil,
                             outputOnly: forced ? nil : output?.identity, reportOnly: forced ? nil : report?.identity,
                             sidecarOnly: forced ? nil : FileRecord(path: job.sidecarPath)?.identity,
                             vouchedOutput: output, vouchedReport: report, otherManifest: other)
    }

    /// A job's output or report that another manifest's job wrote is kept (without --force),
    /// with a message naming that manifest.
    func checkNotAnotherManifests(_ job: BatchJob, _ plan: OverwritePlan) throws(CLIError) {
        guard let other = plan.otherManifest, !(force || job.command.force) else { return }
        let file: String? = plan.vouchedOutput != nil ? job.output : plan.vouchedReport != nil ? job.command.reportPath : nil
        guard let file else { return }
        let id = plan.sidecarFile.map { "job '\($0.job)' of " } ?? ""
        throw .usage("'\(PathBytes.shown(file))' exists, written by \(id)\(BatchCommand.describeManifest(other)), not by this manifest; use --force to overwrite it")
    }

    /// The job's command with what it may replace.
    func command(_ job: BatchJob, _ plan: OverwritePlan) -> RenderCommand {
        var c = job.command
        c.outputOnlyReplacing = plan.outputOnly
        c.reportOnlyReplacing = plan.reportOnly
        // (and only as the sidecar vouched for them: one edited since is the user's)
        c.outputOnlyReplacingVersion = plan.outputOnly == nil ? nil : plan.vouchedOutput?.version
        c.reportOnlyReplacingVersion = plan.reportOnly == nil ? nil : plan.vouchedReport?.version
        return c
    }

    /// The sidecar's name can be written: a folder, FIFO or too long a name is refused, and a
    /// file there that is not mixfx's own sidecar is replaced only with --force.
    func checkSidecarPath(_ job: BatchJob, _ plan: OverwritePlan) throws(CLIError) {
        do throws(OutputFileError) {
            _ = try OutputFile(path: job.sidecarPath, inputs: job.command.otherInputs, overwrite: plan.sidecar, onlyReplacing: plan.sidecarOnly)
        } catch {
            if case .exists = error {
                throw .usage("'\(job.sidecarPath)' exists and is not a mixfx batch sidecar; it is kept (use --force to replace it and the output)")
            }
            throw .usage("the sidecar: \(SettingFlags.text(error))")
        }
    }

    /// None of the job's files (output, sidecar, lock file, report) is a symbolic link: a batch
    /// writes each under its own name, never through a link to somewhere else (a link planted
    /// in an output folder could otherwise aim a render, or a forged sidecar's trust, at any
    /// file), even with --force. (Links in the folders' paths are followed as ever.)
    func checkNoLinks(_ job: BatchJob) throws(CLIError) {
        for (what, path) in job.writtenFiles {
            guard let st = FileSystem.linkStatus(path), (st.st_mode & S_IFMT) == S_IFLNK else { continue }
            let target = FileSystem.linkTarget(path).map { " (to '\($0)')" } ?? ""
            let fix = what == "output" ? "remove it, or name the file itself in the manifest" : "remove it"
            throw .usage("the \(what) '\(path)' is a symbolic link\(target); a batch never writes through a link: \(fix)")
        }
    }

    /// One job: skipped when its trusted sidecar says it is done with this hash and its output
    /// (and report) are the files it wrote, unchanged; else rendered (output, report, sidecar).
    func run(_ job: BatchJob, parallelTracks: Bool) -> Outcome {
        do throws(CLIError) { try checkNoLinks(job) } catch { return Outcome(status: "failed", error: error.message) }
        // another run of the same job at once (a resubmitted task) leaves it to the first
        var lock: BatchJobLock?
        switch BatchJobLock.acquire(job.lockPath) {
        case .acquired(let l): lock = l
        case .busy(let holder):
            // (the holder may have finished it just now: it records "done" before it unlocks)
            if isDone(job, overwritePlan(job), hash: job.fingerprint()) { return Outcome(status: "skipped") }
            return Outcome(status: "busy", error: "\(holder) is rendering it (it holds '\(job.lockPath)'); left to that run, not done here")
        case .unavailable: break
        case .refused(let reason): return Outcome(status: "failed", error: reason)
        }
        defer { lock?.release() }
        let hash = job.fingerprint()
        let plan = overwritePlan(job)
        if isDone(job, plan, hash: hash) {
            // (vouched for by their bytes after their change time moved: recorded as they are
            // now, so the next run need not read them again)
            if var s = plan.sidecarFile, let out = plan.vouchedOutput, out.changedNanoseconds != s.output?.changedNanoseconds
                || plan.vouchedReport.map({ $0.changedNanoseconds != s.report?.changedNanoseconds }) == true {
                s.output = out
                s.report = plan.vouchedReport ?? s.report
                _ = try? writeSidecar(job, s, overwrite: true, onlyReplacing: FileRecord(path: job.sidecarPath)?.identity)
            }
            return Outcome(status: "skipped")
        }
        do throws(CLIError) {
            try checkNotAnotherManifests(job, plan)
            let command = command(job, plan)
            var (engine, renderer, layout) = try command.prepare(job.resolved, overwrite: plan.output, overwriteReport: plan.report)
            try checkSidecarPath(job, plan)
            _ = engine
            renderer.isCancelled = { interruptRequested }
            // the loudness and true peak are for the summary: measured only when one is asked for
            renderer.measuresMix = summaryPath != nil || json
            renderer.kernelParallelTracks = parallelTracks
            // while rendering, the sidecar still vouches for the files of the last run that are
            // still there (a failed render leaves them as they were)
            var sidecar = BatchSidecar(job: job.id, hash: hash, frames: layout.1.frameCount, state: "rendering",
                                       output: plan.output ? plan.vouchedOutput : nil,
                                       report: plan.report ? plan.vouchedReport : nil,
                                       manifestKey: ownerKey, manifestBytes: manifestBytes)
            // each later write replaces only the sidecar this run wrote (never a file or link
            // put at its name meanwhile)
            var written = try writeSidecar(job, sidecar, overwrite: plan.sidecar, onlyReplacing: plan.sidecarOnly)
            // the report is written (unnamed) before the output is committed, so a report that
            // cannot be written fails the job with no output (as `mixfx render`); it is recorded
            // with the output, before either is renamed into place
            var stagedReport: OutputFile.Staged?, reportError: OutputFileError?
            renderer.beforeCommitWithReport = { (report: RenderReport) throws(OutputFileError) in
                do throws(OutputFileError) { stagedReport = try command.stageReport(report, job.resolved, layout.1, overwrite: plan.report) } catch {
                    reportError = error
                    throw error
                }
                sidecar.pendingReport = stagedReport.flatMap { FileRecord(descriptor: $0.temporary.descriptor)?.hashed(descriptor: $0.temporary.descriptor) }
            }
            // the finished file is recorded before it is renamed into place: killed between the
            // rename and the next sidecar write, the next run still knows the output is its own
            renderer.beforeCommit = { (temporary: TemporaryOutput) throws(OutputFileError) in
                sidecar.pendingOutput = FileRecord(descriptor: temporary.descriptor)?.hashed(descriptor: temporary.descriptor)
                do throws(CLIError) { written = try writeSidecar(job, sidecar, overwrite: true, onlyReplacing: written) } catch {
                    throw .cannotCreate(path: job.sidecarPath, reason: error.message)
                }
            }
            let report: RenderReport
            do { report = try renderer.render(engine) } catch {
                stagedReport?.temporary.discard()
                if error == .cancelled { return Outcome(status: "failed", error: "interrupted") }
                if let reportError { throw CLIError.failure("--report: \(SettingFlags.text(reportError)); the output was not written") }
                throw RenderCommand.map(error, job.resolved)
            }
            sidecar.output = FileRecord(path: job.output).map { now in
                // (the file renamed into place is the one hashed just before: its hash goes on)
                guard let p = sidecar.pendingOutput, p.inode == now.inode, p.size == now.size else { return now.hashed(path: job.output) }
                var r = now
                r.contentHash = p.contentHash
                return r
            }
            sidecar.pendingOutput = nil
            written = try writeSidecar(job, sidecar, overwrite: true, onlyReplacing: written)
            if let reportPath = job.command.reportPath, let staged = stagedReport {
                try command.commitReport(staged)
                sidecar.report = FileRecord(path: reportPath).map { now in
                    guard let p = sidecar.pendingReport, p.inode == now.inode, p.size == now.size else { return now.hashed(path: reportPath) }
                    var r = now
                    r.contentHash = p.contentHash
                    return r
                }
                sidecar.pendingReport = nil
            }
            sidecar.frames = report.frameCount
            sidecar.state = "done"
            _ = try writeSidecar(job, sidecar, overwrite: true, onlyReplacing: written)
            return Outcome(status: "done", report: report)
        } catch {
            return Outcome(status: "failed", error: error.message)
        }
    }

    /// Whether the job is done: its trusted sidecar says so for this `hash`, and its output (and
    /// report) are the files that run wrote, unchanged.
    func isDone(_ job: BatchJob, _ plan: OverwritePlan, hash: String) -> Bool {
        // (the plan's records: the files the sidecar vouches for, each looked at once)
        guard let s = plan.sidecarFile, s.hash == hash, s.state == "done", plan.vouchedOutput != nil else { return false }
        return job.command.reportPath == nil || plan.vouchedReport != nil
    }

    /// Writes the sidecar; returns the identity of the file written.
    func writeSidecar(_ job: BatchJob, _ sidecar: BatchSidecar, overwrite: Bool, onlyReplacing: FileIdentity?) throws(CLIError) -> FileIdentity? {
        do throws(OutputFileError) {
            try OutputFile.write(Data(jsonText(sidecar.json).utf8), to: job.sidecarPath, inputs: job.command.otherInputs,
                                 overwrite: overwrite, onlyReplacing: onlyReplacing)
        } catch {
            throw .failure("cannot write the sidecar '\(job.sidecarPath)': \(SettingFlags.text(error))")
        }
        return FileRecord(path: job.sidecarPath)?.identity
    }

    func progress(_ outcomes: [Outcome], running: Int, started: Date) {
        let finished = outcomes.filter { $0.status != "pending" }
        let done = finished.filter { $0.status == "done" }.count, failed = finished.filter { $0.status == "failed" }.count
        let busy = finished.filter { $0.status == "busy" }.count
        let skipped = finished.count - done - failed - busy
        let elapsed = Date().timeIntervalSince(started)
        let left = outcomes.count - finished.count
        let eta = finished.count > 0 ? elapsed / Double(finished.count) * Double(left) : 0
        let line = String(format: "\rbatch  %d/%d   done %d  skipped %d  %@failed %d  running %d   ETA %d:%02d\u{1B}[K",
                          finished.count, outcomes.count, done, skipped, busy > 0 ? "busy \(busy)  " : "", failed, running,
                          Int(eta) / 60, Int(eta) % 60)
        Terminal.writeError(line)
    }

    func summaryObject(_ jobs: [BatchJob], _ results: [Outcome], wall: Double, total: Int, slice: (index: Int, count: Int)) -> [String: Any] {
        let list: [[String: Any]] = zip(jobs, results).map { j, o in
            var e: [String: Any] = ["id": j.id, "line": j.line, "output": j.output, "status": o.status, "wallSeconds": o.seconds,
                                    "error": o.error as Any? ?? NSNull()]
            if let r = o.report {
                e["frames"] = r.frameCount
                e["peakDBFS"] = r.peak > 0 ? r.peakDBFS as Any : NSNull()
                e["clippedSamples"] = r.clippedSamples
                e["appliedGainDB"] = r.appliedGainDB
                e["integratedLUFS"] = jsonNumber(r.mixMeasures?.integratedLUFS)
                e["truePeakDBTP"] = jsonNumber(r.mixMeasures?.truePeakDBTP)
            }
            return e
        }
        let counts = Dictionary(grouping: results, by: \.status).mapValues(\.count)
        return ["generator": "mixfx batch", "manifest": manifest, "jobs": list, "total": total,
                "shard": ["index": slice.index, "count": slice.count], "done": counts["done"] ?? 0,
                "skipped": counts["skipped"] ?? 0, "busy": counts["busy"] ?? 0, "failed": counts["failed"] ?? 0, "wallSeconds": wall,
                "jobsPerSecond": Double(counts["done"] ?? 0) / max(wall, 1e-9)]
    }
}

/// What the worker threads of a batch share: the command and jobs (read only once the workers
/// start), the next job's index and the outcomes (atomics and a lock). `@unchecked Sendable`:
/// the read-only parts are value types nobody mutates while the workers run.
final class BatchWork: @unchecked Sendable {
    let command: BatchCommand
    let jobs: [BatchJob]
    let outcomes: Mutex<[BatchCommand.Outcome]>
    let next = Atomic<Int>(0)
    let running = Atomic<Int>(0)

    init(command: BatchCommand, jobs: [BatchJob]) {
        self.command = command
        self.jobs = jobs
        outcomes = Mutex(Array(repeating: BatchCommand.Outcome(), count: jobs.count))
    }

    /// Takes jobs until there are none left (or a stop signal came).
    func work(parallelTracks: Bool) {
        while !interruptRequested {
            let k = next.add(1, ordering: .relaxed).oldValue
            guard k < jobs.count else { break }
            running.add(1, ordering: .relaxed)
            let t0 = Date()
            var o = command.run(jobs[k], parallelTracks: parallelTracks)
            o.seconds = Date().timeIntervalSince(t0)
            running.subtract(1, ordering: .relaxed)
            outcomes.withLock { $0[k] = o }
        }
    }
}
