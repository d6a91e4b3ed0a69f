/// The runs of quiet input a `TransientGate` records with its envelope: frames whose power
/// (the channels' mean square) is under `TransientGate.quietPower`, in runs of at least
/// `quietFrames`. Frame u counts as quiet when it and the `quietFrames` − 1 before it are: run i
/// covers the input times from its `quietFrames`-th frame (`from`) up to its first frame that
/// is not quiet (`end`, `Int.max` while the run lasts).
///
/// Whether frame u is quiet depends only on the frames up to u, so it is the same however the
/// input was pulled. The runs are kept in a ring long enough for every run that can end after
/// the oldest time a gate reads: within `spanFrames` of the newest input at most
/// spanFrames / (quietFrames + 1) + 2 runs can (each holds `quietFrames` frames and the next
/// starts after a frame that is not quiet); the ring holds one more. A gate reads forward from its own position
/// (`View.run(at:read:)`; input times never go back). Allocated by `init` (control side),
/// freed by its owner's `deinit`; `reset` and `record` on the render side.
struct QuietRuns {
    let quietFrames: Int
    private let quietPower: Float
    private let froms: UnsafeMutablePointer<Int>
    private let ends: UnsafeMutablePointer<Int>
    /// Runs recorded since `reset` (a pointer, so that another gate's view sees the count now).
    private let written: UnsafeMutablePointer<Int>
    private let mask: Int
    /// The first frame of the quiet run the input is in, or −1 after a frame that is not quiet.
    private var start = 0

    init(quietFrames: Int, spanFrames: Int, quietPower: Float = TransientGate.quietPower) {
        self.quietFrames = max(1, quietFrames)
        self.quietPower = quietPower
        let capacity = powerOfTwo(atLeast: spanFrames / (self.quietFrames + 1) + 3)
        mask = capacity - 1
        froms = .allocate(capacity: capacity); ends = .allocate(capacity: capacity)
        written = .allocate(capacity: 1)
        reset()
    }

    func deallocate() { froms.deallocate(); ends.deallocate(); written.deallocate() }

    /// No runs; the input before time 0 counts as neither (a run can start at 0).
    @_noLocks
    mutating func reset() {
        froms.update(repeating: .max, count: mask + 1); ends.update(repeating: .max, count: mask + 1)
        written.pointee = 0; start = 0
    }

    /// Follows the input's next `frameCount` frames, input times `time` on (each call's `time`
    /// where the last one ended).
    @_noLocks
    mutating func record(left: UnsafePointer<Float>, right: UnsafePointer<Float>?, frameCount: Int, at time: Int) {
        let q = quietPower, w = quietFrames
        let floor = SIMD8<Float>(repeating: q), half = SIMD8<Float>(repeating: 0.5)
        var k = 0
        while k < frameCount {
            if k + 8 <= frameCount {
                // eight frames at once where nothing changes: sound with no run open, or quiet
                // in a run already recorded
                var p = UnsafeRawPointer(left + k).loadUnaligned(as: SIMD8<Float>.self)
                p = p * p
                if let right {
                    let r = UnsafeRawPointer(right + k).loadUnaligned(as: SIMD8<Float>.self)
                    p = half * (p + r * r)
                }
                let quiet = p .< floor
                if start < 0 && !any(quiet) { k += 8; continue }
                if start >= 0 && all(quiet) && time + k - start >= w { k += 8; continue }
            }
            let t = time + k
            var p = left[k] * left[k]
            if let right { p = 0.5 * (p + right[k] * right[k]) }
            if p < q {   // (a NaN is not quiet)
                if start < 0 { start = t }
                if t - start + 1 == w {
                    let i = written.pointee & mask
                    froms[i] = t; ends[i] = .max
                    written.pointee += 1
                }
            } else if start >= 0 {
                if t - start >= w { ends[(written.pointee - 1) & mask] = t }
                start = -1
            }
            k += 1
        }
    }

    /// The runs as values (see `Owned`).
    struct View {
        fileprivate let froms: UnsafeMutablePointer<Int>, ends: UnsafeMutablePointer<Int>
        fileprivate let written: UnsafeMutablePointer<Int>, mask: Int

        /// The first run that ends after input time `u`, from `read` (a reader's position, moved
        /// on): u is quiet if `from` ≤ u. (.max, .max) if none is recorded.
        @inline(__always)
        func run(at u: Int, read: inout Int) -> (from: Int, end: Int) {
            let n = written.pointee
            var i = max(read, n - (mask + 1))
            while i < n && ends[i & mask] <= u { i += 1 }
            read = i
            return i < n ? (froms[i & mask], ends[i & mask]) : (.max, .max)
        }
    }
    var view: View { View(froms: froms, ends: ends, written: written, mask: mask) }
}
