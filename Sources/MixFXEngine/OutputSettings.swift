// The output settings' types: presets (MixFXPresets) hold them typed, the renderer (MixFXIO)
// applies them, and the session-option registry (`SessionOption`) lists their values. They
// were in MixFXIO; `import MixFX` sees them as before.

/// Sample encoding of an output file.
public enum SampleFormat: String, CaseIterable, Sendable {
    case s16, s24, s32, f32

    /// Bits per sample stored.
    public var bits: Int {
        switch self { case .s16: 16; case .s24: 24; case .s32: 32; case .f32: 32 }
    }

    /// True for s16, s24, s32.
    public var isInteger: Bool { self != .f32 }

    /// The default for inputs of the given precision: the most precise input, at least 16-bit.
    public static func matching(bitsPerSample: Int) -> SampleFormat {
        switch bitsPerSample {
        case ...16: .s16
        case 17...24: .s24
        case 25...32: .s32
        default: .f32
        }
    }
}

/// When offline rendering dithers integer output.
public enum DitherMode: String, Sendable, CaseIterable {
    /// TPDF on output of 16 bits or fewer whenever converting would round a sample (a gain, EQ,
    /// pitch, resampling, a deeper source); none when every sample of the mix is already a
    /// value of the format (a pass-through, a plain sum of 16-bit tracks), so those stay
    /// bit-exact. Never on 24-bit, 32-bit or float output, whose rounding error lies below
    /// any converter's noise.
    case auto
    /// TPDF on any integer output.
    case tpdf
    /// Plain rounding.
    case none
}

/// What an offline render does when integer or lossy output would clip (samples beyond full
/// scale; a lossy encoding's decoders give fixed-point samples). Float output is never changed: it
/// holds such samples as they are.
public enum ClipPolicy: String, Sendable, CaseIterable {
    /// The default: when (and only when) the mix exceeds full scale, one linear gain for the whole
    /// mix brings its true peak to `SessionOption.safeCeilingDBTP`; nothing is clamped and the
    /// gain is reported. A mix within full scale is written untouched.
    case avoid
    /// Samples beyond full scale are clamped (never wrapped) and counted; a lossy encoder gets
    /// them as they are (its decoders clip them).
    case clamp
    /// Any sample beyond full scale is an error and nothing is written.
    case fail
}
