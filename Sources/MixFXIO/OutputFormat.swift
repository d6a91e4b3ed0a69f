import CSndFile
import MixFXEngine

/// A container chosen from the output file's extension (or named: `OfflineRenderer.container`).
/// `ogg` holds Vorbis, `opus` Opus in Ogg, `mp3` MPEG-1/2 Layer III (through the system
/// libsndfile's LAME; Debian's 1.1 and later has it).
public enum Container: String, CaseIterable, Sendable {
    case wav, flac, ogg, aiff, caf, w64, au, rf64, mp3, opus

    /// Extensions recognised for each container.
    public static func from(path: String) -> Container? {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return nil }
        switch path[path.index(after: dot)...].lowercased() {
        case "wav", "wave": return .wav
        case "flac": return .flac
        case "ogg", "oga": return .ogg
        case "aif", "aiff", "aifc": return .aiff
        case "caf": return .caf
        case "w64": return .w64
        case "au", "snd": return .au
        case "rf64": return .rf64
        case "mp3": return .mp3
        case "opus": return .opus
        default: return nil
        }
    }

    /// The recognised extensions, for messages.
    public static var extensionsText: String { "wav, flac, ogg, aiff, caf, w64, au, rf64, mp3, opus" }

    /// The container named `name` (`--type`): a case's name or any of its extensions.
    public static func named(_ name: String) -> Container? { from(path: "." + name) }

    /// Whether the container is a lossy encoding (it stores no sample format).
    public var isLossy: Bool { sampleFormats == nil }

    /// Sample formats the container can hold; nil = lossy (floats are encoded, no sample format).
    public var sampleFormats: [SampleFormat]? {
        switch self {
        case .flac: [.s16, .s24]
        case .ogg, .mp3, .opus: nil
        default: SampleFormat.allCases
        }
    }

    /// Why the container cannot hold audio at `rateHz` (one of `AudioEngine.outputSampleRateRange`),
    /// nil when it can. libsndfile's encoders set the limits: libvorbis has encoder settings up to
    /// 200 kHz; FLAC's streamable subset, which libFLAC writes, codes a rate from 65536 Hz up
    /// in its frame headers only as tens of Hz. The other containers store any rate as a number.
    /// `name` names the rate's setting (given `sampleRateHz`): the CLI passes its flags.
    public func sampleRateProblem(_ rateHz: Int, naming name: (String) -> String = { $0 }) -> String? {
        let rate = name(SessionOption.sampleRateHz.spec.setting())
        let any = "any rate from \(AudioEngine.outputSampleRateRange.lowerBound) to \(AudioEngine.outputSampleRateRange.upperBound) Hz"
        let lossless = "write .flac, .wav, .caf, .w64, .aiff, .au or .rf64, which hold \(any)"
        switch self {
        case .mp3 where !Container.mp3Rates.contains(rateHz):
            return "MP3 holds the sample rates \(Container.mp3Rates.map(String.init).joined(separator: ", ")) Hz, not \(rateHz) Hz (give \(rate) one of them, or \(lossless))"
        case .opus where !Container.opusRates.contains(rateHz):
            return "Opus holds the sample rates \(Container.opusRates.map(String.init).joined(separator: ", ")) Hz, not \(rateHz) Hz (give \(rate) 48000, or \(lossless))"
        case .ogg where rateHz > 200_000:
            return "Ogg/Vorbis holds sample rates up to 200000 Hz, not \(rateHz) Hz (give \(rate) up to 200000, or write .flac, .wav, .caf, .w64, .aiff, .au or .rf64, which hold \(any); FLAC from 65536 Hz on in steps of 10 Hz)"
        case .flac where rateHz >= 65_536 && rateHz % 10 != 0:
            return "FLAC holds sample rates below 65536 Hz, or multiples of 10 Hz above, not \(rateHz) Hz (give \(rate) \(rateHz / 10 * 10) or \(rateHz / 10 * 10 + 10), or write .wav, .caf, .w64, .aiff, .au or .rf64, which hold \(any); Ogg/Vorbis up to 200000 Hz)"
        default:
            return nil
        }
    }

    /// The rates MPEG-1, 2 and 2.5 Layer III code.
    static let mp3Rates = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000]
    /// The rates Opus codes.
    static let opusRates = [8000, 12000, 16000, 24000, 48000]

    /// Whether the file is an Ogg stream (whose serial `OggStreamSerial` makes reproducible).
    var isOgg: Bool { self == .ogg || self == .opus }

    /// The most audio data the container's header can describe, bytes; nil when it is not a
    /// practical limit (64-bit sizes, or a stream format).
    public var maximumDataBytes: Int? {
        switch self {
        // 32-bit RIFF/AU sizes, less room for the header and chunks before the data
        case .wav, .au: (1 << 32) - (1 << 20)
        // AIFF's chunk sizes are signed 32-bit
        case .aiff: (1 << 31) - (1 << 20)
        case .flac, .ogg, .caf, .w64, .rf64, .mp3, .opus: nil
        }
    }

    /// The limit in words, for messages.
    var maximumDataText: String {
        switch self {
        case .aiff: "2 GiB of audio data"
        default: "4 GiB of audio data"
        }
    }

    var major: Int32 {
        switch self {
        case .wav: Int32(SF_FORMAT_WAV)
        case .flac: Int32(SF_FORMAT_FLAC)
        case .ogg: Int32(SF_FORMAT_OGG)
        case .aiff: Int32(SF_FORMAT_AIFF)
        case .caf: Int32(SF_FORMAT_CAF)
        case .w64: Int32(SF_FORMAT_W64)
        case .au: Int32(SF_FORMAT_AU)
        case .rf64: Int32(SF_FORMAT_RF64)
        case .mp3: Int32(SF_FORMAT_MPEG)
        case .opus: Int32(SF_FORMAT_OGG)
        }
    }
}

/// Everything about the file an offline render writes.
public struct OutputFormat: Sendable, Equatable {
    /// File type.
    public var container: Container
    /// Sample encoding (ignored by lossy containers).
    public var sampleFormat: SampleFormat
    /// Frames per second.
    public var sampleRate: Int
    /// Channels per frame.
    public var channelCount: Int

    /// A complete output format.
    public init(container: Container, sampleFormat: SampleFormat, sampleRate: Int, channelCount: Int) {
        self.container = container
        self.sampleFormat = sampleFormat
        self.sampleRate = sampleRate
        self.channelCount = channelCount
    }

    /// The sample format actually stored (lossy containers store none).
    public var storedSampleFormat: SampleFormat? {
        container.sampleFormats == nil ? nil : sampleFormat
    }

    var sndfileFormat: Int32 {
        switch container {
        case .ogg: return container.major | Int32(SF_FORMAT_VORBIS)
        case .opus: return container.major | Int32(SF_FORMAT_OPUS)
        case .mp3: return container.major | Int32(SF_FORMAT_MPEG_LAYER_III)
        default: break
        }
        let sub: Int32 = switch sampleFormat {
        case .s16: Int32(SF_FORMAT_PCM_16)
        case .s24: Int32(SF_FORMAT_PCM_24)
        case .s32: Int32(SF_FORMAT_PCM_32)
        case .f32: Int32(SF_FORMAT_FLOAT)
        }
        return container.major | sub
    }
}
