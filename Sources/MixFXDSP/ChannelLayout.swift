/// A loudspeaker position (or ambisonic component) a channel of a source feeds, with WAV's
/// names (WAVEFORMATEXTENSIBLE's channel mask, which libsndfile reports as a channel map).
public enum Speaker: String, Sendable, CaseIterable {
    case frontLeft = "FL", frontRight = "FR", frontCenter = "FC", lfe = "LFE"
    case backLeft = "BL", backRight = "BR", backCenter = "BC"
    case sideLeft = "SL", sideRight = "SR"
    case frontLeftOfCenter = "FLC", frontRightOfCenter = "FRC"
    case topCenter = "TC", topFrontLeft = "TFL", topFrontCenter = "TFC", topFrontRight = "TFR"
    case topBackLeft = "TBL", topBackCenter = "TBC", topBackRight = "TBR"
    /// First-order ambisonic B-format components (FuMa: W carries −3 dB).
    case ambisonicW = "W", ambisonicX = "X", ambisonicY = "Y", ambisonicZ = "Z"
    /// A channel the file labels but not with a position (libsndfile's MONO, or a map entry it
    /// does not name).
    case unlabelled = "?"
}

/// What each channel of a source is: its speakers in channel order, and whether the file said
/// so or the order was assumed from the channel count.
public struct ChannelLayout: Sendable, Equatable {
    /// One speaker per channel, in channel order.
    public let speakers: [Speaker]
    /// True when the file declared the layout (a WAV channel mask, a CAF layout); false when it
    /// is the usual order for the channel count (`usual`).
    public let isDeclared: Bool

    /// A layout of `speakers`.
    public init(_ speakers: [Speaker], declared: Bool) {
        self.speakers = speakers
        isDeclared = declared
    }

    /// The usual order for a channel count, as WAV and FLAC define it for files without a mask:
    /// 1 mono (taken as centre), 2 stereo, 3 = 3.0 (FL FR FC), 4 = quad (FL FR BL BR), 5 = 5.0
    /// (FL FR FC BL BR), 6 = 5.1 (FL FR FC LFE BL BR), 7 = 6.1 (FL FR FC LFE BC SL SR), 8 = 7.1
    /// (FL FR FC LFE BL BR SL SR).
    public static func usual(channelCount: Int) -> ChannelLayout {
        let s: [Speaker] = switch channelCount {
        case 1: [.frontCenter]
        case 2: [.frontLeft, .frontRight]
        case 3: [.frontLeft, .frontRight, .frontCenter]
        case 4: [.frontLeft, .frontRight, .backLeft, .backRight]
        case 5: [.frontLeft, .frontRight, .frontCenter, .backLeft, .backRight]
        case 6: [.frontLeft, .frontRight, .frontCenter, .lfe, .backLeft, .backRight]
        case 7: [.frontLeft, .frontRight, .frontCenter, .lfe, .backCenter, .sideLeft, .sideRight]
        case 8: [.frontLeft, .frontRight, .frontCenter, .lfe, .backLeft, .backRight, .sideLeft, .sideRight]
        default: [Speaker](repeating: .unlabelled, count: max(0, channelCount))
        }
        return ChannelLayout(s, declared: false)
    }

    /// The usual name of the layout ("5.1", "quad", ...), else its speakers ("FL FR FC TC").
    public var name: String {
        let known: [(String, [Speaker])] = [
            ("mono", [.frontCenter]), ("stereo", [.frontLeft, .frontRight]),
            ("3.0", [.frontLeft, .frontRight, .frontCenter]), ("quad", [.frontLeft, .frontRight, .backLeft, .backRight]),
            ("quad (side)", [.frontLeft, .frontRight, .sideLeft, .sideRight]),
            ("5.0", [.frontLeft, .frontRight, .frontCenter, .backLeft, .backRight]),
            ("5.0 (side)", [.frontLeft, .frontRight, .frontCenter, .sideLeft, .sideRight]),
            ("5.1", [.frontLeft, .frontRight, .frontCenter, .lfe, .backLeft, .backRight]),
            ("5.1 (side)", [.frontLeft, .frontRight, .frontCenter, .lfe, .sideLeft, .sideRight]),
            ("6.1", [.frontLeft, .frontRight, .frontCenter, .lfe, .backCenter, .sideLeft, .sideRight]),
            ("7.1", [.frontLeft, .frontRight, .frontCenter, .lfe, .backLeft, .backRight, .sideLeft, .sideRight]),
            ("ambisonic B-format", [.ambisonicW, .ambisonicX, .ambisonicY, .ambisonicZ]),
        ]
        return known.first { $0.1 == speakers }?.0 ?? speakerList
    }

    /// The speakers in order ("FL FR FC LFE BL BR").
    public var speakerList: String { speakers.map(\.rawValue).joined(separator: " ") }
}
