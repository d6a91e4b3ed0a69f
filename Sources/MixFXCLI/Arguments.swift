/// A small hand-written argument reader: `--flag value`, `--flag=value`, short `-o value`,
/// boolean flags, positionals, and `--` to end options.
struct Arguments {
    private var tokens: [String]
    private var index = 0
    private(set) var positionals: [String] = []

    init(_ tokens: [String]) { self.tokens = tokens }

    /// The next option name (`--bass`) with an inline value if given as `--bass=4`; positionals
    /// are collected on the way. Nil at the end.
    mutating func nextOption() -> (name: String, inline: String?)? {
        while index < tokens.count {
            let t = tokens[index]
            index += 1
            if t == "--" {
                positionals += tokens[index...]
                index = tokens.count
                return nil
            }
            if t.hasPrefix("--") {
                if let eq = t.firstIndex(of: "=") {
                    return (String(t[..<eq]), String(t[t.index(after: eq)...]))
                }
                return (t, nil)
            }
            if t.hasPrefix("-") && t.count > 1 && Double(t) == nil {
                return (t, nil)
            }
            positionals.append(t)
        }
        return nil
    }

    /// Whether the next token is the value of a switch (on, off, true, false, yes, no, 1, 0).
    var nextIsSwitchValue: Bool {
        index < tokens.count && ["on", "off", "true", "false", "yes", "no", "1", "0"].contains(tokens[index].lowercased())
    }

    /// The optional value of an option that may stand alone (`--limit` or `--limit -2`): the
    /// inline value, or the next token when it is a decimal number.
    mutating func optionalNumber(inline: String?) -> String? {
        if let inline { return inline }
        guard index < tokens.count, isDecimal(tokens[index]) else { return nil }
        index += 1
        return tokens[index - 1]
    }

    /// The value of option `name` (inline or the next token).
    mutating func value(for name: String, inline: String?) throws(CLIError) -> String {
        if let inline { return inline }
        guard index < tokens.count else { throw .usage("\(name) needs a value") }
        index += 1
        return tokens[index - 1]
    }
}

/// A decimal number (`-3`, `0.5`, `1e-3`); not hex (`0x10`), `inf`, `nan` or blanks, which
/// `Double(_:)` would take. A decimal beyond the largest Double (`1e309`) is a number out of
/// range, said so with `allowed` (the range) when given.
func parseNumber(_ text: String, flag: String, allowed: String? = nil) throws(CLIError) -> Double {
    guard isDecimal(text), let v = Double(text) else {
        throw .usage("\(flag): '\(text)' is not a number (write it in decimal, e.g. -3 or 0.5)")
    }
    guard v.isFinite else {
        throw .usage("\(flag): \(text) is out of range\(allowed.map { " (allowed: \($0))" } ?? "")")
    }
    return v
}

/// A time in seconds: `90`, `1:30`, `1:30.5` or `1:02:03.25` (minutes and seconds below 60
/// after the first field).
func parseTime(_ text: String, flag: String, allowed: String? = nil) throws(CLIError) -> Double {
    let fields = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
    let bad = CLIError.usage("\(flag): '\(text)' is not a time (seconds, mm:ss.s or h:mm:ss, e.g. 90, 1:30 or 1:02:03.5)")
    guard fields.count <= 3 else { throw bad }
    if fields.count == 1 { return try parseNumber(text, flag: flag, allowed: allowed) }
    var total = 0.0
    for (i, f) in fields.enumerated() {
        guard isDecimal(f), !f.hasPrefix("-"), !f.hasPrefix("+"), !f.contains("e"), !f.contains("E"), let v = Double(f) else { throw bad }
        if i > 0 && v >= 60 { throw bad }
        if i < fields.count - 1 && v.rounded() != v { throw bad }
        total = total * 60 + v
    }
    return total
}

/// [+−]digits[.digits][e[+−]digits], or .digits
func isDecimal(_ text: String) -> Bool {
    var s = Substring(text)
    if s.first == "+" || s.first == "-" { s = s.dropFirst() }
    let mantissa = s.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
    guard mantissa.contains(where: \.isNumber), mantissa.filter({ $0 == "." }).count <= 1 else { return false }
    s = s.dropFirst(mantissa.count)
    if s.first == "e" || s.first == "E" {
        s = s.dropFirst()
        if s.first == "+" || s.first == "-" { s = s.dropFirst() }
        guard !s.isEmpty, s.allSatisfy({ $0.isASCII && $0.isNumber }) else { return false }
        return true
    }
    return s.isEmpty
}
