#if canImport(Glibc)
import Glibc
#endif

/// Formant preservation. The stretched frame is later played r times faster, which moves
/// its envelope E(f) to E(f/r); so each bin k of the stretched frame is scaled by
/// E(r·k)/E(k), and after resampling the envelope is back at E(f).
///
/// E is the spectral envelope through the frame's peaks: log magnitudes at the peaks of the
/// channels' summed power (each the largest within ±3 bins, so harmonics of voices down to
/// ~70 Hz count and window sidelobes do not), joined in log magnitude by cubic Hermite
/// segments whose slopes at a peak are those of the line through its two neighbours
/// (Catmull–Rom on unequal spacing), held within `overshoot` of the segment's ends: a formant
/// whose top lies between two harmonics rises above them as a smooth envelope does, where a
/// straight join cut it off (a lower output harmonic there, after a shift, than the voice's
/// envelope). Voices are harmonic, so this follows formants as narrow as the harmonic
/// spacing, where a cepstral lifter short enough to ignore the pitch would blur them. Gains
/// are limited to ±36 dB.
///
/// The gains then keep the frame's power: scaled by c = √(Σ P_k / Σ G_k²·P_k) over the bins
/// the shift keeps, from bin 2 on (bins 0 and 1, a DC offset's lobe, neither count nor are
/// scaled). A harmonic's amplitude follows E, and raising by r leaves 1/r as many harmonics in a
/// band, so E alone loses 10·log10 r dB when raising and gains as much lowering; with c the
/// formant mode has the plain shift's level, for voices and noise alike (an envelope moves
/// energy between frequencies; it does not make a sound louder). c is held within ±12 dB and
/// the scaled gains within ±36 dB: a lone tone over a quiet floor has no envelope to speak of
/// (its E falls to the floor beside it), and c must not lift that floor by the gains' range.
///
/// On a segment from peak p0 (value a, slope m0) to p1 (b, m1), h = p1 − p0, t = (k − p0)/h:
///
///     E(k) = (2t³ − 3t² + 1)·a + (t³ − 2t² + t)·h·m0 + (−2t³ + 3t²)·b + (t³ − t²)·h·m1,
///     m at peak i = (E_{i+1} − E_{i−1})/(p_{i+1} − p_{i−1})   (one-sided at the first and last)
/// Scratch state: one thread at a time (the vocoder that owns it).
final class FormantCorrection {
    /// Bins per spectrum, N/2 + 1.
    let bins: Int
    /// The per-bin gains of the last `update`.
    let gains: UnsafeMutablePointer<Float>
    /// ln |E| of the last `update`, per bin.
    let logEnvelope: UnsafeMutablePointer<Float>
    private let peaks: UnsafeMutablePointer<Int32>

    /// How far (ln magnitude, 6 dB) a segment may rise above its higher end or fall below
    /// its lower one.
    static let overshoot: Float = 0.69, undershoot: Float = 0.69
    /// Buffers for spectra of `bins` bins (control side).
    init(bins: Int) {
        self.bins = bins
        gains = .allocate(capacity: bins)
        logEnvelope = .allocate(capacity: bins)
        peaks = .allocate(capacity: bins)
        gains.update(repeating: 1, count: bins)
    }

    deinit { gains.deallocate(); logEnvelope.deallocate(); peaks.deallocate() }

    /// Computes `gains` for a frame whose summed power spectrum is `power`, shifted by `ratio`;
    /// the bins from `keptBins` on are cut by the shift (they do not count in its power).
    @_noLocks
    func update(power: UnsafePointer<Float>, ratio: Double, keptBins: Int) {
        // (as values: a `&&` or `where` on them would capture `self`; see `Owned`)
        let peaks = peaks, bins = bins
        // Major peaks.
        var count = 0
        for k in 1..<(bins - 1) {
            let m = power[k]
            guard m > 0 && m >= power[k - 1] && m > power[k + 1] else { continue }
            var major = true
            for j in max(0, k - 3)...min(bins - 1, k + 3) where j != k && power[j] > m { major = false; break }
            if major { peaks[count] = Int32(k); count += 1 }
        }
        guard count > 0 else {
            gains.update(repeating: 1, count: bins)
            return
        }
        // log |E| through the peaks (0.5·ln power = ln magnitude), flat beyond the ends.
        var q = 0
        for k in 0..<bins {
            while q + 1 < count && Int(peaks[q + 1]) <= k { q += 1 }
            let p0 = Int(peaks[q])
            if k <= p0 || q + 1 >= count {
                logEnvelope[k] = 0.5 * Libm.logf(power[k <= p0 ? p0 : Int(peaks[count - 1])] + 1e-20)
            } else {
                let p1 = Int(peaks[q + 1])
                let a = 0.5 * Libm.logf(power[p0] + 1e-20), b = 0.5 * Libm.logf(power[p1] + 1e-20)
                let h = Float(p1 - p0), t = Float(k - p0) / h
                // tangents from the neighbouring peaks (one-sided at the ends)
                let pm = q > 0 ? Int(peaks[q - 1]) : p0, pp = q + 2 < count ? Int(peaks[q + 2]) : p1
                let ym = q > 0 ? 0.5 * Libm.logf(power[pm] + 1e-20) : a, yp = q + 2 < count ? 0.5 * Libm.logf(power[pp] + 1e-20) : b
                let m0 = (b - ym) / Float(p1 - pm), m1 = (yp - a) / Float(pp - p0)
                let t2 = t * t, t3 = t2 * t
                let y = (2 * t3 - 3 * t2 + 1) * a + (t3 - 2 * t2 + t) * h * m0 + (-2 * t3 + 3 * t2) * b + (t3 - t2) * h * m1
                logEnvelope[k] = min(max(y, min(a, b) - Self.undershoot), max(a, b) + Self.overshoot)
            }
        }
        let r = Float(ratio)
        let last = Float(bins - 1)
        for k in 0..<bins {
            let pos = min(r * Float(k), last)
            let i = Int(pos)
            let f = pos - Float(i)
            let target = i + 1 < bins ? logEnvelope[i] + f * (logEnvelope[i + 1] - logEnvelope[i]) : logEnvelope[i]
            let d = min(max(target - logEnvelope[k], -4.14), 4.14)   // ln(10^(36/20)) ≈ 4.14
            gains[k] = Libm.expf(d)
        }
        // the frame's power kept (c above)
        var before = 0.0, after = 0.0
        for k in min(2, bins)..<min(keptBins, bins) {
            let p = Double(power[k]), g = Double(gains[k])
            before += p; after += g * g * p
        }
        if after > 0 && before > 0 {
            let c = min(max(Float(Libm.sqrt(before / after)), 0.25), 4)   // ±12 dB
            for k in min(2, bins)..<bins { gains[k] = min(max(gains[k] * c, 1 / 63.1), 63.1) }   // ±36 dB
        }
    }
}
