/// What a processor is prepared for. A *frame* is one instant across all channels; a *sample* is
/// one channel's value at one instant.
public struct ProcessSpec: Sendable, Equatable {
    /// Frames per second.
    public var sampleRate: Double
    /// The largest `frameCount` any later `process` call will pass.
    public var maximumFrameCount: Int
    /// Channels per frame (1 or 2 in mixfx).
    public var channelCount: Int

    /// A spec for `prepare`.
    public init(sampleRate: Double, maximumFrameCount: Int, channelCount: Int) {
        self.sampleRate = sampleRate
        self.maximumFrameCount = maximumFrameCount
        self.channelCount = channelCount
    }
}
