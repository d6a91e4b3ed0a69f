/// Tape-style speed (AVAudioUnitVarispeed's `rate`): a track read at `speed` times its rate,
/// pitch and tempo moving together, through the band-limited resampler alone (no vocoder).
///
/// A file at rate S played at speed v is a file at rate S·v converted to the mix's rate O. The
/// resampler steps through the input in exact integer arithmetic, so v is taken as the nearest
/// fraction p/q with q ≤ `maximumDenominator` (|v − p/q| < 1/(2q²): under 0.0005 cents at the
/// default range), and the conversion is S·p → O·q, reduced. The output then holds
/// ceil(n·O·q / (S·p)) frames for n input frames, aligned at sample 0, as any rate conversion.
public enum Varispeed {
    /// The speeds allowed (Apple's range).
    public static let range = 0.25...4.0
    /// The largest denominator of the fraction a speed is taken as.
    static let maximumDenominator = 10_000

    /// The resampler's rate pair for a source at `sourceRate` played at `speed` into a mix at
    /// `outputRate`: (in, out), reduced; (sourceRate, outputRate) at speed 1.
    public static func ratePair(sourceRate: Int, outputRate: Int, speed: Double) -> (inRate: Int, outRate: Int) {
        let (p, q) = fraction(speed)
        let a = sourceRate * p, b = outputRate * q
        let g = gcd(a, b)
        return (a / g, b / g)
    }

    /// The best fraction p/q ≈ x with q ≤ `maximumDenominator` (continued fractions).
    public static func fraction(_ x: Double) -> (Int, Int) {
        var (h0, h1, k0, k1) = (0, 1, 1, 0)   // convergents h/k
        var v = x
        for _ in 0..<40 {
            let a = Int(v.rounded(.down))
            let (h2, k2) = (a * h1 + h0, a * k1 + k0)
            if k2 > maximumDenominator { break }
            (h0, h1, k0, k1) = (h1, h2, k1, k2)
            let f = v - Double(a)
            if f < 1e-12 { break }
            v = 1 / f
        }
        return (h1, k1)
    }

    static func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
}
