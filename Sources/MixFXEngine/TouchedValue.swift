/// What a live kernel plays for one gain (a track's volume or pan, the master volume), frame by
/// frame: its lane, or while a hand holds it (`AudioParameter.isTouched`) the hand's value, and
/// the way between them, so that neither a touch nor a release clicks:
///
/// - touched: from what played, a linear ramp to the hand's value in `handRampFrames` (10 ms);
///   a new hand value while touched ramps again from where the ramp is;
/// - released: the lane plus the gap there was between what played and the lane, the gap
///   taken away linearly over `returnFrames` (250 ms): frame k after the release (from 0) plays
///   lane + gap·(1 − (k + 1)/R), so frame R − 1 is the lane's own value;
/// - a gain without a lane plays the parameter's value, each change ramped in 10 ms (touched
///   or not; a release leaves the value where it is).
///
/// Frames are the block's: `advance` works out the values of the next block once (render side,
/// before the block is mixed), and `fill` / `value(atFrame:)` read them by timeline frame, as
/// the lanes are read. While a hand holds the gain, and while its lane comes back, `advance`
/// writes what played into the parameter's `touchRecording` (a point at each block's first
/// frame and at each ramp's end), from which `TouchTake` makes lanes. A jump in the mix's
/// frames (a seek) restarts it: no ramp, the hand's value or the lane's at once (the player
/// fades around a seek).
///
/// Made with the kernel (control side: its block buffer is allocated then); used by the thread
/// that mixes. No allocation, lock or throw in `advance`, `fill` or `value(atFrame:)`.
final class TouchedValue {
    let parameter: AudioParameter
    /// Whether the mix reads this gain per frame (`fill`); otherwise once per block, and the
    /// track's own 10 ms ramp applies a change (a live session without any gain lane).
    let perSample: Bool
    private let lane: PreparedLane?
    private let constant: Double?
    private let handRampFrames: Int
    private let returnFrames: Int
    private let values: UnsafeMutablePointer<Double>
    private let capacity: Int
    /// Where what played while touched goes (`AudioParameter.touchRecording`).
    private let record: TouchRecording?
    /// The block the values are for: its first frame of the mix and of the timeline, its
    /// length, and the timeline's period (0: no loop).
    private var blockMixFrame = 0, blockTimelineFrame = 0, blockCount = 0, period = 0
    /// The mix frame the next block should start at (another one: a seek).
    private var expectedFrame = Int.min

    private enum Mode { case lane, hand, returning }
    private var mode: Mode
    /// The hand's ramp: from `from` to `to`, `rampDone` of `rampLength` frames played.
    private var from = 0.0, to = 0.0, rampDone = 0, rampLength = 0
    /// The release: the gap at its start, frames of the return played.
    private var gap = 0.0, returnDone = 0
    /// What the last frame rendered played.
    private var current: Double
    /// Points are being recorded; the next one starts a take.
    private var recording = false, nextStartsTake = true

    /// The live gain of `parameter`, its lane (`AutomatedValue` of it) read at `sampleRate`.
    init(_ parameter: AudioParameter, sampleRate: Double, maximumFrameCount: Int, perSample: Bool) {
        self.parameter = parameter
        self.perSample = perSample
        record = parameter.makeTouchRecording()
        // (the value's prepared lane, held here; the value gives its own up)
        let read = AutomatedValue(parameter, sampleRate: sampleRate)
        lane = read.lane
        constant = read.constantValue
        read.release()
        handRampFrames = max(1, Int(sampleRate) / 100)
        returnFrames = max(1, Int(sampleRate / 4))
        capacity = maximumFrameCount
        values = .allocate(capacity: maximumFrameCount)
        values.initialize(repeating: 0, count: maximumFrameCount)
        let laned = lane != nil || constant != nil
        mode = laned ? .lane : .hand
        current = constant ?? lane?.value(atFrame: 0) ?? parameter.clampedValue
        to = current
    }

    /// A track volume whose mute ramp (`MuteRamp`) is not closed in the block (see
    /// `AutomatedValue.isHeardLive`).
    var isHeard: Bool { heard() }
    /// Vouched for, as `LiveGains.advance` is (docs/realtime.md).
    @_semantics("no_performance_analysis")
    func heard() -> Bool { mute.map { !$0.isClosed } ?? false }

    deinit { values.deallocate() }

    /// Whether the gain has a lane (moving or constant).
    var isLaned: Bool { lane != nil || constant != nil }

    /// The lane's value at timeline frame `frame` (a gain without a lane: the parameter's).
    @inline(__always)
    private func base(_ frame: Int) -> Double {
        if let lane { return lane.value(atFrame: frame) }
        return constant ?? parameter.clampedValue
    }

    /// Works out the values of the block of `count` frames from frame `first` of the mix, whose
    /// first timeline frame is `timeline` (`period` > 0: the timeline starts again at 0 after
    /// `period` frames, a loop). Render side, once per block, before the block is mixed.
    func advance(fromFrame first: Int, count n: Int, timeline: Int, period: Int) {
        let n = min(n, capacity)
        guard n > 0 else { return }
        let touched = parameter.isTouched
        let hand = parameter.clampedValue
        if first != expectedFrame { restart(touched: touched, hand: hand) }
        expectedFrame = first + n
        blockMixFrame = first; blockTimelineFrame = timeline; blockCount = n; self.period = period
        // what the block starts from, before this block's transitions
        let before = current
        var rampBegan = false
        if isLaned {
            if touched {
                if mode != .hand || hand != to { beginRamp(to: hand); rampBegan = true }
                mode = .hand
            } else if mode == .hand {
                mode = .returning
                returnDone = 0
                gap = current - base(timeline)
            }
        } else if hand != to {
            beginRamp(to: hand)
            rampBegan = true
        }
        let recordNow = record != nil && (touched || mode == .returning)
        if recordNow && !recording { recording = true; nextStartsTake = true }
        // the lane's values (over a loop's seam: in two pieces)
        if mode != .hand {
            let m = period > 0 ? min(n, period - timeline) : n
            fillBase(values, fromFrame: timeline, count: m)
            if m < n { fillBase(values + m, fromFrame: 0, count: n - m) }
        }
        // (a ramp that begins: the value it starts from, on the frame before)
        if recordNow, rampBegan, timeline > 0 {
            record?.push(TouchPoint(frame: timeline - 1, value: before, startsTake: nextStartsTake))
            nextStartsTake = false
        }
        var corner = -1, returned = -1
        for i in 0..<n {
            switch mode {
            case .lane:
                break
            case .hand:
                if rampDone < rampLength {
                    rampDone += 1
                    values[i] = rampDone >= rampLength ? to : from + (to - from) * Double(rampDone) / Double(rampLength)
                    if rampDone >= rampLength { corner = i }
                } else {
                    values[i] = to
                }
            case .returning:
                returnDone += 1
                if returnDone >= returnFrames {
                    mode = .lane
                    returned = i
                } else {
                    values[i] += gap * (1 - Double(returnDone) / Double(returnFrames))
                }
            }
        }
        current = values[n - 1]
        parameter.playedValue = current
        guard recordNow, let record else {
            if recording { recording = false }
            return
        }
        // the block's first and last frames (a take cut by a seek, a pause or a seam then ends
        // on the last frame it played), a ramp's end, either side of a loop's seam, the end of
        // the return (each point a frame after the one before, within a take)
        let seam = period > 0 && timeline + n >= period ? period - timeline : -1
        // (the last frame only while the take goes on: a return that ends in the block ends it)
        for i in 0..<n where i == 0 || (i == n - 1 && returned < 0) || i == corner || i == seam - 1 || i == seam || i == returned {
            if i == seam { nextStartsTake = true }
            let f = period > 0 ? (timeline + i) % period : timeline + i
            // (the frames before the mix's first, while effects start up after a seek)
            guard f >= 0 else { continue }
            record.push(TouchPoint(frame: f, value: values[i], startsTake: nextStartsTake))
            nextStartsTake = false
        }
        // (a block that ends on the seam: the next pass starts a take)
        if seam == n { nextStartsTake = true }
        if returned >= 0 { recording = false }
    }

    /// After a jump (a seek, the start): no ramp; the hand's value, or the lane.
    private func restart(touched: Bool, hand: Double) {
        rampDone = 0; rampLength = 0
        if isLaned && !touched {
            mode = .lane
        } else {
            mode = .hand
            to = hand
            current = hand
        }
        nextStartsTake = true
    }

    private func beginRamp(to target: Double) {
        from = current
        to = target
        rampDone = 0
        rampLength = handRampFrames
    }

    @inline(__always)
    private func fillBase(_ out: UnsafeMutablePointer<Double>, fromFrame first: Int, count n: Int) {
        if let lane { lane.fill(out, fromFrame: first, count: n) } else { out.update(repeating: constant ?? parameter.clampedValue, count: n) }
    }

    /// The block's index of timeline frame `frame` (or of mix frame `frame`), nil outside it.
    @inline(__always)
    private func offset(_ frame: Int) -> Int? {
        var o = frame - blockTimelineFrame
        if period > 0 && o < 0 { o += period }
        if o >= 0 && o < blockCount { return o }
        o = frame - blockMixFrame
        return o >= 0 && o < blockCount ? o : nil
    }

    /// What timeline frame `frame` plays: in the block `advance` worked out, its value; else
    /// the hand's, or the lane's. A gain the mix reads once per block: the parameter's value
    /// (the track ramps to it). Render side.
    /// Vouched for, as `LiveGains.advance` is (docs/realtime.md).
    @_semantics("no_performance_analysis")
    func value(atFrame frame: Int) -> Double {
        guard perSample else { return parameter.clampedValue }
        if let o = offset(frame) { return values[o] }
        return mode == .lane ? base(frame) : current
    }

    /// A track volume's mute and solo ramp (`MuteRamp`), which `fill` applies.
    var mute: MuteRamp?

    /// `value(atFrame:)` of timeline frames `first ..< first + count` into `out` (a volume:
    /// times its mute ramp). Render side.
    /// Vouched for, as `LiveGains.advance` is (docs/realtime.md).
    @_semantics("no_performance_analysis")
    func fill(_ out: UnsafeMutablePointer<Double>, fromFrame first: Int, count n: Int) {
        guard let o = offset(first), o + n <= blockCount else {
            for i in 0..<n { out[i] = value(atFrame: first + i) }
            return
        }
        out.update(from: values + o, count: n)
        if let mute, !mute.isOpen {
            for i in 0..<n { out[i] *= mute.factor(o + i) }
        }
    }
}
