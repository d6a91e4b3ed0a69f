/// A parameter's value over the mix's timeline: breakpoints (time in seconds from the start of
/// the mix, value in the parameter's unit), each with the curve of the segment that follows it
/// (`AutomationCurve`). Before the first breakpoint its value holds; after the last, the last
/// value holds. A lane of one breakpoint, or of breakpoints that all have one value, is that
/// value for the whole mix (and renders exactly as the static setting would).
///
/// Pure data: validated against the parameter's registry entry (`validate`), evaluated by
/// `value(at:scale:)`; the render side uses `PreparedLane`, which evaluates the same formula.
public struct AutomationLane: Sendable, Equatable {
    /// One point of a lane.
    public struct Breakpoint: Sendable, Equatable {
        /// When, seconds on the mix's timeline (0: the mix's first frame).
        public var seconds: Double
        /// The parameter's value there, in its unit.
        public var value: Double
        /// The curve from here to the next breakpoint.
        public var curve: AutomationCurve

        public init(seconds: Double, value: Double, curve: AutomationCurve = .linear) {
            self.seconds = seconds
            self.value = value
            self.curve = curve
        }
    }

    /// The breakpoints, in time order (`validate` checks it).
    public var breakpoints: [Breakpoint]

    public init(_ breakpoints: [Breakpoint]) { self.breakpoints = breakpoints }

    /// A lane of (seconds, value) points, every segment `curve`.
    public init(_ points: [(seconds: Double, value: Double)], curve: AutomationCurve = .linear) {
        breakpoints = points.map { Breakpoint(seconds: $0.seconds, value: $0.value, curve: curve) }
    }

    /// The one value of a lane whose breakpoints all have it (nil when it moves).
    public var constantValue: Double? {
        guard let first = breakpoints.first?.value, breakpoints.allSatisfy({ $0.value == first }) else { return nil }
        return first
    }

    /// The value at `seconds` for a parameter on `scale` (formulas: `AutomationCurve`). The lane
    /// must be valid.
    public func value(at seconds: Double, scale: AutomationScale) -> Double {
        guard let first = breakpoints.first else { return 0 }
        if seconds <= first.seconds { return first.value }
        // the last breakpoint at or before `seconds`
        var lo = 0, hi = breakpoints.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if breakpoints[mid].seconds <= seconds { lo = mid } else { hi = mid - 1 }
        }
        let a = breakpoints[lo]
        guard lo + 1 < breakpoints.count else { return a.value }
        let b = breakpoints[lo + 1]
        let u = (seconds - a.seconds) / (b.seconds - a.seconds)
        return AutomationCurve.interpolate(a.value, b.value, u: u, geometric: a.curve.isGeometric(on: scale), code: a.curve.code)
    }

    /// Checks the lane for parameter `id`: it can be automated, has a breakpoint, its times are
    /// finite, from 0 and increasing, each value is in the registry's range, and each curve
    /// applies to the parameter (a geometric one between values above 0). `lane` names it in
    /// errors ("track 2 pitch").
    public func validate(for id: ParameterID, lane: String) throws(AutomationError) {
        let spec = id.spec
        guard let scale = spec.automation else {
            let names = ParameterID.allCases.filter { $0.spec.automation != nil }.map(\.spec.key).joined(separator: ", ")
            throw AutomationError(lane: lane, breakpoint: nil, problem: "\(spec.key) cannot be automated",
                                  allowed: "lanes for \(names)")
        }
        guard !breakpoints.isEmpty else {
            throw AutomationError(lane: lane, breakpoint: nil, problem: "the lane has no breakpoints", allowed: "at least one")
        }
        for (i, p) in breakpoints.enumerated() {
            func fail(_ problem: String, _ allowed: String) -> AutomationError {
                AutomationError(lane: lane, breakpoint: i + 1, problem: problem, allowed: allowed)
            }
            guard p.seconds.isFinite, p.seconds >= 0 else {
                throw fail("the time \(format(p.seconds)) s is not a time in the mix", "from 0 s")
            }
            if i > 0, p.seconds <= breakpoints[i - 1].seconds {
                throw fail("\(format(p.seconds)) s is not after breakpoint \(i) at \(format(breakpoints[i - 1].seconds)) s",
                           "times that increase from one breakpoint to the next")
            }
            if scale == .onOff {
                guard p.value == 0 || p.value == 1 else {
                    throw fail("\(format(p.value)) is not 0 or 1 (\(spec.key) is a switch)", "0 (off) or 1 (on)")
                }
            } else if let problem = spec.problem(with: p.value) { throw fail(problem, spec.allowedText) }
            guard i + 1 < breakpoints.count else { continue }
            guard p.curve.applies(to: scale) else {
                let ok = AutomationCurve.allCases.filter { $0.applies(to: scale) }.map(\.rawValue).joined(separator: ", ")
                throw fail("the \(p.curve.rawValue) curve does not apply to \(spec.key)\(scale == .onOff ? " (a switch: off or on)" : "")",
                           "for \(spec.key): \(ok)")
            }
            let next = breakpoints[i + 1].value
            if p.curve.isGeometric(on: scale), !(p.value > 0 && next > 0) {
                throw fail("the \(p.curve.rawValue) curve from \(format(p.value)) to \(format(next)) cannot reach 0 (it moves by ratios)",
                           "values above 0 at both ends (e.g. 0.001, −60 dB), or the linear or scurve curve")
            }
        }
    }
}

/// A lane that cannot be used: which lane, which breakpoint (1-based; nil: the whole lane), the
/// problem and what is allowed.
public struct AutomationError: Error, Equatable, CustomStringConvertible {
    public let lane: String
    public let breakpoint: Int?
    public let problem: String
    public let allowed: String

    public var description: String {
        "\(lane) lane\(breakpoint.map { ", breakpoint \($0)" } ?? ""): \(problem) (allowed: \(allowed))"
    }
}
