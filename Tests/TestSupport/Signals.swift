import Foundation

/// Test signals and measurements shared by the test targets.
public enum Signals {
    public static func sine(frequencyHz: Double, sampleRate: Double, frames: Int, amplitude: Double = 0.5,
                            phase: Double = 0) -> [Float] {
        (0..<frames).map { Float(amplitude * sin(2 * .pi * frequencyHz * Double($0) / sampleRate + phase)) }
    }

    /// Deterministic white noise in [−amplitude, amplitude] (xorshift).
    public static func noise(frames: Int, amplitude: Float = 0.5, seed: UInt64 = 0x9E3779B97F4A7C15) -> [Float] {
        var s = seed
        return (0..<frames).map { _ in
            s ^= s << 13; s ^= s >> 7; s ^= s << 17
            return amplitude * (Float(Double(s >> 11) / Double(1 << 53)) * 2 - 1)
        }
    }

    public static func rms(_ x: ArraySlice<Float>) -> Double {
        guard !x.isEmpty else { return 0 }
        return (x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count)).squareRoot()
    }

    public static func db(_ v: Double) -> Double { 20 * log10(max(v, 1e-30)) }

    /// Power of `x` at `hz` (Goertzel), for which of two tones dominates a short window.
    public static func power(_ x: ArraySlice<Float>, hz: Double, sampleRate: Double) -> Double {
        let w = 2 * cos(2 * Double.pi * hz / sampleRate)
        var s1 = 0.0, s2 = 0.0
        for v in x { let s0 = Double(v) + w * s1 - s2; s2 = s1; s1 = s0 }
        return s1 * s1 + s2 * s2 - w * s1 * s2
    }

    /// Frames from `from` until a 10 ms window of `y` (its centre; 1 ms steps) holds more of
    /// `newHz` than of `oldHz`; nil if none does.
    public static func dominance(_ y: [Float], from: Int, oldHz: Double, newHz: Double, sampleRate: Double) -> Int? {
        let w = Int(sampleRate / 100), step = Int(sampleRate / 1000)
        var start = max(0, from - w)
        while start + w <= y.count {
            let x = y[start..<(start + w)]
            if power(x, hz: newHz, sampleRate: sampleRate) > power(x, hz: oldHz, sampleRate: sampleRate) { return start + w / 2 - from }
            start += step
        }
        return nil
    }

    /// Frequency of a steady sinusoid: a zero-crossing estimate refined by the slope of the phase
    /// of the signal demodulated at that estimate, over 4096-sample segments. Precise to far
    /// below a cent on clean tones.
    public static func frequency(_ x: ArraySlice<Float>, sampleRate: Double) -> Double {
        let a = Array(x)
        // zero crossings
        var first = -1.0, last = -1.0, count = 0
        for i in 1..<a.count where a[i - 1] < 0 && a[i] >= 0 {
            let t = Double(i - 1) + Double(-a[i - 1] / (a[i] - a[i - 1]))
            if first < 0 { first = t }
            last = t
            count += 1
        }
        guard count > 2 else { return 0 }
        var f0 = Double(count - 1) / (last - first) * sampleRate
        // Two refinement passes of phase-slope regression.
        let seg = 4096
        for _ in 0..<2 {
            var ts: [Double] = [], ph: [Double] = []
            var start = 0
            while start + seg <= a.count {
                var re = 0.0, im = 0.0
                for i in 0..<seg {
                    let n = start + i
                    let w = 0.5 - 0.5 * cos(2 * .pi * Double(i) / Double(seg))
                    let ang = -2 * .pi * f0 * Double(n) / sampleRate
                    re += Double(a[n]) * w * cos(ang)
                    im += Double(a[n]) * w * sin(ang)
                }
                ts.append(Double(start + seg / 2) / sampleRate)
                ph.append(atan2(im, re))
                start += seg / 2
            }
            guard ts.count >= 3 else { return f0 }
            for i in 1..<ph.count {     // unwrap
                while ph[i] - ph[i - 1] > .pi { ph[i] -= 2 * .pi }
                while ph[i] - ph[i - 1] < -.pi { ph[i] += 2 * .pi }
            }
            let mt = ts.reduce(0, +) / Double(ts.count), mp = ph.reduce(0, +) / Double(ph.count)
            var num = 0.0, den = 0.0
            for i in 0..<ts.count { num += (ts[i] - mt) * (ph[i] - mp); den += (ts[i] - mt) * (ts[i] - mt) }
            f0 += num / den / (2 * .pi)
        }
        return f0
    }

    public static func cents(_ measured: Double, _ expected: Double) -> Double {
        1200 * log2(measured / expected)
    }

    /// Level of the component at `frequencyHz` (least-squares fit of a sinusoid) and the level of
    /// everything else, in dB relative to the fitted tone (SINAD as a negative number).
    public static func residualDB(_ x: ArraySlice<Float>, frequencyHz: Double, sampleRate: Double) -> Double {
        let a = Array(x)
        // Least squares for v ≈ c·cos + s·sin (normal equations; the segment need not hold whole cycles).
        var cc = 0.0, ss = 0.0, cs = 0.0, vc = 0.0, vs = 0.0
        for (n, v) in a.enumerated() {
            let ang = 2 * .pi * frequencyHz * Double(n) / sampleRate
            let co = cos(ang), si = sin(ang)
            cc += co * co; ss += si * si; cs += co * si; vc += Double(v) * co; vs += Double(v) * si
        }
        let det = cc * ss - cs * cs
        let c = (vc * ss - vs * cs) / det, s = (vs * cc - vc * cs) / det
        var err = 0.0, sig = 0.0
        for (n, v) in a.enumerated() {
            let ang = 2 * .pi * frequencyHz * Double(n) / sampleRate
            let fit = c * cos(ang) + s * sin(ang)
            err += (Double(v) - fit) * (Double(v) - fit)
            sig += fit * fit
        }
        return 10 * log10(max(err, 1e-30) / max(sig, 1e-30))
    }

    /// A least-squares fit of sinusoids at the given frequencies (all at once): each one's
    /// amplitude, and the power of what is left relative to the fitted sum (dB). Normal equations
    /// in double precision, solved by Gaussian elimination with partial pivoting.
    public static func partials(_ x: ArraySlice<Float>, frequenciesHz: [Double], sampleRate: Double)
        -> (amplitudes: [Double], residualDB: Double) {
        let a = Array(x), k = 2 * frequenciesHz.count
        var basis = [[Double]](repeating: [Double](repeating: 0, count: a.count), count: k)
        for (j, f) in frequenciesHz.enumerated() {
            let w = 2 * Double.pi * f / sampleRate
            for n in 0..<a.count { basis[2 * j][n] = cos(w * Double(n)); basis[2 * j + 1][n] = sin(w * Double(n)) }
        }
        var m = [[Double]](repeating: [Double](repeating: 0, count: k + 1), count: k)
        for r in 0..<k {
            for c in r..<k {
                var sum = 0.0
                for n in 0..<a.count { sum += basis[r][n] * basis[c][n] }
                m[r][c] = sum; m[c][r] = sum
            }
            var v = 0.0
            for n in 0..<a.count { v += basis[r][n] * Double(a[n]) }
            m[r][k] = v
        }
        for col in 0..<k {
            let pivot = (col..<k).max { abs(m[$0][col]) < abs(m[$1][col]) }!
            m.swapAt(col, pivot)
            for r in 0..<k where r != col {
                let f = m[r][col] / m[col][col]
                if f != 0 { for c in col...k { m[r][c] -= f * m[col][c] } }
            }
        }
        let coef = (0..<k).map { m[$0][k] / m[$0][$0] }
        var err = 0.0, sig = 0.0
        for n in 0..<a.count {
            var fit = 0.0
            for j in 0..<k { fit += coef[j] * basis[j][n] }
            err += (Double(a[n]) - fit) * (Double(a[n]) - fit); sig += fit * fit
        }
        let amps = (0..<frequenciesHz.count).map { j -> Double in
            let c = coef[2 * j], s = coef[2 * j + 1]
            return (c * c + s * s).squareRoot()
        }
        return (amps, 10 * log10(max(err, 1e-30) / max(sig, 1e-30)))
    }

    /// Decaying noise hits (2 ms attack, 60 ms decay) every 0.5 s after 0.25 s of silence, 4 s.
    public static func hits(rate: Int) -> (signal: [Float], onsets: [Int]) {
        var x = [Float](repeating: 0, count: 4 * rate)
        let n = noise(frames: x.count, amplitude: 0.8)
        var onsets: [Int] = []
        var t = rate / 4
        while t + rate / 4 < x.count {
            onsets.append(t)
            for i in 0..<(rate / 5) {
                let s = Double(i) / Double(rate)
                x[t + i] = n[t + i] * Float(min(1, s / 0.002) * exp(-s / 0.06))
            }
            t += rate / 2
        }
        return (x, onsets)
    }

    /// `hits(rate:)` over a bed with nothing above 4 kHz: a 55 Hz sine and a chord of 220, 277
    /// and 330 Hz, together 14 dB under the hits' peak, playing throughout. Over a bed the
    /// wet signal's envelope is the bed's, so a gate on the whole band cannot see the highs' smear
    /// before a hit; `preEchoAbove` measures it there.
    public static func hitsOverBed(rate: Int) -> (signal: [Float], onsets: [Int]) {
        var (x, onsets) = hits(rate: rate)
        for (f, a) in [(55.0, 0.08), (220.0, 0.03), (277.2, 0.03), (329.6, 0.03)] {
            let tone = sine(frequencyHz: f, sampleRate: Double(rate), frames: x.count, amplitude: a)
            for i in x.indices { x[i] += tone[i] }
        }
        return (x, onsets)
    }

    /// Pre-echo above `cutoffHz`: `y` through two second-order Butterworth high-passes there
    /// (24 dB per octave), then the worst energy over the onsets in the 30 ms before each
    /// against the 30 ms after it (dB).
    public static func preEchoAbove(_ y: [Float], cutoffHz: Double, onsets: [Int], rate: Int) -> Double {
        let high = butterworth(y, highPass: true, cornerHz: cutoffHz, rate: Double(rate), sections: 2)
        let n = Int(0.03 * Double(rate))
        var pre = -200.0
        for o in onsets where o - n >= 0 && o + n <= high.count {
            pre = max(pre, db(rms(high[(o - n)..<o]) / max(rms(high[o..<(o + n)]), 1e-12)))
        }
        return pre
    }

    /// `x` through `sections` RBJ second-order Butterworth sections (Q = 1/√2) at `cornerHz`,
    /// high- or low-pass, forward only, in doubles (direct form I).
    public static func butterworth(_ x: [Float], highPass: Bool, cornerHz: Double, rate: Double, sections: Int) -> [Float] {
        let w = 2 * Double.pi * cornerHz / rate, alpha = sin(w) / (2 * 0.5.squareRoot()), a0 = 1 + alpha
        let b0 = (highPass ? 1 + cos(w) : 1 - cos(w)) / 2 / a0, b1 = (highPass ? -2 : 2) * b0
        let a1 = -2 * cos(w) / a0, a2 = (1 - alpha) / a0
        var h = x.map(Double.init)
        for _ in 0..<sections {
            var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0
            for i in h.indices {
                let v = b0 * h[i] + b1 * x1 + b0 * x2 - a1 * y1 - a2 * y2
                x2 = x1; x1 = h[i]; y2 = y1; y1 = v; h[i] = v
            }
        }
        return h.map(Float.init)
    }

    /// Attack measures of `y` against the input `x` it came from, at the given onsets:
    /// - pre-echo: the worst energy in the 30 ms before an onset relative to the 30 ms after it (dB);
    /// - onset shift: the mean offset (ms) of the first instant whose 1 ms RMS passes half the
    ///   hit's peak, in `y` minus the same in `x` (0 = the attack where it was);
    /// - doubled: the worst 5 ms RMS of `y` over that of `x` between 3 and 60 ms after an onset
    ///   (dB): a second copy of the attack shows as a bump of several dB.
    public static func attacks(_ y: [Float], input x: [Float], onsets: [Int], rate: Int)
        -> (preEchoDB: Double, shiftMS: Double, doubledDB: Double) {
        let w = Int(0.03 * Double(rate)), ms = rate / 1000
        func halfPeakTime(_ s: [Float], _ o: Int) -> Int? {
            let env = (o - w..<o + w).map { i in rms(s[i..<min(s.count, i + ms)]) }
            let peak = env.max() ?? 0
            return env.firstIndex { $0 > peak / 2 }
        }
        var pre = -200.0, doubled = -200.0, shifts: [Double] = []
        for o in onsets where o - w >= 0 && o + 2 * w < y.count {
            pre = max(pre, db(rms(y[(o - w)..<o]) / rms(y[o..<(o + w)])))
            if let a = halfPeakTime(y, o), let b = halfPeakTime(x, o) { shifts.append(Double(a - b) / Double(ms)) }
            var i = o + 3 * ms
            while i + 5 * ms <= o + 60 * ms && i + 5 * ms <= y.count {
                doubled = max(doubled, db(rms(y[i..<(i + 5 * ms)]) / max(rms(x[i..<(i + 5 * ms)]), 1e-9)))
                i += ms
            }
        }
        return (pre, shifts.isEmpty ? 0 : shifts.reduce(0, +) / Double(shifts.count), doubled)
    }
}
