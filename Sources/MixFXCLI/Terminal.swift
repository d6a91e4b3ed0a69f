import Foundation
import Synchronization

/// Set by SIGINT/SIGTERM; long operations poll it and stop cleanly.
let interruptRequested = Atomic<Bool>(false)

enum Terminal {
    static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) != 0 }

    static func installInterruptHandler() {
        // A parent may have left the signals blocked (some process launchers do): unblock them.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        sigprocmask(SIG_UNBLOCK, &set, nil)
        signal(SIGINT) { _ in interruptRequested.store(true, ordering: .relaxed) }
        signal(SIGTERM) { _ in interruptRequested.store(true, ordering: .relaxed) }
    }

    static func printError(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
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
        FileHandle.standardError.write(Data(line.utf8))
    }

    func finish() {
        FileHandle.standardError.write(Data(("\r" + String(repeating: " ", count: width + 20) + "\r").utf8))
    }

    private func clock(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        return String(format: "%d:%02d", s / 60, s % 60)
    }
}
