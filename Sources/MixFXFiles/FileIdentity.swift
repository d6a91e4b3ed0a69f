import Foundation

/// What a path names, decided by the file system rather than by the path's spelling: `in//a.wav`,
/// `./in/a.wav`, a symbolic link to it and a hard link to it are one file.
///
/// - A file that exists is its device and inode (links followed).
/// - A file not yet there is its folder's device and inode plus its name's bytes, so two spellings
///   of one planned output (`out//x.wav`, `link-to-out/x.wav`) are one too.
/// - A path whose folder does not exist either is its normalized spelling (nothing can be
///   compared by identity; the write will be refused anyway).
public enum FileIdentity: Hashable, Sendable {
    case existing(device: UInt64, inode: UInt64)
    case planned(folderDevice: UInt64, folderInode: UInt64, name: [UInt8])
    case unresolved(String)

    /// The identity of `path` now. Control side.
    public init(path: String) {
        if let st = FileSystem.status(path) {
            self = .existing(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
            return
        }
        // a dangling symbolic link (or a chain of them) names the file it would create
        var target = path
        for _ in 0..<40 {
            guard let lst = FileSystem.linkStatus(target), (lst.st_mode & S_IFMT) == S_IFLNK,
                  let dest = FileSystem.linkTarget(target) else { break }
            target = dest.hasPrefix("/") ? dest : FileIdentity.folder(of: target) + "/" + dest
        }
        let folder = FileIdentity.folder(of: target)
        let name = FileIdentity.name(of: target)
        if let st = FileSystem.status(folder) {
            self = .planned(folderDevice: UInt64(st.st_dev), folderInode: UInt64(st.st_ino), name: PathBytes.bytes(name))
        } else {
            self = .unresolved(URL(fileURLWithPath: target).standardized.path)
        }
    }

    /// The identity of the name `path` gives a file in its folder: the folder's device and inode
    /// plus the name's bytes, whether or not the file exists now. For comparing files that are
    /// being written (another process may replace one by a rename at any moment, and a freed
    /// inode may come back as another file's, so two `init(path:)` taken at different times
    /// can match by chance); nil when the folder does not exist.
    public static func inFolder(_ path: String) -> FileIdentity? {
        guard let st = FileSystem.status(folder(of: path)) else { return nil }
        return .planned(folderDevice: UInt64(st.st_dev), folderInode: UInt64(st.st_ino), name: PathBytes.bytes(name(of: path)))
    }

    /// The identity of an open descriptor (what was really opened, whatever the path names now).
    public init?(descriptor fd: Int32) {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return nil }
        self = .existing(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
    }

    /// The folder part of `path` ("." for a bare name; "/" for a file at the root).
    public static func folder(of path: String) -> String {
        var p = Substring(path)
        while p.count > 1 && p.hasSuffix("/") { p = p.dropLast() }
        guard let slash = p.lastIndex(of: "/") else { return "." }
        let f = p[..<slash]
        return f.isEmpty ? "/" : String(f)
    }

    /// The last component of `path` (trailing slashes ignored).
    public static func name(of path: String) -> String {
        var p = Substring(path)
        while p.count > 1 && p.hasSuffix("/") { p = p.dropLast() }
        guard let slash = p.lastIndex(of: "/") else { return String(p) }
        return String(p[p.index(after: slash)...])
    }
}

extension FileVersion {
    /// Whether `a` and `b`, two regular files that are not one by identity (device and inode),
    /// may still be one file seen under two numbers. Some file systems show one file so:
    /// exfat-fuse gives each spelling of a name (`a.wav`, `A.WAV`, `σ.wav`/`ς.wav`) its own inode
    /// on one device, and an export mounted twice, or seen both on its server and over NFS or a
    /// FUSE view, shows one inode under two devices. Both views show the same size and times:
    /// on one device, the same version to the nanosecond (two different files show it only if
    /// given the same size and times in one tick of the clock: an exact copy with its times kept,
    /// on a volume whose change time is its modification time); with one inode on two devices,
    /// the same size and times within a microsecond (a view may carry times as floating-point
    /// seconds).
    /// (The first case only where the file system may show one file so,
    /// `FileSystem.mayShowOneFileUnderTwoNumbers`: on ext4 two files written in one tick of its
    /// clock, a few milliseconds, to one size show one version. One inode on two devices with
    /// the same size and times is one file anywhere: an overlay shows its lower layer's files
    /// so. An empty file is never taken for another.)
    /// `onOneDevice`: whether the first case applies (the file system may show one file so).
    public static func mayBeOneFile(_ a: stat, _ b: stat, onOneDevice: Bool) -> Bool {
        guard (a.st_mode & S_IFMT) == S_IFREG, (b.st_mode & S_IFMT) == S_IFREG, a.st_size > 0 else { return false }
        switch (a.st_dev == b.st_dev, a.st_ino == b.st_ino) {
        case (true, false): return onOneDevice && FileVersion(a) == FileVersion(b)
        case (false, true): return FileVersion(a).isWithinAMicrosecond(of: FileVersion(b))
        default: return false
        }
    }

    func isWithinAMicrosecond(of other: FileVersion) -> Bool {
        size == other.size && abs(modifiedNanoseconds &- other.modifiedNanoseconds) < 1_000
            && abs(changedNanoseconds &- other.changedNanoseconds) < 1_000
    }
}

/// A set of files by identity, each remembered with the first spelling it was given under (for
/// messages), and by version (`FileVersion.mayBeOneFile`: one file seen under two numbers).
public struct FileIdentitySet: Sendable {
    private var spellings: [FileIdentity: String] = [:]
    /// Regular files by version and by inode (`FileVersion.mayBeOneFile`'s two cases).
    private var versions: [FileVersion: [(device: UInt64, inode: UInt64, spelling: String)]] = [:]
    private var inodes: [UInt64: [(device: UInt64, version: FileVersion, spelling: String)]] = [:]

    public init(_ paths: [String] = []) { for p in paths { insert(p) } }

    /// Adds `path` (named `spelling` in messages, by default the path); returns the spelling it
    /// was first added under when it was there already.
    @discardableResult
    public mutating func insert(_ path: String, spelling: String? = nil) -> String? {
        let id = FileIdentity(path: path)
        if let first = spellings[id] { return first }
        spellings[id] = spelling ?? path
        if case .existing(let device, let inode) = id, let st = FileSystem.status(path), (st.st_mode & S_IFMT) == S_IFREG {
            insertVersion(FileVersion(st), device: device, inode: inode, spelling: spelling ?? path)
        }
        return nil
    }

    private mutating func insertVersion(_ version: FileVersion, device: UInt64, inode: UInt64, spelling: String) {
        versions[version, default: []].append((device, inode, spelling))
        inodes[inode, default: []].append((device, version, spelling))
    }

    /// Adds the file `identity` (an open descriptor's), named `spelling` in messages; with
    /// `version` (a regular file's), by version too.
    public mutating func insert(_ identity: FileIdentity, spelling: String, version: FileVersion? = nil) {
        guard spellings[identity] == nil else { return }
        spellings[identity] = spelling
        if case .existing(let device, let inode) = identity, let version {
            insertVersion(version, device: device, inode: inode, spelling: spelling)
        }
    }

    /// The spelling of a member that may be the file `st` describes seen under other numbers
    /// (`FileVersion.mayBeOneFile`), or nil.
    public func memberSeenAs(_ st: stat, onOneDevice: Bool) -> String? { membersSeenAs(st, onOneDevice: onOneDevice).first }

    /// The spellings of every member that may be the file `st` describes seen under other numbers.
    public func membersSeenAs(_ st: stat, onOneDevice: Bool) -> [String] {
        guard (st.st_mode & S_IFMT) == S_IFREG, st.st_size > 0 else { return [] }
        let version = FileVersion(st), device = UInt64(st.st_dev), inode = UInt64(st.st_ino)
        return (onOneDevice ? versions[version] ?? [] : []).filter { $0.device == device && $0.inode != inode }.map(\.spelling)
            + (inodes[inode] ?? []).filter { $0.device != device && $0.version.isWithinAMicrosecond(of: version) }.map(\.spelling)
    }

    /// The spelling of the member that is the same file as `path`, or nil.
    public func member(_ path: String) -> String? { spellings[FileIdentity(path: path)] }

    public func contains(_ path: String) -> Bool { member(path) != nil }

    /// `member(path)`, or else the member that a case-blind folder may take for `path` though
    /// its name is spelled otherwise (`FileSystem.mayBeOneName`: where identity cannot tell).
    public func memberByIdentityOrName(_ path: String) -> String? {
        member(path) ?? spellings.values.first { FileSystem.mayBeOneName($0, path) }
    }

    /// Whether a member is the file `identity`.
    public func contains(_ identity: FileIdentity) -> Bool { spellings[identity] != nil }

    /// The spelling of the member that is the file `identity`, or nil.
    public func member(_ identity: FileIdentity) -> String? { spellings[identity] }

    public var count: Int { spellings.count }

    /// Each member's spelling (the path it was added under).
    public var memberSpellings: [String] { Array(spellings.values) }
}
