import Foundation
import MixFXDSP
import MixFXEngine
import MixFXFiles

/// One offline render's passes over its mix, as `OfflineRenderer.render` drives them:
///
///     first pass:   kernel ─▶ (spill) ─▶ output stage ─▶ writer      (or only measured)
///     conversions:  spill  ─▶ output stage (gain) ─▶ trim gain ─▶ writer
///
/// The spill keeps the mix as the kernel rendered it, before the output stage, so every
/// conversion runs the same chain as the first pass: the output stage (`OutputStage`: master
/// gain → limiter, its latency pre-rolled and drained) and then a trim gain. Loudness
/// normalisation sets the stage's gain (the limiter then catches what it pushes over the
/// ceiling); the no-clip gain is the trim (it turns the finished mix down, limited or not).
/// Where the mix was not kept (no room for the spill), a conversion renders it again.
///
/// Each conversion writes a fresh temporary file (`temporary`), the previous one discarded.
/// Offline only; one thread.
final class RenderPasses {
    let renderer: OfflineRenderer
    let format: OutputFormat
    let output: OutputFile
    let kernel: RenderKernel
    /// The tracks' measures for the report (`OfflineRenderer.measuresTracks`).
    let measures: TrackMeasures?
    /// The output stage every pass runs.
    let stage: OutputStage
    /// The file the last conversion wrote (nil before the first, and after `discard`).
    private(set) var temporary: TemporaryOutput?
    /// True when a conversion had to render the mix again (it was not kept).
    private(set) var renderedAgain = false
    /// The mix as the first pass rendered it (nil: not kept, or no room for it).
    private var spill: SpillFile? {
        didSet { if spill == nil { spillConversion = nil } }
    }
    private var spillConversion: SpillConversion?
    private let spillBuffer: AudioBuffer
    /// The first pass's mix measures (`measuringPass`).
    private var mixAnalyzer: AudioAnalyzer?
    private var blockFrames: Int { renderer.blockFrames }

    /// What a conversion wrote.
    struct Written {
        var peak: Float
        var clippedSamples: Int
        var offGridSamples: Int
        var dithered: Bool
        /// The written samples' measures, when asked for.
        var analysis: AudioAnalysis?
    }

    init(renderer: OfflineRenderer, format: OutputFormat, output: OutputFile, kernel: RenderKernel) {
        self.renderer = renderer
        self.format = format
        self.output = output
        self.kernel = kernel
        measures = renderer.measuresTracks ? TrackMeasures(kernel: kernel) : nil
        let layout = kernel.layout
        stage = OutputStage(ProcessSpec(sampleRate: Double(layout.sampleRate), maximumFrameCount: renderer.blockFrames,
                                        channelCount: layout.channelCount),
                            limiter: layout.masterLimiter?.settings, ceilingLane: layout.masterLimiter?.ceilingParameter.automation)
        spillBuffer = AudioBuffer(channelCount: layout.channelCount, capacityFrames: renderer.blockFrames)
    }

    deinit { mixAnalyzer?.deallocate() }

    /// Whether the mix was kept for the conversions.

    /// The mix is not needed again: its spill goes.
    func dropSpill() { spill = nil }

    /// Removes the file being written (a failed or cancelled render).
    func discard() {
        temporary?.discard()
        temporary = nil
    }

    /// Closes the spill on a thread of its own (a large file's blocks take a while to free).
    func closeSpillConcurrently() -> SideThread? { spill?.closeConcurrently() }

    /// A report of what `written` holds, with the tracks' figures and the limiter's (from the
    /// last pass through the stage).
    func report(_ written: Written, clipPolicy: ClipPolicy, mixPeak: Float) -> RenderReport {
        var report = RenderReport(outputPath: renderer.outputPath, format: format, frameCount: kernel.layout.frameCount,
                                  peak: written.peak, clippedSamples: written.clippedSamples, elapsedSeconds: 0,
                                  trackLatencyFrames: kernel.trackLatencyFrames,
                                  trackReplacedSamples: kernel.trackReplacedSamples,
                                  clipPolicy: clipPolicy, mixPeak: mixPeak)
        report.ditherApplied = written.dithered
        if let settings = stage.limiterSettings {
            report.limiterCeilingDBTP = settings.ceilingDBTP
            report.limiterMaximumReductionDB = stage.maximumGainReductionDB
            report.limiterFramesLimited = stage.framesLimited
        }
        return report
    }

    // MARK: passes

    /// The first pass, written: renders the mix from the start, keeps it in the spill when
    /// `keeping` (and there is room: none is no failure, the conversions then render it again)
    /// and converts it through the output stage. `afterBlock` sees the writer after each block
    /// with the block's frames and the frames written so far (it may throw to stop).
    ///
    /// Where the output runs out of room while the spill is kept (the spill takes twice a 16-bit
    /// output's size), the spill goes and the pass runs again without it.
    func firstPass(keeping: Bool, dither: Bool,
                   afterBlock: (SoundFileWriter, Int, Int) throws -> Void) throws -> Written {
        do {
            return try firstPassOnce(keeping: keeping, dither: dither, afterBlock: afterBlock)
        } catch let error as SoundFileError where error.isOutOfRoom && spill != nil {
            dropSpill()
            discard()
            renderedAgain = true
            return try firstPassOnce(keeping: false, dither: dither, afterBlock: afterBlock)
        }
    }

    private func firstPassOnce(keeping: Bool, dither: Bool,
                               afterBlock: (SoundFileWriter, Int, Int) throws -> Void) throws -> Written {
        temporary = try output.createTemporary()
        if keeping { keepSpill() }
        let source = try mixFromKernel(keeping: keeping)
        let total = kernel.layout.frameCount
        return try convert(from: source, stageGain: 1, trim: 1, dither: dither, measuring: false) { writer, n, position in
            try afterBlock(writer, n, position)
            renderer.progress?(kernel.framesRendered, total)
        }
    }

    /// The first pass, measured only (loudness normalisation): renders the mix from the start,
    /// keeps it and measures it (loudness, true peak), before the output stage.
    func measuringPass() throws -> AudioAnalysis {
        temporary = try output.createTemporary()
        keepSpill()
        let layout = kernel.layout
        mixAnalyzer?.deallocate()
        mixAnalyzer = AudioAnalyzer(sampleRate: layout.sampleRate, channelCount: layout.channelCount, maximumFrameCount: blockFrames)
        defer { mixAnalyzer?.deallocate(); mixAnalyzer = nil }
        let source = try mixFromKernel(keeping: true)
        while try source(blockFrames).1 > 0 {
            renderer.progress?(kernel.framesRendered, layout.frameCount)
            try checkpoint()
        }
        return mixAnalyzer!.analysis
    }

    /// A conversion of the mix (from the spill, or rendered again): the output stage with
    /// `stageGain`, then `trim`, into a fresh temporary file; measured when `measuring`. Where
    /// the output runs out of room beside the spill, the spill goes and the mix is rendered again.
    func convert(stageGain: Float, trim: Float, dither: Bool, measuring: Bool = false) throws -> Written {
        do {
            return try convertOnce(stageGain: stageGain, trim: trim, dither: dither, measuring: measuring)
        } catch let error as SoundFileError where error.isOutOfRoom && spill != nil {
            dropSpill()
            return try convertOnce(stageGain: stageGain, trim: trim, dither: dither, measuring: measuring)
        }
    }

    private func convertOnce(stageGain: Float, trim: Float, dither: Bool, measuring: Bool) throws -> Written {
        temporary?.discard()
        temporary = nil
        temporary = try output.createTemporary()
        if !measuring, let parallel = parallelSpill(), let temporary {
            let writer = try SoundFileWriter(temporary: temporary, format: format, dither: dither, reportedPath: renderer.outputPath)
            try parallel.convert(into: writer, gains: (stageGain, trim), checkpoint: checkpoint)
            try writer.close()
            return Written(peak: writer.peak, clippedSamples: writer.clippedSamples, offGridSamples: writer.offGridSamples,
                           dithered: dither, analysis: nil)
        }
        return try convert(from: try mixAgain(), stageGain: stageGain, trim: trim, dither: dither, measuring: measuring) { _, _, _ in }
    }

    /// The true peak of the mix after the output stage (from the spill, or rendered again):
    /// linear and dBTP.
    func truePeak() throws -> (peak: Float, dBTP: Double) {
        if let parallel = parallelSpill() { return try parallel.truePeak(checkpoint: checkpoint) }
        let source = try mixAgain()
        var meter = TruePeakMeter(channelCount: format.channelCount, maximumFrameCount: blockFrames)
        defer { meter.deallocate() }
        stage.reset()
        stage.gain = 1
        while true {
            let (block, n) = try stage.render(frameCount: blockFrames, from: source)
            if n == 0 { break }
            let planes = block.planes   // (a closure handed to a checked function captures no reference)
            meter.process({ UnsafePointer(planes[$0]) }, frameCount: n)
            try checkpoint()
        }
        return (meter.peak, meter.peakDBTP)
    }

    // MARK: the parts of a pass

    /// The mix from `source` through the stage (at `stageGain`) and `trim` into `temporary`.
    private func convert(from source: (Int) throws -> (AudioBuffer, Int), stageGain: Float, trim: Float, dither: Bool,
                         measuring: Bool, afterBlock: (SoundFileWriter, Int, Int) throws -> Void) throws -> Written {
        guard let temporary else { throw RenderError.cancelled }
        let writer = try SoundFileWriter(temporary: temporary, format: format, dither: dither, reportedPath: renderer.outputPath)
        let layout = kernel.layout
        var analyzer = measuring
            ? AudioAnalyzer(sampleRate: layout.sampleRate, channelCount: layout.channelCount, maximumFrameCount: blockFrames) : nil
        defer { analyzer?.deallocate() }
        stage.reset()
        stage.gain = stageGain
        var position = 0
        while true {
            let (block, n) = try stage.render(frameCount: blockFrames, from: source)
            if n == 0 { break }
            block.scale(frameCount: n, by: trim)
            analyzer?.process(block, frameCount: n)
            try writer.write(block, frameCount: n)
            position += n
            try afterBlock(writer, n, position)
            try checkpoint()
        }
        try writer.close()
        return Written(peak: writer.peak, clippedSamples: writer.clippedSamples, offGridSamples: writer.offGridSamples,
                       dithered: dither, analysis: analyzer?.analysis)
    }

    /// The passes over the kept mix on every core (`SpillConversion`), where they can run so:
    /// the mix kept, no limiter (the stage is then a gain), more than one core, and the render
    /// allowed the cores (`OfflineRenderer.kernelParallelTracks`).
    private func parallelSpill() -> SpillConversion? {
        guard let spill, stage.limiterSettings == nil, renderer.kernelParallelTracks else { return nil }
        let cores = ProcessInfo.processInfo.activeProcessorCount
        guard cores > 1 else { return nil }
        if let spillConversion { return spillConversion }
        spillConversion = SpillConversion(spill: spill, workers: cores)
        return spillConversion
    }

    /// A spill for the mix, if there is room for it.
    private func keepSpill() {
        spill = try? SpillFile(directory: output.folderPath, channelCount: format.channelCount, reportedPath: renderer.outputPath)
    }

    /// The mix as the kernel renders it from the start, block by block (0 frames at the end):
    /// kept in the spill when `keeping`, measured while the measuring pass runs. (The loops that
    /// pull it check `checkpoint` after each block.)
    private func mixFromKernel(keeping: Bool) throws -> (Int) throws -> (AudioBuffer, Int) {
        measures?.restart()
        try kernel.start()
        output.releaseReplacedPages()
        return { [self] frames in
            let n = kernel.render(frameCount: frames)
            if keeping, let s = spill {
                do { try s.append(kernel.output, frameCount: n) } catch { spill = nil }
            }
            if n > 0 { mixAnalyzer?.process(kernel.output, frameCount: n) }
            return (kernel.output, n)
        }
    }

    /// The mix again for a conversion: read back from the spill, or rendered again.
    private func mixAgain() throws -> (Int) throws -> (AudioBuffer, Int) {
        guard let spill else {
            renderedAgain = true
            return try mixFromKernel(keeping: false)
        }
        spill.rewind()
        return { [spillBuffer] frames in (spillBuffer, try spill.read(into: spillBuffer, maxFrames: frames)) }
    }

    /// Stops the render where it must: cancelled, or a track could not be read.
    private func checkpoint() throws {
        if let failure = kernel.failure { throw failure }
        if renderer.isCancelled?() == true { throw RenderError.cancelled }
    }
}
