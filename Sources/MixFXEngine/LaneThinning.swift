#if canImport(Glibc)
import Glibc
#endif

/// How close a thinned lane must stay to what was recorded, in the measure a parameter is heard
/// in: gains in dB (0.1 dB; a linear gain's floor −60 dB, below which levels count as −60),
/// pitch 1 cent, EQ corners, slopes and tempo 1 cent of their ratio (1200·log2), pan 0.01.
public struct LaneTolerance: Sendable, Equatable {
    /// The largest distance allowed, in the measure's unit.
    public let amount: Double
    private let scale: AutomationScale

    /// The registry's tolerance for parameter `id` (one that takes lanes).
    public init(_ id: ParameterID) {
        scale = id.spec.automation ?? .linear
        switch scale {
        case .linearGain, .decibels: amount = 0.1
        case .positive: amount = 1
        case .linear: amount = id == .pan ? 0.01 : 1
        case .onOff: amount = 0.5
        }
    }

    /// `v` in the measure (dB for a linear gain, cents of ratio for positive quantities).
    @inline(__always)
    public func measure(_ v: Double) -> Double {
        switch scale {
        case .linearGain: 20 * log10(max(v, 0.001))
        case .positive: 1200 * log2(max(v, 1e-12))
        case .decibels, .linear, .onOff: v
        }
    }

    /// The distance of two values in the measure.
    @inline(__always)
    public func distance(_ a: Double, _ b: Double) -> Double { abs(measure(a) - measure(b)) }
}

/// Thins a recorded curve (points joined by straight lines in the value) to the points that
/// change the sound: Ramer–Douglas–Peucker with the vertical distance in the parameter's
/// measure (`LaneTolerance`). A point is dropped when the straight line between the points
/// kept either side of it stays within the tolerance of every recorded point between them, and
/// of the middle of each recorded segment there (the measure is not linear in the value, so
/// the check includes the points between). The first and last points are always kept.
public enum LaneThinning {
    /// The points of `points` (times increasing) to keep.
    public static func thin(_ points: [AutomationLane.Breakpoint], tolerance: LaneTolerance) -> [AutomationLane.Breakpoint] {
        guard points.count > 2 else { return points }
        var keep = [Bool](repeating: false, count: points.count)
        keep[0] = true; keep[points.count - 1] = true
        var stack = [(0, points.count - 1)]
        while let (a, b) = stack.popLast() {
            guard b > a + 1 else { continue }
            let p = points[a], q = points[b]
            func line(_ t: Double) -> Double { p.value + (q.value - p.value) * (t - p.seconds) / (q.seconds - p.seconds) }
            var worst = 0.0, at = -1
            for i in (a + 1)..<b {
                let r = points[i]
                var d = tolerance.distance(r.value, line(r.seconds))
                // (the middle of the recorded segment before it)
                let s = points[i - 1], mid = (s.seconds + r.seconds) / 2
                d = max(d, tolerance.distance((s.value + r.value) / 2, line(mid)))
                if d > worst { worst = d; at = i }
            }
            // (and the middle of the last recorded segment)
            let s = points[b - 1], mid = (s.seconds + q.seconds) / 2
            if tolerance.distance((s.value + q.value) / 2, line(mid)) > worst { worst = tolerance.distance((s.value + q.value) / 2, line(mid)); at = b - 1 }
            if worst > tolerance.amount && at > a {
                keep[at] = true
                stack.append((a, at))
                stack.append((at, b))
            }
        }
        return points.indices.filter { keep[$0] }.map { points[$0] }
    }
}
