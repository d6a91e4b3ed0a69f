import CSndFile
#if canImport(Glibc)
import Glibc
#endif
import MixFXDSP
import MixFXEngine
import MixFXFiles

/// Errors of file input and output, each naming the file.
public enum SoundFileError: Error, Equatable, CustomStringConvertible {
    case cannotOpen(path: String, reason: String)
    case readFailed(path: String, reason: String)
    case cannotCreate(path: String, reason: String)
    case writeFailed(path: String, reason: String)
    case unsupportedOutput(path: String, reason: String)

    /// One line naming the file and the problem.
    public var description: String {
        switch self {
        case .cannotOpen(let p, let r): "cannot open '\(p)': \(r)"
        case .readFailed(let p, let r): "cannot read '\(p)': \(r)"
        case .cannotCreate(let p, let r): "cannot create '\(p)': \(r)"
        case .writeFailed(let p, let r) where p == OutputFile.standardOutputPath:
            "cannot write the output for standard output in the temporary folder '\(UnnamedFile.temporaryFolder)' (TMPDIR; it is copied out once the render succeeds): \(r)"
        case .writeFailed(let p, let r): "cannot write '\(p)': \(r)"
        case .unsupportedOutput(let p, let r): "cannot write '\(p)': \(r)"
        }
    }
}

/// A sound file read through libsndfile (WAV, FLAC, Ogg/Vorbis, AIFF, CAF, ... whatever the
/// installed libsndfile reads), as an `AudioSource` for a `PlayerNode`. Samples come as floats
/// in [−1, 1); integer files are scaled by 1/2^(bits−1), so 16- and 24-bit data round-trips
/// exactly.
/// `@unchecked Sendable`: one thread at a time reads or seeks it (the track that owns it, or a
/// live player's feeder).
public final class SoundFileReader: AudioSource, @unchecked Sendable {
    /// The file read.
    public let path: String
    /// Rate, channels, length and precision from the file header.
    public let format: SourceFormat
    /// The libsndfile major format (container) and subtype (encoding).
    public let majorFormat: Int32
    /// libsndfile encoding (SF_FORMAT_PCM_16, ...).
    public let subtype: Int32
    private let handle: OpaquePointer
    private var interleaved: UnsafeMutablePointer<Float>
    private var interleavedCapacity = 0
    /// 16-bit PCM in an uncompressed container: read as integers and converted here
    /// (`IntegerSamples`), the same floats libsndfile makes, eight at a time.
    private let readsIntegers: Bool
    private var integers: UnsafeMutablePointer<Int16>

    /// The path, for messages.
    public var name: String { path }
    /// The file opened (device and inode of the descriptor read).
    public let identity: FileIdentity?
    /// The descriptor libsndfile reads (it closes it), and the file's size and modification
    /// time when opened: `changedSinceOpened` tells a file written into while read.
    private let descriptor: Int32
    public let openedVersion: FileVersion?
    /// The next frame libsndfile reads (ahead of the next one `read` returns by the frames
    /// held), to tell a file that ends before its header says.
    private var filePosition = 0

    /// Opens `path` for reading (control side); throws naming the file when it cannot. The file
    /// is opened once and checked on its descriptor (`RegularFile.openForReading`): a FIFO,
    /// device or socket is refused without blocking, even one swapped in after a check.
    /// `StandardInput.path` (`-`) reads standard input (`StandardInput`).
    public convenience init(path: String) throws(SoundFileError) {
        let fd: Int32
        if path == StandardInput.path {
            do { fd = try StandardInput.openForReading() } catch { throw .cannotOpen(path: path, reason: error.reason) }
            try self.init(descriptor: fd, path: path)
            return
        }
        do { fd = try RegularFile.openForReading(path) } catch {
            if case .notRegular(let kind) = error.problem {
                throw .cannotOpen(path: path, reason: "it is a \(kind); mixfx reads regular files, whose length it knows and can seek in (save the stream to a file first)")
            }
            throw .cannotOpen(path: path, reason: error.reason)
        }
        try self.init(descriptor: fd, path: path)
    }

    /// Reads the open file `fd` (which it takes over and closes); `path` names it in messages.
    public init(descriptor fd: Int32, path: String) throws(SoundFileError) {
        self.path = path
        identity = FileIdentity(descriptor: fd)
        descriptor = fd
        openedVersion = FileVersion(descriptor: fd)
        var info = SF_INFO()
        guard let h = sf_open_fd(fd, Int32(SFM_READ), &info, Int32(SF_TRUE)) else {
            close(fd)
            let reason = String(cString: sf_strerror(nil))
            throw .cannotOpen(path: path, reason: SoundFileReader.explain(reason, path: path))
        }
        handle = h
        majorFormat = info.format & Int32(SF_FORMAT_TYPEMASK)
        subtype = info.format & Int32(SF_FORMAT_SUBMASK)
        guard info.channels > 0, info.samplerate > 0 else {
            sf_close(h)
            throw .cannotOpen(path: path, reason: "the file has no audio (\(info.channels) channels, \(info.samplerate) Hz)")
        }
        guard info.frames >= 0 && info.frames < Int64.max else {
            sf_close(h)
            throw .cannotOpen(path: path, reason: "its length is unknown (a truncated or damaged file, or a stream); mixfx needs a file whose length it can read")
        }
        let bits: Int
        switch Int(subtype) {
        case SF_FORMAT_PCM_S8, SF_FORMAT_PCM_U8: bits = 8
        case SF_FORMAT_PCM_24: bits = 24
        case SF_FORMAT_PCM_32: bits = 32
        case SF_FORMAT_FLOAT, SF_FORMAT_DOUBLE: bits = 33   // float: above any integer format
        default: bits = 16
        }
        format = SourceFormat(sampleRate: Int(info.samplerate), channelCount: Int(info.channels),
                              frameCount: Int(info.frames), bitsPerSample: bits,
                              channelLayout: SoundFileReader.declaredLayout(h, channelCount: Int(info.channels),
                                                                            majorFormat: majorFormat))
        interleaved = .allocate(capacity: 1)
        integers = .allocate(capacity: 1)
        let uncompressed = [SF_FORMAT_WAV, SF_FORMAT_WAVEX, SF_FORMAT_AIFF, SF_FORMAT_W64, SF_FORMAT_RF64,
                            SF_FORMAT_CAF, SF_FORMAT_AU].contains(Int(majorFormat))
        readsIntegers = uncompressed && subtype == Int32(SF_FORMAT_PCM_16)
    }

    /// Whether the file was written into (or truncated) since it was opened: what was read may
    /// then mix two versions of it. Its size or modification time tells (not its change time,
    /// which a `chmod`, a link or a backup's attributes move with the bytes the same); a file
    /// that cannot be looked at now is not taken as changed. Control side.
    public func changedSinceOpened() -> Bool {
        guard let opened = openedVersion, let now = FileVersion(descriptor: descriptor) else { return false }
        return now.size != opened.size || now.modifiedNanoseconds != opened.modifiedNanoseconds
    }

    deinit {
        sf_close(handle)
        interleaved.deallocate()
        integers.deallocate()
        held.deallocate()
        heldIntegers.deallocate()
    }

    /// The layout the file declares (a WAV channel mask, a CAF channel layout, an ambisonic
    /// WAVEFORMATEXTENSIBLE), as libsndfile reports it, or the one its format fixes for the
    /// count (FLAC's orders for 1 to 8 channels are WAV's usual ones); nil when neither.
    static func declaredLayout(_ h: OpaquePointer, channelCount: Int, majorFormat: Int32) -> ChannelLayout? {
        guard channelCount > 1 && channelCount <= SourceFormat.maximumChannelCount else { return nil }
        if majorFormat == Int32(SF_FORMAT_FLAC) {
            return ChannelLayout(ChannelLayout.usual(channelCount: channelCount).speakers, declared: true)
        }
        if channelCount == 4 && sf_command(h, Int32(SFC_WAVEX_GET_AMBISONIC), nil, 0) == Int32(SF_AMBISONIC_B_FORMAT) {
            return ChannelLayout([.ambisonicW, .ambisonicX, .ambisonicY, .ambisonicZ], declared: true)
        }
        var map = [Int32](repeating: 0, count: channelCount)
        let ok = map.withUnsafeMutableBytes { sf_command(h, Int32(SFC_GET_CHANNEL_MAP_INFO), $0.baseAddress, Int32($0.count)) }
        guard ok == SF_TRUE, map.contains(where: { $0 != Int32(SF_CHANNEL_MAP_INVALID) }) else { return nil }
        let speakers: [Speaker] = map.map { m in
            switch Int(m) {
            case SF_CHANNEL_MAP_LEFT, SF_CHANNEL_MAP_FRONT_LEFT: .frontLeft
            case SF_CHANNEL_MAP_RIGHT, SF_CHANNEL_MAP_FRONT_RIGHT: .frontRight
            case SF_CHANNEL_MAP_CENTER, SF_CHANNEL_MAP_FRONT_CENTER: .frontCenter
            case SF_CHANNEL_MAP_LFE: .lfe
            case SF_CHANNEL_MAP_REAR_LEFT: .backLeft
            case SF_CHANNEL_MAP_REAR_RIGHT: .backRight
            case SF_CHANNEL_MAP_REAR_CENTER: .backCenter
            case SF_CHANNEL_MAP_SIDE_LEFT: .sideLeft
            case SF_CHANNEL_MAP_SIDE_RIGHT: .sideRight
            case SF_CHANNEL_MAP_FRONT_LEFT_OF_CENTER: .frontLeftOfCenter
            case SF_CHANNEL_MAP_FRONT_RIGHT_OF_CENTER: .frontRightOfCenter
            case SF_CHANNEL_MAP_TOP_CENTER: .topCenter
            case SF_CHANNEL_MAP_TOP_FRONT_LEFT: .topFrontLeft
            case SF_CHANNEL_MAP_TOP_FRONT_RIGHT: .topFrontRight
            case SF_CHANNEL_MAP_TOP_FRONT_CENTER: .topFrontCenter
            case SF_CHANNEL_MAP_TOP_REAR_LEFT: .topBackLeft
            case SF_CHANNEL_MAP_TOP_REAR_RIGHT: .topBackRight
            case SF_CHANNEL_MAP_TOP_REAR_CENTER: .topBackCenter
            case SF_CHANNEL_MAP_AMBISONIC_B_W: .ambisonicW
            case SF_CHANNEL_MAP_AMBISONIC_B_X: .ambisonicX
            case SF_CHANNEL_MAP_AMBISONIC_B_Y: .ambisonicY
            case SF_CHANNEL_MAP_AMBISONIC_B_Z: .ambisonicZ
            default: .unlabelled
            }
        }
        return ChannelLayout(speakers, declared: true)
    }

    /// libsndfile's MPEG container (MP1/2/3), whose frame count is estimated.
    static let mpegFormat: Int32 = 0x230000

    /// Makes libsndfile's terse messages say what to do.
    static func explain(_ reason: String, path: String) -> String {
        if reason.contains("No such file") { return "no such file" }
        if reason.contains("Format not recognised") || reason.contains("not recognised") {
            return "not an audio file that libsndfile can read (\(reason))"
        }
        return reason
    }

    /// Reads the next frames (see `AudioSource.read`); throws on a read error. One thread at a time.
    ///
    /// A read of fewer than `readAheadBelowFrames` frames is served from frames read ahead, one
    /// libsndfile read of `readAheadFrames` at a time (a track whose shifter pulls its input in
    /// small chunks, as a lane's does, made a system call per chunk); larger reads go to the
    /// file as they are. The samples are the same either way.
    public func read(into buffer: AudioBuffer, offset: Int, frameCount: Int) throws -> Int {
        let ch = format.channelCount
        var done = 0
        while done < frameCount {
            if heldCount > 0 {
                let m = min(heldCount, frameCount - done)
                buffer.deinterleave(from: held + heldStart * ch, channels: ch, frameCount: m, offset: offset + done)
                heldStart += m; heldCount -= m; done += m
                continue
            }
            if let error = pendingError {
                // the read ahead met it: thrown where the frames before it run out
                guard done == 0 else { return done }
                pendingError = nil
                throw error
            }
            let rest = frameCount - done
            // (small reads, one after another: a shifter's pulls, not a render's odd first block)
            smallReads = rest < Self.readAheadBelowFrames ? smallReads + 1 : 0
            if rest >= Self.readAheadBelowFrames || (heldCapacity == 0 && smallReads <= Self.smallReadsBeforeReadingAhead) {
                if interleavedCapacity < rest * ch {
                    // Grows once to the block size on first use (control side of the first render).
                    interleaved.deallocate()
                    integers.deallocate()
                    interleavedCapacity = rest * ch
                    interleaved = .allocate(capacity: interleavedCapacity)
                    integers = .allocate(capacity: readsIntegers ? interleavedCapacity : 1)
                }
                let got = try readFile(into: interleaved, integers: integers, frameCount: rest)
                buffer.deinterleave(from: interleaved, channels: ch, frameCount: got, offset: offset + done)
                return done + got
            }
            if heldCapacity == 0 {
                // (on the first small read, as the buffers above)
                heldCapacity = Self.readAheadFrames
                held.deallocate()
                heldIntegers.deallocate()
                held = .allocate(capacity: heldCapacity * ch)
                heldIntegers = .allocate(capacity: readsIntegers ? heldCapacity * ch : 1)
            }
            heldStart = 0
            do {
                heldCount = try readFile(into: held, integers: heldIntegers, frameCount: heldCapacity)
            } catch {
                // what the failing read got is lost, as it was read without reading ahead
                heldCount = 0
                guard done == 0 else { pendingError = error; return done }
                throw error
            }
            if heldCount == 0 { break }
        }
        return done
    }

    /// Reads of fewer frames than this are served from frames read ahead, `readAheadFrames` at
    /// a time (`read`; a render's blocks, 2048 frames, are not: they read as they are).
    static let readAheadBelowFrames = 1024, readAheadFrames = 4096
    /// Small reads in a row before the read-ahead buffer is made (a render's pre-roll and last
    /// block are one or two: it would only add memory), and how many there were.
    static let smallReadsBeforeReadingAhead = 8
    private var smallReads = 0
    /// The frames read ahead (interleaved, `heldCapacity` frames), the next one's index and how
    /// many are left; a read error met while reading ahead.
    private var held = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    private var heldIntegers = UnsafeMutablePointer<Int16>.allocate(capacity: 1)
    private var heldCapacity = 0, heldStart = 0, heldCount = 0
    private var pendingError: SoundFileError?

    /// Reads the file's next `frameCount` frames into `out` (interleaved; 16-bit PCM through
    /// `integers`); throws on a read error or a file that ends before its header says.
    private func readFile(into out: UnsafeMutablePointer<Float>, integers: UnsafeMutablePointer<Int16>,
                          frameCount: Int) throws(SoundFileError) -> Int {
        let ch = format.channelCount
        let got: Int
        if readsIntegers {
            got = Int(sf_readf_short(handle, integers, sf_count_t(frameCount)))
            IntegerSamples.convert(integers, count: max(got, 0) * ch, into: out)
        } else {
            got = Int(sf_readf_float(handle, out, sf_count_t(frameCount)))
        }
        if got < frameCount && sf_error(handle) != 0 {
            throw .readFailed(path: path, reason: String(cString: sf_strerror(handle)))
        }
        filePosition += max(got, 0)
        if got < frameCount && filePosition < format.frameCount && majorFormat != SoundFileReader.mpegFormat {
            // (MPEG's length is an estimate; every other format's is exact)
            throw .readFailed(path: path, reason: "the file ended at frame \(filePosition) of the \(format.frameCount) its header states (was it truncated or changed while mixfx read it?)")
        }
        return max(got, 0)
    }

    /// Moves to `frame`. One thread at a time.
    public func seek(toFrame frame: Int) throws {
        heldCount = 0
        pendingError = nil
        if sf_seek(handle, sf_count_t(frame), SEEK_SET) < 0 {
            throw SoundFileError.readFailed(path: path, reason: "cannot seek to frame \(frame)")
        }
        filePosition = frame
    }
}

/// 16-bit samples as floats: x·2⁻¹⁵, which is exact, and what libsndfile's own conversion gives
/// (it multiplies by the float 1/0x8000 when it normalises, its default). Eight at a time;
/// libsndfile's loop, one sample at a time, took 1.5 % of the band's CPU.
enum IntegerSamples {
    static func convert(_ source: UnsafePointer<Int16>, count: Int, into destination: UnsafeMutablePointer<Float>) {
        let scale: Float = 1.0 / 32768
        let src = UnsafeRawPointer(source), dst = UnsafeMutableRawPointer(destination)
        var i = 0
        while i &+ 8 <= count {
            let x = src.loadUnaligned(fromByteOffset: 2 &* i, as: SIMD8<Int16>.self)
            dst.storeBytes(of: SIMD8<Float>(SIMD8<Int32>(truncatingIfNeeded: x)) * scale, toByteOffset: 4 &* i, as: SIMD8<Float>.self)
            i &+= 8
        }
        while i < count { destination[i] = Float(source[i]) * scale; i &+= 1 }
    }
}
