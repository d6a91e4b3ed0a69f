import Foundation
import Testing
@testable import MixFXCLI
import MixFX
import TestSupport

/// `make install` and `make uninstall` (issue #34), run on the build these tests run against
/// (`NOBUILD=1 BUILD_DIR=...`: nothing is rebuilt) into temporary folders: the installed mixfx
/// runs and renders the build's bytes, the installed C library links through `pkg-config mixfx`
/// and needs no Swift runtime, the man page renders without a warning and describes every
/// command, the bash and zsh completions load where the shells look for them and offer the
/// flags and their values, uninstall leaves nothing but what was there before; the container
/// image (Dockerfile) is built and run where a container engine can.
@Suite struct InstallTests {
    let dir = TempDir("mixfx-install")
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    static var buildDir: String { URL(fileURLWithPath: MixFXBinary.path).deletingLastPathComponent().path }

    /// The environment without the calling make's (make test's jobserver is not ours).
    static var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        for k in ["MAKEFLAGS", "MAKELEVEL", "MFLAGS", "MAKEOVERRIDES", "DESTDIR", "PREFIX"] { env[k] = nil }
        return env
    }

    /// `make install|uninstall NOBUILD=1 BUILD_DIR=<this build> VARS...`; its output.
    @discardableResult
    func make(_ target: String, _ vars: [String]) throws -> MixFXBinary.Result {
        let r = try runProcess(which("make")!, ["-s", "-C", Self.repository, target, "NOBUILD=1", "BUILD_DIR=" + Self.buildDir] + vars,
                               environment: Self.environment)
        try #require(r.status == 0, "make \(target): \(r.stdout)\(r.stderr)")
        return r
    }

    /// Installs with PREFIX=/usr into DESTDIR=dir/dest; the DESTDIR.
    func installStaged() throws -> String {
        let dest = dir.file("dest")
        try make("install", ["DESTDIR=" + dest, "PREFIX=/usr"])
        return dest
    }

    /// Every file and link under `root`, relative, sorted (folders not listed).
    func files(under root: String) -> [String] {
        let e = FileManager.default.enumerator(atPath: root)
        var out: [String] = []
        while let p = e?.nextObject() as? String {
            var isDir: ObjCBool = false
            let full = root + "/" + p
            if (try? FileManager.default.destinationOfSymbolicLink(atPath: full)) != nil || (FileManager.default.fileExists(atPath: full, isDirectory: &isDir) && !isDir.boolValue) {
                out.append(p)
            }
        }
        return out.sorted()
    }

    /// The shared libraries an ELF file names (readelf -d), or nil without readelf.
    func neededLibraries(_ path: String) throws -> [String]? {
        guard let readelf = which("readelf") else { return nil }
        let r = try runProcess(readelf, ["-d", path])
        return r.stdout.split(separator: "\n").compactMap { line in
            guard line.contains("(NEEDED)"), let a = line.firstIndex(of: "["), let b = line.lastIndex(of: "]") else { return nil }
            return String(line[line.index(after: a)..<b])
        }
    }

    // MARK: the tables

    /// The completions and the man page are made from the flag tables the usage lines are made
    /// from: each command's flags there are exactly the flags its usage names.
    @Test func theCompletionTablesAreTheUsageLines() throws {
        let table = CommandTable.commands
        #expect(table.map(\.name) == MixFXCommand.commands)
        for command in table {
            let listed = Set(command.flags.flatMap(\.names) + ["--version"])
            let usage = Set(Synopsis.flags(in: command.usage))
            #expect(listed == usage, "\(command.name): the table has \(listed.subtracting(usage).sorted()), the usage \(usage.subtracting(listed).sorted())")
        }
        let render = try #require(table.first { $0.name == "render" })
        let value = { (name: String) in render.flags.first { $0.names.contains(name) }.map(CommandTable.value(of:)) }
        #expect(value("--dither") == .choices(["auto", "tpdf", "none"]))
        #expect(value("--type") == .choices(Container.allCases.map(\.rawValue)))
        #expect(value("--sample-format") == .choices(["s16", "s24", "s32", "f32"]))
        #expect(value("-o") == .file && value("--report") == .file && value("--preset") == .preset)
        #expect(value("--pitch") == .free && value("--force") == CommandTable.Value.none)
        #expect(CommandTable.summary(of: "render") == "mix tracks through EQ and pitch into a file")
        let man = ManPage.text()
        for command in table where command.name != "preset" {
            #expect(man.contains(".SS \"mixfx \(ManPage.escape(command.name))"), "the man page has no section for \(command.name)")
        }
    }

    // MARK: install, run, uninstall

    /// Everything lands where the README says, the installed mixfx is this build's and renders
    /// its bytes, and uninstall removes exactly what install put: a file of someone else's in
    /// the same folders stays, and so do the folders that were there before.
    @Test(.enabled(if: which("make") != nil, "make is not installed (apt-get install make)"))
    func installRunsAndUninstallLeavesOnlyWhatWasThere() throws {
        defer { dir.remove() }
        let dest = dir.file("dest")
        try FileManager.default.createDirectory(atPath: dest + "/usr/bin", withIntermediateDirectories: true)
        try Data("not mixfx's\n".utf8).write(to: URL(fileURLWithPath: dest + "/usr/bin/someone-elses"))
        try make("install", ["DESTDIR=" + dest, "PREFIX=/usr"])

        let installed = files(under: dest)
        let expected = ["usr/bin/mixfx", "usr/bin/someone-elses", "usr/include/mixfx.h", "usr/lib/libmixfx.so", "usr/lib/libmixfx.so.0",
                        "usr/lib/pkgconfig/mixfx.pc", "usr/share/bash-completion/completions/mixfx", "usr/share/man/man1/mixfx.1",
                        "usr/lib/lv2/mixfx.lv2/manifest.ttl", "usr/lib/lv2/mixfx.lv2/mixfx.so", "usr/lib/lv2/mixfx.lv2/mixfx.ttl",
                        "usr/share/mixfx/install-manifest", "usr/share/zsh/site-functions/_mixfx"]
        #expect(installed == expected.sorted())
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: dest + "/usr/lib/libmixfx.so") == "libmixfx.so.0")
        let pc = try String(contentsOfFile: dest + "/usr/lib/pkgconfig/mixfx.pc", encoding: .utf8)
        #expect(pc.contains("prefix=/usr\n") && pc.contains("Version: \(MixFXCommand.version)\n") && pc.contains("Libs: -L${libdir} -lmixfx"))

        // the installed program: this build's version, and the bytes this build renders
        let mixfx = dest + "/usr/bin/mixfx"
        let version = try runProcess(mixfx, ["--version"])
        #expect(version.status == 0 && version.stdout == "mixfx \(MixFXCommand.version)\n", "\(version.stderr)")
        let demo = Self.repository + "/Demo"
        let args = [demo + "/2-bass.flac", demo + "/4-lead.flac", "--trim", "..1.5", "--pitch", "200", "--bass", "4", "--quiet", "--force"]
        let a = dir.file("installed.wav"), b = dir.file("built.wav")
        let ra = try runProcess(mixfx, ["render"] + args + ["-o", a]), rb = try MixFXBinary.run(["render"] + args + ["-o", b])
        try #require(ra.status == 0 && rb.status == 0, "\(ra.stderr)\(rb.stderr)")
        let da = try Data(contentsOf: URL(fileURLWithPath: a)), db = try Data(contentsOf: URL(fileURLWithPath: b))
        #expect(da.count > 44 && da == db, "the installed mixfx wrote \(da.count) bytes, the build's \(db.count); they differ")
        // the library carries the Swift runtime inside: it needs system libraries only
        if let needed = try neededLibraries(dest + "/usr/lib/libmixfx.so.0") {
            #expect(needed.contains("libsndfile.so.1") && !needed.contains { $0.hasPrefix("libswift") || $0.hasPrefix("libFoundation") || $0.hasPrefix("libdispatch") },
                    "libmixfx.so.0 needs \(needed)")
        }

        // installing again over it changes nothing in the list, and uninstall removes it all
        try make("install", ["DESTDIR=" + dest, "PREFIX=/usr"])
        #expect(files(under: dest) == installed)
        try make("uninstall", ["DESTDIR=" + dest, "PREFIX=/usr"])
        #expect(files(under: dest) == ["usr/bin/someone-elses"])
        let folders = (FileManager.default.enumerator(atPath: dest)?.allObjects as? [String] ?? []).sorted()
        #expect(folders == ["usr", "usr/bin", "usr/bin/someone-elses"], "left behind: \(folders)")
        // and without an install there, uninstall says so and removes nothing
        let again = try runProcess(which("make")!, ["-s", "-C", Self.repository, "uninstall", "DESTDIR=" + dest, "PREFIX=/usr"], environment: Self.environment)
        #expect(again.status != 0 && again.stderr.contains("install-manifest is missing"), "\(again.stderr)")
        #expect(files(under: dest) == ["usr/bin/someone-elses"])
    }

    /// A C program finds the installed header and library through `pkg-config mixfx`, builds,
    /// links and runs; the prefix is written for the PREFIX installed to.
    @Test(.enabled(if: which("make") != nil && which("gcc") != nil && which("pkg-config") != nil,
                   "make, gcc or pkg-config is not installed (apt-get install make gcc pkg-config)"))
    func aCProgramBuildsAgainstTheInstalledLibraryThroughPkgConfig() throws {
        defer { dir.remove() }
        let prefix = dir.file("prefix")
        try make("install", ["PREFIX=" + prefix])
        var env = Self.environment
        env["PKG_CONFIG_PATH"] = prefix + "/lib/pkgconfig"
        let flags = try runProcess(which("pkg-config")!, ["--cflags", "--libs", "mixfx"], environment: env)
        try #require(flags.status == 0, "pkg-config: \(flags.stderr)")
        let words = flags.stdout.split(whereSeparator: \.isWhitespace).map(String.init)
        #expect(words == ["-I\(prefix)/include", "-L\(prefix)/lib", "-lmixfx"], "pkg-config --cflags --libs mixfx: \(words)")
        let modversion = try runProcess(which("pkg-config")!, ["--modversion", "mixfx"], environment: env)
        #expect(modversion.stdout == MixFXCommand.version + "\n")
        let exe = dir.file("pkgconfig")
        let cc = try runProcess(which("gcc")!, ["-std=c99", "-Wall", "-Wextra", "-Werror", Self.repository + "/Tests/install/pkgconfig.c"]
                                + words + ["-Wl,-rpath," + prefix + "/lib", "-o", exe])
        try #require(cc.status == 0, "gcc: \(cc.stderr)")
        let r = try runProcess(exe, [])
        #expect(r.status == 0 && r.stdout == "ok \(MixFXCommand.version)\n", "\(r.stdout)\(r.stderr)")
    }

    // MARK: the man page

    /// mixfx(1) renders through groff with every warning on and none given, has the sections
    /// of a man page, and describes every command with its help text; `man -l` shows it.
    @Test(.enabled(if: which("make") != nil && which("groff") != nil, "make or groff is not installed (apt-get install make groff-base)"))
    func theManPageRendersAndDescribesEveryCommand() throws {
        defer { dir.remove() }
        let page = try installStaged() + "/usr/share/man/man1/mixfx.1"
        let r = try runProcess(which("groff")!, ["-ww", "-man", "-Tutf8", page])
        #expect(r.status == 0 && r.stderr.isEmpty, "groff -ww: \(r.stderr)")
        // (plain text: groff's overstriking for bold removed)
        let text = r.stdout.replacingOccurrences(of: "\u{8}.", with: "", options: .regularExpression)
        for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "EXIT STATUS", "ENVIRONMENT", "FILES", "SEE ALSO"] {
            #expect(text.contains("\n" + section + "\n"), "no \(section) section")
        }
        #expect(text.contains("mixfx - audio effects engine and mixer"))
        for command in CommandTable.commands {
            #expect(text.contains("   mixfx \(command.name)"), "the page does not describe mixfx \(command.name)")
        }
        // it fits an 80-column terminal (the help texts are wrapped for it)
        for line in text.split(separator: "\n") where line.count > 80 {
            Issue.record("a line of \(line.count) columns: \(line)")
        }
        // flags and quotes come out as typed (no hyphens or curly quotes to paste)
        #expect(text.contains("--dither auto|tpdf|none") && text.contains("128+N"))
        if let man = which("man") {
            var env = Self.environment
            env["MANPAGER"] = "cat"; env["PAGER"] = "cat"; env["MANWIDTH"] = "80"
            let m = try runProcess(man, ["-l", page], environment: env)
            #expect(m.status == 0 && m.stdout.contains("mixfx render") && m.stdout.contains("EXIT STATUS"), "man -l: \(m.stderr)")
        }
    }

    // MARK: completions

    /// The bash completion loads from where it is installed (bash-completion's loader, looking
    /// in the installed share/ through XDG_DATA_DIRS, when bash-completion is installed; else
    /// sourced) and offers the commands, the flags and their values.
    @Test(.enabled(if: which("make") != nil && which("bash") != nil, "make or bash is not installed"))
    func theBashCompletionOffersFlagsAndValues() throws {
        defer { dir.remove() }
        let dest = try installStaged()
        let loader = "/usr/share/bash-completion/bash_completion"
        let load = FileManager.default.fileExists(atPath: loader)
            ? "source \(loader); __load_completion mixfx || echo 'the loader did not find it'"
            : "source '\(dest)/usr/share/bash-completion/completions/mixfx'"
        let script = """
        \(load)
        complete -p mixfx
        c() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _mixfx; echo "$*=>${COMPREPLY[*]}"; }
        c mixfx ''
        c mixfx render --di
        c mixfx render a.wav --dither ''
        c mixfx render -t fl
        c mixfx render --sample-format = s2
        c mixfx batch --sh
        c mixfx preset ''
        """
        var env = Self.environment
        env["XDG_DATA_DIRS"] = dest + "/usr/share"
        let r = try runProcess(which("bash")!, ["--norc", "--noprofile", "-c", script], environment: env)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "complete -F _mixfx mixfx", "complete -p mixfx: \(r.stdout)\(r.stderr)")
        #expect(lines.contains("mixfx =>render batch play analyze eq-curve devices presets preset help"))
        #expect(lines.contains("mixfx render --di=>--dither"))
        #expect(lines.contains("mixfx render a.wav --dither =>auto tpdf none"))
        #expect(lines.contains("mixfx render -t fl=>flac"))
        #expect(lines.contains("mixfx render --sample-format = s2=>s24"))
        #expect(lines.contains("mixfx batch --sh=>--shard"))
        #expect(lines.contains("mixfx preset =>show"))
    }

    /// The zsh completion, found through $fpath in the installed share/ by compinit, offers in
    /// an interactive zsh what a Tab would (Tests/install/zsh-complete.zsh).
    @Test(.enabled(if: which("make") != nil && which("zsh") != nil, "zsh is not installed (apt-get install zsh)"))
    func theZshCompletionOffersFlagsAndValues() throws {
        defer { dir.remove() }
        let functions = try installStaged() + "/usr/share/zsh/site-functions"
        /// What zsh offers after `typed`, and the terminal's transcript (for a failure's message).
        func offered(_ typed: String) throws -> (matches: [String], transcript: String) {
            let r = try runProcess("/usr/bin/timeout", ["60", which("zsh")!, "-f", Self.repository + "/Tests/install/zsh-complete.zsh", typed, functions],
                                   cwd: dir.path, environment: Self.environment)
            let text = r.stdout + r.stderr
            // (the pty echoes the typed line too, and the capturing function's text: a match is
            // MATCH: then the word, up to the line's end; "\r\n" is one Character)
            let matches: [String] = text.split(whereSeparator: \.isNewline).compactMap { line in
                guard let m = line.range(of: "MATCH:"), !line[m.upperBound...].hasPrefix("\"") else { return nil }
                return String(line[m.upperBound...]).trimmingCharacters(in: .whitespaces)
            }
            return (matches, text.debugDescription)
        }
        let dither = try offered("mixfx render --di")
        #expect(dither.matches == ["--dither"], "\(dither.transcript)")
        let values = try offered("mixfx render a.wav --dither ")
        #expect(Set(values.matches) == ["auto", "tpdf", "none"], "\(values.transcript)")
        let type = try offered("mixfx render -t fl")
        #expect(type.matches == ["flac"], "\(type.transcript)")
        let command = try offered("mixfx re")
        #expect(command.matches == ["render"], "\(command.transcript)")
        let show = try offered("mixfx preset ")
        #expect(show.matches == ["show"], "\(show.transcript)")
    }
}
