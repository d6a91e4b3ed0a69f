#if canImport(Glibc)
import Glibc
#endif

/// The live pitch switch of a streaming shifter: a spare vocoder state and reader, restarted at a
/// new pitch and crossfaded in.
///
/// Frames made at a lowered pitch are read r times slower, so the frames already made would hold
/// the old pitch for about (N/2)/r (85 ms at −1200 cents, 171 ms at −2400). A pitch change of
/// `minimumCents` or more while such frames are unread (at a steady tempo) instead restarts the
/// spare state at the new pitch from the input history (`PhaseVocoder.restart`: frame 0 on the
/// next output's input time, the frames its input completes made at once), and the output
/// crossfades to it over `fadeSeconds`, equal power (the two are not coherent):
///
///     y = cos(x)·old + sin(x)·new,   x = min(1, k/F)·π/2,  F = `fadeSeconds`·Fs.
///
/// Then the spare state becomes the shifter's own, and the old one waits for the next switch
/// (`handOver`). With fixed settings nothing switches: the output is exactly the offline
/// shifter's.
///
/// Made by `PitchShifter.prepare` (control side); the rest on the render side, which does not
/// allocate. One thread at a time.
final class PitchSwitch {
    /// The crossfade.
    static let fadeSeconds = 0.02
    /// Smaller changes glide (a slider's steps; two states a few cents apart would beat).
    static let minimumCents = 50.0

    /// The spare state: the shifter's own after the next switch (held as `Owned`, released in
    /// `deinit`).
    private(set) var vocoder: Owned<PhaseVocoder>
    private(set) var reader: Owned<StretchReader>
    /// Output frames of the crossfade, F.
    let fadeFrames: Int
    /// The crossfade's output frames done (−1: no switch running).
    private(set) var framesDone = -1
    /// A change of `minimumCents` or more arrived (`pitchChanged`).
    private(set) var isWanted = false
    /// Starved frames counted by readers since restarted.
    private(set) var retiredStarvedFrames = 0
    /// Switches started since `reset` (tests).
    private(set) var count = 0

    /// The spare state's block: its output and its frames' ratios, grid indices and input times
    /// (the shifter's workspace, `bindScratch`).
    private var left: UnsafeMutablePointer<Float>
    private var right: UnsafeMutablePointer<Float>
    private var ratios: UnsafeMutablePointer<Double>
    private var tableIndices: UnsafeMutablePointer<Int>
    private var times: UnsafeMutablePointer<Double>

    /// A switch to `vocoder` and `reader` (a second state like the shifter's own) at `sampleRate`.
    init(vocoder: PhaseVocoder, reader: StretchReader, sampleRate: Double) {
        self.vocoder = Owned(vocoder)
        self.reader = Owned(reader)
        fadeFrames = max(1, Int(Self.fadeSeconds * sampleRate))
        var measure = ScratchCarver(nil)
        (left, right, ratios, tableIndices, times) = Self.blockScratch(&measure, frames: 1)
    }

    deinit { vocoder.release(); reader.release() }

    /// Takes the spare state's block buffers for blocks of up to `frames` frames from `carver`
    /// (the vocoder's scratch is bound with the shifter's: the two never run a frame at once).
    func bindScratch(_ carver: inout ScratchCarver, frames: Int) {
        (left, right, ratios, tableIndices, times) = Self.blockScratch(&carver, frames: frames)
    }

    private static func blockScratch(_ c: inout ScratchCarver, frames: Int)
        -> (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>, UnsafeMutablePointer<Double>,
            UnsafeMutablePointer<Int>, UnsafeMutablePointer<Double>) {
        (c.take(Float.self, frames), c.take(Float.self, frames), c.take(Double.self, frames),
         c.take(Int.self, frames), c.take(Double.self, frames))
    }

    /// No switch running or wanted; counts cleared.
    @_noLocks
    func reset() {
        framesDone = -1
        isWanted = false
        retiredStarvedFrames = 0
        count = 0
        reader { $0.reset() }
    }

    /// A crossfade is running (the spare state is read and glides with the shifter's own).
    var isRunning: Bool { framesDone >= 0 }

    /// The pitch moves from `old` to `new` cents: a switch is wanted if the step is large enough.
    @inline(__always)
    @_noLocks
    func pitchChanged(from old: Double, to new: Double) {
        if abs(new - old) >= Self.minimumCents { isWanted = true }
        if isRunning { vocoder { $0.setTargetCents(new) } }
    }

    /// Starts a switch to `pitchCents` at input time `inputTime` if none is running, the output
    /// is wholly wet, the tempo of `own` (the shifter's state) is steady, and frames made at a
    /// lowered pitch are still to be read (`unread`); else the change glides.
    @_noLocks
    func startIfUseful(own: Owned<PhaseVocoder>, unread: UnreadFrames, wet: Float, inputTime: Double, pitchCents: Double) {
        isWanted = false
        let (tempo, targetTempo, formants) = own { ($0.tempo, $0.targetTempo, $0.preserveFormants) }
        guard !isRunning, wet == 1, tempo == targetTempo, unread.steadyTempo, unread.lowered else { return }
        retiredStarvedFrames += reader { $0.starvedFrames }
        vocoder {
            $0.targetTempo = tempo
            $0.preserveFormants = formants
            $0.restart(at: inputTime, pitchCents: pitchCents)
        }
        reader { $0.reset() }
        framesDone = 0
        count += 1
    }

    /// Reads the spare state at the same times as the shifter's own block (`firstTime`, `nudge`:
    /// the tempo is steady through a switch) and crossfades `left` (and `right`) to it; its
    /// ratios, grid indices and times replace the block's. Returns the input time after the
    /// block.
    @inline(__always)
    @_noLocks
    func crossfade(_ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, frameCount: Int,
                   firstTime t0: Double, nudge: Double, ratios blockRatios: UnsafeMutablePointer<Double>,
                   tableIndices blockTableIndices: UnsafeMutablePointer<Int>, times blockTimes: UnsafeMutablePointer<Double>) -> Double {
        let source = vocoder { $0.readView }
        let spareL = self.left, spareR: UnsafeMutablePointer<Float>? = right != nil ? self.right : nil
        let ratios = ratios, tableIndices = tableIndices, times = times
        let next = reader {
            $0.read(into: spareL, spareR, frameCount: frameCount, firstTime: t0, ratios: ratios, tableIndices: tableIndices,
                    from: source, times: times, nudge: nudge)
        }
        let fade = Double(fadeFrames)
        for k in 0..<frameCount {
            let x = min(1, Double(framesDone + k + 1) / fade) * Double.pi / 2
            let old = Float(Libm.cos(x)), new = Float(Libm.sin(x))
            left[k] = old * left[k] + new * self.left[k]
            if let right { right[k] = old * right[k] + new * self.right[k] }
        }
        // (memmoves: `update(from:count:)` assigns element by element, which the check counts
        // as a possible release)
        UnsafeMutableRawPointer(blockRatios).copyMemory(from: ratios, byteCount: frameCount * MemoryLayout<Double>.stride)
        UnsafeMutableRawPointer(blockTableIndices).copyMemory(from: tableIndices, byteCount: frameCount * MemoryLayout<Int>.stride)
        UnsafeMutableRawPointer(blockTimes).copyMemory(from: times, byteCount: frameCount * MemoryLayout<Double>.stride)
        framesDone += frameCount
        return next
    }

    /// The crossfade is over: the spare state is to become the shifter's own (`handOver`).
    var isFadeOver: Bool { framesDone >= fadeFrames }

    /// Takes the shifter's state (`own`, `ownReader`) as the spare and returns the spare state
    /// for the shifter to use from now on.
    @inline(__always)
    /// (Each hold moves with its state: no count changes.)
    @_noLocks
    func handOver(_ own: Owned<PhaseVocoder>, _ ownReader: Owned<StretchReader>) -> (Owned<PhaseVocoder>, Owned<StretchReader>) {
        defer { vocoder = own; reader = ownReader; framesDone = -1 }
        return (vocoder, reader)
    }
}
