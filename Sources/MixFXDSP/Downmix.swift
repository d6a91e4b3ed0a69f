#if canImport(Glibc)
import Glibc
#endif

/// Mixes a source of any layout down to the mix's one or two channels, before the track's
/// effects (so the EQ and the shifter see at most two), with ITU-R BS.775's coefficients:
///
///     stereo:  L' = FL + 0.7071·FC + 0.7071·(BL or SL) [+ g·LFE]
///              R' = FR + 0.7071·FC + 0.7071·(BR or SR) [+ g·LFE]
///     mono:    M  = 0.7071·(L' + R')
///                 = 0.7071·FL + 0.7071·FR + FC + 0.5·BL + 0.5·BR ...   (BS.775's mono row)
///
/// and, for what BS.775 does not list, the same rule of equal power: a back or top centre
/// channel goes 0.5 to each side (the power of one side channel), a left or right of centre is
/// panned halfway between its side and the centre (the mixer's constant-power law: 0.9239 / 0.3827), a top channel
/// feeds its horizontal counterpart at 0.7071, and an unlabelled channel is taken as a centre.
/// The LFE is dropped unless a gain g is given (`lfeGainDB`). First-order ambisonic B-format
/// (FuMa, W at −3 dB) is decoded to two virtual cardioids at ±90°: L' = 0.7071·W + 0.5·Y,
/// R' = 0.7071·W − 0.5·Y (X and Z, front-back and height, do not reach a stereo pair).
///
/// A stereo source into a stereo mix and a mono source into any mix are not downmixed (`isIdentity`).
/// Made on the control side; `process` does not allocate.
public struct Downmix: Sendable {
    /// Channels in, channels out.
    public let inputCount: Int, outputCount: Int
    /// gains[o · inputCount + i]: how much of input channel i goes to output channel o.
    public let gains: [Float]

    /// √½, the −3 dB of BS.775.
    static let minus3dB: Float = 0.70710677

    /// The matrix from `layout` to `outputChannels` (1 or 2); `lfeGainDB` nil drops the LFE.
    public init(layout: ChannelLayout, outputChannels: Int, lfeGainDB: Double? = nil) {
        precondition(outputChannels == 1 || outputChannels == 2)
        let inputs = layout.speakers.count
        inputCount = inputs
        outputCount = outputChannels
        let lfe = lfeGainDB.map { Float(pow(10, $0 / 20)) } ?? 0
        // the stereo rows, then the mono row from them (BS.775's mono row is √½ of their sum)
        var left = [Float](repeating: 0, count: inputs), right = left
        let h = Downmix.minus3dB
        for (i, s) in layout.speakers.enumerated() {
            let (l, r): (Float, Float) = switch s {
            case .frontLeft: (1, 0)
            case .frontRight: (0, 1)
            case .frontCenter, .unlabelled: (h, h)
            case .lfe: (lfe, lfe)
            case .backLeft, .sideLeft: (h, 0)
            case .backRight, .sideRight: (0, h)
            case .backCenter, .topCenter, .topBackCenter: (0.5, 0.5)
            case .frontLeftOfCenter: (0.92387953, 0.38268343)     // pan −½: cos, sin of π/8
            case .frontRightOfCenter: (0.38268343, 0.92387953)
            case .topFrontLeft, .topBackLeft: (h, 0)
            case .topFrontRight, .topBackRight: (0, h)
            case .topFrontCenter: (0.5, 0.5)
            case .ambisonicW: (h, h)
            case .ambisonicY: (0.5, -0.5)
            case .ambisonicX, .ambisonicZ: (0, 0)
            }
            left[i] = l; right[i] = r
        }
        if layout.speakers == [.frontLeft, .frontRight] { left = [1, 0]; right = [0, 1] }
        gains = outputChannels == 2 ? left + right : zip(left, right).map { h * ($0 + $1) }
    }

    /// True when the output is the input (stereo into stereo, mono into anything).
    public var isIdentity: Bool {
        inputCount == outputCount && (inputCount == 1 || gains == [1, 0, 0, 1])
    }

    /// Writes `frameCount` frames: output channel o at `output(o)`, from input channel i at
    /// `input(i)`. The output may not alias the input. Does not allocate.
    @inline(__always)
    public func process(input: (Int) -> UnsafePointer<Float>, output: (Int) -> UnsafeMutablePointer<Float>, frameCount: Int) {
        for o in 0..<outputCount {
            let out = output(o)
            out.update(repeating: 0, count: frameCount)
            for i in 0..<inputCount {
                let g = gains[o * inputCount + i]
                guard g != 0 else { continue }
                let x = input(i)
                for k in 0..<frameCount { out[k] += g * x[k] }
            }
        }
    }
}
