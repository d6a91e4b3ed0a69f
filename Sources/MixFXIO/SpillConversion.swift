import Foundation
import MixFXDSP
import MixFXEngine

/// The passes over the kept mix on several cores, where nothing in them depends on what came
/// before: no limiter, so a conversion is a gain and the sample converter, whose dither is a
/// function of the sample's position (`IntegerQuantizer.tpdf`), and a true peak is a maximum.
///
/// The spill is cut into slabs of `slabFrames`; a round gives each worker one slab, read at its
/// place (`pread`), and the writer appends the round's slabs in order. So a conversion writes
/// the same bytes, and counts the same peaks and clipped samples, as one converter going through
/// the mix block by block (`SampleConverter.absorb`). A slab's true peak is measured by a meter
/// warmed up on the frames just before it (the interpolator reads `tapsPerPhase − 1` frames
/// back), so the largest of them is the whole mix's.
///
/// Offline; driven by one thread, the slabs' work on `DispatchQueue.concurrentPerform`.
/// `@unchecked Sendable`: during a round each worker touches only its own index of the arrays.
final class SpillConversion: @unchecked Sendable {
    /// Frames per slab (about 0.7 s at 48 kHz: a round's work dwarfs its start-up).
    static let slabFrames = 32_768
    /// Frames a slab's meter is warmed up on.
    static let warmUpFrames = TruePeakMeter.tapsPerPhase
    let spill: SpillFile
    private let workers: [Worker]

    /// One worker's buffers and results (touched by that worker during a round, by the driver
    /// between rounds).
    private final class Worker {
        let buffer: AudioBuffer
        let scratch: UnsafeMutablePointer<Float>
        var bytes: UnsafeMutableRawPointer?
        var meter: TruePeakMeter?
        var frames = 0
        var part: SampleConverter?
        var peak: Float = 0
        var error: (any Error)?

        init(channelCount: Int, capacity: Int) {
            buffer = AudioBuffer(channelCount: channelCount, capacityFrames: capacity)
            scratch = .allocate(capacity: capacity * channelCount)
        }

        deinit {
            scratch.deallocate()
            bytes?.deallocate()
            meter?.deallocate()
        }
    }

    /// Passes over `spill` with `workers` threads at once (control side: allocates).
    init(spill: SpillFile, workers: Int) {
        self.spill = spill
        let capacity = SpillConversion.slabFrames + SpillConversion.warmUpFrames
        self.workers = (0..<max(1, workers)).map { _ in Worker(channelCount: spill.channelCount, capacity: capacity) }
    }

    /// The kept mix's true peak (4× oversampled, as `TruePeakMeter`): linear and dBTP.
    /// `checkpoint` runs between rounds (it throws to stop).
    func truePeak(checkpoint: () throws -> Void) throws -> (peak: Float, dBTP: Double) {
        let total = spill.frameCount, slab = SpillConversion.slabFrames, warm = SpillConversion.warmUpFrames
        for w in workers {
            w.peak = 0
            if w.meter == nil { w.meter = TruePeakMeter(channelCount: spill.channelCount, maximumFrameCount: slab + warm) }
        }
        var first = 0
        while first < total {
            let roundFirst = first
            try rounds { k, w in
                let start = roundFirst + k * slab
                guard start < total else { return }
                let from = max(0, start - warm)
                let n = try spill.read(frames: from, count: min(slab, total - start) + (start - from), into: w.buffer, scratch: w.scratch)
                let buffer = w.buffer
                w.meter!.reset()
                let planes = buffer.planes   // (a closure handed to a checked function captures no reference)
                w.meter!.process({ UnsafePointer(planes[$0]) }, frameCount: start - from)
                w.meter!.restartPeaks()
                w.meter!.process({ UnsafePointer(planes[$0]) + (start - from) }, frameCount: n - (start - from))
                w.peak = max(w.peak, w.meter!.peak)
            }
            first += workers.count * slab
            try checkpoint()
        }
        let peak = workers.reduce(Float(0)) { max($0, $1.peak) }
        return (peak, peak > 0 ? 20 * log10(Double(peak)) : -.infinity)
    }

    /// Converts the kept mix into `writer`, each sample times `gains.0` then `gains.1` (the
    /// output stage's gain, then the trim: the order `RenderPasses` applies them in).
    /// `checkpoint` runs after each round (it throws to stop).
    func convert(into writer: SoundFileWriter, gains: (Float, Float), checkpoint: () throws -> Void) throws {
        let total = spill.frameCount, slab = SpillConversion.slabFrames
        let bytesPerFrame = spill.channelCount * 4
        for w in workers where w.bytes == nil { w.bytes = .allocate(byteCount: slab * bytesPerFrame, alignment: 16) }
        var first = 0
        while first < total {
            let roundFirst = first
            try rounds { k, w in
                w.frames = 0
                let start = roundFirst + k * slab
                guard start < total else { return }
                let buffer = w.buffer
                let n = try spill.read(frames: start, count: min(slab, total - start), into: buffer, scratch: w.scratch)
                buffer.scale(frameCount: n, by: gains.0)
                buffer.scale(frameCount: n, by: gains.1)
                var part = writer.partConverter(skipping: k * slab)
                part.convert(buffer, frameCount: n, to: w.bytes!)
                w.part = part
                w.frames = n
            }
            for w in workers where w.frames > 0 {
                try writer.writeConverted(w.bytes!, frameCount: w.frames, by: w.part!)
            }
            first += workers.count * slab
            try checkpoint()
        }
    }

    /// Runs `body` for every worker at once; throws the first worker's error.
    private func rounds(_ body: (Int, Worker) throws -> Void) throws {
        withoutActuallyEscaping(body) { body in
            let work = UncheckedWork(body: body, workers: workers)
            DispatchQueue.concurrentPerform(iterations: workers.count) { k in
                let w = work.workers[k]
                do { try work.body(k, w) } catch { w.error = error }
            }
        }
        for w in workers {
            if let e = w.error { w.error = nil; throw e }
        }
    }

    /// A round's closure and workers, handed to its threads (which it outlives).
    private struct UncheckedWork: @unchecked Sendable {
        let body: (Int, Worker) throws -> Void
        let workers: [Worker]
    }
}
