import CSndFile
import MixFXDSP

/// Writes planar float blocks to a file through libsndfile, converting to the sample format
/// itself: integers are rounded from x·2^(bits−1) and clamped, never wrapped, and every clamped
/// sample is counted. (So a 16-bit input written back at 16-bit is bit-exact.)
public final class SoundFileWriter {
    public let path: String
    public let format: OutputFormat
    /// Samples that were outside the integer range and were clamped (or, for float and lossy
    /// output, samples beyond ±1.0 that a player would clip).
    public private(set) var clippedSamples = 0
    /// The largest absolute sample value written (before clamping).
    public private(set) var peak: Float = 0
    private var handle: OpaquePointer?
    private var scratchFloat: [Float] = []
    private var scratchInt: [Int32] = []
    private var scratchShort: [Int16] = []

    public init(path: String, format: OutputFormat) throws(SoundFileError) {
        self.path = path
        self.format = format
        var info = SF_INFO()
        info.samplerate = Int32(format.sampleRate)
        info.channels = Int32(format.channelCount)
        info.format = format.sndfileFormat
        guard sf_format_check(&info) != 0 else {
            throw .unsupportedOutput(path: path, reason: "libsndfile cannot write \(format.container.rawValue) with \(format.sampleFormat.rawValue) at \(format.sampleRate) Hz")
        }
        guard let h = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw .cannotCreate(path: path, reason: String(cString: sf_strerror(nil)))
        }
        handle = h
    }

    deinit { if let handle { sf_close(handle) } }

    /// Appends `frameCount` frames from `buffer`'s first `format.channelCount` channels.
    public func write(_ buffer: AudioBuffer, frameCount: Int) throws(SoundFileError) {
        guard let handle else { throw .writeFailed(path: path, reason: "file already closed") }
        let ch = format.channelCount
        let total = frameCount * ch
        var peakHere = peak
        var clipped = 0
        let stored = format.storedSampleFormat
        let written: Int
        switch stored {
        case .s16?:
            if scratchShort.count < total { scratchShort = [Int16](repeating: 0, count: total) }
            for c in 0..<ch {
                let src = buffer.channel(c)
                for i in 0..<frameCount {
                    let x = src[i]
                    peakHere = max(peakHere, abs(x))
                    let v = (Double(x) * 32768).rounded()
                    if v > 32767 || v < -32768 { clipped += 1 }
                    scratchShort[i * ch + c] = Int16(min(max(v, -32768), 32767))
                }
            }
            written = scratchShort.withUnsafeBufferPointer { Int(sf_writef_short(handle, $0.baseAddress, sf_count_t(frameCount))) }
        case .s24?, .s32?:
            let scale = stored == .s24 ? 8_388_608.0 : 2_147_483_648.0
            let shift: Int32 = stored == .s24 ? 8 : 0
            if scratchInt.count < total { scratchInt = [Int32](repeating: 0, count: total) }
            for c in 0..<ch {
                let src = buffer.channel(c)
                for i in 0..<frameCount {
                    let x = src[i]
                    peakHere = max(peakHere, abs(x))
                    let v = (Double(x) * scale).rounded()
                    if v > scale - 1 || v < -scale { clipped += 1 }
                    scratchInt[i * ch + c] = Int32(min(max(v, -scale), scale - 1)) << shift
                }
            }
            written = scratchInt.withUnsafeBufferPointer { Int(sf_writef_int(handle, $0.baseAddress, sf_count_t(frameCount))) }
        case .f32?, nil:
            if scratchFloat.count < total { scratchFloat = [Float](repeating: 0, count: total) }
            for c in 0..<ch {
                let src = buffer.channel(c)
                for i in 0..<frameCount {
                    let x = src[i]
                    peakHere = max(peakHere, abs(x))
                    if abs(x) > 1 { clipped += 1 }
                    scratchFloat[i * ch + c] = x
                }
            }
            written = scratchFloat.withUnsafeBufferPointer { Int(sf_writef_float(handle, $0.baseAddress, sf_count_t(frameCount))) }
        }
        peak = peakHere
        clippedSamples += clipped
        if written != frameCount {
            throw .writeFailed(path: path, reason: String(cString: sf_strerror(handle)))
        }
    }

    /// Finishes the file (headers, encoder flush).
    public func close() throws(SoundFileError) {
        guard let h = handle else { return }
        handle = nil
        if sf_close(h) != 0 { throw .writeFailed(path: path, reason: "closing failed") }
    }
}
