/// A parsed JSON document that keeps the difference between `true` and `1`, so the schema can
/// say exactly what is wrong with a field.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// What kind of value this is, for messages ("a string").
    var kindText: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// Why a JSON text was refused, with the line and column where the parser stopped.
public struct JSONSyntaxError: Error, Equatable, CustomStringConvertible {
    public var line: Int
    public var column: Int
    public var problem: String
    public var description: String { "line \(line), column \(column): \(problem)" }
}

extension JSONValue {
    /// The deepest nesting a document may have.
    public static let maximumDepth = 64

    /// Parses standard JSON (RFC 8259) and nothing else: no trailing commas, no comments, no
    /// NaN or Infinity, no leading zeros or `+`, no control characters in strings, and a key
    /// given twice in one object is an error (parsers disagree on which one wins).
    public static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONValue {
        var p = JSONParser(bytes: bytes)
        // (a UTF-8 byte-order mark, as some Windows editors save: JSON's RFC 8259 lets a reader
        // ignore it)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { p.i = 3 }
        p.skipSpace()
        let v = try p.value(depth: 0)
        p.skipSpace()
        if p.i < bytes.count { throw p.error("unexpected text after the document") }
        return v
    }
}

private struct JSONParser {
    let bytes: [UInt8]
    var i = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    func error(_ problem: String) -> JSONSyntaxError {
        var line = 1, column = 1
        for b in bytes[..<min(i, bytes.count)] {
            if b == 0x0A { line += 1; column = 1 } else if b & 0xC0 != 0x80 { column += 1 }
        }
        return JSONSyntaxError(line: line, column: column, problem: problem)
    }

    var peek: UInt8? { i < bytes.count ? bytes[i] : nil }

    mutating func skipSpace() {
        while let b = peek, b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D { i += 1 }
    }

    mutating func expect(_ word: String, _ v: JSONValue) throws(JSONSyntaxError) -> JSONValue {
        for b in word.utf8 {
            guard peek == b else { throw error("expected '\(word)'") }
            i += 1
        }
        return v
    }

    mutating func value(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        guard depth < JSONValue.maximumDepth else { throw error("nested more than \(JSONValue.maximumDepth) levels deep") }
        guard let b = peek else { throw error("unexpected end of the text") }
        switch b {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try expect("true", .bool(true))
        case UInt8(ascii: "f"): return try expect("false", .bool(false))
        case UInt8(ascii: "n"): return try expect("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default:
            throw error(b < 0x80 ? "unexpected character '\(Character(Unicode.Scalar(b)))'" : "unexpected byte 0x\(String(b, radix: 16, uppercase: true)) (text outside JSON's strings is ASCII)")
        }
    }

    mutating func object(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        i += 1
        var result: [String: JSONValue] = [:]
        skipSpace()
        if peek == UInt8(ascii: "}") { i += 1; return .object(result) }
        while true {
            skipSpace()
            guard peek == UInt8(ascii: "\"") else {
                throw error(peek == UInt8(ascii: "}") ? "a comma before '}' (trailing commas are not JSON)" : "expected a key in double quotes")
            }
            let keyStart = i
            let key = try string()
            if result[key] != nil {
                i = keyStart
                throw error("the key \"\(key)\" appears twice in one object")
            }
            skipSpace()
            guard peek == UInt8(ascii: ":") else { throw error("expected ':' after the key \"\(key)\"") }
            i += 1
            skipSpace()
            result[key] = try value(depth: depth + 1)
            skipSpace()
            switch peek {
            case UInt8(ascii: ","): i += 1
            case UInt8(ascii: "}"): i += 1; return .object(result)
            default: throw error("expected ',' or '}'")
            }
        }
    }

    mutating func array(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        i += 1
        var result: [JSONValue] = []
        skipSpace()
        if peek == UInt8(ascii: "]") { i += 1; return .array(result) }
        while true {
            skipSpace()
            if peek == UInt8(ascii: "]") { throw error("a comma before ']' (trailing commas are not JSON)") }
            result.append(try value(depth: depth + 1))
            skipSpace()
            switch peek {
            case UInt8(ascii: ","): i += 1
            case UInt8(ascii: "]"): i += 1; return .array(result)
            default: throw error("expected ',' or ']'")
            }
        }
    }

    mutating func number() throws(JSONSyntaxError) -> Double {
        let start = i
        func digits() -> Int {
            let s = i
            while let b = peek, b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") { i += 1 }
            return i - s
        }
        if peek == UInt8(ascii: "-") { i += 1 }
        if peek == UInt8(ascii: "0") {
            i += 1
            if let b = peek, b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") { throw error("a number with a leading zero") }
        } else if digits() == 0 {
            throw error("expected a digit")
        }
        if peek == UInt8(ascii: ".") {
            i += 1
            guard digits() > 0 else { throw error("expected a digit after '.'") }
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            i += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { i += 1 }
            guard digits() > 0 else { throw error("expected a digit in the exponent") }
        }
        let text = String(decoding: bytes[start..<i], as: UTF8.self)
        guard let v = Double(text), v.isFinite else { i = start; throw error("the number \(text) is out of range") }
        return v
    }

    mutating func string() throws(JSONSyntaxError) -> String {
        i += 1
        var out: [UInt8] = []
        while true {
            guard let b = peek else { throw error("a string is not closed") }
            i += 1
            switch b {
            case UInt8(ascii: "\""):
                guard let s = String(validating: out, as: UTF8.self) else { throw error("a string is not valid UTF-8") }
                return s
            case UInt8(ascii: "\\"):
                guard let e = peek else { throw error("a string is not closed") }
                i += 1
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard peek == UInt8(ascii: "\\"), i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "u") else {
                            throw error("a lone surrogate in \\u escapes")
                        }
                        i += 2
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw error("a lone surrogate in \\u escapes") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let u = Unicode.Scalar(scalar) else { throw error("a lone surrogate in \\u escapes") }
                    out.append(contentsOf: Array(String(Character(u)).utf8))
                default: throw error("an unknown escape '\\\(Character(Unicode.Scalar(e)))'")
                }
            case 0..<0x20: throw error("a control character in a string (write it as an escape)")
            default: out.append(b)
            }
        }
    }

    mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
        var v: UInt32 = 0
        for _ in 0..<4 {
            guard let b = peek else { throw error("a \\u escape needs four hex digits") }
            let d: UInt32
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(b - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(b - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(b - UInt8(ascii: "A") + 10)
            default: throw error("a \\u escape needs four hex digits")
            }
            v = v * 16 + d
            i += 1
        }
        return v
    }
}
