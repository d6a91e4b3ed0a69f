/// An automation lane made ready for the render side: its breakpoints in plain arrays,
/// allocated once when the kernel is made (control side), read without allocating, locking or
/// throwing. It evaluates exactly the model's formula (`AutomationCurve.interpolate`, on the
/// same doubles as `AutomationLane.value(at:scale:)`), at timeline frame f as t = f / rate, so
/// a render's values do not depend on its block size.
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
    }

    deinit {
        seconds.deallocate(); values.deallocate(); codes.deallocate(); geometric.deallocate()
    }

    /// The value at frame `frame` of the mix's timeline. Render side.
    @inline(__always)
    func value(atFrame frame: Int) -> Double { value(at: Double(frame) / sampleRate) }

    /// The values at frames `first ..< first + count` of the timeline into `out`: `value(atFrame:)`
    /// of each, to the bit, one segment at a time (a loop the compiler can vectorise). Render side.
    func fill(_ out: UnsafeMutablePointer<Double>, fromFrame first: Int, count n: Int) {
        var i = 0
        while i < n {
            let t = Double(first + i) / sampleRate
            if t <= seconds[0] {
                out[i] = values[0]
                i += 1
                continue
            }
            _ = value(at: t)   // (moves `segment` to t's)
            let s = segment
            guard s + 1 < count else {
                (out + i).update(repeating: values[s], count: n - i)
                return
            }
            let t0 = seconds[s], t1 = seconds[s + 1], v0 = values[s], v1 = values[s + 1]
            let geo = geometric[s], code = codes[s]
            while i < n {
                let t = Double(first + i) / sampleRate
                if t >= t1 { break }
                out[i] = AutomationCurve.interpolate(v0, v1, u: (t - t0) / (t1 - t0), geometric: geo, code: code)
                i += 1
            }
        }
    }

    /// The value at `t` seconds (the model's `value(at:scale:)`, to the bit). Render side.
    func value(at t: Double) -> Double {
        // (locals: the right side of `&&` is a closure, and one capturing `self` is refused by
        // the realtime check)
        let seconds = seconds, values = values, count = count
        if t <= seconds[0] { return values[0] }
        var i = min(segment, count - 1)
        while i > 0 && seconds[i] > t { i -= 1 }
        while i + 1 < count && seconds[i + 1] <= t { i += 1 }
        segment = i
        guard i + 1 < count else { return values[i] }
        let u = (t - seconds[i]) / (seconds[i + 1] - seconds[i])
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
