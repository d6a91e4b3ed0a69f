import MixFX
#if canImport(Glibc)
import Glibc
#endif

/// The time-pitch processor's input waiting to be taken: planar, contiguous (a pull is handed
/// one pointer per channel), of a capacity fixed at creation. Appending moves what is unread to
/// the front when the tail lacks room; nothing allocates after `init`. One thread at a time.
final class InputQueue {
    let channelCount: Int
    let capacityFrames: Int
    private let buffer: AudioBuffer
    /// Unread frames are `start..<end` of each channel.
    private var start = 0, end = 0

    init(channelCount: Int, capacityFrames: Int) {
        self.channelCount = channelCount
        self.capacityFrames = capacityFrames
        buffer = AudioBuffer(channelCount: channelCount, capacityFrames: capacityFrames)
    }

    /// Frames waiting.
    var count: Int { end - start }
    /// Frames that could still be appended.
    var room: Int { capacityFrames - count }

    func clear() { start = 0; end = 0 }

    /// Appends `frameCount` frames: from `input` (one pointer per channel), or zeros when nil.
    /// At most `room`.
    func append(_ input: UnsafePointer<UnsafePointer<Float>?>?, frameCount: Int) {
        precondition(frameCount <= room)
        if end + frameCount > capacityFrames {
            for c in 0..<channelCount {
                let ch = buffer.channel(c)
                memmove(ch, ch + start, (end - start) * MemoryLayout<Float>.stride)
            }
            end -= start
            start = 0
        }
        for c in 0..<channelCount {
            let to = buffer.channel(c) + end
            if let source = input?[c] {
                to.update(from: source, count: frameCount)
                // (a NaN or ∞ would stay in the shifter's state for good)
                _ = SampleGuard.sanitize(to, count: frameCount)
            } else {
                to.update(repeating: 0, count: frameCount)
            }
        }
        end += frameCount
    }

    /// Takes the next `frameCount` frames (at most `count`): where they are, valid until the
    /// next append.
    func take(_ frameCount: Int) -> (UnsafePointer<Float>, UnsafePointer<Float>?) {
        precondition(frameCount <= count)
        let left = UnsafePointer(buffer.channel(0) + start)
        let right = channelCount > 1 ? UnsafePointer(buffer.channel(1) + start) : nil
        start += frameCount
        return (left, right)
    }
}
