/// "Did you mean ...?" for a mistyped name: the known names nearest to it.
public enum NameSuggestion {
    /// The names in `candidates` that `name` most likely meant: those at the smallest edit
    /// distance (insertions, deletions, substitutions, and swaps of two neighbours), when it is
    /// at most 2 and smaller than the name itself; else the one candidate `name` begins, if only
    /// one does. Empty when there is no likely one.
    public static func nearest(_ name: String, among candidates: [String]) -> [String] {
        let unique = candidates.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }.filter { $0 != name }
        let typed = Array(name)
        let core = typed.drop { $0 == "-" }.count
        var best = Int.max, found: [String] = []
        for c in unique {
            let d = distance(typed, Array(c))
            if d < best { best = d; found = [c] } else if d == best { found.append(c) }
        }
        if best <= 2 && best < core { return found }
        let prefixed = unique.filter { $0.hasPrefix(name) }
        return core > 0 && prefixed.count == 1 ? prefixed : []
    }

    /// " (did you mean 'x'?)" style text for `nearest`: `'a'`, `'a' or 'b'`, or nil.
    public static func text(_ name: String, among candidates: [String]) -> String? {
        let found = nearest(name, among: candidates).prefix(3).map { "'\($0)'" }
        guard !found.isEmpty else { return nil }
        return "did you mean \(found.count == 1 ? found[0] : found.dropLast().joined(separator: ", ") + " or " + found.last!)?"
    }

    /// The optimal string alignment distance between `a` and `b`.
    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[a.count][b.count]
    }
}
