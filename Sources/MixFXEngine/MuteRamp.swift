/// Live, a laned track's mute and solo as a gain: 1 while it is heard, 0 while it is not, and
/// a linear ramp of 10 ms between them, so that muting, soloing or unmuting a track whose gains
/// the mix applies per frame (`LiveGains.perSample`) does not click (a track read once per
/// block ramps its gains to 0 itself). The track's volume multiplies its values by it
/// (`TouchedValue.fill`); frame k of a ramp from a to b is a + (b − a)·(k + 1)/R.
/// Made with the kernel; advanced once per block by the thread that mixes; no allocation.
final class MuteRamp {
    private let rampFrames: Int
    private let factors: UnsafeMutablePointer<Double>
    private let capacity: Int
    private var level: Double, from = 0.0, to: Double, done = 0, length = 0
    /// The block's factors are all 1 (nothing to apply) / all 0 (nothing to mix).
    private(set) var isOpen: Bool
    private(set) var isClosed: Bool

    /// A track heard (`audible`) or not when the kernel is made, at `sampleRate`.
    init(audible: Bool, sampleRate: Double, maximumFrameCount: Int) {
        rampFrames = max(1, Int(sampleRate) / 100)
        capacity = maximumFrameCount
        factors = .allocate(capacity: maximumFrameCount)
        factors.initialize(repeating: 1, count: maximumFrameCount)
        level = audible ? 1 : 0
        to = level
        isOpen = audible
        isClosed = !audible
    }

    deinit { factors.deallocate() }

    /// The factors of the next block of `count` frames, the track heard or not. Render side.
    func advance(audible: Bool, count n: Int) {
        let target = audible ? 1.0 : 0.0
        if target != to {
            from = level; to = target; done = 0; length = rampFrames
        }
        guard length > 0 else {
            isOpen = level == 1
            isClosed = level == 0
            return
        }
        let n = min(n, capacity)
        for i in 0..<n {
            if done < length {
                done += 1
                level = done >= length ? to : from + (to - from) * Double(done) / Double(length)
            }
            factors[i] = level
        }
        if done >= length { length = 0 }
        isOpen = false
        isClosed = false
    }

    /// The factor of the block's frame `i`.
    @inline(__always)
    func factor(_ i: Int) -> Double { isOpen ? 1 : isClosed ? 0 : factors[i] }
}
