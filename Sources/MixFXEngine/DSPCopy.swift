import MixFXDSP
import MixFXDSPAVX2
import CPUFeatures
#if canImport(Glibc)
import Glibc
#endif

/// Which compiled copy of the DSP kernels the engine runs: the same sources built twice, once
/// for any x86-64 (`MixFXDSP`) and once for AVX2/FMA-class CPUs (`MixFXDSPAVX2`, `-target-cpu
/// haswell`, the FFT's eight-lane stages), chosen once per process from cpuid (and the OS's
/// support for the wide registers), as FFTW and SoundTouch choose their kernels. Both give the
/// same output bytes (tested); the wide copy is faster. The time-pitch processor is the
/// boundary: it is most of the work, and the engine holds it as `any PitchShifting` and calls
/// it through `ShifterRef` (a `switch` over the two copies' concrete `PitchShifter`s, which the
/// compiler's realtime check can follow), so each block crosses once and everything below runs
/// in the chosen copy. The integer output's
/// conversion, the meters' levels and the sample guard cross too, one call a channel and block.
///
/// `MIXFX_DSP=baseline` or `MIXFX_DSP=avx2` forces a copy (tests; `avx2` where the CPU lacks it
/// is not honoured, as it would crash).
public enum DSPCopy: String, Sendable {
    /// Built for any x86-64 (SSE2).
    case baseline
    /// Built for Haswell and later (AVX2, FMA).
    case avx2

    /// Whether this CPU (and OS) can run the AVX2 copy.
    public static let cpuHasAVX2 = mixfx_cpu_has_avx2_fma() != 0

    /// `MIXFX_DSP`'s value, nil when it is unset or empty (the CLI refuses a value that is not
    /// a copy's name).
    public static let forcedName: String? = getenv("MIXFX_DSP").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }

    /// The copy this process runs.
    public static let active: DSPCopy = {
        if forcedName == "baseline" { return .baseline }
        return cpuHasAVX2 ? .avx2 : .baseline
    }()

    /// A new, unprepared time-pitch processor from this copy.
    public func makePitchShifter() -> any PitchShifting {
        switch self {
        case .baseline: return MixFXDSP.PitchShifter()
        case .avx2: return MixFXDSPAVX2.PitchShifter()
        }
    }

    /// Meter levels of a block (see `levels`), with this copy's code.
    public func levels(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>?, count: Int, peak: inout Float,
                       sumA: inout Float, sumB: inout Float) {
        switch self {
        case .baseline: MixFXDSP.levelsOfThisCopy(a, b, count: count, peak: &peak, sumA: &sumA, sumB: &sumB)
        case .avx2: MixFXDSPAVX2.levelsOfThisCopy(a, b, count: count, peak: &peak, sumA: &sumA, sumB: &sumB)
        }
    }

    /// `SampleGuard.sanitize` with this copy's code: bad samples replaced by 0, counted.
    public func sanitize(_ samples: UnsafeMutablePointer<Float>, count: Int) -> Int {
        switch self {
        case .baseline: MixFXDSP.SampleGuard.sanitize(samples, count: count)
        case .avx2: MixFXDSPAVX2.SampleGuard.sanitize(samples, count: count)
        }
    }

    /// One channel of a block to integers, with this copy's `IntegerQuantizer` (see it for the
    /// arguments): a file's or a device's last pass over every sample.
    public func quantize(_ source: UnsafePointer<Float>, frameCount: Int, into out: UnsafeMutableRawPointer,
                         sampleBytes: Int, stride: Int, firstIndex: Int, scale: Double, shift: Int, dither: Bool,
                         peak: inout Float, clipped: inout Int, rounded: inout Int) {
        switch self {
        case .baseline:
            MixFXDSP.IntegerQuantizer.quantize(source, frameCount: frameCount, into: out, sampleBytes: sampleBytes,
                                               stride: stride, firstIndex: firstIndex, scale: scale, shift: shift,
                                               dither: dither, peak: &peak, clipped: &clipped, rounded: &rounded)
        case .avx2:
            MixFXDSPAVX2.IntegerQuantizer.quantize(source, frameCount: frameCount, into: out, sampleBytes: sampleBytes,
                                                   stride: stride, firstIndex: firstIndex, scale: scale, shift: shift,
                                                   dither: dither, peak: &peak, clipped: &clipped, rounded: &rounded)
        }
    }
}
