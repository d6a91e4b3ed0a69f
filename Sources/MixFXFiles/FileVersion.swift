import Foundation

/// Which state of a file: its size, modification time and change time, to the nanosecond. The
/// change time moves on every write, `chmod`, link or `touch` (it cannot be set back), so a file
/// whose version is the same was not changed in any way. Beside `FileIdentity` (which file),
/// this says whether it is still as it was seen (a batch replaces its own earlier output only
/// while it is still the one its sidecar recorded).
public struct FileVersion: Hashable, Sendable {
    public var size: Int64
    public var modifiedNanoseconds: Int64
    public var changedNanoseconds: Int64

    public init(size: Int64, modifiedNanoseconds: Int64, changedNanoseconds: Int64) {
        self.size = size
        self.modifiedNanoseconds = modifiedNanoseconds
        self.changedNanoseconds = changedNanoseconds
    }

    /// The version a `stat` describes.
    public init(_ st: stat) {
        size = Int64(st.st_size)
        modifiedNanoseconds = Int64(st.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(st.st_mtim.tv_nsec)
        changedNanoseconds = Int64(st.st_ctim.tv_sec) &* 1_000_000_000 &+ Int64(st.st_ctim.tv_nsec)
    }

    /// The version of the file open on `descriptor`, or nil.
    public init?(descriptor: Int32) {
        var st = stat()
        guard fstat(descriptor, &st) == 0 else { return nil }
        self.init(st)
    }
}
