/// A tempo that moves over the output's time, for an offline shifter driven by a tempo lane or a
/// time map: the input position s(n) of output frame n (frames of the track's input at the
/// output rate), held every `stepFrames` output frames and read linearly between them, so that
/// s is continuous and piecewise linear and the tempo R = ds/dn is the slope of the cell a frame
/// lies in:
///
///     s(0) = 0,  s((j + 1)·step) = s(j·step) + Σ_{f = j·step}^{(j+1)·step − 1} R(f + ½)
///
/// (the midpoint rule per output frame: exact for a linear segment, and for a step whose
/// breakpoint lies on a frame, as a time map's do). The output's length for an input of P frames
/// is s⁻¹(P) (`frame(atPosition:)`); past the table the last cell's slope holds.
///
/// The shifter reads output frame n at input time s(n) − s(origin) (the map's own position, not
/// a sum of the frames' tempos: no drift, whatever the blocks), and each vocoder frame takes the
/// tempo of the cell its analysis centre lies in, so the pitch stays r.
///
/// Built on the control side (it allocates); read on the render side (no allocation).
/// `@unchecked Sendable`: immutable after `init` (kernels on several threads may share one).
public final class TempoMap: @unchecked Sendable {
    /// Output frames between two held positions.
    public let stepFrames: Int
    /// s(j·step) for j in 0..<count.
    private let positions: UnsafeMutablePointer<Double>
    public let count: Int
    /// The lowest and highest tempo of a cell.
    public let minimumTempo: Double, maximumTempo: Double
    /// The fastest tempo of each run of `groupCells` cells (`maximumTempo(fromPosition:span:)`).
    private let groupMaxima: UnsafeMutablePointer<Double>
    private static let groupCells = 64
    /// Live looped playback (`looping(everyFrames:)`): the pass's length L in output frames
    /// (0: no loop), and s(L), the input a pass takes (not whole). Frame f of pass q = ⌊f/L⌋
    /// is at s(f − qL) + q·s(L); input position x at the frame of x − q·s(L) plus qL.
    public let periodFrames: Int
    public let periodPosition: Double

    /// The map whose tempo at output time `x` frames is `tempo(x)` (called at every frame's
    /// midpoint, in order; each value above 0), held until its position reaches `position`
    /// (at least one cell).
    public convenience init(stepFrames: Int, untilPosition position: Double, tempo: (Double) -> Double) {
        self.init(stepFrames: stepFrames, untilPosition: position) { first, out in
            for k in 0..<stepFrames { out[k] = tempo(Double(first + k) + 0.5) }
        }
    }

    /// The same map, its tempos given a cell at a time: `tempos(first, out)` writes the tempo
    /// at the midpoints of output frames `first ..< first + stepFrames` into `out` (called
    /// for each cell, in order; the same sums, to the bit, as the values one at a time).
    public init(stepFrames: Int, untilPosition position: Double, tempos: (Int, UnsafeMutablePointer<Double>) -> Void) {
        precondition(stepFrames >= 1)
        self.stepFrames = stepFrames
        var held: [Double] = [0]
        var s = 0.0, lo = Double.infinity, hi = 0.0, j = 0
        let cell = UnsafeMutablePointer<Double>.allocate(capacity: stepFrames)
        defer { cell.deallocate() }
        repeat {
            let start = s
            tempos(j * stepFrames, cell)
            for k in 0..<stepFrames { s += cell[k] }
            held.append(s)
            let slope = (s - start) / Double(stepFrames)
            lo = min(lo, slope); hi = max(hi, slope)
            j += 1
        } while s < position
        count = held.count
        positions = .allocate(capacity: count)
        positions.initialize(from: held, count: count)
        minimumTempo = lo
        maximumTempo = hi
        let cells = count - 1, groups = (cells + Self.groupCells - 1) / Self.groupCells
        groupMaxima = .allocate(capacity: groups)
        for g in 0..<groups {
            var m = 0.0
            for j in (g * Self.groupCells)..<min(cells, (g + 1) * Self.groupCells) {
                m = max(m, (held[j + 1] - held[j]) / Double(stepFrames))
            }
            groupMaxima[g] = m
        }
        periodFrames = 0
        periodPosition = 0
    }

    /// A copy of `map` that starts again every `frames` output frames (live, looped: the
    /// map is shared by renders that do not loop, so a loop gets its own).
    private init(_ map: TempoMap, periodFrames frames: Int) {
        stepFrames = map.stepFrames
        count = map.count
        positions = .allocate(capacity: count)
        positions.initialize(from: map.positions, count: count)
        minimumTempo = map.minimumTempo
        maximumTempo = map.maximumTempo
        let groups = (count - 1 + Self.groupCells - 1) / Self.groupCells
        groupMaxima = .allocate(capacity: groups)
        groupMaxima.initialize(from: map.groupMaxima, count: groups)
        periodFrames = frames
        periodPosition = map.position(atFrame: frames)
    }

    /// This map, starting again every `frames` output frames (above 0): pass q plays it from
    /// input position q·s(frames) on. Control side.
    public func looping(everyFrames frames: Int) -> TempoMap {
        precondition(frames > 0)
        return TempoMap(self, periodFrames: frames)
    }

    deinit {
        positions.deallocate()
        groupMaxima.deallocate()
    }

    /// The tempo of cell j (the last cell's past the table).
    @inline(__always)
    @_noAllocation @_noLocks
    private func slope(cell j: Int) -> Double {
        let c = min(max(j, 0), count - 2)
        return (positions[c + 1] - positions[c]) / Double(stepFrames)
    }

    /// s(n): the input position of output frame `frame` (before 0: frame·R of the first cell).
    @inline(__always)
    @_noAllocation @_noLocks
    public func position(atFrame frame: Int) -> Double {
        let period = periodFrames
        if period > 0 && frame >= period {
            let q = frame / period
            return passPosition(atFrame: frame - q * period) + Double(q) * periodPosition
        }
        return passPosition(atFrame: frame)
    }

    /// s(n) within the table (no loop).
    @inline(__always)
    @_noAllocation @_noLocks
    private func passPosition(atFrame frame: Int) -> Double {
        let j = frame >= 0 ? frame / stepFrames : -1
        if j < 0 { return Double(frame) * slope(cell: 0) }
        if j >= count - 1 { return positions[count - 1] + Double(frame - (count - 1) * stepFrames) * slope(cell: count - 2) }
        let base = positions[j]
        return base + Double(frame - j * stepFrames) * (positions[j + 1] - base) / Double(stepFrames)
    }

    /// s(n) − `offset` for the `n` output frames from `first` into `out`: each exactly
    /// `position(atFrame:)` − `offset` (the same expression, a cell at a time, without the
    /// frame's division by the step: a block's times in one call).
    @_noAllocation @_noLocks
    public func positions(fromFrame first: Int, count n: Int, minus offset: Double, into out: UnsafeMutablePointer<Double>) {
        let period = periodFrames
        guard period > 0 && first + n > period else {
            passPositions(fromFrame: first, count: n, minus: offset, into: out)
            return
        }
        // looped: pass by pass, each frame s(f − qL) + q·s(L), less `offset`
        var k = 0
        while k < n {
            let frame = first + k
            let q = frame >= 0 ? frame / period : 0
            let m = min(n - k, (q + 1) * period - frame)
            passPositions(fromFrame: frame - q * period, count: m, minus: 0, into: out + k)
            let shift = Double(q) * periodPosition
            for i in k..<(k + m) { out[i] = (out[i] + shift) - offset }
            k += m
        }
    }

    /// `positions(fromFrame:count:minus:into:)` within the table (no loop).
    @_noAllocation @_noLocks
    private func passPositions(fromFrame first: Int, count n: Int, minus offset: Double, into out: UnsafeMutablePointer<Double>) {
        let step = stepFrames, cells = count - 1
        var k = 0
        while k < n {
            let frame = first + k
            let j = frame >= 0 ? frame / step : -1
            if j < 0 || j >= cells {
                out[k] = passPosition(atFrame: frame) - offset
                k += 1
                continue
            }
            let base = positions[j], rise = positions[j + 1] - base, length = Double(step)
            let end = min(n, k + (j + 1) * step - frame)
            var i = frame - j * step
            // (four at a time: the same operations lane by lane, so the same values; the
            // division is most of the cost)
            while k + 3 < end {
                let steps = SIMD4<Double>(Double(i), Double(i + 1), Double(i + 2), Double(i + 3))
                let v = SIMD4<Double>(repeating: base) + steps * rise / length - offset
                UnsafeMutableRawPointer(out + k).storeBytes(of: v, as: SIMD4<Double>.self)
                i += 4
                k += 4
            }
            while k < end {
                out[k] = base + Double(i) * rise / length - offset
                i += 1
                k += 1
            }
        }
    }

    /// The cell whose positions hold `x` (−1 before 0; count − 1 past the table): a binary
    /// search (a vocoder frame's, a block's or an EQ step's few reads).
    @inline(__always)
    @_noAllocation @_noLocks
    private func cell(atPosition x: Double) -> Int {
        if x < 0 { return -1 }
        if x >= positions[count - 1] { return count - 1 }
        var lo = 0, hi = count - 2
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if positions[mid] <= x { lo = mid } else { hi = mid - 1 }
        }
        return lo
    }

    /// The tempo at input position `x`: the slope of the cell that holds it.
    @inline(__always)
    @_noAllocation @_noLocks
    public func tempo(atPosition x: Double) -> Double { slope(cell: cell(atPosition: inPass(x).position)) }

    /// Looped: `x` as a position within its pass, and the pass.
    @inline(__always)
    @_noAllocation @_noLocks
    private func inPass(_ x: Double) -> (position: Double, pass: Int) {
        let p = periodPosition, looped = periodFrames > 0
        guard looped && x >= p else { return (x, 0) }
        var q = Int(x / p), within = x - Double(q) * p
        // (the division's rounding may leave the pass one off)
        if within < 0 { q -= 1; within = x - Double(q) * p } else if within >= p { q += 1; within = x - Double(q) * p }
        return (max(0, within), q)
    }

    /// s⁻¹(x): the output frame (fractional) at which the input reaches `x`.
    @_noAllocation @_noLocks
    public func frame(atPosition x: Double) -> Double {
        let (within, q) = inPass(x)
        return passFrame(atPosition: within) + Double(q * periodFrames)
    }

    /// s⁻¹(x) within the table (no loop).
    @inline(__always)
    @_noAllocation @_noLocks
    private func passFrame(atPosition x: Double) -> Double {
        let j = cell(atPosition: x)
        if j < 0 { return x / slope(cell: 0) }
        if j >= count - 1 { return Double((count - 1) * stepFrames) + (x - positions[count - 1]) / slope(cell: count - 2) }
        return Double(j * stepFrames) + (x - positions[j]) / slope(cell: j)
    }

    /// At least the fastest tempo of the cells that hold input positions `from ... from +
    /// span` (the fastest of the runs of 64 cells they lie in: a bound, read in a few steps).
    @_noAllocation @_noLocks
    public func maximumTempo(fromPosition start: Double, span: Double) -> Double {
        // (looped, a span over a seam: the fastest of the whole map, a bound)
        let (from, _) = inPass(start)
        let looped = periodFrames > 0, passEnd = periodPosition   // (values: no `self` right of `&&`)
        if looped && from + span >= passEnd { return maximumTempo }
        let cells = count - 1
        let first = min(max(0, cell(atPosition: from)), cells - 1)
        let last = min(max(first, cell(atPosition: from + span)), cells - 1)
        var m = 0.0
        for g in (first / Self.groupCells)...(last / Self.groupCells) { m = max(m, groupMaxima[g]) }
        return m
    }
}
