import Foundation

/// The help texts laid out for the reader: `mixfx COMMAND --help` wraps them to the terminal
/// (80 columns when standard output is not one, `$COLUMNS` first when set), and the man page
/// to 73 (its 7-column indent inside 80).
///
/// The texts are written as columns (usage lines, flag tables with a description column,
/// paragraphs), so wrapping keeps their shape: a line is only ever broken when it is too wide,
/// between words, and what does not fit goes on under the line's *hanging column*: a flag
/// entry's description column (the text after its first run of two or more spaces), `usage: `'s
/// 7 columns, a paragraph's own indent. When the next line continues at that same column (the
/// rest of the same entry or paragraph), the carried words are joined to it, so the entry is
/// refilled rather than left ragged. A description column too far right for the width (less
/// than `minimumRoom` left) hangs 8 columns in from its line instead. No word is ever dropped or
/// split: a word wider than the room its column leaves (a long example) is moved left on its line
/// until it fits, and overhangs only when it is wider than the whole width.
enum HelpLayout {
    /// Help narrower than this is not made: a terminal narrower than it gets lines that overhang.
    static let minimumColumns = 40
    /// A description column that leaves less room than this goes on 8 columns in from its line.
    static let minimumRoom = 20

    /// How wide `mixfx ... --help` lays its text out: `$COLUMNS` when it is a number, else the
    /// width of the terminal standard output is, else 80.
    static var columns: Int {
        if let c = ProcessInfo.processInfo.environment["COLUMNS"].flatMap(Int.init), c > 0 { return max(c, minimumColumns) }
        if let size = Terminal.size(1) { return max(size.columns, minimumColumns) }
        return 80
    }

    /// Prints `help` wrapped to `columns`.
    static func print(_ help: String) {
        MixFXCLI.print(wrap(help, columns: columns))
    }

    /// `text` with every line at most `columns` wide (but for single words wider than the room).
    static func wrap(_ text: String, columns: Int) -> String {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var out: [String] = []
        var carried: (words: [Substring], column: Int)?
        for (index, line) in lines.enumerated() {
            var current = line
            if let c = carried {
                if continues(line, at: c.column) {
                    current = String(repeating: " ", count: c.column) + (c.words + [line.drop { $0 == " " }]).joined(separator: " ")
                } else {
                    out += fill(c.words, column: c.column, columns: columns)
                }
                carried = nil
            }
            guard current.count > columns else { out.append(current); continue }
            var column = hangingColumn(of: current, next: lines.indices.contains(index + 1) ? lines[index + 1] : nil)
            if columns - column < minimumRoom { column = min(column, current.prefix { $0 == " " }.count + 8) }
            let (head, rest) = split(current, columns: columns, after: column)
            out.append(head)
            if !rest.isEmpty { carried = (rest, column) }
        }
        if let c = carried { out += fill(c.words, column: c.column, columns: columns) }
        // a word too wide for the room its column leaves is moved left until it fits
        return out.map { line in
            let word = line.drop { $0 == " " }
            guard line.count > columns, !word.contains(" ") else { return line }
            return String(repeating: " ", count: max(0, columns - word.count)) + word
        }.joined(separator: "\n")
    }

    /// Where the text of `line` goes on when it is broken: the description column of an entry
    /// (`  -o, --output OUT        output file ...` → 26), 7 after `usage: `, else the indent of
    /// `next` when that line is indented further (an entry whose flags fill their column:
    /// `  --dither auto|tpdf|none TPDF dither ...`), else its own indent.
    static func hangingColumn(of line: String, next: String? = nil) -> Int {
        let chars = Array(line)
        let indent = chars.prefix { $0 == " " }.count
        if let column = descriptionColumn(chars, from: indent) { return column }
        if line.hasPrefix("usage: ") { return 7 }
        if chars.dropFirst(indent).first == "-", let next, case let nextIndent = next.prefix(while: { $0 == " " }).count, nextIndent > indent, nextIndent < next.count {
            return nextIndent
        }
        return indent
    }

    /// The column after the first run of two or more spaces that follows text, if the line has one.
    private static func descriptionColumn(_ chars: [Character], from start: Int) -> Int? {
        var i = start
        while i + 2 < chars.count {
            if chars[i] == " ", chars[i + 1] == " " {
                var j = i
                while j < chars.count, chars[j] == " " { j += 1 }
                return j < chars.count ? j : nil
            }
            i += 1
        }
        return nil
    }

    /// Whether `line` goes on at `column`: it is indented exactly that far and starts no new
    /// entry (a flag), or, at column 0, it is more of the same paragraph (not blank, not a
    /// heading's `usage:`/`exit status`).
    private static func continues(_ line: String, at column: Int) -> Bool {
        let indent = line.prefix { $0 == " " }.count
        guard indent == column, indent < line.count else { return false }
        let text = line.dropFirst(indent)
        if text.hasPrefix("-") && column > 0 && !text.hasPrefix("- ") { return false }
        if column == 0 && (text.hasPrefix("usage:") || text.hasPrefix("exit status")) { return false }
        return true
    }

    /// `line` broken at the last space that leaves it within `columns` (and past `column`, so a
    /// line never breaks inside its own first column): the head and the words that go on.
    private static func split(_ line: String, columns: Int, after column: Int) -> (String, [Substring]) {
        let chars = Array(line)
        var cut = -1
        var i = min(columns, chars.count - 1)
        while i > column {
            if chars[i] == " " { cut = i; break }
            i -= 1
        }
        if cut < 0 {
            // one word wider than the room: it overhangs, broken after it
            guard let next = chars.indices.dropFirst(max(columns, column + 1)).first(where: { chars[$0] == " " }) else { return (line, []) }
            cut = next
        }
        var headEnd = cut
        while headEnd > 0, chars[headEnd - 1] == " " { headEnd -= 1 }
        let rest = String(chars[cut...]).split(separator: " ")
        return (String(chars[..<headEnd]), rest)
    }

    /// `words` as lines starting at `column`, each within `columns` where a word allows.
    private static func fill(_ words: [Substring], column: Int, columns: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in words {
            if line.isEmpty {
                line = String(repeating: " ", count: column) + word
            } else if line.count + 1 + word.count <= columns {
                line += " " + word
            } else {
                lines.append(line)
                line = String(repeating: " ", count: column) + word
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }
}
