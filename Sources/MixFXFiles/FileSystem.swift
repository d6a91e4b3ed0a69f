import Foundation
import CFileIO
#if canImport(Glibc)
import Glibc
#endif

/// The system calls mixfx makes with a path, each through `PathBytes` so a name is its own
/// bytes. (Code outside `MixFXFiles` uses these instead of `FileManager`, which would read and
/// write a name that is not UTF-8 under another one.)
public enum FileSystem {
    /// `stat` of `path`, links followed; nil (with `errno` set) when it fails.
    public static func status(_ path: String) -> stat? {
        var st = stat()
        let r: Int32 = PathBytes.withCString(path) { p in stat(p, &st) }
        return r == 0 ? st : nil
    }

    /// `lstat` of `path`: a link itself, not followed.
    public static func linkStatus(_ path: String) -> stat? {
        var st = stat()
        let r: Int32 = PathBytes.withCString(path) { p in lstat(p, &st) }
        return r == 0 ? st : nil
    }

    /// Whether anything (a file, a folder, a link even to nothing) is at `path`.
    public static func exists(_ path: String) -> Bool { linkStatus(path) != nil }

    /// `open(path, flags, mode)`.
    public static func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 {
        PathBytes.withCString(path) { Glibc.open($0, flags, mode) }
    }

    /// Whether the file system of the file (or folder) open on `fd` is one that may show one file
    /// under two numbers (`FileVersion.mayBeOneFile`): FUSE (exfat-fuse, views of other folders),
    /// exFAT, FAT, NTFS, overlays, and the network, cluster and shared-folder file systems an
    /// export can be mounted twice from (NFS, SMB, 9p, Ceph, Lustre, GPFS, AFS, Coda, vboxsf).
    /// Elsewhere a file's device and inode are the file.
    public static func mayShowOneFileUnderTwoNumbers(_ fd: Int32) -> Bool {
        let type = mixfx_file_system_type(fd)
        return type >= 0 && multiNumberedFileSystems.contains(UInt32(truncatingIfNeeded: type))
    }

    /// Whether the file system of the file (or folder) open on `fd` does not keep a file's mode
    /// bits (exFAT, FAT, NTFS: the mount's options give every file one mode).
    public static func keepsNoModes(_ fd: Int32) -> Bool {
        let type = mixfx_file_system_type(fd)
        return type >= 0 && [0x2011_BAB0, 0x4D44, 0x5346_544E, 0x7366_746E].contains(UInt32(truncatingIfNeeded: type))
    }

    /// Whether it is FUSE, where some file systems keep modes (sshfs) and some do not
    /// (exfat-fuse shows every file 0777).
    public static func isFUSE(_ fd: Int32) -> Bool { mixfx_file_system_type(fd) == 0x6573_5546 }

    /// The same for the file system at `path`.
    public static func mayShowOneFileUnderTwoNumbers(path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return mayShowOneFileUnderTwoNumbers(fd)
    }

    /// `statfs`'s `f_type` of those file systems (linux/magic.h).
    static let multiNumberedFileSystems: Set<UInt32> = [
        0x6573_5546,   // FUSE
        0x2011_BAB0,   // exFAT
        0x4D44,        // FAT (msdos, vfat)
        0x5346_544E,   // NTFS
        0x7366_746E,   // ntfs3
        0x6969,        // NFS
        0xFF53_4D42,   // CIFS
        0xFE53_4D42,   // SMB2
        0x517B,        // SMB
        0x0102_1997,   // 9p
        0x00C3_6400,   // Ceph
        0x0BD0_0BD0,   // Lustre
        0x4750_4653,   // GPFS
        0x794C_7630,   // overlay
        0x5346_414F,   // AFS
        0x6B41_4653,   // kAFS
        0x7375_7245,   // Coda
        0x786F_4256,   // vboxsf
    ]

    /// Whether the files open on `a` and `b` hold the same `size` bytes (read with `pread`, so
    /// neither offset moves; a read that fails or comes short counts as different).
    public static func sameBytes(_ a: Int32, _ b: Int32, size: Int64) -> Bool {
        let chunk = 1 << 20
        var x = [UInt8](repeating: 0, count: chunk), y = [UInt8](repeating: 0, count: chunk)
        var offset: Int64 = 0
        while offset < size {
            let n = Int(min(Int64(chunk), size - offset))
            let ra = x.withUnsafeMutableBytes { pread(a, $0.baseAddress!, n, off_t(offset)) }
            let rb = y.withUnsafeMutableBytes { pread(b, $0.baseAddress!, n, off_t(offset)) }
            guard ra == n, rb == n, x[..<n] == y[..<n] else { return false }
            offset += Int64(n)
        }
        return true
    }

    /// The absolute path without links, `.` or `..` (`realpath`); nil when a part is missing.
    public static func resolved(_ path: String) -> String? {
        guard let r = PathBytes.withCString(path, { realpath($0, nil) }) else { return nil }
        defer { free(r) }
        return PathBytes.string(cString: r)
    }

    /// What the symbolic link at `path` holds, or nil.
    public static func linkTarget(_ path: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = PathBytes.withCString(path) { p in
            buffer.withUnsafeMutableBytes { readlink(p, $0.baseAddress!.assumingMemoryBound(to: CChar.self), $0.count - 1) }
        }
        guard n >= 0 else { return nil }
        return PathBytes.string(buffer[0..<n])
    }

    /// The names in the folder `path` (without `.` and `..`), or nil when it cannot be read.
    public static func names(inFolder path: String) -> [String]? {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return names(inFolder: fd)
    }

    /// The names in the folder open on `folder` (without `.` and `..`), or nil when it cannot
    /// be read. The descriptor stays open (the listing reads a duplicate of it).
    public static func names(inFolder folder: Int32) -> [String]? {
        let fd = dup(folder)
        guard fd >= 0 else { return nil }
        guard let dir = fdopendir(fd) else { close(fd); return nil }
        defer { closedir(dir) }
        rewinddir(dir)
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = entryName(entry)
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Whether `a` and `b`, one folder's names that differ only in case, are one file: the
    /// folder does not tell case apart. Where one exists, its spelling as the folder lists it
    /// (`listedSpelling`) is the other's too; where neither does yet, the folder is
    /// asked with a name it holds (`folderIgnoresCase`). (Only for names that clash folded,
    /// so a manifest whose outputs differ otherwise costs nothing.)
    public static func sameFileInAnotherCase(_ a: String, _ b: String) -> Bool {
        if linkStatus(a) != nil || linkStatus(b) != nil {
            guard let sa = listedSpelling(a), let sb = listedSpelling(b) else { return false }
            return sa == sb
        }
        return folderIgnoresCase(FileIdentity.folder(of: a))
    }

    /// Whether the folder `folder` does not tell case apart: one of its names with cased
    /// letters, spelled otherwise, finds the same entry (its own name in its parent, on the
    /// same volume, when it holds none).
    public static func folderIgnoresCase(_ folder: String) -> Bool {
        func answers(_ parent: String, _ name: String) -> Bool? {
            let other = flippedCase(name)
            guard other != name, foldedCase(other) == foldedCase(name) else { return nil }
            guard linkStatus(parent + "/" + other) != nil else { return false }
            // (both spellings listed: two files in a folder that tells case apart)
            guard let listed = names(inFolder: parent) else { return nil }
            return !listed.contains(other)
        }
        if let listed = names(inFolder: folder) {
            for name in listed.prefix(64) { if let a = answers(folder, name) { return a } }
        }
        // its own name, and its parents', while they are on its volume
        guard let real = resolved(folder), let device = status(real)?.st_dev else { return false }
        var path = real
        while path != "/" {
            let parent = FileIdentity.folder(of: path)
            guard status(parent)?.st_dev == device else { return false }
            if let a = answers(parent, FileIdentity.name(of: path)) { return a }
            path = parent
        }
        return false
    }

    /// Whether the paths `a` and `b` may name one file though their names differ: in one folder
    /// (by identity), names equal but for case, on a folder that does not tell case apart
    /// (`sameFileInAnotherCase`). Where identity cannot tell (names not yet there, or
    /// exfat-fuse's inode per spelling, of a file or of its folder), this is what does.
    public static func mayBeOneName(_ a: String, _ b: String) -> Bool {
        let na = FileIdentity.name(of: a), nb = FileIdentity.name(of: b)
        guard PathBytes.bytes(a) != PathBytes.bytes(b), foldedCase(na) == foldedCase(nb) else { return false }
        // (the folders as listed: exfat-fuse gives each spelling of a folder its own inode too)
        let da = FileIdentity.folder(of: a), db = FileIdentity.folder(of: b)
        guard let sa = listedSpelling(da), let sb = listedSpelling(db), sa == sb else { return false }
        return sameFileInAnotherCase(a, b)
    }

    /// `name` with case folded as a case-blind volume may fold it: upper case, then lower (so
    /// σ and ς, ß and ss, µ and μ, ſ and s fold alike, where `lowercased()` alone keeps them
    /// apart). Folding too much only refuses a name, which loses nothing.
    public static func foldedCase(_ name: String) -> String { name.uppercased().lowercased() }

    /// `name` with each character's case flipped (ß becomes SS), for asking a folder whether it
    /// tells case apart.
    public static func flippedCase(_ name: String) -> String {
        name.map { c -> String in
            let s = String(c)
            return s == s.lowercased() ? s.uppercased() : s.lowercased()
        }.joined()
    }


    /// `path` resolved (links, `.`, `..`) with each part spelled as its folder lists it: a part
    /// the folder does not list as written is replaced by the listed name equal to it but for
    /// case (and Unicode's composed or decomposed forms), where there is one. On a volume that
    /// does not tell case apart, two spellings of one file give the same result; on any other,
    /// the path is `resolved(path)`. Nil when it cannot be resolved.
    public static func listedSpelling(_ path: String) -> String? {
        guard let real = resolved(path) else { return nil }
        var result = ""
        for part in real.split(separator: "/", omittingEmptySubsequences: true).map(String.init) {
            let folder = result.isEmpty ? "/" : result
            var chosen = part
            if let listed = names(inFolder: folder) {
                let bytes = PathBytes.bytes(part)
                if !listed.contains(where: { PathBytes.bytes($0) == bytes }) {
                    let folded = foldedCase(part)
                    if let other = listed.first(where: { foldedCase($0) == folded }) { chosen = other }
                }
            }
            result += "/" + chosen
        }
        return result.isEmpty ? "/" : result
    }

    /// The name of the folder entry `entry` (from `readdir`), read in place up to its NUL.
    /// glibc packs the entries in its buffer to their names' lengths, so the whole 256-byte
    /// `d_name` field, which loading `entry.pointee` copies, can reach past the buffer's end
    /// (a crash in a folder of thousands of files, where the buffer ends at a page's end).
    static func entryName(_ entry: UnsafePointer<dirent>) -> String {
        let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        return PathBytes.string(cString: (UnsafeRawPointer(entry) + offset).assumingMemoryBound(to: CChar.self))
    }

    /// The current folder.
    public static func currentFolder() -> String {
        guard let p = getcwd(nil, 0) else { return "." }
        defer { free(p) }
        return PathBytes.string(cString: p)
    }
}
