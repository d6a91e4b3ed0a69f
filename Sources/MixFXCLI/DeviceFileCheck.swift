import Foundation
import MixFX

/// The checks `mixfx play` makes on the files its `--device` would write, before anything is
/// opened. ALSA's file plugin opens its file itself, with O_CREAT|O_TRUNC and following links,
/// when the device opens: mixfx cannot make that open exclusive, so it refuses what it can see
/// beforehand instead (an input, an existing file without --force, a link, a missing folder, a
/// name ALSA rewrites, a command). A file put in the way between the check and the open is not
/// caught. Files named by the device string are checked in full (`ALSADeviceString`, and any
/// argument value a definition of the ALSA configuration makes its file); files such a
/// definition chose itself (`ALSAFilePlugins`) only for being an input or a link: the
/// configuration is the user's own, for every program.
enum DeviceFileCheck {
    /// Refuses `device` (exit 2, the value and what is allowed named) unless every file it would
    /// write is accounted for and allowed; `reads` are the session's inputs, `force` lets an
    /// existing file be replaced (never an input, never through a link). Returns the files the
    /// device writes (for `save`, which never writes over one).
    @discardableResult
    static func check(device: String, reads: FileIdentitySet, force: Bool) throws(CLIError) -> [String] {
        let writes = ALSADeviceString.writes(device)
        if let why = writes.unaccounted {
            throw .usage("--device: '\(device)': \(why); mixfx cannot tell which files it would write. Give a plain device (default, hw:0, plug:hw:0), a file device (file:'out.raw',raw, tee:default,'out.raw',raw, plug:'file:out.raw'), or define it in your ALSA configuration")
        }
        var named = FileIdentitySet()
        for file in writes.files {
            try checkFile(file, device: device, reads: reads, force: force)
            if let first = named.insert(file) {
                throw .usage("--device: '\(device)' writes '\(file)'\(first == file ? "" : " ('\(first)')") twice; give each file plugin its own file")
            }
        }
        // a file plugin the ALSA configuration defines (a tap in ~/.asoundrc) writes the file the
        // configuration chose, as it does for every program: still never an input, never
        // through a link
        let configured = ALSAFilePlugins.files(device: device) ?? []
        for file in configured where !writes.files.contains(file) {
            // a value of the device string that a definition made its file: named here, checked in full
            if writes.values.contains(file) {
                try checkFile(file, device: device, reads: reads, force: force)
                continue
            }
            if file.hasPrefix("|") || file.contains("%") { continue }
            if let input = reads.memberByIdentityOrName(file) {
                throw .usage("--device: '\(device)' would write to '\(file)'\(input == file ? "" : " ('\(input)')") (a file plugin of the ALSA configuration), a file this session reads; give the device another file")
            }
            if let link = FileSystem.linkStatus(file), (link.st_mode & S_IFMT) == S_IFLNK {
                throw .usage("--device: '\(device)': '\(file)' (a file plugin of the ALSA configuration) is a symbolic link, which ALSA's file plugin would follow; point the configuration at the file itself")
            }
        }
        return writes.files + configured.filter { !$0.hasPrefix("|") && !$0.contains("%") }
    }

    /// One file name as the file plugin is given it (relative to the current folder).
    static func checkFile(_ file: String, device: String, reads: FileIdentitySet, force: Bool) throws(CLIError) {
        let prefix = "--device: '\(device)'"
        if file.isEmpty {
            throw .usage("\(prefix) gives the file plugin an empty file name; name the file it writes (file:'out.raw',raw)")
        }
        if file.hasPrefix("|") {
            throw .usage("\(prefix): '\(file)' would run a shell command (ALSA's file plugin pipes the sound to a name that starts with |); mixfx does not run commands from --device: name a file")
        }
        if file.contains("%") {
            throw .usage("\(prefix): '\(file)' holds %, which ALSA's file plugin replaces once the device opens (%r rate, %c channels, %b bits, %f format, %x by x), so the file it writes cannot be checked beforehand; write the name out in full")
        }
        // (by identity, or by name where the folder does not tell case apart)
        if let input = reads.memberByIdentityOrName(file) {
            throw .usage("\(prefix) would write to '\(file)'\(input == file ? "" : " ('\(input)')"), a file this session reads; give the device another file")
        }
        let link = FileSystem.linkStatus(file)
        if let link, (link.st_mode & S_IFMT) == S_IFLNK {
            throw .usage("\(prefix): '\(file)' is a symbolic link, which ALSA's file plugin would follow (it cannot be told not to), even with --force; name the file itself")
        }
        let folder = FileIdentity.folder(of: file)
        guard let folderStatus = FileSystem.status(folder), (folderStatus.st_mode & S_IFMT) == S_IFDIR else {
            throw .usage("\(prefix): the folder of '\(file)' ('\(folder)') does not exist; create it first")
        }
        // a FIFO or a device (/dev/null) is written into, not replaced
        if let link, !force, (link.st_mode & S_IFMT) != S_IFIFO, (link.st_mode & S_IFMT) != S_IFCHR {
            throw .usage("\(prefix) would write over '\(file)', which exists (ALSA's file plugin truncates it); use --force to let it, or name a new file")
        }
    }
}
