/// The peak envelope of a signal's power, e[i] = max(p[i], ρ·e[i−1]) with p[i] = l[i]²
/// (stereo: (l[i]² + r[i]²)/2): instant attack, release ρ per sample. Eight samples at a time,
/// in groups aligned to multiples of 8 of the signal's own time: a doubling scan inside the
/// vector (each lane against its neighbours 1, 2 and 4 lanes back, scaled by ρ, ρ², ρ⁴), then
/// the previous group's last value scaled by ρ^(lane + 1). The same envelope as the
/// sample-by-sample recursion, rounding aside; and since lane j of the scan reads only lanes
/// ≤ j, a group's first frames get their final values before the rest of it has arrived, so
/// the envelope is the same however the signal was cut into runs.
struct PeakEnvelope {
    let rho: Float
    private let rho1: SIMD8<Float>, rho2: SIMD8<Float>, rho4: SIMD8<Float>
    /// ρ^(lane + 1).
    private let powers: SIMD8<Float>
    /// The envelope at the end of the last whole group.
    private(set) var last: Float = 0
    /// The powers of the current group's frames so far (`pendingCount` of them; the rest 0).
    private var pending = SIMD8<Float>(), pendingCount = 0

    init(release rho: Float) {
        self.rho = rho
        rho1 = SIMD8<Float>(repeating: rho); rho2 = rho1 * rho1; rho4 = rho2 * rho2
        var p = SIMD8<Float>(), q: Float = 1
        for i in 0..<8 { q *= rho; p[i] = q }
        powers = p
    }

    @_noLocks
    mutating func reset() { last = 0; pending = SIMD8<Float>(); pendingCount = 0 }

    /// The envelope of the next `count` frames (after the `count`s of every call since
    /// `reset`), into `e`, which holds at least the frames up to the group of 8 the run ends
    /// in: slots before `e` hold the earlier frames of the group the run starts in (a ring's
    /// slots of a run starting within a group).
    @inline(__always) @_noAllocation @_noLocks
    mutating func follow(_ l: UnsafePointer<Float>, _ r: UnsafePointer<Float>?, count: Int, into e: UnsafeMutablePointer<Float>) {
        var i = 0
        if pendingCount > 0 {
            // finish (or extend) the group a run ended in
            let take = min(8 - pendingCount, count)
            for j in 0..<take { pending[pendingCount + j] = power(l, r, j) }
            let v = scan(pending), from = pendingCount
            for j in from..<(from + take) { e[j - from] = v[j] }
            pendingCount += take
            i = take
            if pendingCount == 8 { last = v[7]; pending = SIMD8<Float>(); pendingCount = 0 }
        }
        let pl = UnsafeRawPointer(l), pe = UnsafeMutableRawPointer(e)
        let half = SIMD8<Float>(repeating: 0.5)
        while i + 8 <= count {
            let x = pl.loadUnaligned(fromByteOffset: 4 * i, as: SIMD8<Float>.self)
            var v = x * x
            if let r {
                let y = UnsafeRawPointer(r).loadUnaligned(fromByteOffset: 4 * i, as: SIMD8<Float>.self)
                v = half * (v + y * y)
            }
            v = scan(v)
            pe.storeBytes(of: v, toByteOffset: 4 * i, as: SIMD8<Float>.self)
            last = v[7]
            i += 8
        }
        if i < count {
            // the start of the next group: its frames' values are final already (see above)
            for j in 0..<(count - i) { pending[j] = power(l, r, i + j) }
            pendingCount = count - i
            let v = scan(pending)
            for j in 0..<pendingCount { e[i + j] = v[j] }
        }
    }

    /// p[i] for frame `i` of the run.
    @inline(__always)
    private func power(_ l: UnsafePointer<Float>, _ r: UnsafePointer<Float>?, _ i: Int) -> Float {
        let p = l[i] * l[i]
        guard let r else { return p }
        return 0.5 * (p + r[i] * r[i])
    }

    /// A group's envelope from its powers and `last`.
    @inline(__always)
    private func scan(_ p: SIMD8<Float>) -> SIMD8<Float> {
        var v = pointwiseMaxLanes(p, shiftedUp(p, by: 1) * rho1)
        v = pointwiseMaxLanes(v, shiftedUp(v, by: 2) * rho2)
        v = pointwiseMaxLanes(v, shiftedUp(v, by: 4) * rho4)
        return pointwiseMaxLanes(v, SIMD8<Float>(repeating: last) * powers)
    }
}
