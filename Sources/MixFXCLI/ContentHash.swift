import Foundation
import MixFX

/// A 64-bit hash of a file's bytes, for a batch's sidecar: whether an output whose change time
/// moved without its size or modification time (a backup that restores access times, a
/// snapshot's hard link, `chmod -R`) still holds the bytes the batch wrote; and for a job's
/// fingerprint, which version of a track is at its name where the times cannot tell (exFAT,
/// FAT: `BatchJob.timesAreCoarse`). It tells an accident from the same bytes, not a forgery
/// (whoever can write the folder can write the sidecar too).
///
/// Four lanes of eight bytes at a time, each h ← (h ⊕ w)·k, then h ⊕= h ≫ 29 (k =
/// 0x9E3779B97F4A7C15, an odd constant whose bits are well mixed; four lanes so the multiplies
/// overlap), joined in order; the tail's bytes and the length end it. The bytes are taken in
/// 1 MiB pieces; the result does not depend on how a file is read.
enum ContentHash {
    /// The hash of the whole file open on `fd` (read with `pread` from 0; the offset is kept),
    /// or nil when it cannot be read.
    static func of(descriptor fd: Int32) -> UInt64? {
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 32)
        defer { buffer.deallocate() }
        var state = State()
        var offset: off_t = 0
        var filled = 0
        while true {
            let n = pread(fd, buffer.baseAddress! + filled, chunk - filled, offset)
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { return nil }
            offset += off_t(n)
            filled += n
            // (whole pieces only, so a short read changes nothing; the last piece at the end)
            if filled == chunk || n == 0 {
                state.add(UnsafeRawBufferPointer(start: buffer.baseAddress!, count: filled), last: n == 0)
                filled = 0
            }
            if n == 0 { break }
        }
        return state.finish(length: UInt64(offset))
    }

    /// The hash of `bytes` (the same as a file holding them).
    static func of(bytes: [UInt8]) -> UInt64 {
        var state = State()
        var start = 0
        bytes.withUnsafeBytes { b in
            while start + (1 << 20) < b.count {
                state.add(UnsafeRawBufferPointer(rebasing: b[start..<(start + (1 << 20))]), last: false)
                start += 1 << 20
            }
            state.add(UnsafeRawBufferPointer(rebasing: b[start...]), last: true)
        }
        return state.finish(length: UInt64(bytes.count))
    }

    private struct State {
        var h: (UInt64, UInt64, UInt64, UInt64) = (0x243F_6A88_85A3_08D3, 0x1319_8A2E_0370_7344, 0xA409_3822_299F_31D0, 0x082E_FA98_EC4E_6C89)

        /// A piece of the bytes: whole 32-byte groups through the lanes; a last piece's rest
        /// word by word, then its tail.
        mutating func add(_ b: UnsafeRawBufferPointer, last: Bool) {
            let groups = b.count / 32
            for g in 0..<groups {
                let o = g * 32
                h.0 = mix(h.0, b.loadUnaligned(fromByteOffset: o, as: UInt64.self))
                h.1 = mix(h.1, b.loadUnaligned(fromByteOffset: o + 8, as: UInt64.self))
                h.2 = mix(h.2, b.loadUnaligned(fromByteOffset: o + 16, as: UInt64.self))
                h.3 = mix(h.3, b.loadUnaligned(fromByteOffset: o + 24, as: UInt64.self))
            }
            guard last else { return }
            var i = groups * 32
            while i + 8 <= b.count {
                h.0 = mix(h.0, b.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                i += 8
            }
            var tail: UInt64 = 0
            while i < b.count { tail = tail << 8 | UInt64(b[i]); i += 1 }
            if b.count % 8 != 0 { h.0 = mix(h.0, tail) }
        }

        func finish(length: UInt64) -> UInt64 {
            mix(mix(mix(mix(h.0, h.1), h.2), h.3), length)
        }
    }

    /// The hash of the regular file at `path`, when it is still the file `expected` (same inode,
    /// size and modification time; a link there is not followed), else nil.
    static func of(path: String, expected: FileRecord) -> UInt64? {
        let fd = FileSystem.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard let now = FileRecord(descriptor: fd), now.inode == expected.inode, now.size == expected.size,
              now.modifiedNanoseconds == expected.modifiedNanoseconds else { return nil }
        return of(descriptor: fd)
    }

    /// The hash of the regular file at `path` (links followed: a track may be one), or nil when
    /// it cannot be opened or is not a regular file (a FIFO is not read).
    static func of(regularFile path: String) -> UInt64? {
        let fd = FileSystem.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return of(descriptor: fd)
    }

    @inline(__always)
    private static func mix(_ h: UInt64, _ w: UInt64) -> UInt64 {
        let x = (h ^ w) &* 0x9E37_79B9_7F4A_7C15
        return x ^ (x >> 29)
    }
}
