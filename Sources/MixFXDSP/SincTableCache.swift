import Synchronization

/// Interpolation tables for the pitch shifter, shared by every shifter in the process and built
/// once on the control side (in `prepare`), never on the render thread.
///
/// Reading the stretched signal r times faster needs an anti-aliasing cutoff of 1/r of Nyquist
/// when r > 1. Ratios are rounded *up* to a grid of 100 cents, so a table's cutoff is never above
/// what the ratio needs (at most 5.9 % below it); every r ≤ 1 shares the full-band table.
public enum SincTableCache {
    /// Grid step (cents) of the up-shift tables.
    public static let stepCents = 100
    /// The largest up-shift a table is kept for, cents.
    public static let maxCents = 2400

    private static let tables = Mutex<[Int: SincTable]>([:])

    /// Grid index for a ratio: 0 for r ≤ 1, else ceil(cents/100).
    @inline(__always)
    public static func index(forRatio r: Double) -> Int {
        guard r > 1 else { return 0 }
        let cents = 1200 * log2(r)
        return min(maxCents / stepCents, Int((cents / Double(stepCents) - 1e-9).rounded(.up)))
    }

    /// The table for grid `index`, built on first use (control side).
    public static func table(index: Int) -> SincTable {
        tables.withLock { t in
            if let table = t[index] { return table }
            let r = pow(2, Double(index * stepCents) / 1200)
            let table = SincTable(scale: 1 / r, quality: .shifter, phases: 512)
            t[index] = table
            return table
        }
    }

    /// All tables from index 0 through the one for `maxRatio` (for live use, where the ratio
    /// may change while running).
    public static func tables(upToRatio maxRatio: Double) -> [SincTable] {
        (0...index(forRatio: maxRatio)).map { table(index: $0) }
    }
}

#if canImport(Glibc)
import Glibc
#endif
