#if canImport(Glibc)
import Glibc
#endif

/// A look-ahead, true-peak limiter's settings.
public struct LimiterSettings: Sendable, Equatable {
    /// The output's true peak never passes this, dBTP (measured as `TruePeakMeter` does).
    public var ceilingDBTP: Double
    /// How far ahead the limiter sees a peak: the gain ramps down over this long before it
    /// (the attack), ms.
    public var lookaheadMs: Double
    /// The fast release: after an isolated peak the gain recovers with this time constant, ms.
    public var fastReleaseMs: Double
    /// The slow part (program-dependent release): under sustained limiting a second envelope
    /// rises toward the gain reduction with `slowAttackMs` and falls with `slowReleaseMs`, so
    /// dense material is held steadily instead of pumping between its peaks.
    public var slowAttackMs: Double
    public var slowReleaseMs: Double

    /// The range `ceilingDBTP` may take, dBTP.
    public static let ceilingRange = -30.0...0.0

    /// The defaults: −1 dBTP (EBU R128's streaming ceiling), 5 ms look-ahead, 40 ms fast and
    /// 250 ms / 800 ms slow envelope.
    public init(ceilingDBTP: Double = -1, lookaheadMs: Double = 5, fastReleaseMs: Double = 40,
                slowAttackMs: Double = 250, slowReleaseMs: Double = 800) {
        self.ceilingDBTP = ceilingDBTP
        self.lookaheadMs = lookaheadMs
        self.fastReleaseMs = fastReleaseMs
        self.slowAttackMs = slowAttackMs
        self.slowReleaseMs = slowReleaseMs
    }
}

/// A look-ahead, true-peak limiter: the output's true peak stays at or below the ceiling, and
/// where the input never reaches the ceiling the output is the input exactly, delayed by
/// `latencyFrames`.
///
/// Per frame n (all channels share one gain, so the stereo image does not move):
///
/// 1. **detect**: p[n] = the true peak of the stretch (n − D − 1, n − D] over all channels
///    (`TruePeakMeter.framePeaks`, 4× oversampled; D = 11);
/// 2. **required gain**: g[n] = min(1, ceiling / p[n]), as a gain reduction r[n] = −20·log10 g[n] dB;
/// 3. **release** (in dB, both envelopes jump up at once):
///    fast[n] = max(r[n], fast[n−1]·a_f);
///    slow[n] follows fast[n], rising with a_sa and falling with a_sr (a = exp(−1/(τ·fs)));
///    e[n] = max(fast[n], slow[n]) ≥ r[n];
/// 4. **look-ahead**: m[n] = min of 10^(−e/20) over the last W = L + 2M + 1 frames (M = 12, the
///    interpolator's half-length), then the gain is the mean of m over the last L frames (a box
///    filter: the attack is a straight ramp of L frames);
/// 5. **apply**: y[n] = x[n − latency] · gain[n], latency = L + M + D.
///
/// Step 4 makes the gain applied at every frame within M frames of a peak at most the gain that
/// peak requires (the mean of values each ≤ it), so the reconstructed waveform around the peak
/// is scaled by no more than needed to sit at the ceiling. Where e is 0 throughout a window the
/// gain is exactly 1 and the sample passes untouched.
///
/// Non-finite and absurd input samples (NaN, ±∞, beyond ±10⁶) are taken as silence.
///
/// `prepare` allocates; `process` does not allocate, lock or throw.
public struct Limiter {
    /// The settings `prepare` was given.
    public private(set) var settings = LimiterSettings()
    /// The delay between input and output, frames.
    public private(set) var latencyFrames = 0
    /// The largest gain reduction applied since `reset`, dB (≥ 0).
    public var maximumGainReductionDB: Double { minimumGain < 1 ? -20 * log10(Double(minimumGain)) : 0 }
    /// Output frames whose gain was below 1 since `reset`.
    public private(set) var framesLimited = 0
    /// The gain applied to the last frame (1: not limiting), for a live display.
    public private(set) var currentGain: Float = 1
    /// The statistics count output frames from this one on (offline rendering drops the first
    /// `latencyFrames`, silence from before the start).
    public var statisticsStartFrame = 0

    static let marginFrames = TruePeakMeter.tapsPerPhase / 2

    private var channelCount = 0
    private var maximumFrameCount = 0
    private var ceiling: Float = 1
    private var lookahead = 1
    private var window = 1
    private var fastDecay = 0.0, slowAttack = 0.0, slowRelease = 0.0
    private var fast = 0.0, slow = 0.0
    private var minimumGain: Float = 1
    private var detector: TruePeakMeter?
    private var peaks: UnsafeMutablePointer<Float>?
    /// Per channel, the last `latencyFrames` input samples (a ring).
    private var delay: UnsafeMutablePointer<Float>?
    private var delayPosition = 0
    /// The sliding minimum: a ring of (frame, gain) with increasing gains (a monotonic deque).
    private var dequeFrames: UnsafeMutablePointer<Int>?
    private var dequeGains: UnsafeMutablePointer<Float>?
    private var dequeHead = 0, dequeCount = 0
    private var frame = 0
    /// The box filter: its last L inputs (a ring), their sum and how many are below 1.
    private var box: UnsafeMutablePointer<Float>?
    private var boxPosition = 0, boxSum = 0.0, boxBelowOne = 0

    /// An unprepared limiter (call `prepare`).
    public init() {}

    /// Allocates for `spec` and resets. Control side.
    public mutating func prepare(_ spec: ProcessSpec, settings: LimiterSettings) {
        deallocate()
        self.settings = settings
        channelCount = spec.channelCount
        maximumFrameCount = spec.maximumFrameCount
        let rate = spec.sampleRate
        ceiling = Float(pow(10, settings.ceilingDBTP / 20))
        lookahead = max(1, Int((settings.lookaheadMs / 1000 * rate).rounded()))
        window = lookahead + 2 * Limiter.marginFrames + 1
        latencyFrames = lookahead + Limiter.marginFrames + TruePeakMeter.detectorDelayFrames
        func coefficient(_ ms: Double) -> Double { exp(-1 / (max(ms, 0.01) / 1000 * rate)) }
        fastDecay = coefficient(settings.fastReleaseMs)
        slowAttack = 1 - coefficient(settings.slowAttackMs)
        slowRelease = 1 - coefficient(settings.slowReleaseMs)
        detector = TruePeakMeter(channelCount: channelCount, maximumFrameCount: maximumFrameCount)
        peaks = .allocate(capacity: maximumFrameCount)
        delay = .allocate(capacity: channelCount * latencyFrames)
        dequeFrames = .allocate(capacity: window)
        dequeGains = .allocate(capacity: window)
        box = .allocate(capacity: lookahead)
        reset()
    }

    /// Frees what `prepare` allocated. (A struct with pointers: the owner calls it once.)
    public mutating func deallocate() {
        detector?.deallocate(); detector = nil
        peaks?.deallocate(); peaks = nil
        delay?.deallocate(); delay = nil
        dequeFrames?.deallocate(); dequeFrames = nil
        dequeGains?.deallocate(); dequeGains = nil
        box?.deallocate(); box = nil
    }

    /// Moves the ceiling (render side; no allocation). The gain follows with the limiter's own
    /// attack and release.
    @_noAllocation @_noLocks
    public mutating func setCeiling(dBTP: Double) {
        guard dBTP != settings.ceilingDBTP else { return }
        settings.ceilingDBTP = dBTP
        ceiling = Float(Libm.pow(10, dBTP / 20))
    }

    /// Silence in the delay line, no gain reduction, statistics cleared.
    public mutating func reset() {
        detector?.reset()
        delay?.update(repeating: 0, count: channelCount * latencyFrames)
        delayPosition = 0
        fast = 0; slow = 0
        dequeHead = 0; dequeCount = 0; frame = 0
        box?.update(repeating: 1, count: lookahead)
        boxPosition = 0; boxSum = Double(lookahead); boxBelowOne = 0
        minimumGain = 1
        framesLimited = 0
    }

    /// Limits `frameCount` (≤ maximumFrameCount) frames of `buffer` in place; the output is
    /// delayed by `latencyFrames`. With `ceilings` (a moving ceiling, linear, one per frame):
    /// frame i's detected peak p[i] (of the input `detectorDelayFrames` before it) is held to
    /// `ceilings[i]` instead of the ceiling, so a caller that gives each frame the ceiling of
    /// the input it detects keeps every stretch of the output under its own ceiling; the gain
    /// moves to it with the limiter's own attack (the look-ahead's ramp) and release.
    @_noAllocation @_noLocks
    public mutating func process(_ buffer: AudioBuffer, frameCount: Int, ceilings: UnsafePointer<Float>? = nil) {
        process(buffer.planes, frameCount: frameCount, ceilings: ceilings)
    }

    /// `process(_:frameCount:ceilings:)` on a buffer's channels (`AudioBuffer.planes`): what a
    /// checked caller holding the buffer unretained passes.
    @_noAllocation @_noLocks
    public mutating func process(_ planes: AudioBuffer.Planes, frameCount: Int, ceilings: UnsafePointer<Float>?) {
        guard let peaks, let delay, let dequeFrames, let dequeGains, let box else { return }
        // no state may hold a NaN: hostile samples (NaN, ±∞, beyond ±10⁶) count as silence
        for c in 0..<channelCount { _ = SampleGuard.sanitize(planes[c], count: frameCount) }
        detector!.framePeaks({ UnsafePointer(planes[$0]) }, frameCount: frameCount, into: peaks)
        let latency = latencyFrames
        for i in 0..<frameCount {
            // 2–3: required reduction and its release envelopes, dB
            let p = peaks[i]
            let ceiling = ceilings?[i] ?? self.ceiling
            let required = p > ceiling ? min(200, -20 * Libm.log10(Double(ceiling / p))) : 0
            fast = max(required, fast * fastDecay)
            slow += (fast - slow) * (fast > slow ? slowAttack : slowRelease)
            if fast < 1e-6 { fast = 0 }
            if slow < 1e-6 { slow = 0 }
            let reduction = max(fast, slow)
            let gain: Float = reduction > 0 ? Float(Libm.pow(10, -reduction / 20)) : 1
            // 4: the minimum over the last W frames (monotonic deque), then the mean of L
            if dequeCount > 0 && dequeFrames[dequeHead] <= frame - window {
                dequeHead = dequeHead + 1 == window ? 0 : dequeHead + 1
                dequeCount -= 1
            }
            while dequeCount > 0 && dequeGains[(dequeHead + dequeCount - 1) % window] >= gain { dequeCount -= 1 }
            dequeFrames[(dequeHead + dequeCount) % window] = frame
            dequeGains[(dequeHead + dequeCount) % window] = gain
            dequeCount += 1
            let least = dequeGains[dequeHead]
            let leaving = box[boxPosition]
            box[boxPosition] = least
            boxPosition = boxPosition + 1 == lookahead ? 0 : boxPosition + 1
            boxBelowOne += (least < 1 ? 1 : 0) - (leaving < 1 ? 1 : 0)
            boxSum += Double(least) - Double(leaving)
            let applied: Float
            if boxBelowOne == 0 {
                boxSum = Double(lookahead)   // exact again: no drift where the limiter rests
                applied = 1
            } else {
                applied = min(1, Float(boxSum / Double(lookahead)))
                if frame >= statisticsStartFrame {
                    framesLimited += 1
                    minimumGain = min(minimumGain, applied)
                }
            }
            frame += 1
            currentGain = applied
            // 5: the delayed sample, scaled
            for c in 0..<channelCount {
                let line = delay + c * latency
                let x = planes[c]
                let out = line[delayPosition]
                line[delayPosition] = x[i]
                x[i] = out * applied
            }
            delayPosition = delayPosition + 1 == latency ? 0 : delayPosition + 1
        }
    }
}
