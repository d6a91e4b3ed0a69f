/// An automation lane made ready for the render side: its breakpoints in plain arrays,
/// allocated once when the kernel is made (control side), read without allocating, locking or
/// throwing. It evaluates the model's formula (`AutomationCurve.interpolate`, on the same
/// doubles as `AutomationLane.value(at:scale:)`), at timeline frame f as t = f / rate: exactly,
/// but between the anchors of a geometric segment read by frame (`anchorFrames`), where it is
/// within a few ulps; either way a render's values do not depend on its block size.
/// `@unchecked Sendable`: the arrays never change; the search hint is used by one thread at a
/// time (the one rendering the track or the mix that reads the lane).
final class PreparedLane: @unchecked Sendable {
    let count: Int
    private let seconds: UnsafeMutablePointer<Double>
    private let values: UnsafeMutablePointer<Double>
    private let codes: UnsafeMutablePointer<UInt8>
    private let geometric: UnsafeMutablePointer<Bool>
    private let sampleRate: Double
    /// The segment of the last read (a hint: reads move forward; the value never depends on it).
    private var segment = 0
    /// ln(v₁/v₀) of geometric segment `logSegment` (−1: none yet), kept between reads.
    private var logSegment = -1, logRatio = 0.0
    /// A geometric segment read by frame (`value(atFrame:)`, `fill`): its value is the formula
    /// at every frame that is a multiple of `anchorFrames` (the anchor a), and between anchors
    /// the anchor's value times (v₁/v₀)^(j/(rate·(t₁ − t₀))), j = f − a, the factors of
    /// segment `stepSegment` kept in `steps` (one exp per anchor instead of one per frame:
    /// within a few ulps of the formula, so the same Float gain but in the rarest case, and
    /// the same value whatever the blocks, as the anchors are the timeline's).
    static let anchorFrames = 32
    private let steps: UnsafeMutablePointer<Double>
    private var stepSegment = -1
    /// The last anchor read (frame, segment, and 0 or ½ for a read at frames or at their
    /// midpoints) and its value.
    private var anchorFrame = Int.min, anchorSegment = -1, anchorOffsetFrames = 0.0, anchorValue = 0.0

    /// `lane` (valid, non-empty) for a parameter on `scale`, at `sampleRate` frames per second.
    init(_ lane: AutomationLane, scale: AutomationScale, sampleRate: Double) {
        let b = lane.breakpoints
        count = b.count
        seconds = .allocate(capacity: count); values = .allocate(capacity: count)
        codes = .allocate(capacity: count); geometric = .allocate(capacity: count)
        for (i, p) in b.enumerated() {
            seconds[i] = p.seconds; values[i] = p.value
            codes[i] = p.curve.code; geometric[i] = p.curve.isGeometric(on: scale)
        }
        self.sampleRate = sampleRate
        steps = .allocate(capacity: Self.anchorFrames)
    }

    deinit {
        seconds.deallocate(); values.deallocate(); codes.deallocate(); geometric.deallocate(); steps.deallocate()
    }

    /// The value at frame `frame` of the mix's timeline (on a geometric segment, from its
    /// anchor: see `anchorFrames`). Render side.
    @inline(__always)
    func value(atFrame frame: Int) -> Double {
        let t = Double(frame) / sampleRate
        let s = locate(t)
        guard s >= 0, s + 1 < count, isGeometricRamp(s) else { return value(at: t) }
        return anchored(frame, segment: s)
    }

    /// The segment that holds `t` (−1 before the first breakpoint; the last one after it),
    /// found from the last read's (`segment`, which it moves there).
    @inline(__always)
    private func locate(_ t: Double) -> Int {
        // (locals: the right side of `&&` is a closure, and one capturing `self` is refused by
        // the realtime check)
        let seconds = seconds, count = count
        if t <= seconds[0] { return -1 }
        var i = min(segment, count - 1)
        while i > 0 && seconds[i] > t { i -= 1 }
        while i + 1 < count && seconds[i + 1] <= t { i += 1 }
        segment = i
        return i
    }

    /// Whether segment `s` moves on a geometric curve.
    @inline(__always)
    private func isGeometricRamp(_ s: Int) -> Bool {
        let code = codes[s], v0 = values[s], v1 = values[s + 1]
        return geometric[s] && code != 0 && code != 4 && v0 != v1
    }

    /// ln(v₁/v₀) of geometric segment `s`, kept while reads stay in it.
    @inline(__always)
    private func logRatio(ofSegment s: Int) -> Double {
        if logSegment != s { logRatio = Libm.log(values[s + 1] / values[s]); logSegment = s }
        return logRatio
    }

    /// Geometric segment `s` at `frame` + `offset` frames: the formula at its anchor, times
    /// the step factor.
    @inline(__always)
    private func anchored(_ frame: Int, segment s: Int, offsetFrames offset: Double = 0) -> Double {
        let t0 = seconds[s], t1 = seconds[s + 1], v0 = values[s]
        let l = logRatio(ofSegment: s)
        if stepSegment != s {
            // (v₁/v₀)^(j/(rate·(t₁ − t₀))) for j = 0 ..< anchorFrames; j = 0 is 1, exactly
            let perFrame = l / (sampleRate * (t1 - t0))
            for j in 0..<Self.anchorFrames { steps[j] = Libm.exp(Double(j) * perFrame) }
            stepSegment = s
        }
        let a = frame - LoopPosition.frame(frame, period: Self.anchorFrames)
        // (values: no `self` right of `||`)
        let same = a == anchorFrame, sameSegment = s == anchorSegment, sameOffset = offset == anchorOffsetFrames
        if !same || !sameSegment || !sameOffset {
            let u = ((Double(a) + offset) / sampleRate - t0) / (t1 - t0)
            anchorValue = AutomationCurve.geometricValue(v0, logRatio: l, u: u)
            anchorFrame = a
            anchorSegment = s
            anchorOffsetFrames = offset
        }
        return anchorValue * steps[frame - a]
    }

    /// The values at frames `first ..< first + count` of the timeline into `out`: `value(atFrame:)`
    /// of each, to the bit, one segment at a time (a loop the compiler can vectorise). Render side.
    ///
    /// `atMidpoints`: at the frames' midpoints, t = (f + ½) / rate, as a tempo map reads its
    /// lane (`TempoMap`'s midpoint rule): `value(at: t)` of each, but on a geometric segment,
    /// from anchors at the midpoints of the frames that are multiples of `anchorFrames`.
    func fill(_ out: UnsafeMutablePointer<Double>, fromFrame first: Int, count n: Int, atMidpoints: Bool = false) {
        let offset = atMidpoints ? 0.5 : 0   // (frames)
        var i = 0
        while i < n {
            let s = locate((Double(first + i) + offset) / sampleRate)
            if s < 0 {
                out[i] = values[0]
                i += 1
                continue
            }
            guard s + 1 < count else {
                (out + i).update(repeating: values[s], count: n - i)
                return
            }
            let t0 = seconds[s], t1 = seconds[s + 1], v0 = values[s], v1 = values[s + 1]
            let geo = geometric[s], code = codes[s]
            if isGeometricRamp(s) {
                // from the anchors (see `anchorFrames`), as `value(atFrame:)`: an anchor's
                // frames at a time, its value times the step factors
                while i < n {
                    let f = first + i
                    if (Double(f) + offset) / sampleRate >= t1 { break }
                    out[i] = anchored(f, segment: s, offsetFrames: offset)
                    i += 1
                    let a = f - LoopPosition.frame(f, period: Self.anchorFrames)
                    let stop = min(n, a + Self.anchorFrames - first)
                    guard i < stop else { continue }
                    let base = anchorValue, steps = steps, rate = sampleRate
                    // (time grows with the frame: if the anchor's last frame is inside the
                    // segment, so are the others)
                    if (Double(first + stop - 1) + offset) / rate < t1 {
                        for k in i..<stop { out[k] = base * steps[first + k - a] }
                        i = stop
                    } else {
                        while i < stop && (Double(first + i) + offset) / rate < t1 {
                            out[i] = base * steps[first + i - a]
                            i += 1
                        }
                    }
                }
                continue
            }
            // The frames before the segment's end (t grows with the frame; frame i is inside),
            // then their values: a linear or S-curve segment four at a time (the same
            // operations lane by lane, so the same values: the frames' times are exact
            // integers, or integers and a half, whichever way they are summed; the two
            // divisions are most of the cost), anything else one at a time.
            let rate = sampleRate
            var lo = i, hi = n   // t(lo) < t1; t(hi) ≥ t1 or hi = n
            while hi - lo > 1 {
                let mid = (lo + hi) / 2
                if (Double(first + mid) + offset) / rate >= t1 { hi = mid } else { lo = mid }
            }
            let stop = hi
            // (as `AutomationCurve.interpolate` tells them apart: 0 a step, 4 an S-curve, any
            // other a straight line unless geometric)
            let scurve = code == 4, linear = code != 0 && !scurve && !geo
            if linear || scurve {
                let lanes = SIMD4<Double>(0, 1, 2, 3), rates = SIMD4<Double>(repeating: rate)
                let starts = SIMD4<Double>(repeating: t0), spans = SIMD4<Double>(repeating: t1 - t0)
                let bases = SIMD4<Double>(repeating: v0), rises = SIMD4<Double>(repeating: v1 - v0)
                while i + 3 < stop {
                    let x = SIMD4<Double>(repeating: Double(first + i) + offset) + lanes
                    let u = (x / rates - starts) / spans
                    let v = linear ? bases + rises * u : bases + rises * (u * u * (3 - 2 * u))
                    UnsafeMutableRawPointer(out + i).storeBytes(of: v, as: SIMD4<Double>.self)
                    i += 4
                }
            }
            while i < stop {
                let t = (Double(first + i) + offset) / rate
                out[i] = AutomationCurve.interpolate(v0, v1, u: (t - t0) / (t1 - t0), geometric: geo, code: code)
                i += 1
            }
        }
    }

    /// The value at `t` seconds (the model's `value(at:scale:)`, to the bit). Render side.
    func value(at t: Double) -> Double {
        let i = locate(t)
        if i < 0 { return values[0] }
        guard i + 1 < count else { return values[i] }
        let u = (t - seconds[i]) / (seconds[i + 1] - seconds[i])
        // (a geometric segment read again: its logarithm kept, the same value as `interpolate`)
        if isGeometricRamp(i) { return AutomationCurve.geometricValue(values[i], logRatio: logRatio(ofSegment: i), u: u) }
        return AutomationCurve.interpolate(values[i], values[i + 1], u: u, geometric: geometric[i], code: codes[i])
    }
}

/// What the render side reads for one parameter: the parameter itself (no lane: its value, read
/// once per block, may change live), the one value of a constant lane (which so renders exactly
/// as that static setting), a lane that moves, or live, a gain a hand may take over
/// (`TouchedValue`, which plays its lane until touched).
///
/// A plain value (the parameter, the lane and the touched value held as `Unmanaged`), so that
/// the checked render path reads it without reference counting (see `Unretained`): the
/// parameter is kept alive by its node, the touched value by the kernel's `LiveGains`, the
/// prepared lane by this value's owner, which calls `release()` once (its `deinit`).
struct AutomatedValue {
    private enum Kind { case parameter, constant, lane, live }
    private let kind: Kind
    private let parameter: Unmanaged<AudioParameter>?
    private let constant: Double
    private let prepared: Unmanaged<PreparedLane>?
    private let touched: Unmanaged<TouchedValue>?

    /// Reads `parameter`'s lane (control side: when a kernel is made).
    init(_ parameter: AudioParameter, sampleRate: Double) {
        guard let lane = parameter.automation, let scale = parameter.id.spec.automation, !lane.breakpoints.isEmpty else {
            kind = .parameter
            self.parameter = .passUnretained(parameter)
            constant = 0
            prepared = nil
            touched = nil
            return
        }
        self.parameter = nil
        touched = nil
        if let v = lane.constantValue {
            kind = .constant
            constant = v
            prepared = nil
        } else {
            kind = .lane
            constant = 0
            prepared = .passRetained(PreparedLane(lane, scale: scale, sampleRate: sampleRate))
        }
    }

    /// Live: what `gain` plays (it is kept alive by the kernel's `LiveGains`).
    static func live(_ gain: TouchedValue) -> AutomatedValue { AutomatedValue(touched: gain) }

    private init(touched gain: TouchedValue) {
        kind = .live
        parameter = nil
        constant = 0
        prepared = nil
        touched = .passUnretained(gain)
    }

    /// Gives up the prepared lane (once, by the owner, when done).
    func release() { prepared?.release() }

    /// Whether it moves over the timeline (a lane of more than one value).
    var moves: Bool {
        switch kind {
        case .lane: true
        case .live: touched!._withUnsafeGuaranteedRef { $0.perSample }
        default: false
        }
    }

    /// Whether it is the parameter (no lane).
    var isParameter: Bool { if case .parameter = kind { true } else { false } }

    /// The lane that moves (control side), nil for the others.
    var lane: PreparedLane? { prepared?.takeUnretainedValue() }

    /// The one value of a constant lane (control side), nil for the others.
    var constantValue: Double? { if case .constant = kind { constant } else { nil } }

    /// A live track volume whose mute ramp (`MuteRamp`) is not at 0 in the block: the track
    /// is mixed even while muted, until its fade is over. False otherwise.
    var isHeardLive: Bool {
        guard case .live = kind else { return false }
        return touched!._withUnsafeGuaranteedRef { $0.heard() }
    }

    /// `value(atFrame:)` of frames `first ..< first + count` into `out`.
    @inline(__always)
    func fill(_ out: UnsafeMutablePointer<Double>, fromFrame first: Int, count n: Int) {
        switch kind {
        case .lane: prepared!._withUnsafeGuaranteedRef { $0.fill(out, fromFrame: first, count: n) }
        case .live: touched!._withUnsafeGuaranteedRef { $0.fill(out, fromFrame: first, count: n) }
        default: out.update(repeating: value(atFrame: first), count: n)
        }
    }

    /// The value for a whole block: the parameter's now, or the constant (a moving lane: its
    /// value at `frame`).
    @inline(__always)
    func value(atFrame frame: Int) -> Double {
        switch kind {
        case .parameter: parameter!._withUnsafeGuaranteedRef { $0.clampedValue }
        case .constant: constant
        case .lane: prepared!._withUnsafeGuaranteedRef { $0.value(atFrame: frame) }
        case .live: touched!._withUnsafeGuaranteedRef { $0.value(atFrame: frame) }
        }
    }
}
