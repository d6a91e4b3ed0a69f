/// The smoothing both level matches (`LevelMatch`, `PitchLevelMatch`) give their raw gains: a
/// triangle of half-width S, as two running means of S,
///
///     B₁(k) = Σ g(k − S/2 … k + S/2 − 1),   B₂(i) = Σ B₁(i − S/2 + 1 … i + S/2),
///
/// on gains in fixed point (`unit` is 1), so that every sum is exact and the result the same
/// whatever blocks the gains came in. Raw gain j completes smoothed gain i = j − S + 1; gains
/// before 0 count as 1. The smoothed gains are S²·`unit` for 1 (`one`). Rings by index; the
/// owner allocates once (control side) and deallocates in its `deinit`.
struct GainTriangle {
    /// 2³⁰.
    static let unit: Int64 = 1 << 30
    /// S (even).
    let smoothing: Int
    /// A smoothed gain of 1.
    let one: Int64
    private let raw: UnsafeMutablePointer<Int64>, firstMeans: UnsafeMutablePointer<Int64>
    private let smoothed: UnsafeMutablePointer<Int64>, mask: Int
    private var firstSum: Int64 = 0, secondSum: Int64 = 0

    /// Smoothing over `smoothing` (even), holding at least `capacity` smoothed gains back.
    init(smoothing: Int, capacity: Int) {
        precondition(smoothing >= 2 && smoothing % 2 == 0)
        self.smoothing = smoothing
        one = Int64(smoothing) * Int64(smoothing) * Self.unit
        mask = powerOfTwo(atLeast: max(2 * smoothing + 2, capacity)) - 1
        raw = .allocate(capacity: mask + 1)
        firstMeans = .allocate(capacity: mask + 1)
        smoothed = .allocate(capacity: mask + 1)
        reset()
    }

    func deallocate() { raw.deallocate(); firstMeans.deallocate(); smoothed.deallocate() }

    /// Every gain 1.
    @_noLocks
    mutating func reset() {
        let s = Int64(smoothing), u = Self.unit
        raw.update(repeating: u, count: mask + 1)
        firstMeans.update(repeating: s * u, count: mask + 1)
        smoothed.update(repeating: s * s * u, count: mask + 1)
        firstSum = s * u; secondSum = s * s * u
    }

    /// Records raw gain `g` at `j` (after j − 1) and the smoothed gain it completes.
    @inline(__always)
    mutating func add(_ j: Int, _ g: Int64) {
        let s = smoothing, m = mask
        firstSum += g - raw[(j - s) & m]
        raw[j & m] = g
        let k = j - s / 2 + 1
        secondSum += firstSum - firstMeans[(k - s) & m]
        firstMeans[k & m] = firstSum
        let i = k - s / 2
        if i >= 0 { smoothed[i & m] = secondSum }
    }

    /// Smoothed gain `i` (`one` for 1), within the last `capacity` completed.
    @inline(__always)
    func gain(_ i: Int) -> Int64 { smoothed[i & mask] }
}
