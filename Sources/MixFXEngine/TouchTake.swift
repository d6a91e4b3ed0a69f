import Synchronization

/// One touch of a parameter as it played: the values (in the parameter's unit) at times of the
/// mix's timeline, from the moment a hand took it to the moment its lane had come back (or the
/// hand let go of a parameter without a lane, or playback jumped). Made from what the render
/// side recorded (`TouchRecording`, collected by `TouchTakes`); written into a lane by
/// `merged(into:)`, thinned to what changes the sound (`LaneThinning`).
public struct TouchTake: Sendable, Equatable {
    /// The points, times increasing (linear in the value between them, as they played: a
    /// point at each block's start and at each ramp's end).
    public var points: [AutomationLane.Breakpoint]
    /// The rate of the frames it was recorded in.
    public var sampleRate: Double

    public init(points: [AutomationLane.Breakpoint], sampleRate: Double) {
        self.points = points
        self.sampleRate = sampleRate
    }

    /// The takes in `recorded` (a take begins at a point that starts one, or where the frames
    /// go back: a seek, a loop's seam; a point that cuts back replaces its take's points from
    /// its frame on; one that cuts back to a frame after its take's last, a pitch's switch
    /// heard before a loop's seam while the take recorded ahead is already past it, replaces
    /// that take and cuts back the take before it), frames at `sampleRate`.
    public static func takes(from recorded: [TouchPoint], sampleRate: Double) -> [TouchTake] {
        var takes: [TouchTake] = []
        var current: [AutomationLane.Breakpoint] = []
        var frames: [Int] = []   // (current's frames)
        var lastFrame = Int.min
        for p in recorded {
            var p = p
            if p.cutsBack && !p.startsTake && p.frame > lastFrame && !current.isEmpty, let before = takes.last {
                // (across the seam: the take before it again, the points past the seam dropped)
                takes.removeLast()
                current = before.points
                frames = before.points.map { Int(($0.seconds * sampleRate).rounded()) }
            }
            if p.cutsBack && !p.startsTake && !current.isEmpty {
                // (the value there is the take's as recorded, between the points kept and cut)
                var after: (frame: Int, value: Double)?
                while let f = frames.last, f >= p.frame { after = (f, current.removeLast().value); frames.removeLast() }
                if let after, let f = frames.last, let v = current.last?.value {
                    p.value = v + (after.value - v) * Double(p.frame - f) / Double(after.frame - f)
                }
            } else if p.startsTake || p.frame < lastFrame {
                if !current.isEmpty { takes.append(TouchTake(points: current, sampleRate: sampleRate)) }
                current = []
                frames = []
            } else if p.frame == lastFrame {
                current.removeLast()   // (the later value of a frame)
                frames.removeLast()
            }
            current.append(.init(seconds: Double(p.frame) / sampleRate, value: p.value, curve: .linear))
            frames.append(p.frame)
            lastFrame = p.frame
        }
        if !current.isEmpty { takes.append(TouchTake(points: current, sampleRate: sampleRate)) }
        return takes
    }

    /// `lane` (nil: none, the parameter then holding `value`) with this take written over the
    /// take's span: the lane's breakpoints before it, the take thinned within `LaneTolerance(id)`
    /// (linear segments), then the lane again from the take's end (its value there, with the
    /// lane's curve). A lane segment cut by the take keeps its curve (linear, step and the
    /// geometric ones are the same curve cut), except an S-curve, which is sampled every 5 ms
    /// and thinned within the tolerance too. `keepsLastValue`: after the take its last value
    /// holds until the lane's next breakpoint (a parameter without a lane keeps the hand's
    /// value when let go), instead of the lane coming back.
    public func merged(into lane: AutomationLane?, id: ParameterID, holding value: Double, keepsLastValue: Bool = false) -> AutomationLane {
        guard let first = points.first, let last = points.last, let scale = id.spec.automation else {
            return lane ?? AutomationLane([.init(seconds: 0, value: value)])
        }
        let tolerance = LaneTolerance(id)
        let base = lane ?? AutomationLane([.init(seconds: 0, value: value)])
        let bps = base.breakpoints
        let a = first.seconds, b = last.seconds
        var out: [AutomationLane.Breakpoint] = []
        /// The lane from `t0` to `t1` (t0 at or after `bps[i]`, within its segment) as linear
        /// points, thinned (`t1` left out).
        func sampled(_ t0: Double, _ t1: Double) -> [AutomationLane.Breakpoint] {
            let steps = max(1, min(100_000, Int(((t1 - t0) / 0.005).rounded(.up))))
            let curve = (0...steps).map { k in
                let t = t0 + (t1 - t0) * Double(k) / Double(steps)
                return AutomationLane.Breakpoint(seconds: t, value: base.value(at: t, scale: scale), curve: .linear)
            }
            return Array(LaneThinning.thin(curve, tolerance: tolerance).dropLast())
        }
        // the lane before the take (up to the frame before it when the take starts away from
        // the lane, as an EQ's does: the hand's value at once, smoothed by the EQ)
        let jumps = tolerance.distance(first.value, base.value(at: a, scale: scale)) > tolerance.amount
        let cutAt = jumps ? a - 1 / sampleRate : a
        for (i, p) in bps.enumerated() where p.seconds < cutAt {
            let cut = i + 1 < bps.count && bps[i + 1].seconds > cutAt
            if cut && p.curve == .scurve {
                out += sampled(p.seconds, cutAt)
            } else {
                out.append(p)
            }
        }
        if jumps && cutAt > 0 && (out.last.map { $0.seconds < cutAt } ?? true) {
            out.append(.init(seconds: cutAt, value: base.value(at: cutAt, scale: scale), curve: .linear))
        }
        // a geometric curve into the take needs a value above 0 at its start
        if let k = out.indices.last, out[k].curve.isGeometric(on: scale), !(first.value > 0) { out[k].curve = .linear }
        // the take
        var take = LaneThinning.thin(points, tolerance: tolerance)
        for k in take.indices { take[k].curve = .linear }
        // the lane from the take's end: its value there, its curve to its next breakpoint
        let after = bps.firstIndex { $0.seconds > b }
        let there = base.value(at: b, scale: scale)
        let end = take.count - 1
        if keepsLastValue {
            take[end].curve = .step
            out += take
            if let after { out += bps[after...] }
            return AutomationLane(out)
        }
        if tolerance.distance(take[end].value, there) <= tolerance.amount {
            take[end].value = there
        } else {
            // (the take did not come back to the lane: a step back to it a frame later)
            take[end].curve = .step
            let t = b + 1 / sampleRate
            if after.map({ bps[$0].seconds > t }) ?? true {
                take.append(.init(seconds: t, value: base.value(at: t, scale: scale), curve: .linear))
            }
        }
        out += take
        guard let after else {
            return AutomationLane(out)
        }
        let segment = after - 1   // (−1: the take ends before the lane's first breakpoint)
        let curve: AutomationCurve = segment >= 0 ? bps[segment].curve : .step
        if curve == .scurve {
            let t = out[out.count - 1].seconds
            out += sampled(t, bps[after].seconds).dropFirst()
        } else {
            out[out.count - 1].curve = curve.isGeometric(on: scale) && !(out[out.count - 1].value > 0) ? .linear : curve
        }
        out += bps[after...]
        return AutomationLane(out)
    }
}

extension TouchTake {
    /// `lane` (nil: none, the switch then holding `value`) with this take of a switch (mute,
    /// solo: `SwitchTouches` recorded it) written over the take's span as steps: the lane's
    /// breakpoints before the take, a step at each change the take recorded (its first point
    /// is the hand's value from the touch on; its last, the release, the value the switch
    /// plays from there: the lane's, or without a lane the hand's, which holds), then the
    /// lane's breakpoints after the release. Every breakpoint's curve is `step`, the only one
    /// a switch takes.
    public func mergedSwitch(into lane: AutomationLane?, holding value: Double) -> AutomationLane {
        let base = lane?.breakpoints ?? [.init(seconds: 0, value: value, curve: .step)]
        guard let first = points.first, let last = points.last else { return AutomationLane(base) }
        var out = base.filter { $0.seconds < first.seconds }
        for p in points where out.last.map({ $0.value != p.value }) ?? true { out.append(p) }
        out += base.filter { $0.seconds > last.seconds }
        for k in out.indices { out[k].curve = .step }
        return AutomationLane(out)
    }
}

/// A parameter's touch takes on the control side: the points its `touchRecording` holds,
/// drained by `collect()` (call it often enough that the ring does not fill: the CLI does every
/// 10 to 20 ms; a ring of 2048 points holds about 4 s of a touch), made into takes by `takes`.
/// Any thread (a lock around the points and the drain).
public final class TouchTakes: Sendable {
    public let parameter: AudioParameter
    private let sampleRate: Double
    private let recorded = Mutex<[TouchPoint]>([])

    /// The takes of `parameter` (a gain: volume, pan, master volume), frames at `sampleRate`
    /// (the live kernel's, `RenderKernel.layout.sampleRate`).
    public init(_ parameter: AudioParameter, sampleRate: Double) {
        self.parameter = parameter
        self.sampleRate = sampleRate
    }

    /// Takes what the render side recorded since the last call.
    public func collect() {
        guard let ring = parameter.touchRecording else { return }
        recorded.withLock { ring.drain(into: &$0) }
    }

    /// Every take so far, oldest first (after a `collect()`).
    public var takes: [TouchTake] {
        collect()
        return recorded.withLock { TouchTake.takes(from: $0, sampleRate: sampleRate) }
    }

    /// The parameter's lane with every take written into it, oldest first (nil: no lane and
    /// no take).
    public func mergedLane() -> AutomationLane? {
        let all = takes
        let original = parameter.automation
        var lane = original
        guard !all.isEmpty else { return lane }
        // (a parameter without a lane held its value before the first touch, and keeps the
        // hand's value when let go)
        let held = parameter.valueBeforeFirstTouch ?? all[0].points[0].value
        for t in all {
            lane = parameter.id.spec.automation == .onOff ? t.mergedSwitch(into: lane, holding: held)
                : t.merged(into: lane, id: parameter.id, holding: held, keepsLastValue: original == nil)
        }
        return lane
    }
}
