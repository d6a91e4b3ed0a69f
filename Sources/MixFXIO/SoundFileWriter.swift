import CSndFile
import MixFXDSP
import MixFXEngine
import MixFXFiles
#if canImport(Glibc)
import Glibc
#endif

/// Writes planar float blocks to a file through libsndfile, converting to the sample format
/// itself: integers are rounded from x·2^(bits−1) and clamped, never wrapped, and every clamped
/// sample is counted. (So a 16-bit input written back at 16-bit is bit-exact.)
public final class SoundFileWriter {
    /// The file written.
    public let path: String
    /// The path messages name (the final output when `path` is a temporary file).
    public let reportedPath: String
    /// Its format.
    public let format: OutputFormat
    /// Samples that were outside the integer range and were clamped (or, for float and lossy
    /// output, samples beyond ±1.0 that a player would clip).
    public var clippedSamples: Int { converter.clippedSamples }
    /// The largest absolute sample value written (before clamping).
    public var peak: Float { converter.peak }
    /// Samples that converting rounded (integer output; see `SampleConverter.offGridSamples`).
    public var offGridSamples: Int { converter.offGridSamples }
    private var handle: OpaquePointer?
    private var converter: SampleConverter
    private var scratch: UnsafeMutableRawPointer?
    private var scratchBytes = 0
    private var writeback: ProgressiveWriteback?

    /// Writes into `temporary` (an `OutputFile`'s; control side); `dither` applies TPDF dither
    /// to integer output. libsndfile gets a duplicate of the descriptor, never a name.
    public convenience init(temporary: TemporaryOutput, format: OutputFormat, dither: Bool = false, reportedPath: String) throws(SoundFileError) {
        let fd = temporary.duplicateDescriptor()
        guard fd >= 0 else { throw .cannotCreate(path: reportedPath, reason: String(cString: strerror(errno))) }
        try self.init(descriptor: fd, path: temporary.path, format: format, dither: dither, reportedPath: reportedPath)
    }

    /// Creates the new file `path` (control side): exclusively, so an existing file, or a link
    /// or FIFO planted at the name, is refused and never written through. (Tools and tests; a
    /// render writes through `OutputFile`.)
    public convenience init(path: String, format: OutputFormat, dither: Bool = false, reportedPath: String? = nil) throws(SoundFileError) {
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0o666)
        guard fd >= 0 else {
            throw .cannotCreate(path: reportedPath ?? path, reason: String(cString: strerror(errno)))
        }
        do { try self.init(descriptor: fd, path: path, format: format, dither: dither, reportedPath: reportedPath ?? path) } catch {
            unlink(path)
            throw error
        }
    }

    /// Writes into the open, empty, seekable file `fd` (taken over and closed).
    init(descriptor fd: Int32, path: String, format: OutputFormat, dither: Bool, reportedPath: String) throws(SoundFileError) {
        self.path = path
        self.reportedPath = reportedPath
        self.format = format
        converter = SampleConverter(sampleFormat: format.storedSampleFormat, channelCount: format.channelCount,
                                    dither: dither && format.storedSampleFormat?.isInteger == true)
        var info = SF_INFO()
        info.samplerate = Int32(format.sampleRate)
        info.channels = Int32(format.channelCount)
        info.format = format.sndfileFormat
        guard sf_format_check(&info) != 0 else {
            Glibc.close(fd)
            throw .unsupportedOutput(path: reportedPath, reason: "libsndfile cannot write \(format.container.rawValue) with \(format.sampleFormat.rawValue) at \(format.sampleRate) Hz")
        }
        let writebackFD = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        guard let h = sf_open_fd(fd, Int32(SFM_WRITE), &info, Int32(SF_TRUE)) else {
            Glibc.close(fd)
            if writebackFD >= 0 { Glibc.close(writebackFD) }
            throw .cannotCreate(path: reportedPath, reason: SoundFileWriter.explain(String(cString: sf_strerror(nil))))
        }
        // No PEAK chunk (libsndfile adds one to float WAV/AIFF files): it holds the time of
        // writing, so the same render would give different bytes each second.
        sf_command(h, Int32(SFC_SET_ADD_PEAK_CHUNK), nil, Int32(SF_FALSE))
        handle = h
        writeback = ProgressiveWriteback(descriptor: writebackFD)
    }

    deinit {
        if let handle { sf_close(handle) }
        scratch?.deallocate()
    }

    /// Appends `frameCount` frames from `buffer`'s first `format.channelCount` channels.
    public func write(_ buffer: AudioBuffer, frameCount: Int) throws(SoundFileError) {
        guard let handle else { throw .writeFailed(path: reportedPath, reason: "file already closed") }
        let bytes = frameCount * format.channelCount * converter.bytesPerSample
        if scratchBytes < bytes {
            scratch?.deallocate()
            scratch = .allocate(byteCount: bytes, alignment: 16)
            scratchBytes = bytes
        }
        converter.convert(buffer, frameCount: frameCount, to: scratch!)
        let n = sf_count_t(frameCount)
        let written: Int = switch converter.sampleFormat {
        case .s16?: Int(sf_writef_short(handle, scratch!.assumingMemoryBound(to: Int16.self), n))
        case .s24?, .s32?: Int(sf_writef_int(handle, scratch!.assumingMemoryBound(to: Int32.self), n))
        case .f32?, nil: Int(sf_writef_float(handle, scratch!.assumingMemoryBound(to: Float.self), n))
        }
        if written != frameCount {
            throw .writeFailed(path: reportedPath, reason: SoundFileWriter.explain(String(cString: sf_strerror(handle))))
        }
        writeback?.appended(bytes: bytes)
    }

    /// A converter for the `frameCount` frames that follow the `skipping` frames after those
    /// written so far, as this writer would convert them (the same format and dither, the dither
    /// at their position): for converting a later part on another thread (`writeConverted`).
    func partConverter(skipping: Int) -> SampleConverter {
        SampleConverter(sampleFormat: converter.sampleFormat, channelCount: converter.channelCount,
                        dither: converter.dither, firstFrame: converter.nextFrame + skipping)
    }

    /// Appends `frameCount` frames that `part` (from `partConverter(skipping: 0)`) converted into
    /// `data`: the same bytes `write` would have written for them, and the same counts.
    func writeConverted(_ data: UnsafeRawPointer, frameCount: Int, by part: SampleConverter) throws(SoundFileError) {
        guard let handle else { throw .writeFailed(path: reportedPath, reason: "file already closed") }
        precondition(part.nextFrame == converter.nextFrame + frameCount, "parts must be written in order")
        let n = sf_count_t(frameCount)
        let written: Int = switch converter.sampleFormat {
        case .s16?: Int(sf_writef_short(handle, data.assumingMemoryBound(to: Int16.self), n))
        case .s24?, .s32?: Int(sf_writef_int(handle, data.assumingMemoryBound(to: Int32.self), n))
        case .f32?, nil: Int(sf_writef_float(handle, data.assumingMemoryBound(to: Float.self), n))
        }
        if written != frameCount {
            throw .writeFailed(path: reportedPath, reason: SoundFileWriter.explain(String(cString: sf_strerror(handle))))
        }
        converter.absorb(part, frameCount: frameCount)
        writeback?.appended(bytes: frameCount * format.channelCount * converter.bytesPerSample)
    }

    /// Bytes of the file sent on to the disk while writing (`ProgressiveWriteback`).
    var writebackRequestedBytes: Int { writeback?.requested ?? 0 }

    /// Finishes the file (headers, encoder flush).
    public func close() throws(SoundFileError) {
        guard let h = handle else { return }
        handle = nil
        if sf_close(h) != 0 { throw .writeFailed(path: reportedPath, reason: "closing failed") }
    }

    /// libsndfile's "System error : ..." text, with what the user can do about it.
    static func explain(_ reason: String) -> String {
        let text = reason.hasPrefix("System error : ") ? String(reason.dropFirst(15)) : reason
        if text.contains("File too large") { return tooLarge }
        if text.contains("No space left") { return noSpace }
        return text
    }

    static let tooLarge = "the file reached the largest size allowed (the process's file-size limit, `ulimit -f`, or the file system's); nothing was written"
    static let noSpace = "no space left on the device; nothing was written"
}

extension SoundFileError {
    /// A write that failed for want of room (a full disk, a file-size limit): one that may
    /// succeed once the render's own temporary mix is gone (`RenderPasses`).
    var isOutOfRoom: Bool {
        guard case .writeFailed(_, let reason) = self else { return false }
        return reason == SoundFileWriter.noSpace || reason == SoundFileWriter.tooLarge
    }
}
