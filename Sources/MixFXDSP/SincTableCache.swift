/// Interpolation tables for the pitch shifter, shared by every shifter in the process and built
/// once on the control side (in `prepare`), never on the render thread.
///
/// The tables are kept by grid index (`index(forRatio:)`):
/// - 0, `unitIndex`: r = 1, a tempo with the pitch kept. The stretched signal is read at its own
///   rate, so the interpolator is a fractional delay: nothing can alias or image, the cutoff is at
///   Nyquist (exact at whole samples) and the whole band is kept.
/// - 1, `loweredIndex`: r < 1. Reading slower images the band's top into the audible range (at
///   r·(Fs − f)), so the cutoff is 0.92 of Nyquist.
/// - 2 and up: raised, ratios rounded *up* to a grid of 100 cents (so a cutoff is never above what
///   the ratio needs, at most 5.9 % below it): index 1 + ⌈cents/100⌉.
///
/// Two families:
/// - `table(index:)` anti-aliases: reading a full-band signal r times faster needs a cutoff of
///   1/r of Nyquist, and a kernel r times wider. The transient splice reads the input with it.
/// - `interpolator(index:)` only interpolates: the shifter cuts its synthesis frames at
///   `bandEdge(index:)` first, so the stretched signal it reads holds nothing that could alias.
public enum SincTableCache {
    /// Grid step (cents) of the up-shift tables.
    public static let stepCents = 100
    /// The largest up-shift a table is kept for, cents.
    /// (`PitchShifterSettings.centsRange`'s upper bound, as a literal: a constant, not a global
    /// built on first use on the render thread; a test checks the two agree.)
    public static let maxCents = 2400
    /// The grid index of r = 1 (a tempo alone).
    public static let unitIndex = 0
    /// The grid index of every r < 1.
    public static let loweredIndex = 1
    /// The first grid index of a raised pitch (up to +100 cents); the frames of these are cut
    /// at `bandEdge`.
    public static let firstRaisedIndex = 2
    /// How close to 1 a ratio counts as 1: a stretch σ = r/R times R need not give 1 exactly.
    static let unitTolerance = 1e-9

    private static let tables = ControlLock<[Int: SincTable]>([:])
    private static let interpolators = ControlLock<[Int: SincTable]>([:])

    /// The upper ratio of grid `index`'s cell (raised indices), in cents.
    static func cents(index: Int) -> Double { Double((index - 1) * stepCents) }

    /// Where a stretched frame for grid `index` is cut off, as a fraction of Nyquist: 0.92/r
    /// for a raised pitch (unit and lowered: not cut). The shifter zeroes the bins above it
    /// before synthesis, so the stretched signal needs no anti-aliasing when it is read r times
    /// faster.
    public static func bandEdge(index: Int) -> Double {
        index < firstRaisedIndex ? 1 : 0.92 / PitchShifterSettings.ratio(cents: cents(index: index))
    }

    /// For reading a stretched signal band-limited to `bandEdge(index)`·Nyquist (raised): it
    /// only has to interpolate, not to anti-alias, so its transition can span everything from
    /// the band edge B to the first image at Fs − B (cutoff at Nyquist, which also makes it
    /// exact at whole samples), and it needs far fewer taps than the anti-aliasing table for
    /// the same ratio (Kaiser: taps ≈ (A − 8)/(14.36·Δf), Δf = 1 − 2B in units of Fs; 32 instead
    /// of 72 at +200 cents, 8 at +2400). Unit and lowered: the full-band `table(index:)`.
    public static func interpolator(index: Int) -> SincTable {
        guard index >= firstRaisedIndex else { return table(index: index) }
        return cached(interpolators, index) { SincTable(scale: 1, quality: interpolatorQuality(index: index), phases: 512) }
    }

    /// The taps of `interpolator(index:)`, without building it (the plan sizes a shifter by
    /// them before it knows which tables it needs).
    public static func interpolatorTaps(index: Int) -> Int {
        index < firstRaisedIndex ? tableTaps(index: index) : SincTable.taps(scale: 1, quality: interpolatorQuality(index: index))
    }

    /// A raised index's interpolator: cutoff at Nyquist, the taps its transition from the band
    /// edge to the first image needs.
    private static func interpolatorQuality(index: Int) -> ResamplerQuality {
        let edge = bandEdge(index: index) / 2                 // B in units of Fs
        let taps = (ResamplerQuality.shifter.kaiserBeta / 0.1102 + 8.7 - 8) / (14.36 * (1 - 2 * edge))
        return ResamplerQuality(halfWidthZeroCrossings: max(4, Int((taps / 2).rounded(.up))),
                                kaiserBeta: ResamplerQuality.shifter.kaiserBeta, cutoff: 1)
    }

    /// `cache[index]`, built by `make` on first use.
    private static func cached(_ cache: ControlLock<[Int: SincTable]>, _ index: Int,
                               _ make: () -> SincTable) -> SincTable {
        cache.withLock { t in
            if let table = t[index] { return table }
            let table = make()
            t[index] = table
            return table
        }
    }

    /// The interpolators from index 0 through the one for `maxRatio`.
    public static func interpolators(upToRatio maxRatio: Double) -> [SincTable] {
        (0...index(forRatio: maxRatio)).map { interpolator(index: $0) }
    }

    /// Grid index for a ratio: `unitIndex` within 1e-9 of 1, `loweredIndex` below, else
    /// 1 + ⌈cents/100⌉.
    @inline(__always)
    public static func index(forRatio r: Double) -> Int {
        if abs(r - 1) <= unitTolerance { return unitIndex }
        guard r > 1 else { return loweredIndex }
        let cents = PitchShifterSettings.cents(ratio: r)
        return 1 + min(maxCents / stepCents, Int(Libm.roundedUp(cents / Double(stepCents) - 1e-9)))
    }

    /// The table for grid `index`, built on first use (control side). Unit: the shifter's
    /// kernel (64 taps, β = 9) with its cutoff at Nyquist.
    public static func table(index: Int) -> SincTable {
        cached(tables, index) {
            let design = tableDesign(index: index)
            return SincTable(scale: design.scale, quality: design.quality, phases: 512)
        }
    }

    /// The taps of `table(index:)`, without building it.
    public static func tableTaps(index: Int) -> Int {
        let design = tableDesign(index: index)
        return SincTable.taps(scale: design.scale, quality: design.quality)
    }

    /// Grid `index`'s anti-aliasing table: its scale (1/r raised) and quality.
    private static func tableDesign(index: Int) -> (scale: Double, quality: ResamplerQuality) {
        let q = ResamplerQuality.shifter
        switch index {
        case unitIndex:
            return (1, ResamplerQuality(halfWidthZeroCrossings: q.halfWidthZeroCrossings, kaiserBeta: q.kaiserBeta, cutoff: 1))
        case loweredIndex:
            return (1, q)
        default:
            return (1 / PitchShifterSettings.ratio(cents: cents(index: index)), q)
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
