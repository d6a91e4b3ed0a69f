import Foundation
import MixFX

/// The sidecar `OUTPUT.mixfx-batch.json` a batch writes beside each output: what job made it
/// (a hash of everything the output depends on), how far it got, and which files it wrote.
///
/// A sidecar is trusted only when it is mixfx's own (`"generator": "mixfx batch"`) and only for
/// the files it describes as they are now: the output (and the report) it records by device,
/// inode, size and modification time. So a JSON file someone put at the sidecar's name, or a
/// sidecar whose output was since replaced by another file, lets a batch replace nothing.
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

    /// The sidecar at `path` if it is mixfx's own; nil for anything else (nothing there, not
    /// JSON, another program's file).
    static func read(_ path: String) -> BatchSidecar? {
        guard let bytes = try? RegularFile.read(path, maximumBytes: maximumBytes),
              let obj = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
              obj["generator"] as? String == generator,
              let job = obj["job"] as? String, let hash = obj["hash"] as? String,
              let frames = obj["frames"] as? Int, let state = obj["state"] as? String else { return nil }
        return BatchSidecar(job: job, hash: hash, frames: frames, state: state,
                            output: FileRecord(json: obj["output"]), report: FileRecord(json: obj["report"]))
    }

    /// Whether the file at `path` is the output this sidecar recorded.
    func describes(output path: String) -> Bool { output != nil && output == FileRecord(path: path) }

    /// Whether the file at `path` is the report this sidecar recorded.
    func describes(report path: String) -> Bool { report != nil && report == FileRecord(path: path) }

    var json: [String: Any] {
        ["generator": BatchSidecar.generator, "job": job, "hash": hash, "frames": frames, "state": state,
         "mixfxVersion": MixFXCommand.version,
         "output": output?.json ?? NSNull(), "report": report?.json ?? NSNull()]
    }
}

/// A file as it is now: device, inode, size and modification time (to the nanosecond). Two
/// records are equal only for the same file, unchanged.
struct FileRecord: Equatable {
    var device: UInt64, inode: UInt64, size: Int64, modifiedNanoseconds: Int64

    /// The regular file at `path` (links followed), or nil.
    init?(path: String) {
        guard let st = FileSystem.status(path), (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        size = Int64(st.st_size)
        modifiedNanoseconds = Int64(st.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(st.st_mtim.tv_nsec)
    }

    init?(json: Any?) {
        guard let o = json as? [String: Any], let d = o["device"] as? String, let i = o["inode"] as? String,
              let device = UInt64(d), let inode = UInt64(i), let size = o["size"] as? Int,
              let m = o["modifiedNanoseconds"] as? String, let modified = Int64(m) else { return nil }
        self.device = device
        self.inode = inode
        self.size = Int64(size)
        modifiedNanoseconds = modified
    }

    // (64-bit values as strings: JSON numbers are doubles to most readers)
    /// The file's identity (device and inode).
    var identity: FileIdentity { .existing(device: device, inode: inode) }

    var json: [String: Any] {
        ["device": String(device), "inode": String(inode), "size": Int(size), "modifiedNanoseconds": String(modifiedNanoseconds)]
    }
}
