import Foundation
import Testing
@testable import MixFXCLI
@testable import MixFXFiles
import MixFX
import TestSupport

/// Help that fits the reader's terminal (`HelpLayout`), and standard input that cannot fill the
/// disk (`StandardInput.copy`'s reserve).
@Suite struct HelpLayoutTests {
    static func words(_ text: String) -> [Substring] { text.split(whereSeparator: { $0 == " " || $0 == "\n" }) }

    /// Every command's help, at 80 and at 50 columns: no line wider (but a single word that is
    /// wider than its room), the same words in the same order, and nothing changed at a width
    /// the text already fits.
    @Test(arguments: [80, 50])
    func everyHelpFitsItsWidthAndKeepsEveryWord(columns: Int) {
        for command in [("mixfx", MixFXCommand.help)] + CommandTable.commands.map({ ($0.name, $0.help) }) {
            let wrapped = HelpLayout.wrap(command.1, columns: columns)
            for line in wrapped.split(separator: "\n") where line.count > columns {
                let text = line.drop { $0 == " " }
                #expect(!text.contains(" "), "\(command.0) --help at \(columns) columns: a line of \(line.count): \(line)")
            }
            #expect(Self.words(wrapped) == Self.words(command.1), "\(command.0) --help lost or moved words at \(columns) columns")
            #expect(HelpLayout.wrap(command.1, columns: 10_000) == command.1)
            #expect(HelpLayout.wrap(wrapped, columns: columns) == wrapped, "\(command.0): wrapping is not stable")
        }
    }

    /// A flag entry is refilled under its description column, its continuation joined, the next
    /// entry left where it starts; a paragraph goes on at its own indent.
    @Test func anEntryIsRefilledUnderItsDescriptionColumn() {
        let text = """
          -x, --example N   one two three four five six seven eight nine
                            ten
          -y                eight
        A paragraph of many words that runs on and on and
        on.
        """
        #expect(HelpLayout.wrap(text, columns: 44) == """
          -x, --example N   one two three four five
                            six seven eight nine ten
          -y                eight
        A paragraph of many words that runs on and
        on and on.
        """)
        #expect(HelpLayout.hangingColumn(of: "usage: mixfx render TRACK... [-o OUT]") == 7)
        #expect(HelpLayout.hangingColumn(of: "usage: mixfx devices      list them") == 26)
        // flags that fill their column: the entry goes on where its next line does
        #expect(HelpLayout.hangingColumn(of: "  --dither auto|tpdf|none TPDF dither", next: "                          auto)") == 26)
        #expect(HelpLayout.hangingColumn(of: "A paragraph", next: "  - an item") == 0)
        #expect(HelpLayout.hangingColumn(of: "A paragraph", next: "") == 0)
        // a word too wide for its column moves left
        #expect(HelpLayout.wrap("  -x    see\n        a-very-long-example-word", columns: 20) == "  -x    see\na-very-long-example-word")
        #expect(HelpLayout.wrap("  -x    see\n        a-long-example", columns: 20) == "  -x    see\n      a-long-example")
        // a description column too far right for the width goes on 8 columns in instead
        #expect(HelpLayout.wrap("mixfx devices            list the playback devices", columns: 40) == """
        mixfx devices            list the
                playback devices
        """)
    }

    /// `mixfx render --help` through the binary: 80 columns when stdout is not a terminal,
    /// `$COLUMNS` when set.
    @Test func theBinaryWrapsToColumns() throws {
        for (env, width) in [([String: String](), 80), (["COLUMNS": "60"], 60)] {
            var environment = ProcessInfo.processInfo.environment
            environment["COLUMNS"] = nil
            environment.merge(env) { $1 }
            let r = try runProcess(MixFXBinary.path, ["render", "--help"], environment: environment)
            #expect(r.status == 0)
            let widest = r.stdout.split(separator: "\n").filter { $0.drop { $0 == " " }.contains(" ") }.map(\.count).max() ?? 0
            #expect(widest <= width && widest > width - 10, "render --help is \(widest) wide with \(env)")
        }
    }

    /// A pipe that goes on is kept only while the temporary folder keeps its reserve: the copy
    /// stops with the sizes named, and the kept part goes with its descriptor.
    @Test func standardInputStopsBeforeTheDiskFills() throws {
        let dir = TempDir("mixfx-reserve")
        defer { dir.remove() }
        let source = dir.file("source.raw")
        try Data(count: 48 << 20).write(to: URL(fileURLWithPath: source))
        let input = open(source, O_RDONLY)
        defer { close(input) }
        guard case .success(let target) = UnnamedFile.create(in: dir.path) else { Issue.record("no unnamed file"); return }
        defer { close(target) }
        var fs = statvfs()
        try #require(fstatvfs(target, &fs) == 0)
        let available = Int(fs.f_bavail) * Int(fs.f_frsize)
        // room for about 8 MiB of the 48 before the reserve
        let problem = StandardInput.copy(from: input, to: target, reserveBytes: available - (9 << 20))
        let kept = lseek(target, 0, SEEK_END)
        // (the suite's other tests free and fill the same disk meanwhile: what they freed during
        // the copy, the free space after it plus what was kept less what was free before, was
        // room the copy could take too)
        var after = statvfs()
        try #require(fstatvfs(target, &after) == 0)
        let freedMeanwhile = max(0, Int(after.f_bavail) * Int(after.f_frsize) + Int(kept) - available)
        #expect(problem?.contains("it goes on, with") == true && problem?.contains("TMPDIR") == true, "\(problem ?? "no problem")")
        #expect(kept > 0 && kept <= (9 << 20) + freedMeanwhile + (1 << 20), "kept \(kept) bytes, \(freedMeanwhile) freed meanwhile")
        // with room, all of it
        lseek(input, 0, SEEK_SET); ftruncate(target, 0); lseek(target, 0, SEEK_SET)
        #expect(StandardInput.copy(from: input, to: target, reserveBytes: 0) == nil)
        #expect(lseek(target, 0, SEEK_END) == 48 << 20)
        // the reserve: 5 % of the file system, from 64 MiB to 1 GiB, at most half of what is
        // free (so a short stream goes through a folder already under 64 MiB free)
        let reserve = StandardInput.reserveBytes(of: target)
        try #require(fstatvfs(target, &fs) == 0)
        let half = Int(fs.f_bavail) * Int(fs.f_frsize) / 2
        #expect(reserve <= 1 << 30 && reserve <= half + (1 << 20) && (reserve >= 64 << 20 || reserve >= half - (1 << 20)), "\(reserve) of \(half * 2) free")
    }
}
