/// The shifter's input by input time, in a mirrored ring: sample i of channel c is kept at slot
/// i mod capacity and again at slot capacity + (i mod capacity), so any span of up to `capacity`
/// samples is contiguous for an interpolator. The live dry path and the transient splice read it.
///
/// Made by `PitchShifter.prepare` (control side; all memory allocated then); `reset`, `write` and
/// the reads on the render side. One thread at a time.
final class InputHistory {
    /// Slots per copy, a power of two.
    let capacity: Int
    let mask: Int
    /// Floats from one channel's ring to the next: both copies plus `slack` for an
    /// interpolator's reach past the end.
    let stride: Int
    let channelCount: Int
    /// Channel 0's ring; channel c's starts `c · stride` later.
    let base: UnsafeMutablePointer<Float>

    /// A ring holding at least `frames` frames; `slack` floats are kept past the second copy.
    init(channelCount: Int, frames: Int, slack: Int) {
        self.channelCount = channelCount
        capacity = powerOfTwo(atLeast: frames)
        mask = capacity - 1
        stride = 2 * capacity + slack
        base = .allocate(capacity: channelCount * stride)
        reset()
    }

    deinit { base.deallocate() }

    /// Silence everywhere.
    func reset() { base.update(repeating: 0, count: channelCount * stride) }

    /// Keeps `frameCount` frames (`right` for channel 1; nil: `left` again) as input times
    /// `time`, `time + 1`, ...
    @inline(__always)
    func write(left: UnsafePointer<Float>, right: UnsafePointer<Float>?, frameCount: Int, at time: Int) {
        for c in 0..<channelCount {
            let src = c == 0 ? left : (right ?? left)
            let ring = base + c * stride
            var done = 0
            while done < frameCount {   // in at most two runs of the ring
                let slot = (time + done) & mask
                let n = min(frameCount - done, capacity - slot)
                (ring + slot).update(from: src + done, count: n)
                (ring + slot + capacity).update(from: src + done, count: n)
                done += n
            }
        }
    }
}

/// The least power of two ≥ n.
func powerOfTwo(atLeast n: Int) -> Int {
    var p = 1
    while p < n { p *= 2 }
    return p
}
