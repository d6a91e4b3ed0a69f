#if canImport(Glibc)
import Glibc
#endif

/// An Ogg file names its logical stream by a 32-bit serial number, which libsndfile draws at
/// random: the same render would be different bytes each time. mixfx sets the serial itself,
/// from what was rendered, by rewriting it in every page of the finished file (and each page's
/// CRC, which covers it): the same job gives the same bytes.
///
/// Page layout (RFC 3533): "OggS", version, header type, granule position (8 bytes), serial
/// (4, little-endian, at offset 14), page sequence (4), CRC (4, at offset 22), the segment count
/// n, n lacing values, then the body (their sum). The CRC is CRC-32 with polynomial 0x04C11DB7,
/// not reflected, initial value 0 and no final xor, computed with the CRC field zeroed.
enum OggStreamSerial {
    /// Rewrites the serial of every page of the stream the file `fd` (open for reading and
    /// writing) starts with to `serial`. Returns false if the file is not such an Ogg file
    /// (nothing is changed then beyond pages already rewritten, which are valid pages).
    static func rewrite(descriptor fd: Int32, serial: UInt32) -> Bool {
        var offset: off_t = 0
        var original: UInt32?
        var page = [UInt8](repeating: 0, count: 27 + 255 + 255 * 255)
        while true {
            let headerRead = page.withUnsafeMutableBytes { pread(fd, $0.baseAddress!, 27, offset) }
            if headerRead == 0 { return original != nil }
            guard headerRead == 27, page[0] == 0x4F, page[1] == 0x67, page[2] == 0x67, page[3] == 0x53 else { return false }
            let segments = Int(page[26])
            let lacingRead = page.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + 27, segments, offset + 27) }
            guard lacingRead == segments else { return false }
            let bodyBytes = page[27..<(27 + segments)].reduce(0) { $0 + Int($1) }
            let length = 27 + segments + bodyBytes
            let bodyRead = page.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + 27 + segments, bodyBytes, offset + off_t(27 + segments)) }
            guard bodyRead == bodyBytes else { return false }
            let pageSerial = UInt32(page[14]) | UInt32(page[15]) << 8 | UInt32(page[16]) << 16 | UInt32(page[17]) << 24
            if original == nil { original = pageSerial }
            if pageSerial == original {
                for i in 0..<4 { page[14 + i] = UInt8(truncatingIfNeeded: serial >> (8 * UInt32(i))) }
                for i in 22..<26 { page[i] = 0 }
                let crc = checksum(page[0..<length])
                for i in 0..<4 { page[22 + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i))) }
                let written = page.withUnsafeBytes { pwrite(fd, $0.baseAddress!, length, offset) }
                guard written == length else { return false }
            }
            offset += off_t(length)
        }
    }

    /// Ogg's CRC-32 of `bytes` (see the type's notes).
    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0
        for b in bytes { crc = (crc << 8) ^ table[Int((crc >> 24) ^ UInt32(b))] }
        return crc
    }

    static let table: [UInt32] = (0..<256).map { i in
        var r = UInt32(i) << 24
        for _ in 0..<8 { r = r & 0x8000_0000 != 0 ? (r << 1) ^ 0x04C1_1DB7 : r << 1 }
        return r
    }

    /// A serial from `text` (FNV-1a, folded to 32 bits).
    static func serial(from text: String) -> UInt32 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in text.utf8 { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }
        return UInt32(truncatingIfNeeded: h ^ (h >> 32))
    }
}
