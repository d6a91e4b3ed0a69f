import Foundation

/// File names on Linux are bytes, and not every byte string is UTF-8; mixfx's paths are Swift
/// `String`s. This is the one mapping between the two, so that any name a user can make is found
/// as an input and written as an output under exactly its own bytes.
///
/// - Bytes that form UTF-8 characters are those characters.
/// - Every other byte b (not part of valid UTF-8) is held as the private-use character
///   U+F700 + b (b is 0x80...0xFF, so U+F780...U+F7FF).
/// - A name that really contains one of those private-use characters has each byte of its UTF-8
///   held the same way, so the mapping is one-to-one: `bytes(string(b)) == b` for every `b`.
///
/// Every path handed to the system goes through `withCString` (`MixFXFiles` does it for the
/// whole program); every name read from the system (arguments, `realpath`, `readdir`) through
/// `string`. Messages show such bytes as `\xNN` (`shown`).
public enum PathBytes {
    static let rawBase: UInt32 = 0xF700
    static let rawRange: ClosedRange<UInt32> = 0xF780...0xF7FF

    /// The `String` for the name `bytes`.
    public static func string(_ bytes: some Collection<UInt8>) -> String {
        let b = Array(bytes)
        // the common case: valid UTF-8 with no character of the raw range
        if let s = String(validating: b, as: UTF8.self), !s.unicodeScalars.contains(where: { rawRange.contains($0.value) }) {
            return s
        }
        var scalars = String.UnicodeScalarView()
        var i = 0
        while i < b.count {
            let n = sequenceLength(b[i])
            if n > 1, i + n <= b.count, let s = String(validating: b[i..<(i + n)], as: UTF8.self),
               let scalar = s.unicodeScalars.first, !rawRange.contains(scalar.value) {
                scalars.append(scalar)
                i += n
            } else if b[i] < 0x80 {
                scalars.append(Unicode.Scalar(b[i]))
                i += 1
            } else {
                scalars.append(Unicode.Scalar(rawBase + UInt32(b[i]))!)
                i += 1
            }
        }
        return String(scalars)
    }

    /// The bytes of the name `path` names (the inverse of `string`).
    public static func bytes(_ path: String) -> [UInt8] {
        guard path.unicodeScalars.contains(where: { rawRange.contains($0.value) }) else { return Array(path.utf8) }
        var out: [UInt8] = []
        out.reserveCapacity(path.utf8.count)
        for scalar in path.unicodeScalars {
            if rawRange.contains(scalar.value) {
                out.append(UInt8(scalar.value - rawBase))
            } else {
                out.append(contentsOf: String(scalar).utf8)
            }
        }
        return out
    }

    /// Calls `body` with `path` as the C string of its bytes (for `open`, `stat`, ...).
    public static func withCString<R>(_ path: String, _ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        var b = bytes(path)
        b.append(0)
        return try b.withUnsafeBufferPointer { try $0.withMemoryRebound(to: CChar.self) { try body($0.baseAddress!) } }
    }

    /// The name of a C string from the system (`realpath`, `readlink`, `readdir`).
    public static func string(cString p: UnsafePointer<CChar>) -> String {
        string(UnsafeRawBufferPointer(start: p, count: strlen(p)).bindMemory(to: UInt8.self))
    }

    /// `text` as one line that is safe to print on a terminal: control characters (newlines,
    /// escapes, C1 codes) and bytes that are not UTF-8 are shown as `\n`, `\t`, `\r` and
    /// `\xNN`, and a backslash as itself. A name can carry any of them; a message stays one line
    /// and cannot drive the terminal.
    public static func shown(_ text: String, keepingTabs: Bool = false) -> String {
        let escapes = { (s: Unicode.Scalar) in needsEscape(s) && !(keepingTabs && s == "\t") }
        guard text.unicodeScalars.contains(where: escapes) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            guard escapes(scalar) else {
                out.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                let byte = rawRange.contains(scalar.value) ? scalar.value - rawBase : scalar.value
                out += "\\x" + (byte < 16 ? "0" : "") + String(byte, radix: 16)
            }
        }
        return out
    }

    static func needsEscape(_ s: Unicode.Scalar) -> Bool {
        s.value < 0x20 || (0x7F...0x9F).contains(s.value) || rawRange.contains(s.value)
    }

    /// How many bytes a UTF-8 sequence starting with `lead` has (1 for anything else).
    static func sequenceLength(_ lead: UInt8) -> Int {
        switch lead {
        case 0xC2...0xDF: 2
        case 0xE0...0xEF: 3
        case 0xF0...0xF4: 4
        default: 1
        }
    }
}
