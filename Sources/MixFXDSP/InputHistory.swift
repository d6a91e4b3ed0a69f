/// The shifter's input by input time, in a ring with a mirrored head: sample i of channel c is
/// kept at slot i mod capacity, and the first `slack` slots again after the last, so any span of
/// up to `slack` samples is contiguous (a whole second copy, as this was, doubled the memory).
/// The vocoder's analysis windows, the live dry path and the transient splice read it; the
/// slack covers a window (N), so no read is ever copied out of the ring. (With a slack of the
/// widest table's taps, every window that wrapped the ring was copied first: 1.5 % of
/// the band's CPU in `memmove`, for 16 KB a channel less.)
///
/// Made by `PitchShifter.prepare` (control side; all memory allocated then); `reset`, `write` and
/// the reads on the render side. One thread at a time.
final class InputHistory {
    /// Slots per copy, a power of two.
    let capacity: Int
    let mask: Int
    /// Floats from one channel's ring to the next: the ring plus the `slack` mirrored slots.
    let stride: Int
    /// Slots mirrored after the ring: the longest contiguous read.
    let slack: Int
    let channelCount: Int
    /// Channel 0's ring; channel c's starts `c · stride` later.
    let base: UnsafeMutablePointer<Float>

    /// A ring holding at least `frames` frames, contiguous for reads of up to `slack` samples
    /// (plus 8, for eight-lane loads that reach past a table's taps).
    init(channelCount: Int, frames: Int, slack: Int) {
        self.channelCount = channelCount
        capacity = powerOfTwo(atLeast: frames)
        mask = capacity - 1
        self.slack = min(slack + 8, capacity)
        stride = capacity + self.slack
        base = .allocate(capacity: channelCount * stride)
        reset()
    }

    deinit { base.deallocate() }

    /// Silence everywhere.
    @_noLocks
    func reset() { base.update(repeating: 0, count: channelCount * stride) }

    /// Keeps `frameCount` frames (`right` for channel 1; nil: `left` again) as input times
    /// `time`, `time + 1`, ...
    @inline(__always)
    @_noLocks
    func write(left: UnsafePointer<Float>, right: UnsafePointer<Float>?, frameCount: Int, at time: Int) {
        for c in 0..<channelCount {
            let src = c == 0 ? left : (right ?? left)
            let ring = base + c * stride
            var done = 0
            while done < frameCount {   // in at most two runs of the ring
                let slot = (time + done) & mask
                let n = min(frameCount - done, capacity - slot)
                vcopy(src + done, into: ring + slot, n)
                if slot < slack {   // the head again, after the ring
                    vcopy(src + done, into: ring + capacity + slot, min(n, slack - slot))
                }
                done += n
            }
        }
    }
}

extension InputHistory {
    /// The ring as values, for a part that reads it from a closure (see `Owned`).
    struct View {
        let base: UnsafeMutablePointer<Float>, stride: Int, mask: Int
    }
    var view: View { View(base: base, stride: stride, mask: mask) }

    /// Channel `c`'s samples of input times `time ..< time + count`, in place: `count` at most
    /// `slack`, the times among the last `capacity` written (or before the first write since
    /// `reset`: silence).
    @inline(__always)
    func samples(channel c: Int, from time: Int, count: Int) -> UnsafePointer<Float> {
        let head = slack   // (a value: the condition is a closure; see `Owned`)
        precondition(count <= head, "InputHistory read longer than its mirrored head")
        return UnsafePointer(base + c * stride + (time & mask))
    }
}

/// The least power of two ≥ n.
func powerOfTwo(atLeast n: Int) -> Int {
    var p = 1
    while p < n { p *= 2 }
    return p
}
