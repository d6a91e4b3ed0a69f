#if canImport(Glibc)
import Glibc
#endif
import MixFXDSP

/// Where a track's source sits in the mix (AVAudioPlayerNode's `scheduleFile(_:at:)` and
/// `scheduleSegment`): a segment of the file, faded in and out, starting some seconds into the
/// mix. All times are seconds; `PlayerNode.placement` holds them as parameters.
///
/// In frames at the source's rate R: the segment is [in, out) with in = round(trimIn·R) and
/// out = round(trimOut·R) (trimOut 0: the end of the file); it is preceded by round(start·R)
/// frames of silence. Fades are applied to the segment in its own time (after the trim, before
/// any effect), with equal-power curves over F = round(fade·R) frames: at segment frame k of
/// n, the fade-in gain is sin(π/2 · k/F) for k < F and the fade-out gain sin(π/2 · (n − k)/F)
/// for k ≥ n − F, so the curves start and end at silence, and a fade-out mirrors a fade-in.
public struct Placement: Sendable, Equatable {
    /// Silence before the segment, seconds of the mix.
    public var startSeconds = 0.0
    /// Where the segment starts in the file, seconds.
    public var trimInSeconds = 0.0
    /// Where the segment ends in the file, seconds; 0: at the end of the file.
    public var trimOutSeconds = 0.0
    /// Equal-power fade at the segment's start, seconds.
    public var fadeInSeconds = 0.0
    /// Equal-power fade at the segment's end, seconds.
    public var fadeOutSeconds = 0.0

    /// The whole file from the start of the mix, no fades.
    public init(startSeconds: Double = 0, trimInSeconds: Double = 0, trimOutSeconds: Double = 0,
                fadeInSeconds: Double = 0, fadeOutSeconds: Double = 0) {
        self.startSeconds = startSeconds
        self.trimInSeconds = trimInSeconds
        self.trimOutSeconds = trimOutSeconds
        self.fadeInSeconds = fadeInSeconds
        self.fadeOutSeconds = fadeOutSeconds
    }

    /// True when the source plays as it is.
    public var isNeutral: Bool { self == Placement() }

    /// The placement in frames of a source of `frameCount` frames at `sampleRate`, played at
    /// `speed` (the silence is in the mix's time: round(start·R·speed) frames of the source, which
    /// the resampler makes `start` seconds).
    public func frames(sampleRate: Int, frameCount: Int, speed: Double = 1) -> PlacementFrames {
        let r = Double(sampleRate)
        func f(_ s: Double) -> Int { Int((s * r).rounded()) }
        let inFrame = min(f(trimInSeconds), frameCount)
        let outFrame = trimOutSeconds == 0 ? frameCount : min(f(trimOutSeconds), frameCount)
        let length = max(0, outFrame - inFrame)
        return PlacementFrames(silence: Int((startSeconds * r * speed).rounded()), trimIn: inFrame, length: length,
                               fadeIn: min(f(fadeInSeconds), length), fadeOut: min(f(fadeOutSeconds), length))
    }

    /// What is wrong with this placement of a source of `frameCount` frames at `sampleRate`
    /// ("trim-in 90 s is at or past the end of the file (60 s)"), nil when nothing.
    public func problem(sampleRate: Int, frameCount: Int) -> String? {
        let fileSeconds = Double(frameCount) / Double(sampleRate)
        if trimOutSeconds != 0 && trimOutSeconds <= trimInSeconds {
            return "trim \(format(trimInSeconds))..\(format(trimOutSeconds)) s: the end is not after the start"
        }
        if frameCount > 0 && Int((trimInSeconds * Double(sampleRate)).rounded()) >= frameCount {
            return "trim-in \(format(trimInSeconds)) s is at or past the end of the file (\(format(fileSeconds)) s)"
        }
        return nil
    }
}

/// A placement in frames at the source's rate (`Placement.frames`).
public struct PlacementFrames: Sendable, Equatable {
    /// Silence before the segment.
    public let silence: Int
    /// The segment's first frame in the file.
    public let trimIn: Int
    /// The segment's length.
    public let length: Int
    /// Fade lengths, at most the segment's.
    public let fadeIn: Int, fadeOut: Int

    /// Frames of the placed source: the silence, then the segment.
    public var total: Int { silence + length }

    /// The gain at segment frame `k` (0 ≤ k < length): the product of the two fades.
    @inline(__always)
    public func gain(atSegmentFrame k: Int) -> Float {
        var g = 1.0
        if k < fadeIn { g *= sin(Double.pi / 2 * Double(k) / Double(fadeIn)) }
        if k >= length - fadeOut { g *= sin(Double.pi / 2 * Double(length - k) / Double(fadeOut)) }
        return Float(g)
    }
}

/// A source that applies a placement where it reads, below anything that reads ahead of the
/// render thread: `StreamingSource` takes the placement into its feeder, so seeking and looping
/// see the placed track.
public protocol PlacingSource: AudioSource {
    /// The format before any placement (what the placement's seconds are measured on).
    var unplacedFormat: SourceFormat { get }
    /// Reads `placement` (for a track played at `speed`) from now on (control side, while
    /// nothing reads the source).
    func place(_ placement: Placement, speed: Double)
}

/// A source as a placement puts it in the mix (see `Placement`): silence, then the trimmed
/// segment with its fades, then the end. The gains are computed per frame as the samples are
/// read (no table, nothing allocated after `init`).
/// `@unchecked Sendable`: one thread at a time reads it (the track that owns it).
public final class PlacedSource: AudioSource, @unchecked Sendable {
    /// The source placed.
    public let source: any AudioSource
    /// The placement in frames.
    public let frames: PlacementFrames
    /// The placed source's format: the source's, `frames.total` long.
    public let format: SourceFormat
    private var position = 0   // frame of the placed source read next

    /// `source` as `placement` puts it, for a track played at `speed` (control side).
    public init(_ source: any AudioSource, placement: Placement, speed: Double = 1) {
        self.source = source
        let f = source.format
        frames = placement.frames(sampleRate: f.sampleRate, frameCount: f.frameCount, speed: speed)
        format = SourceFormat(sampleRate: f.sampleRate, channelCount: f.channelCount, frameCount: frames.total,
                              bitsPerSample: f.bitsPerSample, channelLayout: f.channelLayout)
    }

    /// The source's name.
    public var name: String { source.name }

    /// Reads the next frames: silence before the segment, the segment with its fades, 0 at the end.
    public func read(into buffer: AudioBuffer, offset: Int, frameCount: Int) throws -> Int {
        var done = 0
        while done < frameCount && position < frames.total {
            if position < frames.silence {
                let n = min(frameCount - done, frames.silence - position)
                for c in 0..<buffer.channelCount { (buffer.channel(c) + offset + done).update(repeating: 0, count: n) }
                position += n; done += n
                if position == frames.silence { try source.seek(toFrame: frames.trimIn) }
                continue
            }
            let k0 = position - frames.silence
            let want = min(frameCount - done, frames.length - k0)
            let n = try source.read(into: buffer, offset: offset + done, frameCount: want)
            if n == 0 { break }   // the file was shorter than its header said
            if k0 < frames.fadeIn || k0 + n > frames.length - frames.fadeOut {
                for k in 0..<n {
                    let g = frames.gain(atSegmentFrame: k0 + k)
                    if g != 1 { for c in 0..<buffer.channelCount { buffer.channel(c)[offset + done + k] *= g } }
                }
            }
            position += n; done += n
        }
        return done
    }

    /// Moves to frame `frame` of the placed source.
    public func seek(toFrame frame: Int) throws {
        position = min(max(0, frame), frames.total)
        try source.seek(toFrame: frames.trimIn + max(0, position - frames.silence))
    }
}
