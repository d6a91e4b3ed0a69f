import Foundation
import MixFX
import MixFXDSP
import MixFXDSPAVX2

/// Prints "n ns" per real forward transform for n = 256…8192, timed on the DSP copy a render
/// uses on this CPU (`DSPCopy.active`, `MIXFX_DSP` forces one), which it names on stderr: the
/// figures beside FFTW's are then those of the transforms the renders run.
func fftBench() {
    let copy = DSPCopy.active
    FileHandle.standardError.write(Data("mixfx-bench --fft: the \(copy.rawValue) copy\n".utf8))
    var n = 256
    while n <= 8192 {
        let x = (0..<n).map { _ in Float.random(in: -0.5...0.5) }
        var re = [Float](repeating: 0, count: n / 2 + 1), im = re
        let reps = 20_000_000 / n
        let seconds: Double
        if copy == .avx2 {
            let fft = MixFXDSPAVX2.RealFFT(size: n)
            fft.forward(x, re: &re, im: &im)
            seconds = timeIt { for _ in 0..<reps { fft.forward(x, re: &re, im: &im) } }
        } else {
            let fft = MixFXDSP.RealFFT(size: n)
            fft.forward(x, re: &re, im: &im)
            seconds = timeIt { for _ in 0..<reps { fft.forward(x, re: &re, im: &im) } }
        }
        print("\(n) \(String(format: "%.1f", seconds / Double(reps) * 1e9))")
        n *= 2
    }
}
