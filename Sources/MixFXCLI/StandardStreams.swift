import Foundation
import MixFXFiles
import MixFX

/// Where standard output and error go, against the files a command line names (a preset too,
/// named as such: `--preset mine` is `mine.json` in the preset search path): text printed
/// there (a summary, `--json`, an analysis, an error) must never land in one of them, nor in
/// standard input's file (`mixfx analyze in.wav --json >> in.wav`, `mixfx batch m.jsonl 2>>
/// m.jsonl`): by identity, as every output is checked (`OutputFile`).
enum StandardStreams {
    /// 1 or 2 when that stream is a regular file that an argument names (an argument, or the
    /// value of a `--flag=value`, or a track's file `N:FILE`, that is an existing regular file)
    /// or that standard input is, with that file in words ("'pm.txt'", "standard input's
    /// file"); nil when neither is. By identity, and
    /// by version for one file seen under other numbers (`FileVersion.mayBeOneFile`).
    static func redirectedIntoAnArgument(_ arguments: [String]) -> (stream: Int32, file: String)? {
        let streams = regularFileStatuses()
        guard !streams.isEmpty else { return nil }
        var named = FileIdentitySet()
        if let id = StandardInput.fileIdentity { named.insert(id, spelling: "standard input's file", version: StandardInput.fileStatus.map(FileVersion.init)) }
        func insert(_ path: String) {
            if let st = FileSystem.status(path), (st.st_mode & S_IFMT) == S_IFREG { named.insert(path, spelling: "'\(PathBytes.shown(path))'") }
        }
        // (a preset named, not a path: `--preset mine`, `preset show mine`, found as mine.json
        // in the preset search path)
        let presetFolders = PresetLibrary().searchDirectories
        for a in arguments {
            var candidates = a.hasPrefix("--") && a.contains("=") ? [a, String(a[a.index(after: a.firstIndex(of: "=")!)...])] : [a]
            // (a track's file: `--pitchmap 2:pm.txt`, `--timemap=1:tm.txt`)
            for c in candidates {
                if let colon = c.firstIndex(of: ":"), colon > c.startIndex, c[..<colon].allSatisfy(\.isASCII), c[..<colon].allSatisfy(\.isNumber) {
                    candidates.append(String(c[c.index(after: colon)...]))
                }
            }
            for c in candidates where !c.isEmpty && c != StandardInput.path {
                insert(c)
                if !c.contains("/") && !c.hasSuffix(".json") && !c.hasPrefix("-") {
                    for folder in presetFolders { insert(folder + "/" + c + ".json") }
                }
            }
        }
        for (fd, st) in streams {
            let id = FileIdentity.existing(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
            // (one file under other numbers: on one device where its file system may show one so)
            if let file = named.member(id) ?? named.memberSeenAs(st, onOneDevice: FileSystem.mayShowOneFileUnderTwoNumbers(fd)) { return (fd, file) }
        }
        return nil
    }

    /// The names (lowercased) of the regular files open on `descriptors`, as the system gives
    /// them (`/proc/self/fd`); nil when one is not known (no /proc, a file deleted) or a file
    /// has other names too (hard links), so that a caller looks at every file instead.
    static func names(of descriptors: [Int32]) -> Set<String>? {
        var names = Set<String>()
        for fd in descriptors {
            var st = stat()
            guard fstat(fd, &st) == 0, st.st_nlink == 1, let target = FileSystem.linkTarget("/proc/self/fd/\(fd)"),
                  target.hasPrefix("/"), !target.hasSuffix(" (deleted)") else { return nil }
            names.insert(FileIdentity.name(of: target).lowercased())
        }
        return names
    }

    /// Standard error (2) and output (1) that are regular files, with their identities.
    static func regularFiles() -> [(Int32, FileIdentity)] {
        regularFileStatuses().map { ($0.0, .existing(device: UInt64($0.1.st_dev), inode: UInt64($0.1.st_ino))) }
    }

    /// Standard error (2) and output (1) that are regular files, with their status.
    static func regularFileStatuses() -> [(Int32, stat)] {
        [Int32(2), 1].compactMap { fd in
            var st = stat()
            guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
            return (fd, st)
        }
    }
}
