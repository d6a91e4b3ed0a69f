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

    /// The value of option `name` (inline or the next token).
    mutating func value(for name: String, inline: String?) throws(CLIError) -> String {
        if let inline { return inline }
        guard index < tokens.count else { throw .usage("\(name) needs a value") }
        index += 1
        return tokens[index - 1]
    }
}

func parseNumber(_ text: String, flag: String) throws(CLIError) -> Double {
    guard let v = Double(text), v.isFinite else {
        throw .usage("\(flag): '\(text)' is not a number")
    }
    return v
}
