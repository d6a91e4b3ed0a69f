import Foundation
import MixFX

/// A 64-bit hash of a file's bytes, for a batch's sidecar: whether an output whose change time
/// moved without its size or modification time (a backup that restores access times, a
/// snapshot's hard link, `chmod -R`) still holds the bytes the batch wrote. It tells an accident
/// from the same bytes, not a forgery (whoever can write the folder can write the sidecar too).
///
/// Eight bytes at a time: h ← (h ⊕ w)·k, then h ⊕= h ≫ 29 (k = 0x9E3779B97F4A7C15, an odd
/// constant whose bits are well mixed); the tail's bytes and the length end it.
enum ContentHash {
    /// The hash of the whole file open on `fd` (read with `pread` from 0; the offset is kept),
    /// or nil when it cannot be read.
    static func of(descriptor fd: Int32) -> UInt64? {
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 8)
        defer { buffer.deallocate() }
        var h: UInt64 = 0x243F_6A88_85A3_08D3
        var offset: off_t = 0
        while true {
            let n = pread(fd, buffer.baseAddress!, chunk, offset)
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { return nil }
            if n == 0 { break }
            let words = n / 8
            let w = buffer.baseAddress!.assumingMemoryBound(to: UInt64.self)
            for i in 0..<words { h = mix(h, UInt64(littleEndian: w[i])) }
            var tail: UInt64 = 0
            for i in (words * 8)..<n { tail = tail << 8 | UInt64(buffer[i]) }
            if n % 8 != 0 { h = mix(h, tail) }
            offset += off_t(n)
            // (a short read that is not the end: the next starts where it stopped; the tail's
            // words then fall differently, which only a file read in odd pieces would see)
        }
        return mix(h, UInt64(offset))
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

    /// The hash of `bytes` (the same as a file holding them).
    static func of(bytes: [UInt8]) -> UInt64 {
        var h: UInt64 = 0x243F_6A88_85A3_08D3
        let words = bytes.count / 8
        bytes.withUnsafeBytes { b in
            for i in 0..<words { h = mix(h, UInt64(littleEndian: b.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self))) }
        }
        var tail: UInt64 = 0
        for i in (words * 8)..<bytes.count { tail = tail << 8 | UInt64(bytes[i]) }
        if bytes.count % 8 != 0 { h = mix(h, tail) }
        return mix(h, UInt64(bytes.count))
    }

    @inline(__always)
    private static func mix(_ h: UInt64, _ w: UInt64) -> UInt64 {
        let x = (h ^ w) &* 0x9E37_79B9_7F4A_7C15
        return x ^ (x >> 29)
    }
}
