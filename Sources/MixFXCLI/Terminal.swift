import Foundation
import MixFX
import Synchronization
import CFileIO

/// The signal that asked mixfx to stop (0: none yet). Set by the handlers `Terminal.
/// installStopHandlers` installs; long operations poll it and stop cleanly (a render removes its
/// temporary file and exits with 128 + the signal's number).
let stopSignal = Atomic<Int32>(0)

/// True once a stop signal (Ctrl-C, SIGTERM, SIGHUP, ...) arrived.
var interruptRequested: Bool { stopSignal.load(ordering: .relaxed) != 0 }

/// Every line the commands print on stdout (summaries, tables, dry runs, acknowledgements) goes
/// through here: whatever a line quotes (a file name, a preset's description) is shown with its
/// control characters and stray bytes escaped (`PathBytes.shown`; tabs kept), so a name cannot
/// break a line in two or drive the terminal. (JSON escapes its own.) Shadows `Swift.print` in
/// this module.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    let text = items.map { String(describing: $0) }.joined(separator: separator)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { PathBytes.shown(String($0), keepingTabs: true) }
    Swift.print(lines.joined(separator: "\n"), terminator: terminator)
}

enum Terminal {
    static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) != 0 }

    /// The size of the terminal `fd` is, in character cells; nil when it is not one (or says 0).
    static func size(_ fd: Int32) -> (columns: Int, rows: Int)? {
        var ws = winsize()
        guard withUnsafeMutablePointer(to: &ws, { ioctl(fd, UInt(TIOCGWINSZ), $0) }) == 0, ws.ws_col > 0, ws.ws_row > 0 else { return nil }
        return (Int(ws.ws_col), Int(ws.ws_row))
    }

    /// The signals whose default action would end the process and that a user or a system can
    /// send: each one asks mixfx to stop cleanly instead (nothing half-written is left).
    static let stopSignals: [(number: Int32, name: String)] = [
        (SIGINT, "SIGINT"), (SIGTERM, "SIGTERM"), (SIGHUP, "SIGHUP"), (SIGQUIT, "SIGQUIT"),
        (SIGUSR1, "SIGUSR1"), (SIGUSR2, "SIGUSR2"), (SIGALRM, "SIGALRM"), (SIGPIPE, "SIGPIPE"),
        (SIGVTALRM, "SIGVTALRM"), (SIGPROF, "SIGPROF"), (SIGPWR, "SIGPWR"), (SIGSTKFLT, "SIGSTKFLT"),
    ] + (__libc_current_sigrtmin()...__libc_current_sigrtmax()).map { n in
        (n, "SIGRTMIN+\(n - __libc_current_sigrtmin())")   // (the real-time signals end a process too)
    }

    /// The name of a stop signal, for messages.
    static func signalName(_ number: Int32) -> String {
        stopSignals.first { $0.number == number }?.name ?? "signal \(number)"
    }

    /// SIGXFSZ (a file-size limit, `ulimit -f`) is ignored from the start, so reaching the limit
    /// is a write error (EFBIG) mixfx reports, not a silent exit 153, even while it keeps
    /// standard input in a file before any command runs.
    static func ignoreFileSizeSignal() { signal(SIGXFSZ, SIG_IGN) }

    /// Installs the stop handlers (see `stopSignals`). SIGXFSZ (a file-size limit, `ulimit -f`)
    /// is ignored, so reaching the limit is a write error (EFBIG) that mixfx reports, not a
    /// silent exit 153.
    static func installStopHandlers() {
        // A parent may have left the signals blocked (some process launchers do): unblock them.
        var set = sigset_t()
        sigemptyset(&set)
        for s in stopSignals { sigaddset(&set, s.number) }
        sigprocmask(SIG_UNBLOCK, &set, nil)
        for s in stopSignals {
            // (a profiler's timer signals, set by it before mixfx starts, stay the profiler's)
            if s.number == SIGPROF || s.number == SIGVTALRM {
                var old = sigaction()
                guard sigaction(s.number, nil, &old) == 0, old.__sigaction_handler.sa_handler == nil else { continue }
            }
            signal(s.number) { n in _ = stopSignal.compareExchange(expected: 0, desired: n, ordering: .relaxed) }
        }
        signal(SIGXFSZ, SIG_IGN)
    }

    /// On a fatal error (out of memory, or a bug): remove every temporary file, say so in one
    /// line after the runtime's own, and exit 70 without the runtime's long backtrace (which
    /// `MIXFX_BACKTRACE=1` keeps, for developers).
    static func installCrashHandlers() {
        guard ProcessInfo.processInfo.environment["MIXFX_BACKTRACE"] == nil else { return }
        TemporaryFiles.prepare()
        let fatal = [SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE, SIGSYS]
        // a launcher may have left some blocked (a test runner's threads do)
        var set = sigset_t()
        sigemptyset(&set)
        for s in fatal { sigaddset(&set, s) }
        sigprocmask(SIG_UNBLOCK, &set, nil)
        for s in fatal {
            signal(s) { _ in
                TemporaryFiles.removeAll()
                let text: StaticString = "mixfx: error: stopped by an internal failure (out of memory if the line above says 'failed to allocate'; otherwise a bug: please report it, MIXFX_BACKTRACE=1 shows where); nothing was written\n"
                _ = write(2, text.utf8Start, text.utf8CodeUnitCount)
                _exit(70)
            }
        }
    }

    /// Prints one message line on stderr. Whatever it quotes (a file name with a newline or a
    /// terminal escape, bytes that are not UTF-8) is shown escaped (`PathBytes.shown`): one
    /// message, one line, and nothing that drives the terminal.
    static func printError(_ text: String) {
        writeError(PathBytes.shown(text) + "\n")
    }

    /// Writes `text` to stderr as it is. Never traps: a closed or full stderr loses the text,
    /// nothing else (the exit status says what happened).
    static func writeError(_ text: String) {
        writeAll(2, text)
    }

    /// Writes `text` to the descriptor `fd`, retrying short writes; false when it could not.
    @discardableResult
    static func writeAll(_ fd: Int32, _ text: String) -> Bool {
        var bytes = Array(text.utf8)
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            done += n
        }
        return true
    }

    /// Flushes stdout at the end; a command whose output could not be written (`--json >
    /// /dev/full`, a closed pipe) fails with a message rather than exit 0 having said nothing.
    /// Returns the exit status to use.
    static func finishStandardOutput(_ status: Int32) -> Int32 {
        let e = mixfx_finish_stdout()
        guard e != 0 else { return status }
        let reason = String(cString: strerror(e))
        printError("mixfx: error: cannot write to standard output (\(reason)); what the command printed is incomplete")
        return status == 0 ? 1 : status
    }
}

/// A one-line progress bar with percentage and ETA, redrawn at most ten times a second.
final class ProgressBar {
    private let start = Date()
    private var lastDraw = Date.distantPast
    private let width = 30

    func update(done: Int, total: Int) {
        let now = Date()
        guard now.timeIntervalSince(lastDraw) >= 0.1 || done == total else { return }
        lastDraw = now
        let fraction = total > 0 ? Double(done) / Double(total) : 1
        let filled = Int(fraction * Double(width))
        let elapsed = now.timeIntervalSince(start)
        let eta = fraction > 0 ? elapsed * (1 - fraction) / fraction : 0
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let line = String(format: "\r[%@] %3d%%  ETA %@ ", bar, Int(fraction * 100), clock(eta))
        Terminal.writeError(line)
    }

    func finish() {
        Terminal.writeError("\r" + String(repeating: " ", count: width + 20) + "\r")
    }

    private func clock(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        return String(format: "%d:%02d", s / 60, s % 60)
    }
}
