import Foundation
import CFileIO
import Synchronization

/// Why mixfx would not write a file where it was asked to. In every case nothing is left at the
/// path, and a file that was there is untouched.
public enum OutputFileError: Error, Equatable, CustomStringConvertible {
    /// The file exists and replacing it was not allowed.
    case exists(path: String)
    /// The path is (a name of) one of the inputs.
    case isInput(path: String)
    /// The file at the path shows an input's size and times under other numbers: the input
    /// seen through another spelling or mount (`FileVersion.mayBeOneFile`), or an exact copy.
    case mayBeInput(path: String, input: String)
    /// The path is a directory, FIFO, device or socket, not a regular file.
    case notRegular(path: String, kind: String)
    /// A symbolic link whose target does not exist.
    case danglingLink(path: String, target: String)
    /// A symbolic link (mixfx never writes through one).
    case symbolicLink(path: String, target: String)
    /// Another process created the file while mixfx was writing its own.
    case appeared(path: String)
    /// The folder the file would go in does not exist (or is not a folder).
    case noFolder(path: String, folder: String)
    /// The folder exists but this process may not create files in it.
    case folderNotWritable(path: String, folder: String, reason: String)
    /// The path cannot name a file to write (empty, a folder's, a name too long, a loop of
    /// links): the command line's mistake.
    case badPath(path: String, reason: String)
    /// The file system refused (no permission, no space, ...).
    case cannotCreate(path: String, reason: String)

    /// The setting that allows replacing an existing file, as `description(naming:)` passes it
    /// (`OutputFile`'s and `OfflineRenderer`'s `overwrite`; the CLI's `--force`).
    public static let overwriteSetting = "overwrite=true"

    /// One line naming the path and what to do.
    public var description: String { description(naming: { $0 }) }

    /// `description` with the setting that allows overwriting named by `name` (given
    /// `overwriteSetting`): the CLI passes its flags.
    public func description(naming name: (String) -> String) -> String {
        let overwrite = name(OutputFileError.overwriteSetting)
        return switch self {
        case .exists(let p): "'\(p)' exists; use \(overwrite) to overwrite it"
        case .isInput(let p) where p == OutputFile.standardOutputPath:
            "standard output is redirected into one of the inputs; send it elsewhere"
        case .isInput(let p): "'\(p)' is one of the inputs; choose another output file"
        case .mayBeInput(let p, let i) where p == OutputFile.standardOutputPath:
            "standard output is redirected into a file that may be the input '\(i)' (the same size and times under another file number, as a case-blind volume or a second mount shows one file); send it elsewhere"
        case .mayBeInput(let p, let i):
            "'\(p)' may be the input '\(i)': it shows the same size and times under another file number, as a case-blind volume or a second mount shows one file; choose another output file (or, if it is a copy, remove it first)"
        case .notRegular(let p, let kind):
            "'\(p)' is a \(kind), not a regular file; mixfx writes regular files only (choose a file path)"
        case .danglingLink(let p, let t):
            "'\(p)' is a symbolic link to '\(t)', which does not exist; mixfx never writes through a link: give the file's own path"
        case .symbolicLink(let p, let t):
            "'\(p)' is a symbolic link (to '\(t)'); mixfx never writes through a link: give the file's own path, or remove the link"
        case .appeared(let p):
            "'\(p)' was created or changed by another process while mixfx was writing; it was kept and this output was discarded (use \(overwrite) to replace it)"
        case .noFolder(let p, let f):
            "cannot create '\(p)': the folder '\(f)' does not exist (create it first, e.g. mkdir -p '\(f)')"
        case .folderNotWritable(let p, let f, let r): "cannot create '\(p)': files cannot be created in the folder '\(f)' (\(r))"
        case .cannotCreate(let p, let r) where p == OutputFile.standardOutputPath: "cannot write to standard output: \(r)"
        case .cannotCreate(let p, let r), .badPath(let p, let r): "cannot create '\(p)': \(r)"
        }
    }
}

/// The one way mixfx writes a file (renders, presets, reports, summaries, sidecars): never over
/// an input, never over an existing file unless allowed, into a temporary file beside the target
/// that is moved into place only when complete.
///
/// - Everything is checked when the `OutputFile` is made, before any work: the folder exists and
///   files can be created in it, the name fits, the target is not an input (by identity) and
///   exists only if replacing was allowed.
/// - The temporary file is created the way `mkstemp` does: an unpredictable name, `O_CREAT |
///   O_EXCL | O_NOFOLLOW`, mode 0600, relative to the folder opened once. A link, FIFO or file
///   planted under any name is never opened, followed or waited on; the writer gets the
///   descriptor, never the name.
/// - A symbolic link at the path is refused, with `overwrite` too (a link someone planted would
///   send the file elsewhere); links among the folders above it are followed (the folder is
///   opened once, and the name is checked and written relative to it).
/// - Directories, FIFOs, devices and sockets are refused.
/// - "Is it an input" is decided by the identity of the file at the name in the folder opened,
///   the same folder the file is then written in; standard input counts as an input when it is
///   a regular file (`mixfx batch - < jobs.jsonl`).
/// - A replaced file keeps its permission bits, less set-user-ID, set-group-ID and sticky; a new
///   one gets 0666 less the umask.
/// - The temporary file is locked (`flock`) while it is written, so a later run's clean-up of
///   leftovers (`removeStaleTemporaries`) can tell it from a dead process's.
/// - The final step does not replace a file that appeared while writing unless `overwrite` is
///   set (a hard link is made, which fails if the name exists; on file systems without hard links
///   the check and the rename are two steps).
public final class OutputFile: Sendable {
    /// The path as given.
    public let path: String
    /// Where the file goes (`path`: a link there is refused).
    public let targetPath: String
    /// Whether a file exists at the target now (it will be replaced: `overwrite` was given).
    public let replacesExisting: Bool
    /// Replacing an existing file is allowed.
    public let overwrite: Bool
    /// With `overwrite`: only this file may be replaced (a batch's own earlier output, which its
    /// sidecar vouches for); any other file at the name, then or at the commit, is kept.
    public let onlyReplacing: FileIdentity?
    /// The target's folder, opened once; every later step is relative to it.
    private let folderFD: Int32
    /// The folder, resolved (for the crash handler's list and for messages).
    public let folderPath: String
    /// The target's name in the folder.
    private let name: String
    private let replacedMode: mode_t?
    /// With `onlyReplacing`: the version of that file that may be replaced (the caller's, as it
    /// saw the file, else as checked here), so that a file edited since (written in place,
    /// `chmod`, even with its mtime set back: the change time moves) is kept, not only one put
    /// at the name.
    private let replacedVersion: FileVersion?
    /// The output is the process's standard output (`path` is `standardOutputPath`): it is
    /// written to an unnamed file in `UnnamedFile.temporaryFolder` and copied to standard output
    /// by `commit`, complete, so a render that fails writes nothing there and every container
    /// (FLAC, Ogg, MP3, a WAV with its exact length) is written as it would be to a file.
    public let isStandardOutput: Bool

    /// The path that names standard output (as for SoX and most Unix tools; a file named `-`
    /// is `./-`).
    public static let standardOutputPath = "-"

    /// Checks `path` as an output beside `inputs` (paths of files read). Control side.
    public convenience init(path: String, inputs: [String], overwrite: Bool) throws(OutputFileError) {
        try self.init(path: path, inputs: FileIdentitySet(inputs), overwrite: overwrite)
    }

    /// Checks `path` as an output beside `inputs` and `alsoInputs` (files read, compared by
    /// identity: a large shared set and a job's own few paths). Control side.
    public init(path: String, inputs: FileIdentitySet, alsoInputs: [String] = [], overwrite: Bool,
                onlyReplacing: FileIdentity? = nil, onlyReplacingVersion: FileVersion? = nil) throws(OutputFileError) {
        self.path = path
        self.overwrite = overwrite
        self.onlyReplacing = overwrite ? onlyReplacing : nil
        isStandardOutput = path == OutputFile.standardOutputPath
        if isStandardOutput {
            targetPath = path
            name = path
            replacesExisting = false
            replacedMode = nil
            replacedVersion = nil
            (folderFD, folderPath) = try OutputFile.standardOutputFolder(beside: inputs, alsoInputs)
            return
        }
        guard !path.isEmpty else { throw .badPath(path: path, reason: "the path is empty") }
        guard !path.hasSuffix("/") else {
            throw .badPath(path: path, reason: "the path ends in '/', so it names a folder; give a file name")
        }
        let target = path
        var st = stat()
        if let l = FileSystem.linkStatus(path), (l.st_mode & S_IFMT) == S_IFLNK {
            let linked = FileSystem.linkTarget(path) ?? "?"
            guard FileSystem.resolved(path) != nil else {
                if errno == ELOOP { throw .badPath(path: path, reason: "its symbolic links form a loop") }
                throw .danglingLink(path: path, target: linked)
            }
            throw .symbolicLink(path: path, target: linked)
        }
        targetPath = target
        let folder = FileIdentity.folder(of: target)
        let leaf = FileIdentity.name(of: target)
        name = leaf
        guard name != "." && name != ".." else {
            throw .badPath(path: path, reason: "'\(name)' names a folder; give a file name")
        }
        guard PathBytes.bytes(name).count <= 255 else {
            throw .badPath(path: path, reason: "the file name is \(PathBytes.bytes(name).count) bytes; a name holds at most 255")
        }
        guard !TemporaryOutput.isTemporaryName(name) else {
            throw .badPath(path: path, reason: "names of the form .mixfx-*.tmp are mixfx's temporary files, which a later run removes as leftovers; give another name")
        }
        let fd = FileSystem.open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            switch errno {
            case ENOENT, ENOTDIR: throw .noFolder(path: path, folder: folder)
            case EACCES: throw .folderNotWritable(path: path, folder: folder, reason: "permission denied")
            default: throw .cannotCreate(path: path, reason: String(cString: strerror(errno)))
            }
        }
        if faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) != 0 {
            let reason = errno == EROFS ? "the file system is read-only" : String(cString: strerror(errno))
            close(fd)
            throw .folderNotWritable(path: path, folder: folder, reason: reason)
        }
        folderFD = fd
        folderPath = FileSystem.resolved(folder) ?? folder
        // (the name in the folder opened: a link put there since is refused, and what is compared
        // with the inputs is the file this folder holds, not what the path resolves to again)
        guard PathBytes.withCString(name, { fstatat(fd, $0, &st, AT_SYMLINK_NOFOLLOW) }) == 0 else {
            let e = errno
            replacesExisting = false
            replacedMode = nil
            replacedVersion = nil
            if e == ENOENT { return }
            close(fd)
            throw .cannotCreate(path: path, reason: String(cString: strerror(e)))
        }
        if (st.st_mode & S_IFMT) == S_IFLNK {
            close(fd)
            throw .symbolicLink(path: path, target: FileSystem.linkTarget(path) ?? "?")
        }
        if let kind = RegularFile.irregularKind(st.st_mode) {
            close(fd)
            throw .notRegular(path: path, kind: kind)
        }
        let identity = FileIdentity.existing(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
        func isAnInput(_ id: FileIdentity) -> Bool {
            inputs.contains(id) || id == StandardInput.fileIdentity || alsoInputs.contains { FileIdentity(path: $0) == id }
        }
        // (a folder that tells case apart, as most do, costs one lookup here: the name with its
        // case flipped is not there)
        if isAnInput(identity)
            || OutputFile.mayBeCaseBlind(folder: fd, name: leaf)
            && OutputFile.isInputInAnotherCase(folder: folder, name: leaf, inputs: inputs.memberSpellings + alsoInputs) {
            close(fd)
            throw .isInput(path: path)
        }
        if let input = OutputFile.inputSeen(as: st, on: fd, inputs: inputs, alsoInputs, bytesAt: (fd, leaf)) {
            close(fd)
            throw .mayBeInput(path: path, input: input)
        }
        let expected = self.onlyReplacing == nil ? nil : onlyReplacingVersion
        guard overwrite, self.onlyReplacing == nil || (self.onlyReplacing == identity && expected.map { $0 == FileVersion(st) } != false) else {
            close(fd)
            throw .exists(path: path)
        }
        replacesExisting = true
        replacedMode = st.st_mode & 0o777
        replacedVersion = self.onlyReplacing == nil ? nil : expected ?? FileVersion(st)
    }

    /// Whether the folder open on `fd` may not tell case apart where `name` (which exists) is
    /// concerned: the name with its letters' case flipped is there too (the same file on a
    /// case-blind volume, or another one). A name without cased letters cannot be mistaken.
    static func mayBeCaseBlind(folder fd: Int32, name: String) -> Bool {
        let flipped = FileSystem.flippedCase(name)
        guard flipped != name, PathBytes.bytes(flipped).count <= 255 else { return false }
        var st = stat()
        return PathBytes.withCString(flipped, { fstatat(fd, $0, &st, AT_SYMLINK_NOFOLLOW) }) == 0
    }

    /// Whether an input is the file at the output's name on a volume that does not tell case
    /// apart but gives each spelling its own inode (exfat-fuse: identity alone would let `-o
    /// A.wav --force` replace the input `a.wav`): an input whose name equals the output's but
    /// for case (and Unicode's composed or decomposed forms), in either spelling, folders too
    /// (`render A.wav -o a.wav`, `SUB/a.wav` to `sub/A.WAV`), gives the same path spelled as the
    /// folders list them (`FileSystem.listedSpelling`).
    static func isInputInAnotherCase(folder: String, name: String, inputs: [String]) -> Bool {
        let folded = FileSystem.foldedCase(name)
        let candidates = inputs.filter { FileSystem.foldedCase(FileIdentity.name(of: $0)) == folded }
        guard !candidates.isEmpty, let spelled = FileSystem.listedSpelling(folder + "/" + name) else { return false }
        return candidates.contains { FileSystem.listedSpelling($0) == spelled }
    }

    /// The input (its spelling) that the existing file `st` may be, seen under other numbers
    /// (`FileVersion.mayBeOneFile`): one of `inputs`, standard input's file, one of `alsoInputs`.
    /// With `bytesAt` (the file's folder, open, and its name) a candidate counts only if it also
    /// holds the same bytes: on a volume with coarse times (exFAT's 2 seconds) two files written
    /// in one window to one size show one version, and only their bytes tell them apart (a copy
    /// with the same bytes is refused, which loses nothing).
    static func inputSeen(as st: stat, on fd: Int32, inputs: FileIdentitySet, _ alsoInputs: [String], bytesAt: (folder: Int32, name: String)? = nil) -> String? {
        // (one device: where its file system may show one file under two numbers)
        let oneDevice = FileSystem.mayShowOneFileUnderTwoNumbers(fd)
        var candidates = inputs.membersSeenAs(st, onOneDevice: oneDevice)
        if let stdin = StandardInput.fileStatus, FileVersion.mayBeOneFile(stdin, st, onOneDevice: oneDevice) { candidates.append(StandardInput.path) }
        candidates += alsoInputs.filter { p in FileSystem.status(p).map { FileVersion.mayBeOneFile($0, st, onOneDevice: oneDevice) } == true }
        guard let (folder, name) = bytesAt else { return candidates.first.map(shownInput) }
        let fd = PathBytes.withCString(name) { openat(folder, $0, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY) }
        guard fd >= 0 else { return candidates.first.map(shownInput) }
        defer { close(fd) }
        return candidates.first { c in
            guard c != StandardInput.path else { return FileSystem.sameBytes(fd, 0, size: Int64(st.st_size)) }
            let other = FileSystem.open(c, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
            guard other >= 0 else { return true }
            defer { close(other) }
            return FileSystem.sameBytes(fd, other, size: Int64(st.st_size))
        }.map(shownInput)
    }

    private static func shownInput(_ spelling: String) -> String { spelling == StandardInput.path ? "standard input" : spelling }

    /// Checks standard output as the output: it must be open and not one of the inputs (`mixfx render in.wav -o - >> in.wav`). Returns the
    /// temporary folder, opened, where its file is written first.
    private static func standardOutputFolder(beside inputs: FileIdentitySet, _ alsoInputs: [String]) throws(OutputFileError) -> (Int32, String) {
        let path = standardOutputPath
        var st = stat()
        guard !StandardDescriptors.wasClosed(1), fstat(1, &st) == 0 else { throw .cannotCreate(path: path, reason: "standard output is closed") }
        if let id = FileIdentity(descriptor: 1), (st.st_mode & S_IFMT) == S_IFREG,
           inputs.contains(id) || id == StandardInput.fileIdentity || alsoInputs.contains(where: { FileIdentity(path: $0) == id }) {
            standardOutputIsAnInput.store(true, ordering: .relaxed)
            throw .isInput(path: path)
        }
        if let input = inputSeen(as: st, on: 1, inputs: inputs, alsoInputs) {
            standardOutputIsAnInput.store(true, ordering: .relaxed)
            throw .mayBeInput(path: path, input: input)
        }
        let folder = UnnamedFile.temporaryFolder
        let fd = FileSystem.open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            throw .cannotCreate(path: path, reason: "the temporary folder '\(folder)' (TMPDIR) cannot be opened: \(String(cString: strerror(errno)))")
        }
        return (fd, folder)
    }

    /// Checks that text about to be printed to standard output (a preset, a dry run) does not
    /// go into one of `inputs` or standard input's file (`--print-preset >> p.json` with
    /// `--preset p.json`). Control side.
    public static func checkStandardOutputText(beside inputs: FileIdentitySet) throws(OutputFileError) {
        var st = stat()
        guard fstat(1, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, let id = FileIdentity(descriptor: 1) else { return }
        if inputs.contains(id) || id == StandardInput.fileIdentity {
            standardOutputIsAnInput.store(true, ordering: .relaxed)
            throw .isInput(path: standardOutputPath)
        }
        if let input = inputSeen(as: st, on: 1, inputs: inputs, []) {
            standardOutputIsAnInput.store(true, ordering: .relaxed)
            throw .mayBeInput(path: standardOutputPath, input: input)
        }
    }

    /// Standard output was found to be one of the inputs: nothing, not even an error's JSON,
    /// is to be written there.
    public static let standardOutputIsAnInput = Atomic<Bool>(false)

    deinit { close(folderFD) }

    /// A new temporary file in the target's folder (so the final move is a rename on one file
    /// system), created exclusively under an unpredictable hidden name (see the type's notes).
    public func createTemporary() throws(OutputFileError) -> TemporaryOutput {
        if isStandardOutput {
            // (checked here, not when the output is checked: a dry run prints its text there)
            guard isatty(1) == 0 else {
                throw .cannotCreate(path: path, reason: "standard output is a terminal, and audio is not text; send it into a pipe or a file (... -o - --type wav | ...), or give -o FILE")
            }
            switch UnnamedFile.create(in: folderPath) {
            case .success(let fd): return TemporaryOutput(descriptor: fd, name: "", path: folderPath, folderFD: folderFD, named: false)
            case .failure(let e): throw .cannotCreate(path: path, reason: "cannot make its temporary file in '\(folderPath)' (TMPDIR): \(e.reason)")
            }
        }
        for _ in 0..<64 {
            let tmpName = TemporaryOutput.makeName()
            let full = folderPath + "/" + tmpName
            // remembered before it exists, so a fatal signal at any instant still removes it
            TemporaryFiles.remember(full)
            let fd = openat(folderFD, tmpName, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0o600)
            if fd >= 0 {
                // held until the descriptor closes (committed or discarded): this file is being
                // written (`removeStaleTemporaries`, which never locks a file younger than
                // `staleSeconds`, so this waits for no one); a file system without locks fails
                // it, and the clean-up then goes by the process's number
                while flock(fd, LOCK_EX) != 0 && errno == EINTR {}
                return TemporaryOutput(descriptor: fd, name: tmpName, path: full, folderFD: folderFD)
            }
            let e = errno
            TemporaryFiles.forget(full)
            errno = e
            if errno == EEXIST || errno == EINTR { continue }
            throw .cannotCreate(path: path, reason: String(cString: strerror(errno)))
        }
        throw .cannotCreate(path: path, reason: "64 temporary names in its folder were taken")
    }

    /// Lets the kernel drop the cached pages of the file this output will replace (none if it
    /// replaces nothing); called while the render runs. Otherwise they are freed at the final
    /// rename, when the old file's last link goes, after the last sample is written and with
    /// every other core idle; dropped early, they cost the same on a core the render shares.
    /// The file is not changed: if the render fails it is as it was, only no longer cached.
    public func releaseReplacedPages() {
        guard replacesExisting else { return }
        let fd = PathBytes.withCString(name) { openat(folderFD, $0, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
        guard fd >= 0 else { return }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return }
        _ = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)
    }

    /// Moves the finished `temporary` file into place (see the type's notes); on failure the
    /// temporary file is removed. The writer must have closed its own descriptor.
    public func commit(_ temporary: TemporaryOutput) throws(OutputFileError) {
        defer { temporary.discard() }
        if isStandardOutput {
            try copyToStandardOutput(temporary.descriptor)
            return
        }
        // (its final mode is set once it has its name: a temporary left by a kill in between
        // stays mode 0600, which the clean-up of leftovers recognises)
        let mode = replacedMode ?? OutputFile.newFileMode
        // the name must still be the file this process wrote (someone who can write the folder
        // could have moved it away and put something else there)
        var mine = stat(), there = stat()
        guard fstat(temporary.descriptor, &mine) == 0,
              fstatat(folderFD, temporary.name, &there, AT_SYMLINK_NOFOLLOW) == 0,
              mine.st_dev == there.st_dev, mine.st_ino == there.st_ino else {
            throw .cannotCreate(path: path, reason: "its temporary file '\(temporary.path)' was moved or replaced by another process while mixfx wrote it")
        }
        if PathBytes.withCString(name, { linkat(folderFD, temporary.name, folderFD, $0, 0) }) == 0 {
            temporary.unname()   // (first: a kill before the mode leaves no temporary behind)
            _ = fchmod(temporary.descriptor, mode)
            return
        }
        let linkErrno = errno
        if linkErrno == EEXIST && !overwrite { throw .appeared(path: path) }
        if let only = onlyReplacing {
            // the name must still be the file that may be replaced
            var st = stat()
            let there = PathBytes.withCString(name) { fstatat(folderFD, $0, &st, AT_SYMLINK_NOFOLLOW) } == 0
            if there && (FileIdentity.existing(device: UInt64(st.st_dev), inode: UInt64(st.st_ino)) != only
                         || replacedVersion.map({ $0 != FileVersion(st) }) == true) { throw .appeared(path: path) }
        }
        if linkErrno != EEXIST && !overwrite {
            // no hard links here (some file systems): check, then rename
            var st = stat()
            if PathBytes.withCString(name, { fstatat(folderFD, $0, &st, AT_SYMLINK_NOFOLLOW) }) == 0 { throw .appeared(path: path) }
        }
        if PathBytes.withCString(name, { renameat(folderFD, temporary.name, folderFD, $0) }) != 0 {
            throw .cannotCreate(path: path, reason: String(cString: strerror(errno)))
        }
        temporary.renamed()
        _ = fchmod(temporary.descriptor, mode)
    }

    /// The whole of the file `fd` to standard output (`sendfile`, or `read`/`write` where the
    /// kernel cannot send between these two).
    private func copyToStandardOutput(_ fd: Int32) throws(OutputFileError) {
        var st = stat()
        guard fstat(fd, &st) == 0, lseek(fd, 0, SEEK_SET) == 0 else {
            throw .cannotCreate(path: path, reason: String(cString: strerror(errno)))
        }
        var left = Int(st.st_size)
        var useSendfile = true
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while left > 0 {
            var n: Int
            if useSendfile {
                n = sendfile(1, fd, nil, left)
                if n < 0 && (errno == EINVAL || errno == ENOSYS) {
                    useSendfile = false
                    continue
                }
            } else {
                let r = buffer.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress!, min(left, $0.count)) }
                n = r <= 0 ? r : buffer.withUnsafeBytes { b in
                    var done = 0
                    while done < r {
                        let w = Foundation.write(1, b.baseAddress! + done, r - done)
                        if w < 0 { if errno == EINTR { continue }; return -1 }
                        done += w
                    }
                    return r
                }
            }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN {
                    // a non-blocking pipe that is full: wait until the reader makes room
                    var ready = pollfd(fd: 1, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&ready, 1, -1)
                    continue
                }
                let reason = errno == EPIPE ? "the program reading standard output stopped reading (broken pipe)" : String(cString: strerror(errno))
                throw .cannotCreate(path: path, reason: reason)
            }
            if n == 0 { throw .cannotCreate(path: path, reason: "the temporary file ended early") }
            left -= n
        }
    }

    /// Writes `bytes` to `path` by the same rules (presets, reports, summaries). `beforeCommit`
    /// is given the finished temporary file just before it is moved into place (a batch records
    /// it in the job's sidecar); an error there discards it. Control side.
    public static func write(_ bytes: some Collection<UInt8>, to path: String, inputs: FileIdentitySet = FileIdentitySet(),
                             alsoInputs: [String] = [], overwrite: Bool, onlyReplacing: FileIdentity? = nil, onlyReplacingVersion: FileVersion? = nil,
                             beforeCommit: ((TemporaryOutput) throws(OutputFileError) -> Void)? = nil) throws(OutputFileError) {
        let staged = try stage(bytes, to: path, inputs: inputs, alsoInputs: alsoInputs, overwrite: overwrite,
                               onlyReplacing: onlyReplacing, onlyReplacingVersion: onlyReplacingVersion)
        if let beforeCommit {
            do { try beforeCommit(staged.temporary) } catch {
                staged.temporary.discard()
                throw error
            }
        }
        try staged.commit()
    }

    /// `bytes` written, whole, to `path`'s temporary file, not yet under its name: `commit` gives
    /// it the name (as `write` does); dropped, it leaves nothing. So a file that goes with another
    /// (a render's report) is written before the other is committed, and one that cannot be
    /// written (a full disk) leaves neither.
    public static func stage(_ bytes: some Collection<UInt8>, to path: String, inputs: FileIdentitySet = FileIdentitySet(),
                             alsoInputs: [String] = [], overwrite: Bool, onlyReplacing: FileIdentity? = nil,
                             onlyReplacingVersion: FileVersion? = nil) throws(OutputFileError) -> Staged {
        let out = try OutputFile(path: path, inputs: inputs, alsoInputs: alsoInputs, overwrite: overwrite, onlyReplacing: onlyReplacing,
                                 onlyReplacingVersion: onlyReplacingVersion)
        let tmp = try out.createTemporary()
        let data = Array(bytes)
        var done = 0
        while done < data.count {
            let n = data.withUnsafeBytes { Foundation.write(tmp.descriptor, $0.baseAddress! + done, data.count - done) }
            if n < 0 {
                if errno == EINTR { continue }
                let reason = String(cString: strerror(errno))
                tmp.discard()
                throw .cannotCreate(path: path, reason: reason)
            }
            done += n
        }
        return Staged(output: out, temporary: tmp)
    }

    /// A file written to its temporary and not yet named (`stage`).
    public struct Staged {
        let output: OutputFile
        public let temporary: TemporaryOutput

        /// Gives the file its name, by `OutputFile`'s rules (`commit(_:)`).
        public func commit() throws(OutputFileError) { try output.commit(temporary) }
    }

    /// Writes `bytes` to `path` (inputs as paths).
    public static func write(_ bytes: some Collection<UInt8>, to path: String, inputs: [String], overwrite: Bool) throws(OutputFileError) {
        try write(bytes, to: path, alsoInputs: inputs, overwrite: overwrite)
    }

    /// How long an unlocked temporary file must have been left unchanged to be a leftover.
    public static let staleSeconds = 10.0

    /// 0666 less the process's umask (as it started: `mixfx_start_umask`; else from /proc; 022
    /// where neither tells).
    static let newFileMode: mode_t = {
        let started = mixfx_start_umask()
        if started >= 0 { return 0o666 & ~mode_t(started) }
        if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
           let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Umask:") }),
           let mask = mode_t(line.dropFirst(6).trimmingCharacters(in: .whitespaces), radix: 8) {
            return 0o666 & ~mask
        }
        return 0o644
    }()

    /// Removes the temporary files of mixfx processes of this machine that are gone (killed
    /// before they could remove their own: SIGKILL, power loss) from the folder of `path`.
    /// Only names of mixfx's own pattern and this host's tag, regular files owned by this user,
    /// not one of `inputs` nor standard input (a file salvaged under such a name and read), not
    /// locked (a live writer holds its temporary's lock, whatever its process number means here:
    /// another PID namespace on this host, a container's PID 1) and unchanged for
    /// `staleSeconds` (a file created an instant ago is locked right after); where the file
    /// system has no locks, whose process no longer exists. Returns how many were removed.
    /// Control side.
    @discardableResult
    public static func removeStaleTemporaries(besides path: String, inputs: FileIdentitySet = FileIdentitySet()) -> Int {
        let folder = FileIdentity.folder(of: path)
        let dfd = FileSystem.open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard dfd >= 0 else { return 0 }
        defer { close(dfd) }
        guard let dir = fdopendir(dup(dfd)) else { return 0 }
        defer { closedir(dir) }
        var removed = 0
        // (where the file system gives every file the mount's mode, the mode tells nothing; on
        // FUSE, 0777 is exfat-fuse's mode for every file)
        let noModes = FileSystem.keepsNoModes(dfd), fuse = FileSystem.isFUSE(dfd)
        let prefix = ".mixfx-\(TemporaryOutput.hostTag)-"
        while let entry = readdir(dir) {
            let entryName = FileSystem.entryName(entry)
            guard entryName.hasPrefix(prefix), entryName.hasSuffix(".tmp") else { continue }
            let middle = entryName.dropFirst(prefix.count).dropLast(4).split(separator: "-")
            guard middle.count == 2, let pid = Int32(middle[0]), pid > 0, middle[1].count == 12 else { continue }
            let fd = PathBytes.withCString(entryName) { openat(dfd, $0, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY) }
            guard fd >= 0 else { continue }
            defer { close(fd) }
            var st = stat()
            // (as a temporary is made: the user's, mode 0600 or less where modes are kept; a
            // file given this name and then shared is someone's. A second link, as a kill
            // between an output's link and the temporary's removal leaves, keeps the bytes under
            // its other name)
            guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, st.st_uid == geteuid(),
                  st.st_mode & 0o077 == 0 || noModes || fuse && st.st_mode & 0o777 == 0o777 else { continue }
            let identity = FileIdentity.existing(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
            guard !inputs.contains(identity), identity != StandardInput.fileIdentity else { continue }
            // (the age first: a file just made is never locked here, so its writer's lock, taken
            // right after it is made, never waits or fails)
            guard Double(time(nil) - st.st_mtim.tv_sec) >= staleSeconds else { continue }
            if flock(fd, LOCK_EX | LOCK_NB) != 0 {
                guard errno != EWOULDBLOCK, pid != getpid(), kill(pid, 0) != 0 && errno == ESRCH else { continue }
            }
            // (the name must still be the file checked)
            var there = stat()
            guard PathBytes.withCString(entryName, { fstatat(dfd, $0, &there, AT_SYMLINK_NOFOLLOW) }) == 0,
                  there.st_dev == st.st_dev, there.st_ino == st.st_ino else { continue }
            if PathBytes.withCString(entryName, { unlinkat(dfd, $0, 0) }) == 0 { removed += 1 }
        }
        return removed
    }
}

/// A temporary file being written for an `OutputFile`: its descriptor stays open (and the
/// process's own) until it is committed or discarded. Writers get a duplicate of it.
/// `@unchecked Sendable`: used by one thread at a time (the render's).
public final class TemporaryOutput: @unchecked Sendable {
    /// The descriptor mixfx created the file with.
    public let descriptor: Int32
    /// Its name in the output's folder, and the whole path (for messages and the crash handler).
    let name: String
    public let path: String
    private let folderFD: Int32
    private var open = true
    private var named: Bool

    init(descriptor: Int32, name: String, path: String, folderFD: Int32, named: Bool = true) {
        self.descriptor = descriptor
        self.name = name
        self.path = path
        self.folderFD = folderFD
        self.named = named
    }

    deinit { discard() }

    /// A new descriptor of the same open file (for libsndfile, which closes its own).
    public func duplicateDescriptor() -> Int32 { fcntl(descriptor, F_DUPFD_CLOEXEC, 0) }

    /// Removes the file (unless it was committed) and closes it. Idempotent.
    public func discard() {
        unname()
        if open {
            close(descriptor)
            open = false
        }
    }

    /// Removes the temporary name (while it is still this file); the descriptor stays open.
    func unname() {
        if named {
            // the name is removed only while it is still this file
            var mine = stat(), there = stat()
            if fstat(descriptor, &mine) == 0, fstatat(folderFD, name, &there, AT_SYMLINK_NOFOLLOW) == 0,
               mine.st_dev == there.st_dev, mine.st_ino == there.st_ino {
                unlinkat(folderFD, name, 0)
            }
            named = false
            TemporaryFiles.forget(path)
        }
    }

    /// The rename moved the name away: nothing is left to remove.
    func renamed() {
        named = false
        TemporaryFiles.forget(path)
    }

    /// `.mixfx-HOST-PID-RANDOM.tmp`: hidden, short whatever the target's name (a 255-byte output
    /// name still fits), unpredictable (60 random bits), and naming its process and host so a
    /// later run can tell a dead process's leftovers (`OutputFile.removeStaleTemporaries`).
    static func makeName() -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567".utf8)
        var r = UInt64.random(in: 0...UInt64.max)
        var random = ""
        for _ in 0..<12 {
            random.append(Character(Unicode.Scalar(alphabet[Int(r & 31)])))
            r >>= 5
        }
        return ".mixfx-\(hostTag)-\(getpid())-\(random).tmp"
    }

    /// This host: up to 12 letters and digits of its name (to read), then 12 hex digits of a
    /// hash (FNV-1a, 64 bits) of the whole name, so that hosts whose names differ only in other
    /// characters or past the first letters (`vm-1`, `vm1`; `render-node17`, `render-node18`)
    /// never take each other's temporaries for their own.
    static let hostTag: String = tag(ofHost: {
        var buffer = [CChar](repeating: 0, count: 256)
        gethostname(&buffer, buffer.count - 1)
        return buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }
    }())

    static func tag(ofHost name: [UInt8]) -> String {
        let kept = name.filter { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in name { hash = (hash ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }
        let hex = String(hash >> 16, radix: 16)
        return String(decoding: kept.prefix(12), as: UTF8.self) + String(repeating: "0", count: 12 - hex.count) + hex
    }

    /// Whether `name` has the form of mixfx's temporary files (any host's), which a later run may
    /// remove as a leftover: no output is given such a name.
    static func isTemporaryName(_ name: String) -> Bool { name.hasPrefix(".mixfx-") && name.hasSuffix(".tmp") }
}
