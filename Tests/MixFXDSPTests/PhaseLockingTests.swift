import Foundation
import Testing
@testable import MixFXDSP
import TestSupport

@Suite struct PhaseLockingTests {
    /// A phase locking with its scratch bound (the caller deallocates the scratch).
    static func locking(fftSize: Int, sampleRate: Double) -> (PhaseLocking, UnsafeMutableRawPointer) {
        let locking = PhaseLocking(fftSize: fftSize, sampleRate: sampleRate)
        var measure = ScratchCarver(nil)
        locking.bindScratch(&measure)
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: measure.byteCount + 64, alignment: 64)
        var carver = ScratchCarver(scratch)
        locking.bindScratch(&carver)
        return (locking, scratch)
    }

    /// Every bin takes the phasor of its region's peak, the regions found as the type documents
    /// them, by plain loops: peaks are the local maxima over ±2 bins (±1 for a large stretch), and a region ends at the
    /// lowest bin between its peak and the next (lowest by the power's bits with the 3 lowest
    /// mantissa bits replaced by the bin's place in its eight-bin step, as the vector search
    /// compares, so near-ties are decided as it decides them). The spectra are random, so each
    /// peak turns by its own angle and a bin given its neighbour's region shows. The power has
    /// exact ties, flat valleys and gaps longer than one eight-bin step (up to 60 bins).
    @Test(arguments: [512, 4096], [1, 2])
    func binsTakeTheirRegionsPeakPhasor(fftSize: Int, peakReach: Int) throws {
        let bins = fftSize / 2 + 1, channels = 2
        var rng = SeededGenerator(seed: UInt64(fftSize * 10 + peakReach))
        let (locking, scratch) = Self.locking(fftSize: fftSize, sampleRate: 48_000)
        defer { scratch.deallocate() }

        func spectrum() -> [Float] { (0..<(bins * channels)).map { _ in Float.random(in: -1...1, using: &rng) } }
        let re = spectrum(), im = spectrum(), prevRe = spectrum(), prevIm = spectrum()
        for frame in 0..<6 {
            var power = [Float](repeating: 0, count: bins + 8)
            var k = 0
            while k < bins {
                switch Int.random(in: 0..<10, using: &rng) {
                case 0:   // a long valley, flat at its floor
                    let length = Int.random(in: 9...60, using: &rng), floor = Float.random(in: 0...0.01, using: &rng)
                    for i in 0..<length where k + i < bins { power[k + i] = i % 7 == 3 ? floor : floor + Float(abs(i - length / 2)) * 0.01 }
                    k += length
                case 1:   // an exact tie with the bin before
                    power[k] = k > 0 ? power[k - 1] : 0.5; k += 1
                case 2:   // values within 8 ulp of each other
                    power[k] = Float(bitPattern: 0x3E80_0000 | UInt32.random(in: 0...7, using: &rng)); k += 1
                default:
                    power[k] = Float.random(in: 0...1, using: &rng) * Float.random(in: 0...1, using: &rng); k += 1
                }
            }
            _ = power.withUnsafeBufferPointer { p in
                locking.advance(power: p.baseAddress!, re: re, im: im, prevRe: prevRe, prevIm: prevIm, channels: channels,
                                ha: 512 + frame, hs: 600, activeBins: bins, peakReach: peakReach)
            }

            // the reference regions
            // (bin 0 too, where it tops its neighbours: a DC offset's region)
            var peaks: [Int] = power[0] > 0 && power[0] >= power[1] && (peakReach == 1 || power[0] >= power[2]) ? [0] : []
            for k in 1..<(bins - 1) {
                let m = power[k]
                let far = peakReach == 1 || ((k < 2 || m > power[k - 2]) && (k + 2 >= bins || m >= power[k + 2]))
                if m > power[k - 1] && m >= power[k + 1] && m > 0 && far { peaks.append(k) }
            }
            try #require(peaks.count > bins / 40)
            func key(_ k: Int) -> UInt32 { power[k].bitPattern & ~7 }
            var regionOf = [Int](repeating: 0, count: bins)
            var start = 0
            for (q, p) in peaks.enumerated() {
                var end = bins
                if q + 1 < peaks.count {
                    // eight-bin steps from p + 1; in each, the key carries the bin's place in
                    // the step, and a later step wins only with a smaller key
                    var lowest = UInt32.max, step = p + 1
                    while step < peaks[q + 1] {
                        for k in step..<min(step + 8, peaks[q + 1]) where key(k) | UInt32(k - step) < lowest {
                            lowest = key(k) | UInt32(k - step); end = k
                        }
                        step += 8
                    }
                }
                for k in start..<end { regionOf[k] = p }
                start = end
            }
            var wrong = 0
            for k in 0..<bins where locking.rotRe[k] != locking.rotRe[regionOf[k]] || locking.rotIm[k] != locking.rotIm[regionOf[k]] {
                wrong += 1
            }
            #expect(wrong == 0, "frame \(frame): \(wrong) of \(bins) bins turned by another region's phasor")
            // the peaks' phasors differ, so the check above can see a misplaced boundary
            let distinct = Set(peaks.map { locking.rotRe[$0] })
            #expect(distinct.count > peaks.count * 9 / 10)
        }
    }

    /// Peaks stand over ±2 bins up to a stretch of 1.3 either way, over ±1 beyond (both ways the
    /// same: a tempo of 0.5 stretches by 2, its return by 0.5).
    /// `advance(align:)` at 0 cents and tempo 1 (Ha = Hs, a stationary spectrum, so θ = 0):
    /// each peak's phasor, turned 0.9π away, comes back toward 1 by min(max(ω_p, ω_floor)·Hs·κ,
    /// the cap) per frame (κ = 2^(5/1200) − 1), lands on exactly 1, and only then does the frame
    /// count as the input; a peak 70 dB below the loudest is set to 1 at once, and a frame
    /// without peaks sets every phasor to 1.
    @Test func alignTurnsThePhasorsBackWithinTheirBounds() throws {
        let fftSize = 4096, bins = fftSize / 2 + 1, hop = 512, rate = 48_000.0
        let (locking, scratch) = Self.locking(fftSize: fftSize, sampleRate: rate)
        defer { scratch.deallocate() }
        // peaks at bins 3 (35 Hz: below the floor), 38 (445 Hz) and 600 (7 kHz: capped), and a
        // quiet one at 900; the spectra the same frame after frame (each bin's phase advance is
        // then its own ω·Hs, exactly what θ = 0 needs)
        let loud: [Int: Float] = [3: 1, 38: 1, 600: 1, 900: 1e-7]
        var power = [Float](repeating: 0, count: bins + 8)
        var re = [Float](repeating: 0, count: bins), im = [Float](repeating: 0, count: bins)
        for (p, level) in loud {
            for d in -2...2 { power[p + d] = level / Float(1 + 4 * d * d) }
            re[p] = level.squareRoot()
        }
        // the previous frame's spectrum: each bin turned back by ω_k·Hs (a steady partial)
        var prevRe = [Float](repeating: 0, count: bins), prevIm = [Float](repeating: 0, count: bins)
        for k in 0..<bins {
            let a = -2 * Double.pi * Double(k * hop % fftSize) / Double(fftSize)
            prevRe[k] = re[k] * Float(cos(a)); prevIm[k] = re[k] * Float(sin(a))
        }
        let start = 0.9 * Float.pi
        for k in 0..<bins { locking.rotRe[k] = cos(start); locking.rotIm[k] = sin(start) }
        let kappa = pow(2, 5.0 / 1200) - 1
        func bound(_ p: Int) -> Double {
            min(2 * Double.pi * Double(max(Double(p), 100 * Double(fftSize) / rate)) / Double(fftSize) * Double(hop) * kappa, 0.1)
        }
        var angles: [Int: Double] = [3: Double(start), 38: Double(start), 600: Double(start)]
        var frames = 0, aligned = false
        while !aligned && frames < 1_000 {
            aligned = power.withUnsafeBufferPointer { pw in
                locking.advance(power: pw.baseAddress!, re: re, im: im, prevRe: prevRe, prevIm: prevIm, channels: 1,
                                ha: hop, hs: hop, activeBins: bins, peakReach: 2, align: true)
            }
            frames += 1
            #expect(locking.rotRe[900] == 1 && locking.rotIm[900] == 0, "the quiet peak is 1 at once")
            for (p, before) in angles {
                let now = Double(atan2(locking.rotIm[p], locking.rotRe[p]))
                // (the polynomial atan2 and sincos: within 1e-4 rad of the exact turn)
                #expect(abs((before - now) - min(before, bound(p))) < 1e-4, "bin \(p), frame \(frames): \(before) → \(now)")
                angles[p] = now
            }
            if !aligned { #expect(angles.values.contains { $0 != 0 }) }
        }
        #expect(aligned && angles.values.allSatisfy { $0 == 0 })
        #expect(locking.rotRe[38] == 1 && locking.rotIm[38] == 0 && locking.rotRe[600] == 1 && locking.rotRe[3] == 1)
        // the slowest is the one below the floor: 0.9π over its bound's turn per frame
        let expected = Int((Double(start) / bound(3)).rounded(.up))
        #expect(abs(frames - expected) <= 1, "\(frames) frames, \(expected) expected")
        // no peaks: every phasor 1
        for k in 0..<bins { locking.rotRe[k] = -1; locking.rotIm[k] = 0 }
        let silent = [Float](repeating: 0, count: bins + 8)
        let none = silent.withUnsafeBufferPointer { pw in
            locking.advance(power: pw.baseAddress!, re: re, im: im, prevRe: prevRe, prevIm: prevIm, channels: 1,
                            ha: hop, hs: hop, activeBins: bins, peakReach: 2, align: true)
        }
        #expect(none && (0..<bins).allSatisfy { locking.rotRe[$0] == 1 && locking.rotIm[$0] == 0 })
    }

    @Test func peakReachFollowsTheStretch() {
        #expect(PhaseLocking.peakReach(stretch: 1) == 2)
        #expect(PhaseLocking.peakReach(stretch: 1.2599) == 2)   // +400 cents
        #expect(PhaseLocking.peakReach(stretch: 1.29) == 2)
        #expect(PhaseLocking.peakReach(stretch: 1 / 1.29) == 2)
        #expect(PhaseLocking.peakReach(stretch: 1.3) == 1)
        #expect(PhaseLocking.peakReach(stretch: 1 / 1.3) == 1)
        #expect(PhaseLocking.peakReach(stretch: 2) == 1)
        #expect(PhaseLocking.peakReach(stretch: 0.5) == 1)
        #expect(PhaseLocking.peakReach(stretch: 32) == 1)
    }
}
