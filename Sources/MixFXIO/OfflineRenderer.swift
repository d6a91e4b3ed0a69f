import Foundation
import MixFXDSP
import MixFXEngine
import MixFXFiles

/// What a finished (or planned) render did.
public struct RenderReport: Sendable, Equatable {
    /// The file written.
    public var outputPath: String
    /// Its container, sample format, rate and channels.
    public var format: OutputFormat
    /// Frames written: the longest track's length at the output rate.
    public var frameCount: Int
    /// Largest absolute sample before conversion (1.0 = 0 dBFS).
    public var peak: Float
    /// Samples clamped (integer output) or beyond ±1.0 (float).
    public var clippedSamples: Int
    /// Wall time of the render.
    public var elapsedSeconds: Double
    /// Latency each track's effects added and the render removed, in frames.
    public var trackLatencyFrames: [Int]
    /// Per track, input samples replaced by 0 because they were NaN, ±∞ or beyond ±10⁶.
    public var trackReplacedSamples: [Int] = []
    /// What was done about a mix that would clip (see `ClipPolicy`).
    public var clipPolicy: ClipPolicy = .avoid
    /// The gain applied to the whole mix so that nothing clips, dB (0: none was needed).
    public var appliedGainDB: Double = 0
    /// The mix's largest sample before that gain (equal to `peak` when none was applied).
    public var mixPeak: Float = 0
    /// The output's true peak (4× oversampled, BS.1770-4), dBTP, where it was measured (when a
    /// gain was applied); nil otherwise.
    public var truePeakDBTP: Double?
    /// True when the mix clipped and could not be kept for measuring (no room for the spill):
    /// it was rendered again with the gain that brings its sample peak to the ceiling.
    public var renderedTwice = false
    /// With `OfflineRenderer.normalizeLUFS`: the mix's integrated loudness before the gain, and
    /// the gain applied to reach the target (also in `appliedGainDB`).
    public var measuredLUFS: Double?
    /// The output's integrated loudness, where it was measured (normalised renders).
    public var integratedLUFS: Double?
    /// With `OfflineRenderer.measuresTracks`: each track's measures as it entered the mix (after
    /// its effects and mixer gains) and over time, and the written file's.
    public var trackMeasures: [AudioAnalysis] = []
    public var trackHistories: [AnalysisHistory] = []
    public var mixMeasures: AudioAnalysis?
    public var mixHistory: AnalysisHistory?
    /// Whether the written samples were TPDF-dithered.
    public var ditherApplied = false
    /// With a master limiter (`AudioEngine.masterLimiter`): its ceiling, dBTP.
    public var limiterCeilingDBTP: Double?
    /// The limiter's largest gain reduction, dB (0 when it never acted).
    public var limiterMaximumReductionDB: Double = 0
    /// Output frames the limiter turned down.
    public var limiterFramesLimited = 0

    /// The output's length, seconds.
    public var durationSeconds: Double { Double(frameCount) / Double(format.sampleRate) }
    /// The peak in dBFS (−∞ for silence).
    public var peakDBFS: Double { peak > 0 ? 20 * log10(Double(peak)) : -.infinity }
    /// Audio seconds rendered per second of wall time.
    public var speedTimesRealTime: Double { elapsedSeconds > 0 ? durationSeconds / elapsedSeconds : .infinity }
}

/// Why a render did not produce its output file. In every case nothing is left at the output
/// path (an existing file there is untouched).
public enum RenderError: Error, Equatable, CustomStringConvertible {
    /// The output path cannot be written (exists, is an input, is not a regular file, ...).
    case output(OutputFileError)
    case unsupportedOutput(path: String, reason: String)
    case engine(EngineError)
    case file(SoundFileError)
    case cancelled
    /// `ClipPolicy.fail`: the integer output would have clamped samples; nothing was written.
    case wouldClip(path: String, peakDBFS: Double, atSeconds: Double)
    /// `normalizeLUFS`: the gain that reaches the target would put the true peak above the
    /// ceiling and there is no limiter, or the mix is silent.
    case cannotNormalize(targetLUFS: Double, measuredLUFS: Double, truePeakDBTP: Double)

    /// One line naming the file or setting and the problem.
    public var description: String { description(naming: { $0 }) }

    /// `description` with each setting named by `name` (given a `SessionOptionSpec.setting`
    /// string: `normalizeLUFS`, `clipping=fail`, `overwrite=true`): the CLI passes its flags.
    public func description(naming name: (String) -> String) -> String {
        let normalize = name(SessionOption.normalizeLUFS.spec.setting()), limit = name(SessionOption.limitDBTP.spec.setting())
        return switch self {
        case .output(let e): e.description(naming: name)
        case .unsupportedOutput(let p, let r): "cannot write '\(p)': \(r)"
        case .engine(let e): e.description(naming: name)
        case .file(let e): e.description
        case .cancelled: "interrupted; no output was written"
        case .cannotNormalize(let target, let measured, let tp) where !measured.isFinite:
            "\(normalize) \(String(format: "%g", target)): the mix is silent (nothing above -70 LUFS), so it has no loudness to bring to \(String(format: "%g", target)) LUFS (true peak \(String(format: "%.1f", tp)) dBTP); nothing was written"
        case .cannotNormalize(let target, let measured, let tp):
            "\(normalize) \(String(format: "%g", target)): the mix measures \(String(format: "%.1f LUFS with a true peak of %.1f dBTP", measured, tp)); reaching \(String(format: "%g", target)) LUFS needs \(String(format: "%+.1f", target - measured)) dB, which puts the true peak at \(String(format: "%+.1f", tp + target - measured)) dBTP, above \(String(format: "%.0f", OfflineRenderer.safeCeilingDBTP)) dBTP. Add \(limit) to reach it with the limiter (peaks turned down, the rest unchanged), or aim at most \(String(format: "%.1f", measured + OfflineRenderer.safeCeilingDBTP - tp)) LUFS without one; nothing was written"
        case .wouldClip(let p, let db, let t):
            "'\(p)' would clip (the mix reaches \(String(format: "%+.2f dBFS in the block from %.2f s", db, t))) and \(name(SessionOption.clipping.spec.setting(ClipPolicy.fail.rawValue))) forbids it; nothing was written (lower \(name(SessionOption.masterVolume.spec.setting())) by at least \(String(format: "%.1f", db + 0.1)) dB; later parts of the mix may peak higher)"
        }
    }
}

/// Renders an engine to a file, block by block: memory does not depend on the session's length.
/// Writes to a temporary file beside the output and renames it on success, so a failed or
/// interrupted render leaves nothing behind.
public struct OfflineRenderer {
    /// The file written.
    public var outputPath: String
    /// The sample format; nil picks the most precise input's, at least s16.
    public var sampleFormat: SampleFormat?
    /// Allow replacing an existing output (never an input).
    public var overwrite = false
    /// With `overwrite`, only this file may be replaced (see `OutputFile.onlyReplacing`).
    public var onlyReplacing: FileIdentity?
    /// Files read besides the tracks (presets, a manifest, a batch's other jobs' inputs): the
    /// output is never one of them, nor one of the tracks' files.
    public var otherInputs = FileIdentitySet()
    /// Preset files the session was read from (never written over, like the tracks).
    public var presetFiles: [String] = []
    /// What names this render, for an Ogg output's stream serial (see `OggStreamSerial`): the
    /// same identity gives the same bytes. Default: the output's file name.
    public var streamIdentity: String?
    /// When to TPDF-dither integer samples (see `DitherMode`).
    public var dither = DitherMode.auto
    /// What to do when integer output would clip (default: avoid it with one gain).
    public var clipPolicy = ClipPolicy.avoid
    /// Loudness normalisation: one gain for the whole mix that brings its integrated loudness
    /// (BS.1770-4) to this many LUFS, measured while rendering (`renderNormalized`).
    public var normalizeLUFS: Double?
    /// The true peak `ClipPolicy.avoid` brings a clipping mix to, dBTP (the registry's
    /// `SessionOption.safeCeilingDBTP`; this name is kept for existing code).
    public static let safeCeilingDBTP = SessionOption.safeCeilingDBTP
    /// Measure each track and the written mix for a report (`RenderReport.trackMeasures`,
    /// `mixMeasures`, with their histories): costs about a third more time.
    public var measuresTracks = false
    /// Measure the written mix only (`RenderReport.mixMeasures`: loudness, peaks; a few % more
    /// time).
    public var measuresMix = false
    /// Render the tracks on all cores (`RenderKernel.parallelTracks`; the bytes are the same
    /// either way). Off where several renders run at once and share the cores.
    public var kernelParallelTracks = true
    /// Frames per block (the result does not depend on it).
    public var blockFrames = 2048
    /// Called after each block with (frames done, total frames), on the rendering thread.
    public var progress: ((Int, Int) -> Void)?
    /// Polled after each block; true stops the render (`RenderError.cancelled`).
    public var isCancelled: (() -> Bool)?

    /// A render to `outputPath` (container from its extension). Control side.
    public init(outputPath: String, sampleFormat: SampleFormat? = nil) {
        self.outputPath = outputPath
        self.sampleFormat = sampleFormat
    }

    /// The output format this render would use, after every check that does not need to render.
    public func plan(_ engine: AudioEngine) throws(RenderError) -> (OutputFormat, EngineLayout) {
        let layout: EngineLayout
        do { layout = try engine.validate() } catch { throw .engine(error) }
        guard let container = Container.from(path: outputPath) else {
            throw .unsupportedOutput(path: outputPath,
                                     reason: "unknown extension (allowed: \(Container.extensionsText))")
        }
        if let problem = container.sampleRateProblem(layout.sampleRate) { throw .unsupportedOutput(path: outputPath, reason: problem) }
        let bits = layout.tracks.map { $0.player.source.format.bitsPerSample }.max() ?? 16
        var sf = sampleFormat ?? SampleFormat.matching(bitsPerSample: bits)
        if let allowed = container.sampleFormats, !allowed.contains(sf) {
            if sampleFormat != nil {
                throw .unsupportedOutput(path: outputPath, reason: "\(container.rawValue) cannot hold \(sf.rawValue) samples (allowed: \(allowed.map(\.rawValue).joined(separator: ", ")))")
            }
            sf = allowed.last!
        }
        var format = OutputFormat(container: container, sampleFormat: sf, sampleRate: layout.sampleRate,
                                  channelCount: layout.channelCount)
        try fitContainer(&format, frameCount: layout.frameCount)
        _ = try outputFile(layout)
        return (format, layout)
    }

    /// Checks the render fits its container: a WAV too large for its 32-bit sizes becomes RF64
    /// (libsndfile's and ffmpeg's answer; players that read RF64 read it as WAV); AIFF and AU
    /// are refused with the extensions that hold it.
    private func fitContainer(_ format: inout OutputFormat, frameCount: Int) throws(RenderError) {
        guard let limit = format.container.maximumDataBytes, let sf = format.storedSampleFormat else { return }
        let bytes = frameCount * format.channelCount * (sf == .s24 ? 3 : sf.bits / 8)
        guard bytes > limit else { return }
        if format.container == .wav {
            format.container = .rf64
            return
        }
        let gib = Double(bytes) / Double(1 << 30)
        throw .unsupportedOutput(path: outputPath, reason: String(
            format: "the audio data would be %.2f GiB, more than %@ can hold (%@); use .wav (written as RF64), .rf64, .w64 or .caf",
            gib, format.container.rawValue, format.container.maximumDataText))
    }

    private func outputFile(_ layout: EngineLayout) throws(RenderError) -> OutputFile {
        let inputs = layout.tracks.compactMap { ($0.player.source as? SoundFileReader)?.path
            ?? ($0.player.source as? StreamingSource)?.reader.path }
        do { return try OutputFile(path: outputPath, inputs: otherInputs, alsoInputs: inputs + presetFiles, overwrite: overwrite,
                                        onlyReplacing: onlyReplacing) } catch {
            throw .output(error)
        }
    }

    /// Renders the whole session into `outputPath`.
    ///
    /// Integer output is converted while rendering. With `ClipPolicy.avoid` the mix is also kept
    /// in a `SpillFile`: if nothing clipped it is dropped unread; if something did, the mix's true
    /// peak is measured from it and it is converted again with the one gain that brings the true
    /// peak to `safeCeilingDBTP` (so the DSP runs once either way). The spill takes 4 bytes per
    /// sample beside the output; where there is no room for it, a mix that clipped is rendered
    /// a second time instead (`RenderReport.renderedTwice`).
    public func render(_ engine: AudioEngine) throws(RenderError) -> RenderReport {
        if let target = normalizeLUFS { return try renderNormalized(engine, targetLUFS: target) }
        let (format, layout) = try plan(engine)
        let output = try outputFile(layout)
        let kernel: RenderKernel
        do { kernel = try engine.makeKernel(maximumFrameCount: blockFrames) } catch { throw .engine(error) }
        kernel.parallelTracks = kernelParallelTracks
        let measures = measuresTracks ? TrackMeasures(kernel: kernel) : nil
        let isInteger = format.storedSampleFormat?.isInteger == true
        let policy = isInteger ? clipPolicy : .clamp
        let directory = output.folderPath
        var tmp: TemporaryOutput?
        let started = Date()
        var writer: SoundFileWriter?
        do {
            tmp = try output.createTemporary()
            // `DitherMode.auto` dithers 16-bit output and keeps the mix, to write it again without
            // dither if every sample turns out to have been a 16-bit value already
            let dithered = dithers(format)
            writer = try SoundFileWriter(temporary: tmp!, format: format, dither: dithered, reportedPath: outputPath)
            // (no room for the spill, now or later, is no failure: see below)
            var spill = policy == .avoid || (dither == .auto && dithered)
                ? try? SpillFile(directory: directory, channelCount: format.channelCount, reportedPath: outputPath) : nil
            measures?.restart(); try kernel.start()
            output.releaseReplacedPages()
            let total = kernel.layout.frameCount
            var limited = master(kernel)
            while true {
                let (block, n) = try limited.next()
                if n == 0 { break }
                try writer!.write(block, frameCount: n)
                if let s = spill {
                    do { try s.append(block, frameCount: n) } catch { spill = nil }
                    // kept only for the auto dither's second pass (`--clip`, `--strict`): not
                    // needed once a sample has needed rounding
                    if policy != .avoid && writer!.offGridSamples > 0 { spill = nil }
                }
                if policy == .fail && writer!.clippedSamples > 0 {
                    throw RenderError.wouldClip(path: outputPath, peakDBFS: 20 * log10(Double(writer!.peak)),
                                                atSeconds: Double(kernel.framesRendered - n) / Double(format.sampleRate))
                }
                progress?(kernel.framesRendered, total)
                if isCancelled?() == true { throw RenderError.cancelled }
            }
            try writer!.close()
            var report = RenderReport(outputPath: outputPath, format: format, frameCount: total,
                                      peak: writer!.peak, clippedSamples: writer!.clippedSamples,
                                      elapsedSeconds: 0,
                                      trackLatencyFrames: kernel.trackLatencyFrames,
                                      trackReplacedSamples: kernel.trackReplacedSamples,
                                      clipPolicy: policy, mixPeak: writer!.peak)
            report.ditherApplied = dithered
            limited.describe(into: &report)
            /// Converts the mix once more, `gain` times louder, into a fresh temporary file: the
            /// blocks come from `next` (0 frames at the end).
            func convertAgain(gain: Float, dither: Bool, _ next: () throws -> (AudioBuffer, Int)) throws {
                tmp?.discard()
                tmp = try output.createTemporary()
                writer = try SoundFileWriter(temporary: tmp!, format: format, dither: dither, reportedPath: outputPath)
                report.ditherApplied = dither
                while true {
                    let (block, n) = try next()
                    if n == 0 { break }
                    for c in 0..<format.channelCount {
                        let p = block.channel(c)
                        for i in 0..<n { p[i] *= gain }
                    }
                    try writer!.write(block, frameCount: n)
                    if isCancelled?() == true { throw RenderError.cancelled }
                }
                try writer!.close()
                report.peak = writer!.peak
                report.clippedSamples = writer!.clippedSamples
                report.appliedGainDB = 20 * log10(Double(gain))
            }
            let ceiling = pow(10, OfflineRenderer.safeCeilingDBTP / 20)
            if policy == .avoid, let spill, report.clippedSamples > 0 {
                // the mix clipped: measure its true peak from the spill, then convert the spill
                // again with the one gain that brings that peak to the ceiling
                let buffer = AudioBuffer(channelCount: format.channelCount, capacityFrames: blockFrames)
                var meter = TruePeakMeter(channelCount: format.channelCount, maximumFrameCount: blockFrames)
                defer { meter.deallocate() }
                spill.rewind()
                while true {
                    let n = try spill.read(into: buffer, maxFrames: blockFrames)
                    if n == 0 { break }
                    meter.process({ UnsafePointer(buffer.channel($0)) }, frameCount: n)
                    if isCancelled?() == true { throw RenderError.cancelled }
                }
                spill.rewind()
                try convertAgain(gain: Float(ceiling / Double(meter.peak)), dither: dithered) { (buffer, try spill.read(into: buffer, maxFrames: blockFrames)) }
                report.truePeakDBTP = meter.peakDBTP + report.appliedGainDB
            } else if policy == .avoid && report.clippedSamples > 0 {
                // the mix clipped and there was no room to keep it (a full disk, a file-size
                // limit: the spill is twice the size of 16-bit output): render it again, with
                // the gain that brings its sample peak to the ceiling (its true peak unmeasured)
                measures?.restart(); try kernel.start()
                limited = master(kernel)
                try convertAgain(gain: Float(ceiling / Double(report.mixPeak)), dither: dithered) { try limited.next() }
                report.renderedTwice = true
            } else if dither == .auto && dithered && writer!.offGridSamples == 0 {
                // every sample was already a value of the format (a pass-through, a plain sum
                // of 16-bit tracks): dither would only add noise, so write the mix again without
                if let spill {
                    let buffer = AudioBuffer(channelCount: format.channelCount, capacityFrames: blockFrames)
                    spill.rewind()
                    try convertAgain(gain: 1, dither: false) { (buffer, try spill.read(into: buffer, maxFrames: blockFrames)) }
                } else {
                    measures?.restart(); try kernel.start()
                    limited = master(kernel)
                    try convertAgain(gain: 1, dither: false) { try limited.next() }
                    report.renderedTwice = true
                }
            }
            writer = nil
            try seal(tmp!, format)
            if measures != nil || measuresMix { try measure(tmp!, measures, into: &report) }
            report.elapsedSeconds = Date().timeIntervalSince(started)
            let closing = spill?.closeConcurrently()
            defer { closing?.join() }
            do { try output.commit(tmp!) } catch { throw RenderError.output(error) }
            return report
        } catch {
            writer = nil
            tmp?.discard()
            throw OfflineRenderer.renderError(error, outputPath)
        }
    }
}

/// The mix's blocks after the master section's limiter (when there is one): `next` returns
/// (buffer, frames), 0 frames at the end.
struct MasterBlocks {
    let next: () throws -> (AudioBuffer, Int)
    let limiter: LimitedBlocks?
    let ceilingDBTP: Double?

    /// The limiter's part of a report.
    func describe(into report: inout RenderReport) {
        guard let limiter else { return }
        report.limiterCeilingDBTP = ceilingDBTP
        report.limiterMaximumReductionDB = limiter.maximumGainReductionDB
        report.limiterFramesLimited = limiter.framesLimited
    }
}

extension OfflineRenderer {
    /// The last touch to a written file before it is measured and moved into place: an Ogg
    /// stream gets its serial from `streamIdentity` instead of libsndfile's random one.
    func seal(_ written: TemporaryOutput, _ format: OutputFormat) throws(SoundFileError) {
        guard format.container == .ogg else { return }
        let identity = streamIdentity ?? FileIdentity.name(of: outputPath)
        guard OggStreamSerial.rewrite(descriptor: written.descriptor, serial: OggStreamSerial.serial(from: identity)) else {
            throw .writeFailed(path: outputPath, reason: "the Ogg stream libsndfile wrote could not be read back")
        }
    }

    /// The report's measures: each track's (as it entered the mix) and the written file's.
    func measure(_ written: TemporaryOutput, _ measures: TrackMeasures?, into report: inout RenderReport) throws {
        if let tracks = measures?.results {
            report.trackMeasures = tracks.map(\.0)
            report.trackHistories = tracks.map(\.1)
        }
        let fd = written.duplicateDescriptor()
        guard fd >= 0, lseek(fd, 0, SEEK_SET) == 0 else {
            throw SoundFileError.readFailed(path: outputPath, reason: String(cString: strerror(errno)))
        }
        let (mix, history) = try AudioAnalyzer.analyzeWithHistory(descriptor: fd, reportedPath: outputPath)
        report.mixMeasures = mix
        report.mixHistory = history
    }

    /// Whether `format`'s samples are dithered when first written: `.tpdf` on integer output,
    /// `.auto` on integer output of 16 bits or fewer (undone where no sample needed rounding).
    func dithers(_ format: OutputFormat) -> Bool {
        guard let sf = format.storedSampleFormat, sf.isInteger else { return false }
        return switch dither {
        case .none: false
        case .tpdf: true
        case .auto: sf.bits <= 16
        }
    }

    /// `source`'s blocks through the master limiter, if the engine has one (after any
    /// normalisation gain; its delay removed).
    func master(_ layout: EngineLayout, _ source: @escaping () throws -> (AudioBuffer, Int)) -> MasterBlocks {
        let sampleRate = layout.sampleRate, channelCount = layout.channelCount
        guard let limiter = layout.masterLimiter?.settings else { return MasterBlocks(next: source, limiter: nil, ceilingDBTP: nil) }
        let l = LimitedBlocks(settings: limiter, sampleRate: sampleRate, channelCount: channelCount,
                              maximumFrameCount: blockFrames, source: source)
        return MasterBlocks(next: l.next, limiter: l, ceilingDBTP: limiter.ceilingDBTP)
    }

    /// The kernel's mix (from its start) through the limiter, if there is one.
    func master(_ kernel: RenderKernel) -> MasterBlocks {
        let frames = blockFrames
        return master(kernel.layout) {
            (kernel.output, try kernel.render(frameCount: frames))
        }
    }

    /// Renders the mix once, measuring it (`AudioAnalyzer`: loudness, peaks) without writing a
    /// file: what `--dry-run --analyze` prints.
    public func analyze(_ engine: AudioEngine) throws(RenderError) -> AudioAnalysis {
        let layout: EngineLayout
        do { layout = try engine.validate() } catch { throw .engine(error) }
        let kernel: RenderKernel
        do { kernel = try engine.makeKernel(maximumFrameCount: blockFrames) } catch { throw .engine(error) }
        var analyzer = AudioAnalyzer(sampleRate: layout.sampleRate, channelCount: layout.channelCount, maximumFrameCount: blockFrames)
        defer { analyzer.deallocate() }
        do {
            try kernel.start()
            while true {
                let n = try kernel.render(frameCount: blockFrames)
                if n == 0 { break }
                analyzer.process(kernel.output, frameCount: n)
                progress?(kernel.framesRendered, layout.frameCount)
                if isCancelled?() == true { throw RenderError.cancelled }
            }
        } catch {
            throw OfflineRenderer.renderError(error, outputPath)
        }
        return analyzer.analysis
    }

    /// `normalizeLUFS`: renders the mix into the spill while measuring its loudness and true
    /// peak, then converts it with the one gain that brings it to the target. The DSP runs once
    /// (twice where there is no room for the spill). If that gain would put the true peak above
    /// `safeCeilingDBTP`, nothing is written and the error says the loudest target that fits.
    func renderNormalized(_ engine: AudioEngine, targetLUFS: Double) throws(RenderError) -> RenderReport {
        let (format, layout) = try plan(engine)
        let output = try outputFile(layout)
        let kernel: RenderKernel
        do { kernel = try engine.makeKernel(maximumFrameCount: blockFrames) } catch { throw .engine(error) }
        kernel.parallelTracks = kernelParallelTracks
        let measures = measuresTracks ? TrackMeasures(kernel: kernel) : nil
        let directory = output.folderPath
        let started = Date()
        var tmp: TemporaryOutput?
        var analyzer = AudioAnalyzer(sampleRate: layout.sampleRate, channelCount: layout.channelCount, maximumFrameCount: blockFrames)
        defer { analyzer.deallocate() }
        do {
            tmp = try output.createTemporary()
            var spill = try? SpillFile(directory: directory, channelCount: format.channelCount, reportedPath: outputPath)
            measures?.restart(); try kernel.start()
            output.releaseReplacedPages()
            while true {
                let n = try kernel.render(frameCount: blockFrames)
                if n == 0 { break }
                analyzer.process(kernel.output, frameCount: n)
                if let s = spill {
                    do { try s.append(kernel.output, frameCount: n) } catch { spill = nil }
                }
                progress?(kernel.framesRendered, layout.frameCount)
                if isCancelled?() == true { throw RenderError.cancelled }
            }
            let measured = analyzer.analysis
            var gainDB = targetLUFS - measured.integratedLUFS
            let fits = measured.truePeakDBTP + gainDB <= OfflineRenderer.safeCeilingDBTP + 1e-9
            guard measured.integratedLUFS.isFinite, fits || layout.masterLimiter != nil else {
                throw RenderError.cannotNormalize(targetLUFS: targetLUFS, measuredLUFS: measured.integratedLUFS,
                                                  truePeakDBTP: measured.truePeakDBTP)
            }
            let buffer = AudioBuffer(channelCount: format.channelCount, capacityFrames: blockFrames)
            /// Converts the mix `gainDB` louder, through the limiter if any, into `tmp`, and
            /// measures what it wrote.
            func convert(gainDB: Double) throws -> (SoundFileWriter, AudioAnalysis, MasterBlocks) {
                let gain = Float(pow(10, gainDB / 20))
                let writer = try SoundFileWriter(temporary: tmp!, format: format, dither: dithers(format), reportedPath: outputPath)
                var written = AudioAnalyzer(sampleRate: layout.sampleRate, channelCount: layout.channelCount, maximumFrameCount: blockFrames)
                defer { written.deallocate() }
                if let spill { spill.rewind() } else { measures?.restart(); try kernel.start() }
                let frames = blockFrames
                let blocks = master(layout) {
                    let block: AudioBuffer, n: Int
                    if let spill { block = buffer; n = try spill.read(into: buffer, maxFrames: frames) } else {
                        block = kernel.output; n = try kernel.render(frameCount: frames)
                    }
                    for c in 0..<block.channelCount {
                        let p = block.channel(c)
                        for i in 0..<n { p[i] *= gain }
                    }
                    return (block, n)
                }
                while true {
                    let (block, n) = try blocks.next()
                    if n == 0 { break }
                    written.process(block, frameCount: n)
                    try writer.write(block, frameCount: n)
                    if isCancelled?() == true { throw RenderError.cancelled }
                }
                try writer.close()
                return (writer, written.analysis, blocks)
            }
            // Where the limiter turns peaks down, the mix ends up quieter than the gain alone
            // would make it: measure what was written and convert the kept mix again with a
            // corrected gain (secant steps on loudness against gain; at most seven more passes,
            // and the DSP does not run again).
            var (writer, result, blocks) = try convert(gainDB: gainDB)
            var previous: (gainDB: Double, lufs: Double)?
            for _ in 0..<7 {
                let off = targetLUFS - result.integratedLUFS
                guard layout.masterLimiter != nil, spill != nil, abs(off) > 0.02, result.integratedLUFS.isFinite else { break }
                // loudness rises by at most 1 LU per dB of gain, less the more the limiter works
                var slope = 1.0
                if let p = previous, gainDB != p.gainDB { slope = min(1, max(0.05, (result.integratedLUFS - p.lufs) / (gainDB - p.gainDB))) }
                previous = (gainDB, result.integratedLUFS)
                gainDB += min(24, off / slope)
                tmp?.discard()
                tmp = try output.createTemporary()
                (writer, result, blocks) = try convert(gainDB: gainDB)
            }
            var report = RenderReport(outputPath: outputPath, format: format, frameCount: layout.frameCount,
                                      peak: writer.peak, clippedSamples: writer.clippedSamples,
                                      elapsedSeconds: Date().timeIntervalSince(started),
                                      trackLatencyFrames: kernel.trackLatencyFrames,
                                      trackReplacedSamples: kernel.trackReplacedSamples,
                                      clipPolicy: clipPolicy, appliedGainDB: gainDB,
                                      mixPeak: pow(10, Float(measured.samplePeakDBFS) / 20))
            blocks.describe(into: &report)
            report.ditherApplied = dithers(format)
            report.truePeakDBTP = result.truePeakDBTP
            report.measuredLUFS = measured.integratedLUFS
            report.integratedLUFS = result.integratedLUFS
            report.renderedTwice = spill == nil
            try seal(tmp!, format)
            if measures != nil || measuresMix { try measure(tmp!, measures, into: &report) }
            report.elapsedSeconds = Date().timeIntervalSince(started)
            let closing = spill?.closeConcurrently()
            defer { closing?.join() }
            do { try output.commit(tmp!) } catch { throw RenderError.output(error) }
            return report
        } catch {
            tmp?.discard()
            throw OfflineRenderer.renderError(error, outputPath)
        }
    }

    /// Any error of a render, as a `RenderError`.
    static func renderError(_ error: any Error, _ outputPath: String) -> RenderError {
        switch error {
        case let e as RenderError: e
        case let e as OutputFileError: .output(e)
        case let e as SoundFileError: .file(e)
        case let e as EngineError: .engine(e)
        default: .file(.writeFailed(path: outputPath, reason: "\(error)"))
        }
    }
}
