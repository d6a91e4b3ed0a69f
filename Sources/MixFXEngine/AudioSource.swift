import MixFXDSP

/// The format of a source of audio frames.
public struct SourceFormat: Sendable, Equatable {
    /// Frames per second.
    public var sampleRate: Int
    /// Channels per frame.
    public var channelCount: Int
    /// Frames in the whole source.
    public var frameCount: Int
    /// Bits of precision per sample (16, 24, 32; 32 for float), used to pick a default output format.
    public var bitsPerSample: Int
    /// What each channel is: declared by the file, else the usual order for the count.
    public var channelLayout: ChannelLayout
    /// The longest source an engine takes, frames (2^40: 265 days at 48 kHz).
    public static let maximumFrameCount = 1 << 40
    /// The most channels a source may have (7.1).
    public static let maximumChannelCount = 8

    /// A format description; `channelLayout` nil: the usual order for `channelCount`.
    public init(sampleRate: Int, channelCount: Int, frameCount: Int, bitsPerSample: Int = 32,
                channelLayout: ChannelLayout? = nil) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.frameCount = frameCount
        self.bitsPerSample = bitsPerSample
        self.channelLayout = channelLayout ?? .usual(channelCount: channelCount)
    }
}

/// Something a player node reads frames from: a sound file (see `MixFXIO.SoundFileReader`) or
/// memory. Read on the thread that renders.
public protocol AudioSource: AnyObject, Sendable {
    var format: SourceFormat { get }
    /// A name for messages (the file path).
    var name: String { get }
    /// Reads up to `frameCount` frames into `buffer` (planar, `format.channelCount` channels)
    /// at `offset`; returns the frames read, 0 at the end.
    func read(into buffer: AudioBuffer, offset: Int, frameCount: Int) throws -> Int
    /// Moves the read position to `frame`.
    func seek(toFrame frame: Int) throws
}

/// A source holding planar samples in memory (tests, generated signals, embedders).
/// `@unchecked Sendable`: one thread at a time reads it (the track that owns it).
public final class MemorySource: AudioSource, @unchecked Sendable {
    /// The format of the channels given at `init`.
    public let format: SourceFormat
    /// A name for messages.
    public let name: String
    private let channels: [[Float]]
    private var position = 0

    /// A source over `channels` (equal lengths) at `sampleRate`; `layout` nil: the usual order
    /// for the channel count.
    public init(channels: [[Float]], sampleRate: Int, name: String = "memory", layout: ChannelLayout? = nil) {
        precondition(!channels.isEmpty && channels.allSatisfy { $0.count == channels[0].count })
        precondition(layout.map { $0.speakers.count == channels.count } ?? true)
        self.channels = channels
        self.name = name
        format = SourceFormat(sampleRate: sampleRate, channelCount: channels.count, frameCount: channels[0].count,
                              channelLayout: layout)
    }

    /// Copies the next frames (see `AudioSource.read`). The rendering thread.
    public func read(into buffer: AudioBuffer, offset: Int, frameCount: Int) throws -> Int {
        let n = min(frameCount, format.frameCount - position)
        guard n > 0 else { return 0 }
        for c in 0..<format.channelCount {
            channels[c].withUnsafeBufferPointer { src in
                (buffer.channel(c) + offset).update(from: src.baseAddress! + position, count: n)
            }
        }
        position += n
        return n
    }

    /// Moves the read position (clamped). The rendering thread, or control side while not rendering.
    public func seek(toFrame frame: Int) throws { position = min(max(0, frame), format.frameCount) }
}
