import MixFX

/// An ALSA PCM name as `--device` gives it, read the way alsa-lib reads it, to find every file
/// the device would write before it opens.
///
/// The grammar (alsa-lib conf.c, `snd_config_search_definition` and `parse_args`):
///
///     DEVICE    = NAME [ ":" ARGUMENTS ]          NAME: up to the first colon (`pcm.` optional)
///     ARGUMENTS = ARGUMENT { "," ARGUMENT }       or "{" CONFIGURATION "}"
///     ARGUMENT  = [ KEY "=" ] VALUE               KEY: the definition's @args name or position
///     VALUE     = 'quoted' | "quoted" | bare      quoted: \n \t \v \b \r \f \ooo escapes, \x is x;
///                                                 bare: up to , = or a tab/newline (spaces kept)
///
/// A value is passed to the definition, and a definition may open it as a PCM in its turn
/// (`plug:SLAVE`, `tee:SLAVE,FILE`, `dmix:...`): each value is read again as a device, at any
/// depth. The file plugin (`file:FILE,FORMAT`, `tee:SLAVE,FILE,FORMAT` in alsa.conf) opens its
/// FILE with O_CREAT|O_TRUNC when the device opens, following a link; it replaces `%r %c %b
/// %f` in the name by the stream's rate, channels, bits and format (and `%x` by `x`), and a
/// name starting with `|` is a shell command it pipes the sound to (pcm_file.c).
///
/// What this cannot follow is reported rather than guessed: a `{ ... }` configuration beyond
/// flat `KEY VALUE` pairs (nested definitions, functions, variables), nesting deeper than
/// `maximumDepth`, or arguments of `file`/`tee` that alsa-lib would not take.
enum ALSADeviceString {
    /// One argument: its key (nil when positional) and its value, quotes and escapes taken off.
    struct Argument: Equatable, Sendable {
        var key: String?
        var value: String
    }

    /// What a device string writes: each file name as the file plugin is given it, and the
    /// reason the string cannot be accounted for, if any.
    struct Writes: Equatable, Sendable {
        var files: [String] = []
        var unaccounted: String?
        /// Every argument value at any depth: a definition of the ALSA configuration may make
        /// one of them its file (`pcm.rec { @args [ F ] ... type file file $F }`).
        var values: [String] = []
    }

    /// Nesting deeper than this (a value that is a device whose value is a device ...) is not
    /// followed.
    static let maximumDepth = 16

    /// The definitions in alsa.conf that write a file, with their @args in order.
    static let fileWriters: [String: [String]] = ["file": ["FILE", "FORMAT"], "tee": ["SLAVE", "FILE", "FORMAT"]]

    /// Every file `device` would write, at any nesting.
    static func writes(_ device: String) -> Writes {
        var result = Writes()
        collect(PathBytes.bytes(device), depth: 0, into: &result)
        return result
    }

    private static func collect(_ device: [UInt8], depth: Int, into result: inout Writes) {
        guard result.unaccounted == nil else { return }
        guard depth <= maximumDepth else {
            result.unaccounted = "it nests devices more than \(maximumDepth) deep"
            return
        }
        guard let colon = device.firstIndex(of: UInt8(ascii: ":")) else { return }   // a name: the configuration's
        var name = text(device[..<colon])
        if name.hasPrefix("pcm.") { name.removeFirst(4) }
        let arguments: [Argument]
        do {
            arguments = try parse(device[(colon + 1)...])
        } catch {
            // where alsa-lib fails too nothing opens, but a misreading here must not let a file
            // plugin through
            if !error.alsaFailsToo || mentionsWriter(device) { result.unaccounted = "\(error.reason) in '\(text(device))'" }
            return
        }
        result.values += arguments.map(\.value)
        if let parameters = fileWriters[name] {
            for (position, argument) in arguments.enumerated() {
                let parameter: String
                if let key = argument.key {
                    if let p = Int(key), p >= 0, p < parameters.count { parameter = parameters[p] }
                    else if parameters.contains(key) { parameter = key }
                    else {
                        result.unaccounted = "'\(name)' takes \(parameters.joined(separator: ", ")), not \(key)="
                        return
                    }
                } else {
                    guard position < parameters.count else {
                        result.unaccounted = "'\(name)' takes \(parameters.count) arguments (\(parameters.joined(separator: ", "))), not \(arguments.count)"
                        return
                    }
                    parameter = parameters[position]
                }
                if parameter == "FILE" { result.files.append(argument.value) }
                else if parameter == "SLAVE" { collect(PathBytes.bytes(argument.value), depth: depth + 1, into: &result) }
            }
        } else {
            // another definition (plug, route, dmix, one of the configuration's): any value may
            // be a device it opens
            for argument in arguments {
                if let key = argument.key, key.contains(":"), mentionsWriter(key.utf8) {
                    result.unaccounted = "'\(key)=' is not an argument '\(name)' takes"
                    return
                }
                collect(PathBytes.bytes(argument.value), depth: depth + 1, into: &result)
            }
        }
    }

    /// Whether `bytes` mention a plugin that writes a file (`file`, `tee`, any case).
    static func mentionsWriter(_ bytes: some Collection<UInt8>) -> Bool {
        let lower = text(bytes).lowercased()
        return lower.contains("file") || lower.contains("tee")
    }

    /// A reason alsa-lib would not read the arguments.
    struct ParseError: Error, Equatable {
        var reason: String
        /// Whether alsa-lib refuses it too (then nothing opens); false when alsa-lib may take
        /// it and open what this reading cannot follow.
        var alsaFailsToo = true
    }

    /// The arguments after the colon, as alsa-lib's `parse_args` reads them.
    static func parse(_ bytes: ArraySlice<UInt8>) throws(ParseError) -> [Argument] {
        var i = bytes.startIndex
        let end = bytes.endIndex
        func isBlank(_ c: UInt8) -> Bool { c == 0x20 || c == 0x0C || c == 0x09 || c == 0x0A || c == 0x0D }
        func skipBlanks() { while i < end && isBlank(bytes[i]) { i += 1 } }
        skipBlanks()
        if i == end { return [] }
        if bytes[i] == UInt8(ascii: "{") { return try configuration(bytes[i...]) }
        // an unquoted id: up to \f \t \n \r , = or the end (a space belongs to it)
        func id() -> ArraySlice<UInt8> {
            let start = i
            while i < end, ![0x0C, 0x09, 0x0A, 0x0D, UInt8(ascii: ","), UInt8(ascii: "=")].contains(bytes[i]) { i += 1 }
            return bytes[start..<i]
        }
        func isQuote(_ c: UInt8) -> Bool { c == UInt8(ascii: "'") || c == UInt8(ascii: "\"") }
        var arguments: [Argument] = []
        while true {
            let argumentStart = i
            skipBlanks()
            var key: String?
            let value: String
            if i < end && isQuote(bytes[i]) {
                value = try quoted(bytes, &i)
            } else {
                guard i < end else { throw ParseError(reason: "an empty argument") }
                let name = id()
                let idLength = i - name.startIndex
                skipBlanks()
                if i < end && bytes[i] == UInt8(ascii: "=") {
                    // alsa-lib takes the key's length from the id, counted from before the blanks
                    key = text(bytes[argumentStart..<(argumentStart + idLength)])
                    i += 1
                    skipBlanks()
                    if i < end && isQuote(bytes[i]) { value = try quoted(bytes, &i) } else { value = text(id()) }
                } else {
                    value = text(name)
                }
            }
            arguments.append(Argument(key: key, value: value))
            if i == end { return arguments }
            guard bytes[i] == UInt8(ascii: ",") else { throw ParseError(reason: "an unexpected '\(text(bytes[i...i]))'") }
            i += 1
        }
    }

    /// A quoted string from `i` (at its opening quote), escapes read as alsa-lib's `parse_char`.
    private static func quoted(_ bytes: ArraySlice<UInt8>, _ i: inout Int) throws(ParseError) -> String {
        let delimiter = bytes[i]
        i += 1
        var out: [UInt8] = []
        while true {
            guard i < bytes.endIndex else { throw ParseError(reason: "an unterminated quote") }
            var c = bytes[i]
            if c == UInt8(ascii: "\\") {
                i += 1
                guard i < bytes.endIndex else { throw ParseError(reason: "an unterminated quote") }
                c = bytes[i]
                switch c {
                case UInt8(ascii: "n"): c = 0x0A
                case UInt8(ascii: "t"): c = 0x09
                case UInt8(ascii: "v"): c = 0x0B
                case UInt8(ascii: "b"): c = 0x08
                case UInt8(ascii: "r"): c = 0x0D
                case UInt8(ascii: "f"): c = 0x0C
                case UInt8(ascii: "0")...UInt8(ascii: "7"):
                    var number = Int(c - UInt8(ascii: "0"))
                    var digits = 1
                    i += 1
                    while digits < 3, i < bytes.endIndex, (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(bytes[i]) {
                        number = number * 8 + Int(bytes[i] - UInt8(ascii: "0"))
                        digits += 1
                        i += 1
                    }
                    guard number > 0 else { throw ParseError(reason: "a NUL escape in a quoted value", alsaFailsToo: false) }
                    out.append(UInt8(truncatingIfNeeded: number))
                    continue
                default: break
                }
                i += 1
                out.append(c)
                continue
            }
            i += 1
            if c == delimiter { break }
            out.append(c)
        }
        return text(out)
    }

    /// The `{ ... }` form: alsa-lib reads it as configuration. Only flat `KEY VALUE` pairs
    /// (`KEY = VALUE`, separated by blanks, `,` or `;`; a value quoted or a plain word) are read
    /// here: a nested definition, a function, a variable or a comment may compute what is opened.
    private static func configuration(_ bytes: ArraySlice<UInt8>) throws(ParseError) -> [Argument] {
        var last = bytes.endIndex - 1
        while last > bytes.startIndex, [0x20, 0x0C, 0x09, 0x0A, 0x0D].contains(bytes[last]) { last -= 1 }
        guard last > bytes.startIndex, bytes[last] == UInt8(ascii: "}") else { throw ParseError(reason: "a '{' without its '}'") }
        let inner = bytes[(bytes.startIndex + 1)..<last]
        var i = inner.startIndex
        let end = inner.endIndex
        func isSeparator(_ c: UInt8) -> Bool { [0x20, 0x0C, 0x09, 0x0A, 0x0D, UInt8(ascii: ","), UInt8(ascii: ";")].contains(c) }
        func isKeyByte(_ c: UInt8) -> Bool {
            (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
                || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "_")
        }
        // a plain value ends where alsa-lib's free string does (conf.c get_freestring)
        func isValueByte(_ c: UInt8) -> Bool { !isSeparator(c) && !Array("={}[]'\"\\#".utf8).contains(c) }
        func word(_ accepts: (UInt8) -> Bool) -> ArraySlice<UInt8> {
            let start = i
            while i < end && accepts(inner[i]) { i += 1 }
            return inner[start..<i]
        }
        let notFlat = ParseError(reason: "a { } configuration that is more than KEY VALUE pairs", alsaFailsToo: false)
        var arguments: [Argument] = []
        while true {
            while i < end && isSeparator(inner[i]) { i += 1 }
            if i == end { return arguments }
            let key = word(isKeyByte)
            guard let first = key.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { throw notFlat }
            while i < end && isSeparator(inner[i]) && inner[i] != UInt8(ascii: ",") && inner[i] != UInt8(ascii: ";") { i += 1 }
            if i < end && inner[i] == UInt8(ascii: "=") {
                i += 1
                while i < end && [0x20, 0x0C, 0x09, 0x0A, 0x0D].contains(inner[i]) { i += 1 }
            }
            guard i < end else { throw notFlat }
            let value: String
            if inner[i] == UInt8(ascii: "'") || inner[i] == UInt8(ascii: "\"") {
                value = try quoted(inner, &i)
            } else {
                // a value starting with $ or @ is a variable or a function alsa-lib computes
                let w = word(isValueByte)
                guard let first = w.first, first != UInt8(ascii: "$"), first != UInt8(ascii: "@") else { throw notFlat }
                value = text(w)
            }
            guard i == end || isSeparator(inner[i]) else { throw notFlat }
            arguments.append(Argument(key: text(key), value: value))
        }
    }

    /// Bytes as mixfx holds a name (`PathBytes`: any bytes, one-to-one).
    private static func text(_ bytes: some Collection<UInt8>) -> String { PathBytes.string(bytes) }
}
