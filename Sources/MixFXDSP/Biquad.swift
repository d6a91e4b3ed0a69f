#if canImport(Glibc)
import Glibc
#endif

/// Normalised biquad coefficients (a0 divided out):
///
///     y[n] = b0·x[n] + b1·x[n-1] + b2·x[n-2] − a1·y[n-1] − a2·y[n-2]
///     H(z) = (b0 + b1·z⁻¹ + b2·z⁻²) / (1 + a1·z⁻¹ + a2·z⁻²)
public struct BiquadCoefficients: Sendable, Equatable {
    /// Feed-forward (b) and feedback (a) coefficients, a0 = 1.
    public var b0, b1, b2, a1, a2: Double

    /// Coefficients already normalised by a0.
    public init(b0: Double, b1: Double, b2: Double, a1: Double, a2: Double) {
        self.b0 = b0; self.b1 = b1; self.b2 = b2; self.a1 = a1; self.a2 = a2
    }

    /// y = x.
    public static let identity = BiquadCoefficients(b0: 1, b1: 0, b2: 0, a1: 0, a2: 0)

    /// Normalises raw cookbook coefficients by `a0`.
    public init(b0: Double, b1: Double, b2: Double, a0: Double, a1: Double, a2: Double) {
        self.init(b0: b0 / a0, b1: b1 / a0, b2: b2 / a0, a1: a1 / a0, a2: a2 / a0)
    }

    /// |H(e^{jω})| in dB at `frequencyHz`, from the coefficients (the analytic response).
    public func magnitudeDB(atHz frequencyHz: Double, sampleRate: Double) -> Double {
        let w = 2 * Double.pi * frequencyHz / sampleRate
        let c1 = cos(w), s1 = sin(w), c2 = cos(2 * w), s2 = sin(2 * w)
        let nr = b0 + b1 * c1 + b2 * c2, ni = -(b1 * s1 + b2 * s2)
        let dr = 1 + a1 * c1 + a2 * c2, di = -(a1 * s1 + a2 * s2)
        return 10 * log10((nr * nr + ni * ni) / (dr * dr + di * di))
    }
}

/// Which RBJ shelf.
public enum ShelfKind: Sendable {
    case low, high
}

extension BiquadCoefficients {
    /// A shelf from Robert Bristow-Johnson's "Audio EQ Cookbook":
    ///
    ///     A     = 10^(gainDB/40)
    ///     w0    = 2π·f0/Fs
    ///     alpha = sin(w0)/2 · sqrt( (A + 1/A)·(1/S − 1) + 2 )        (S = shelf slope, 0 < S ≤ 1;
    ///                                                                mixfx takes `ShelfBandSettings.slopeRange`)
    ///
    ///     lowShelf:  b0 =    A·( (A+1) − (A−1)·cos(w0) + 2·sqrt(A)·alpha )
    ///                b1 =  2·A·( (A−1) − (A+1)·cos(w0) )
    ///                b2 =    A·( (A+1) − (A−1)·cos(w0) − 2·sqrt(A)·alpha )
    ///                a0 =        (A+1) + (A−1)·cos(w0) + 2·sqrt(A)·alpha
    ///                a1 =   −2·( (A−1) + (A+1)·cos(w0) )
    ///                a2 =        (A+1) + (A−1)·cos(w0) − 2·sqrt(A)·alpha
    ///
    ///     highShelf: b0 =    A·( (A+1) + (A−1)·cos(w0) + 2·sqrt(A)·alpha )
    ///                b1 = −2·A·( (A−1) + (A+1)·cos(w0) )
    ///                b2 =    A·( (A+1) + (A−1)·cos(w0) − 2·sqrt(A)·alpha )
    ///                a0 =        (A+1) − (A−1)·cos(w0) + 2·sqrt(A)·alpha
    ///                a1 =    2·( (A−1) − (A+1)·cos(w0) )
    ///                a2 =        (A+1) − (A−1)·cos(w0) − 2·sqrt(A)·alpha
    ///
    /// SoX's `bass`/`treble` effects use the same equations (with `s` widths), which makes SoX a
    /// numeric oracle in the tests.
    @_noAllocation @_noLocks
    public static func shelf(_ kind: ShelfKind, frequencyHz: Double, gainDB: Double, slope: Double,
                             sampleRate: Double) -> BiquadCoefficients {
        let A = Libm.pow(10, gainDB / 40)
        let w0 = 2 * Double.pi * frequencyHz / sampleRate
        let cw = Libm.cos(w0)
        let alpha = Libm.sin(w0) / 2 * Libm.sqrt((A + 1 / A) * (1 / slope - 1) + 2)
        let twoSqrtAAlpha = 2 * Libm.sqrt(A) * alpha
        switch kind {
        case .low:
            return BiquadCoefficients(
                b0: A * ((A + 1) - (A - 1) * cw + twoSqrtAAlpha),
                b1: 2 * A * ((A - 1) - (A + 1) * cw),
                b2: A * ((A + 1) - (A - 1) * cw - twoSqrtAAlpha),
                a0: (A + 1) + (A - 1) * cw + twoSqrtAAlpha,
                a1: -2 * ((A - 1) + (A + 1) * cw),
                a2: (A + 1) + (A - 1) * cw - twoSqrtAAlpha)
        case .high:
            return BiquadCoefficients(
                b0: A * ((A + 1) + (A - 1) * cw + twoSqrtAAlpha),
                b1: -2 * A * ((A - 1) + (A + 1) * cw),
                b2: A * ((A + 1) + (A - 1) * cw - twoSqrtAAlpha),
                a0: (A + 1) - (A - 1) * cw + twoSqrtAAlpha,
                a1: 2 * ((A - 1) - (A + 1) * cw),
                a2: (A + 1) - (A - 1) * cw - twoSqrtAAlpha)
        }
    }
}

extension BiquadCoefficients {
    /// A high-pass from the same cookbook:
    ///
    ///     w0 = 2π·f0/Fs,   alpha = sin(w0)/(2Q)
    ///     b0 = (1 + cos(w0))/2,   b1 = −(1 + cos(w0)),   b2 = (1 + cos(w0))/2
    ///     a0 = 1 + alpha,         a1 = −2·cos(w0),        a2 = 1 − alpha
    ///
    /// (Q = 1/√2: Butterworth, −3 dB at f0, 12 dB per octave below.)
    public static func highPass(frequencyHz: Double, q: Double, sampleRate: Double) -> BiquadCoefficients {
        let w0 = 2 * Double.pi * frequencyHz / sampleRate
        let c = Libm.cos(w0), alpha = Libm.sin(w0) / (2 * q)
        return BiquadCoefficients(b0: (1 + c) / 2, b1: -(1 + c), b2: (1 + c) / 2, a0: 1 + alpha, a1: -2 * c, a2: 1 - alpha)
    }
}

/// One biquad running two channels at once in SIMD lanes (transposed direct form II, in `Double`:
/// a 55 Hz shelf at 48 kHz needs the precision). A mono signal uses lane 0.
public struct StereoBiquad: Sendable {
    /// Set by the owner between blocks (render side).
    public var coefficients: BiquadCoefficients = .identity
    private var s1 = SIMD2<Double>(repeating: 0)
    private var s2 = SIMD2<Double>(repeating: 0)
    private var pending: SIMD2<Double>?      // the first input of a pair split by a block end

    /// A filter passing its input unchanged, with clear state.
    public init() {}

    /// Clears the filter state.
    public mutating func reset() {
        s1 = .zero
        s2 = .zero
        pending = nil
    }

    /// Filters `count` frames in place (`right` nil for mono), two samples per step. The
    /// transposed direct form II,
    ///
    ///     y = b0·x + s1,   s1' = b1·x − a1·y + s2,   s2' = b2·x − a2·y,
    ///
    /// with u = x·(b1 − a1·b0), v = x·(b2 − a2·b0), is
    ///
    ///     y[n] = b0·x[n] + s1,   s1' = u[n] − a1·s1 + s2,   s2' = v[n] − a2·s1
    ///
    /// and two steps at once give
    ///
    ///     y[n+1] = b0·x[n+1] + u[n] − a1·s1 + s2
    ///     s1''   = u[n+1] + v[n] − a1·u[n] + (a1² − a2)·s1 − a1·s2
    ///     s2''   = v[n+1] − a2·u[n] + a1·a2·s1 − a2·s2
    ///
    /// so the chain of dependent operations from one state to the next is one multiply-add per
    /// two samples instead of three operations per sample. Same filter, rounding aside. Pairs
    /// are counted from `reset`, and a block that ends inside a pair keeps its first sample
    /// pending, so the output does not depend on where blocks begin and end.
    @_noAllocation @_noLocks
    public mutating func process(_ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, count: Int) {
        let c = coefficients
        let b0 = SIMD2<Double>(repeating: c.b0)
        let bu = SIMD2<Double>(repeating: c.b1 - c.a1 * c.b0), bv = SIMD2<Double>(repeating: c.b2 - c.a2 * c.b0)
        let a1 = SIMD2<Double>(repeating: c.a1), a2 = SIMD2<Double>(repeating: c.a2)
        let k11 = SIMD2<Double>(repeating: c.a1 * c.a1 - c.a2), k21 = SIMD2<Double>(repeating: c.a1 * c.a2)
        let r = right ?? left
        var s1 = self.s1, s2 = self.s2
        // the pair's second output; the state moves on past the pair
        @inline(__always)
        func pair(_ x0: SIMD2<Double>, _ x1: SIMD2<Double>, _ s1: inout SIMD2<Double>, _ s2: inout SIMD2<Double>) -> SIMD2<Double> {
            let u0 = bu * x0, v0 = bv * x0, u1 = bu * x1, v1 = bv * x1
            let y1 = (b0 * x1 + u0) + (s2 - a1 * s1)
            let n1 = (u1 + v0 - a1 * u0) + (k11 * s1 - a1 * s2)
            let n2 = (v1 - a2 * u0) + (k21 * s1 - a2 * s2)
            s1 = n1; s2 = n2
            return y1
        }
        var i = 0
        if let x0 = pending, count > 0 {
            // the second sample of the pair the last block began
            let y1 = pair(x0, SIMD2<Double>(Double(left[0]), Double(r[0])), &s1, &s2)
            left[0] = Float(y1[0])
            if let right { right[0] = Float(y1[1]) }
            pending = nil
            i = 1
        }
        while i + 2 <= count {
            let x0 = SIMD2<Double>(Double(left[i]), Double(r[i]))
            let y0 = b0 * x0 + s1
            let y1 = pair(x0, SIMD2<Double>(Double(left[i + 1]), Double(r[i + 1])), &s1, &s2)
            left[i] = Float(y0[0]); left[i + 1] = Float(y1[0])
            if let right { right[i] = Float(y0[1]); right[i + 1] = Float(y1[1]) }
            i += 2
        }
        self.s1 = s1; self.s2 = s2
        if i < count {
            // the first sample of a pair: its output needs only the state; the state moves on
            // with the pair's second sample
            let x0 = SIMD2<Double>(Double(left[i]), Double(r[i]))
            let y0 = b0 * x0 + s1
            left[i] = Float(y0[0])
            if let right { right[i] = Float(y0[1]) }
            pending = x0
        }
    }

    /// Snaps denormal-range state to zero (call once per block): a decaying filter fed silence
    /// would otherwise crawl through denormals, which are slow on x86.
    @inline(__always)
    public mutating func flushDenormals() {
        let tiny = SIMD2<Double>(repeating: 1e-30)
        s1.replace(with: 0, where: abs(s1) .< tiny)
        s2.replace(with: 0, where: abs(s2) .< tiny)
    }
}

@inline(__always)
func abs(_ v: SIMD2<Double>) -> SIMD2<Double> { v.replacing(with: -v, where: v .< 0) }
