import Foundation
import MixFX

/// The sidecar `OUTPUT.mixfx-batch.json` a batch writes beside each output: what job made it
/// (a hash of everything the output depends on), how far it got, and which files it wrote.
///
/// A sidecar is trusted only when it is mixfx's own (`"generator": "mixfx batch"`) and only for
/// the files it describes as they are now: the output (and the report) it records by device,
/// inode, size and modification time. So a JSON file someone put at the sidecar's name, or a
/// sidecar whose output was since replaced by another file, lets a batch replace nothing. Links
/// are never followed: a symbolic link at the sidecar's name is no sidecar, and one at the
/// output's or report's name is no file a sidecar vouches for.
///
/// Just before a finished output (or report) is renamed into place, the sidecar records the
/// temporary file as `pendingOutput` (`pendingReport`): a rename keeps the device, inode, size
/// and modification time, so a run killed between the rename and its next sidecar write leaves
/// a sidecar in state "rendering" that still names the file now at the output's name, and the
/// next run may replace it (any other file there is still kept).
struct BatchSidecar {
    static let generator = "mixfx batch"
    /// A sidecar is small; a larger file at its name is not one.
    static let maximumBytes = 64 << 10

    var job: String
    var hash: String
    var frames: Int
    /// "rendering" (written before the render) or "done".
    var state: String
    /// The output and the report this batch wrote, as they were when written.
    var output: FileRecord?
    var report: FileRecord?
    /// While "rendering": the finished temporary file about to be renamed to the output's
    /// (report's) name, as it was just before the rename.
    var pendingOutput: FileRecord?
    var pendingReport: FileRecord?
    /// Which manifest's job wrote it (`BatchCommand.ownerKey`: `file:` and the manifest's path
    /// resolved, or `stdin:` and the folder a manifest on standard input was read in) and a
    /// hash of that manifest's bytes; nil in a sidecar of an older mixfx.
    var manifestKey: String? = nil
    var manifestBytes: String? = nil

    /// The sidecar at `path` if it is mixfx's own; nil for anything else (nothing there, not
    /// JSON, another program's file).
    static func read(_ path: String) -> BatchSidecar? {
        guard let st = FileSystem.linkStatus(path), (st.st_mode & S_IFMT) == S_IFREG,
              let bytes = try? RegularFile.read(path, maximumBytes: maximumBytes),
              let obj = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
              obj["generator"] as? String == generator,
              let job = obj["job"] as? String, let hash = obj["hash"] as? String,
              let frames = obj["frames"] as? Int, let state = obj["state"] as? String else { return nil }
        return BatchSidecar(job: job, hash: hash, frames: frames, state: state,
                            output: FileRecord(json: obj["output"]), report: FileRecord(json: obj["report"]),
                            pendingOutput: FileRecord(json: obj["pendingOutput"]), pendingReport: FileRecord(json: obj["pendingReport"]),
                            manifestKey: obj["manifest"] as? String, manifestBytes: obj["manifestBytes"] as? String)
    }

    /// Whether the file at `path` is the output this sidecar recorded.
    func describes(output path: String) -> Bool { FileRecord(path: path).map { output?.describes($0, at: path) == true } ?? false }

    /// Whether the file at `path` is the report this sidecar recorded.
    func describes(report path: String) -> Bool { FileRecord(path: path).map { report?.describes($0, at: path) == true } ?? false }

    /// The file at the output's name, when this sidecar vouches for it: the output it recorded,
    /// or (a run stopped between the rename and its bookkeeping) the temporary file it recorded
    /// just before renaming it there.
    func vouchedOutput(_ path: String) -> FileRecord? { vouched(path, output, pendingOutput) }

    /// The file at the report's name, when this sidecar vouches for it (as `vouchedOutput`).
    func vouchedReport(_ path: String) -> FileRecord? { vouched(path, report, pendingReport) }

    private func vouched(_ path: String, _ recorded: FileRecord?, _ pending: FileRecord?) -> FileRecord? {
        guard var now = FileRecord(path: path) else { return nil }
        // (the record's hash goes on with it: the bytes are the ones hashed)
        if let recorded, recorded.describes(now, at: path) {
            now.contentHash = recorded.contentHash
            return now
        }
        if state == "rendering", let pending, pending.describes(now, at: path) {
            now.contentHash = pending.contentHash
            return now
        }
        return nil
    }

    var json: [String: Any] {
        ["generator": BatchSidecar.generator, "job": job, "hash": hash, "frames": frames, "state": state,
         "mixfxVersion": MixFXCommand.version,
         "output": output?.json ?? NSNull(), "report": report?.json ?? NSNull(),
         "pendingOutput": pendingOutput?.json ?? NSNull(), "pendingReport": pendingReport?.json ?? NSNull(),
         "manifest": manifestKey as Any? ?? NSNull(), "manifestBytes": manifestBytes as Any? ?? NSNull()]
    }
}

/// A file as it is now: device, inode, size, modification time and change time (to the
/// nanosecond), and for a file a batch wrote, a hash of its bytes (`ContentHash`).
///
/// A record describes the file at its name now (`describes`) when the inode (on a volume of
/// whole-second times, which may number files afresh at each mount: or the bytes), size and
/// modification time are the same and either the change time is too or, where it moved (a
/// backup restoring access times, a snapshot's hard link, `chmod -R`), the bytes hash the same:
/// so an output edited in place with its mtime set back (`touch -r`, a tagger keeping times) is
/// no longer the batch's, while one only looked after still is. The device is recorded but not
/// compared: NFS clients number one export's device differently, so a job finished on one node
/// and run again on another would find its own output "changed"; a record always describes the
/// file at one name (the sidecar's neighbour), where the rest tells the file. A temporary
/// file's record (before its rename, which moves the change time) has its hash and no change
/// time. A record of an older mixfx, with neither, is compared by inode, size and mtime.
struct FileRecord {
    var device: UInt64, inode: UInt64, size: Int64, modifiedNanoseconds: Int64
    var changedNanoseconds: Int64?
    var contentHash: UInt64?

    /// Whether `now` (the file at `path` as it is now) is the file this record describes, unchanged.
    func describes(_ now: FileRecord, at path: String) -> Bool {
        guard size == now.size && modifiedNanoseconds == now.modifiedNanoseconds else { return false }
        guard inode == now.inode else {
            // (exFAT and FAT number their files afresh at each mount, and their times are whole
            // seconds: there the bytes decide)
            guard now.modifiedNanoseconds % 1_000_000_000 == 0, (now.changedNanoseconds ?? 0) % 1_000_000_000 == 0,
                  let h = contentHash else { return false }
            return ContentHash.of(path: path, expected: now) == h
        }
        if let c = changedNanoseconds, c == now.changedNanoseconds { return true }
        if let h = contentHash { return ContentHash.of(path: path, expected: now) == h }
        return changedNanoseconds == nil
    }

    /// This record with the hash of the file's bytes (the file at `path`, or open on `descriptor`).
    func hashed(path: String) -> FileRecord {
        var r = self
        r.contentHash = ContentHash.of(path: path, expected: self)
        return r
    }

    func hashed(descriptor: Int32) -> FileRecord {
        var r = self
        r.contentHash = ContentHash.of(descriptor: descriptor)
        return r
    }

    /// The regular file at `path` itself, or nil: a symbolic link there is not followed (a
    /// sidecar never vouches for a file reached through a link).
    init?(path: String) {
        guard let st = FileSystem.linkStatus(path) else { return nil }
        self.init(st)
    }

    /// The regular file open on `descriptor` (a temporary file about to be renamed), or nil.
    init?(descriptor: Int32) {
        var st = stat()
        guard fstat(descriptor, &st) == 0 else { return nil }
        self.init(st)
        changedNanoseconds = nil
    }

    private init?(_ st: stat) {
        guard (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        size = Int64(st.st_size)
        modifiedNanoseconds = Int64(st.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(st.st_mtim.tv_nsec)
        changedNanoseconds = Int64(st.st_ctim.tv_sec) &* 1_000_000_000 &+ Int64(st.st_ctim.tv_nsec)
    }

    init?(json: Any?) {
        guard let o = json as? [String: Any], let d = o["device"] as? String, let i = o["inode"] as? String,
              let device = UInt64(d), let inode = UInt64(i), let size = o["size"] as? Int,
              let m = o["modifiedNanoseconds"] as? String, let modified = Int64(m) else { return nil }
        self.device = device
        self.inode = inode
        self.size = Int64(size)
        modifiedNanoseconds = modified
        changedNanoseconds = (o["changedNanoseconds"] as? String).flatMap { Int64($0) }
        contentHash = (o["contentHash"] as? String).flatMap { UInt64($0, radix: 16) }
    }

    /// The file's version, when the record has its change time (a file as it is now).
    var version: FileVersion? {
        changedNanoseconds.map { FileVersion(size: size, modifiedNanoseconds: modifiedNanoseconds, changedNanoseconds: $0) }
    }

    // (64-bit values as strings: JSON numbers are doubles to most readers)
    /// The file's identity (device and inode).
    var identity: FileIdentity { .existing(device: device, inode: inode) }

    var json: [String: Any] {
        ["device": String(device), "inode": String(inode), "size": Int(size), "modifiedNanoseconds": String(modifiedNanoseconds),
         "changedNanoseconds": changedNanoseconds.map { String($0) as Any } ?? NSNull(),
         "contentHash": contentHash.map { String($0, radix: 16) as Any } ?? NSNull()]
    }
}
