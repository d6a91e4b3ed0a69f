import Foundation
import MixFXDSP
import MixFXEngine
import MixFXFiles

/// Renders an engine to a file, block by block: memory does not depend on the session's length.
/// Writes to a temporary file beside the output and renames it on success, so a failed or
/// interrupted render leaves nothing behind.
public struct OfflineRenderer {
    /// The file written; `OutputFile.standardOutputPath` (`-`) writes to standard output, once
    /// the render has succeeded (see `OutputFile.isStandardOutput`).
    public var outputPath: String
    /// The container; nil: from `outputPath`'s extension (standard output has none).
    public var container: Container?
    /// The sample format; nil picks the most precise input's, at least s16.
    public var sampleFormat: SampleFormat?
    /// Allow replacing an existing output (never an input).
    public var overwrite = false
    /// With `overwrite`, only this file may be replaced (see `OutputFile.onlyReplacing`).
    public var onlyReplacing: FileIdentity?
    /// And only while it is still this version of it (`OutputFile`'s `onlyReplacingVersion`).
    public var onlyReplacingVersion: FileVersion?
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
    /// Called with the finished temporary file just before it is moved to `outputPath` (the
    /// rename keeps its device and inode): `mixfx batch` records that identity in its sidecar
    /// first, so a run killed between the rename and its own bookkeeping leaves an output a
    /// later run can tell is its own. An error stops the render; nothing is written.
    public var beforeCommit: ((TemporaryOutput) throws(OutputFileError) -> Void)?
    /// Given the finished render's report before the output is committed (the CLI writes its
    /// `--report` file there, unnamed, so a report that cannot be written leaves no output).
    public var beforeCommitWithReport: ((RenderReport) throws(OutputFileError) -> Void)?

    /// A render to `outputPath` (container from its extension). Control side.
    public init(outputPath: String, sampleFormat: SampleFormat? = nil) {
        self.outputPath = outputPath
        self.sampleFormat = sampleFormat
    }

    /// The output format this render would use, after every check that does not need to render.
    public func plan(_ engine: AudioEngine) throws(RenderError) -> (OutputFormat, EngineLayout) {
        let layout: EngineLayout
        do { layout = try engine.validate() } catch { throw .engine(error) }
        guard let container = container ?? Container.from(path: outputPath) else {
            let why = outputPath == OutputFile.standardOutputPath ? "standard output has no extension: name the container" : "unknown extension"
            throw .unsupportedOutput(path: outputPath, reason: "\(why) (allowed: \(Container.extensionsText))")
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

    /// Every file the render of `layout` reads: the tracks by the identity of what was opened
    /// (standard input too, when it is a file) with `otherInputs`, and the preset files by path.
    /// What no file it writes may replace (the output here, a report by the caller).
    public func filesRead(_ layout: EngineLayout) -> (identities: FileIdentitySet, paths: [String]) {
        var inputs = otherInputs
        var paths = presetFiles
        for track in layout.tracks {
            guard let reader = (track.player.source as? SoundFileReader) ?? (track.player.source as? StreamingSource)?.reader else { continue }
            if let id = reader.identity { inputs.insert(id, spelling: reader.path, version: reader.openedVersion) } else { paths.append(reader.path) }
        }
        return (inputs, paths)
    }

    /// No track's file was changed while it was read (written in place by another program, a
    /// take re-exported over it): the mix would hold parts of two versions, so nothing is
    /// written and the render fails naming the file.
    private func checkUnchanged(_ layout: EngineLayout) throws(RenderError) {
        for track in layout.tracks {
            guard let reader = (track.player.source as? SoundFileReader) ?? (track.player.source as? StreamingSource)?.reader,
                  reader.changedSinceOpened() else { continue }
            throw .file(.readFailed(path: reader.path, reason: "it was changed by another program while mixfx read it (its size or modification time moved); nothing was written: render it again once it is finished"))
        }
    }

    /// The output, checked against every file read: the tracks by the identity of what was
    /// opened (standard input too, when it is a file), the rest by path.
    private func outputFile(_ layout: EngineLayout) throws(RenderError) -> OutputFile {
        let (inputs, paths) = filesRead(layout)
        do { return try OutputFile(path: outputPath, inputs: inputs, alsoInputs: paths, overwrite: overwrite,
                                        onlyReplacing: onlyReplacing, onlyReplacingVersion: onlyReplacingVersion) } catch {
            throw .output(error)
        }
    }

    /// Renders the whole session into `outputPath`: a first pass renders the mix (and keeps it
    /// in a `SpillFile` where a second conversion may need it), the gain is decided, and the
    /// kept mix is converted again where that gain or the dither asks for it (`RenderPasses`).
    /// So the DSP runs once whatever happens, and twice only where there is no room for the
    /// spill (4 bytes per sample beside the output; `RenderReport.renderedTwice`).
    ///
    /// - Without `normalizeLUFS` the first pass writes the mix through the output stage
    ///   (`OutputStage`: the limiter, if any) as it renders. With `ClipPolicy.avoid`, a mix that
    ///   clipped is converted again with the one gain that brings its true peak to
    ///   `safeCeilingDBTP`; with `DitherMode.auto`, a mix whose every sample was already a value
    ///   of the format is written again without dither.
    /// - With `normalizeLUFS` the first pass only measures the mix; it is then converted with the
    ///   gain that reaches the target, before the limiter (`renderNormalized`).
    public func render(_ engine: AudioEngine) throws(RenderError) -> RenderReport {
        let (format, layout) = try plan(engine)
        let output = try outputFile(layout)
        let kernel: RenderKernel
        do { kernel = try engine.makeKernel(maximumFrameCount: blockFrames) } catch { throw .engine(error) }
        kernel.parallelTracks = kernelParallelTracks
        let passes = RenderPasses(renderer: self, format: format, output: output, kernel: kernel)
        let started = Date()
        do {
            var report = if let target = normalizeLUFS {
                try renderNormalized(passes, targetLUFS: target)
            } else {
                try renderWithClipPolicy(passes)
            }
            guard let written = passes.temporary else { throw RenderError.cancelled }
            try seal(written, format)
            if passes.measures != nil || measuresMix { try measure(written, passes.measures, into: &report) }
            report.elapsedSeconds = Date().timeIntervalSince(started)
            let closing = passes.closeSpillConcurrently()
            defer { closing?.join() }
            try checkUnchanged(layout)
            do {
                try beforeCommitWithReport?(report)
                try beforeCommit?(written)
                try output.commit(written)
            } catch { throw RenderError.output(error) }
            return report
        } catch {
            passes.discard()
            throw OfflineRenderer.renderError(error, outputPath)
        }
    }

    /// The first pass writes the mix; then the clip policy and the dither decide whether it is
    /// converted again, and with which gain.
    private func renderWithClipPolicy(_ passes: RenderPasses) throws -> RenderReport {
        let format = passes.format
        // (lossy output as integer output: its decoders give fixed-point samples)
        let policy = format.storedSampleFormat?.isInteger == true || format.container.isLossy ? clipPolicy : .clamp
        let dithered = dithers(format)
        // kept to measure a mix that clips (avoid) or to write it again without dither (auto)
        let keep = policy == .avoid || (dither == .auto && dithered)
        var written = try passes.firstPass(keeping: keep, dither: dithered) { writer, n, position in
            // (with --clip or --strict the mix is kept for the auto dither only: not needed once
            // a sample has needed rounding)
            if policy != .avoid && writer.offGridSamples > 0 { passes.dropSpill() }
            if policy == .fail && writer.clippedSamples > 0 {
                throw RenderError.wouldClip(path: outputPath, peakDBFS: 20 * log10(Double(writer.peak)),
                                            atSeconds: Double(position - n) / Double(format.sampleRate))
            }
        }
        var report = passes.report(written, clipPolicy: policy, mixPeak: written.peak)
        if policy == .avoid && written.clippedSamples > 0 {
            // the mix clipped: one gain for all of it brings its true peak to the ceiling (where
            // the mix was not kept, it is rendered again to measure it: the same bytes whatever
            // room the disk had)
            let ceiling = pow(10, OfflineRenderer.safeCeilingDBTP / 20)
            let truePeak = try passes.truePeak()
            let gain = Float(ceiling / Double(truePeak.peak))
            written = try passes.convert(stageGain: 1, trim: gain, dither: dithered)
            report.appliedGainDB = 20 * log10(Double(gain))
            report.truePeakDBTP = truePeak.dBTP + report.appliedGainDB
        } else if dither == .auto && dithered && written.offGridSamples == 0 {
            // every sample was already a value of the format (a pass-through, a plain sum of
            // 16-bit tracks): dither would only add noise, so write the mix again without
            written = try passes.convert(stageGain: 1, trim: 1, dither: false)
        }
        report.peak = written.peak
        report.clippedSamples = written.clippedSamples
        report.ditherApplied = written.dithered
        report.renderedTwice = passes.renderedAgain
        return report
    }
}

extension OfflineRenderer {
    /// The last touch to a written file before it is measured and moved into place: an Ogg
    /// stream gets its serial from `streamIdentity` instead of libsndfile's random one.
    func seal(_ written: TemporaryOutput, _ format: OutputFormat) throws(SoundFileError) {
        guard format.container.isOgg else { return }
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
                let n = kernel.render(frameCount: blockFrames)
                if let failure = kernel.failure { throw failure }
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

    /// `normalizeLUFS`: the first pass measures the mix's loudness and true peak (and keeps
    /// it); it is then converted with the one gain that brings it to the target, before the
    /// limiter. If that gain would put the true peak above `safeCeilingDBTP` and there is no
    /// limiter, nothing is written and the error says the loudest target that fits.
    func renderNormalized(_ passes: RenderPasses, targetLUFS: Double) throws -> RenderReport {
        let format = passes.format
        let measured = try passes.measuringPass()
        var gainDB = targetLUFS - measured.integratedLUFS
        let limited = passes.stage.limiterSettings != nil
        let fits = measured.truePeakDBTP + gainDB <= OfflineRenderer.safeCeilingDBTP + 1e-9
        guard measured.integratedLUFS.isFinite, fits || limited else {
            throw RenderError.cannotNormalize(targetLUFS: targetLUFS, measuredLUFS: measured.integratedLUFS,
                                              truePeakDBTP: measured.truePeakDBTP)
        }
        func convert(gainDB: Double) throws -> (RenderPasses.Written, AudioAnalysis) {
            let written = try passes.convert(stageGain: Float(pow(10, gainDB / 20)), trim: 1, dither: dithers(format), measuring: true)
            return (written, written.analysis!)
        }
        // Where the limiter turns peaks down, the mix ends up quieter than the gain alone would
        // make it: measure what was written and convert the kept mix again with a corrected
        // gain (secant steps on loudness against gain; at most seven more passes, from the kept
        // mix; where there was no room to keep it, the DSP runs again for each: the same bytes
        // whatever room the disk had).
        var (written, result) = try convert(gainDB: gainDB)
        var previous: (gainDB: Double, lufs: Double)?
        for _ in 0..<7 {
            let off = targetLUFS - result.integratedLUFS
            guard limited, abs(off) > 0.02, result.integratedLUFS.isFinite else { break }
            // loudness rises by at most 1 LU per dB of gain, less the more the limiter works
            var slope = 1.0
            if let p = previous, gainDB != p.gainDB { slope = min(1, max(0.05, (result.integratedLUFS - p.lufs) / (gainDB - p.gainDB))) }
            previous = (gainDB, result.integratedLUFS)
            gainDB += min(24, off / slope)
            (written, result) = try convert(gainDB: gainDB)
        }
        var report = passes.report(written, clipPolicy: clipPolicy, mixPeak: pow(10, Float(measured.samplePeakDBFS) / 20))
        report.appliedGainDB = gainDB
        report.truePeakDBTP = result.truePeakDBTP
        report.measuredLUFS = measured.integratedLUFS
        report.integratedLUFS = result.integratedLUFS
        report.renderedTwice = passes.renderedAgain
        return report
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
