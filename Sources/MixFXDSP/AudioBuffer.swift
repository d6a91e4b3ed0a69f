/// Planar (one array per channel) `Float` audio owned by this object. Allocates only in `init`.
///
/// The render path reads and writes through `channel(_:)` pointers; nothing here allocates after
/// construction.
/// `@unchecked Sendable`: one thread at a time writes it; a buffer handed to another thread is
/// handed over by a lock or a release/acquire pair (`TrackPipeline`).
public final class AudioBuffer: @unchecked Sendable {
    /// Channels held.
    public let channelCount: Int
    /// Frames each channel holds.
    public let capacityFrames: Int
    private let storage: UnsafeMutablePointer<Float>

    /// Allocates `channelCount` zeroed channels of `capacityFrames` frames (control side).
    public init(channelCount: Int, capacityFrames: Int) {
        precondition(channelCount > 0 && capacityFrames >= 0)
        self.channelCount = channelCount
        self.capacityFrames = capacityFrames
        storage = .allocate(capacity: max(1, channelCount * capacityFrames))
        storage.initialize(repeating: 0, count: max(1, channelCount * capacityFrames))
    }

    deinit { storage.deallocate() }

    /// The first sample of channel `index`; `capacityFrames` samples follow.
    @inline(__always) @_noAllocation @_noLocks
    public func channel(_ index: Int) -> UnsafeMutablePointer<Float> {
        storage + index * capacityFrames
    }

    /// The channels as a value that holds no reference to the buffer: what a closure on the
    /// render path captures (capturing the buffer itself retains and releases it).
    public var planes: Planes {
        @inline(__always) @_noAllocation @_noLocks
        get { Planes(base: storage, stride: capacityFrames) }
    }

    /// Where each channel of an `AudioBuffer` starts (see `planes`).
    public struct Planes {
        let base: UnsafeMutablePointer<Float>
        let stride: Int
        /// The first sample of channel `index` (as `AudioBuffer.channel`).
        @inline(__always) @_noAllocation @_noLocks
        public subscript(_ index: Int) -> UnsafeMutablePointer<Float> { base + index * stride }
    }

    /// Sets `frameCount` frames of every channel to zero.
    @_noAllocation @_noLocks
    public func clear(frameCount: Int) {
        for c in 0..<channelCount { channel(c).update(repeating: 0, count: frameCount) }
    }

    /// Multiplies `frameCount` frames of every channel by `gain` (one rounding per sample; a
    /// gain of exactly 1 leaves them untouched). The one gain loop of the output stage and the
    /// conversions.
    @_noAllocation @_noLocks
    public func scale(frameCount: Int, by gain: Float) {
        guard gain != 1 else { return }
        for c in 0..<channelCount {
            let p = channel(c)
            for i in 0..<frameCount { p[i] *= gain }
        }
    }
}
