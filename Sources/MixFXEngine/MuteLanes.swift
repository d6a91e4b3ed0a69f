/// The tracks' mute and solo lanes (live, and the hand that takes one over), as each track's
/// gain factor per frame, so that a switch at a breakpoint is heard at its frame and does not
/// click.
///
/// A track is heard at timeline frame f when it is not muted and, if any track is soloed at f,
/// it is soloed: the rule of the static switches, evaluated from every track's lanes (a switch
/// without a lane: its value; live, a touched one: the hand's, read once per block). A step lane
/// at t seconds changes at the first frame f with f / rate ≥ t, as every lane's step does
/// (`PreparedLane`). Where a track's heard state changes, at frame F, its factor ramps linearly
/// over R = 10 ms from what it was (v₀) to the new state (v₁, 0 or 1), as `MuteRamp` does live:
/// frame F + k is v₀ + (v₁ − v₀)·(k + 1)/R for k < R − 1, and v₁ from F + R − 1 on: the ramp
/// starts at the breakpoint and ends 10 ms after it. A change while a ramp runs ramps again from
/// where it is. The track's DSP keeps running while it is silent (the mix only leaves it out),
/// so an unmute continues its signal.
///
/// The factors are worked out a block at a time (`advance`), each frame's from the frame before,
/// so the same whatever the blocks. A jump in the mix's frames (the start, a seek) starts at
/// the state of its frame, without a ramp (a live seek fades by itself). Per track the block
/// is all 1 (`open`), all 0 (`closed`: the track is left out of the mix, as a static mute
/// leaves it) or `mixed` (`factors`), which the kernel mixes run by run, so that frames at 1
/// and 0 mix exactly as the static switches do: a lane whose breakpoints all have one value
/// renders the bytes of that static setting.
///
/// Made with the kernel (control side: everything allocated then); advanced by the thread that
/// mixes, once per block, before the tracks are mixed. No allocation, lock or throw.
final class MuteLanes {
    /// A track's block: all 0, all 1, or factors between.
    static let closed: UInt8 = 0, open: UInt8 = 1, mixed: UInt8 = 2

    private struct Switch {
        let parameter: AudioParameter
        let lane: PreparedLane?
    }
    private let mutes: [Switch], solos: [Switch]
    private let trackCount: Int
    private let capacity: Int
    private let rampFrames: Int
    /// Timeline frames where a lane's step falls, increasing, without repeats.
    private let events: [Int]
    /// Per track: its factor at the last frame worked out, the ramp's ends and frames done.
    private var level: [Double], from: [Double], to: [Double], done: [Int]
    /// Per track, its block's state (`closed`, `open`, `mixed`) and its factors
    /// (`maximumFrameCount` per track; valid where `mixed`).
    let states: UnsafeMutablePointer<UInt8>
    let factors: UnsafeMutablePointer<Double>
    /// The block's switches: per track, muted and soloed (scratch); and the value of each
    /// switch a hand holds or that has no lane, read once per block (NaN: its lane plays).
    private var muted: [Bool], soloed: [Bool]
    private var muteHands: [Double], soloHands: [Double]
    /// Per track, whether a ramp ran in the block (its factors are then written).
    private var ramped: [Bool]
    private var expectedFrame = Int.min

    /// Whether any track of `players` has a mute or solo lane (the kernel then makes one).
    static func needed(_ players: [PlayerNode]) -> Bool {
        players.contains { $0.muteParameter.automation != nil || $0.soloParameter.automation != nil }
    }

    /// The switches of `players` (validated lanes), at `sampleRate`, for blocks of up to
    /// `maximumFrameCount` frames.
    init(players: [PlayerNode], sampleRate: Double, maximumFrameCount: Int) {
        func prepare(_ p: AudioParameter) -> Switch {
            Switch(parameter: p, lane: p.automation.flatMap { l in p.id.spec.automation.map { PreparedLane(l, scale: $0, sampleRate: sampleRate) } })
        }
        mutes = players.map { prepare($0.muteParameter) }
        solos = players.map { prepare($0.soloParameter) }
        trackCount = players.count
        capacity = maximumFrameCount
        rampFrames = max(1, Int(sampleRate) / 100)
        var frames = Set<Int>()
        for p in players {
            for lane in [p.muteParameter.automation, p.soloParameter.automation].compactMap({ $0 }) {
                for b in lane.breakpoints { frames.insert(Self.stepFrame(b.seconds, sampleRate: sampleRate)) }
            }
        }
        events = frames.sorted()
        let n = players.count
        level = .init(repeating: 1, count: n); from = level; to = level; done = .init(repeating: 0, count: n)
        muted = .init(repeating: false, count: n); soloed = muted
        muteHands = .init(repeating: .nan, count: n); soloHands = muteHands
        ramped = .init(repeating: false, count: n)
        states = .allocate(capacity: max(1, n))
        states.initialize(repeating: Self.open, count: max(1, n))
        factors = .allocate(capacity: max(1, n) * maximumFrameCount)
        factors.initialize(repeating: 1, count: max(1, n) * maximumFrameCount)
    }

    deinit {
        states.deallocate()
        factors.deallocate()
    }

    /// The first timeline frame f with f / rate ≥ `seconds`: where a step lane's breakpoint is
    /// heard (`PreparedLane` reads frame f at t = f / rate).
    static func stepFrame(_ seconds: Double, sampleRate: Double) -> Int {
        var f = Int((seconds * sampleRate).rounded(.up))
        while f > 0 && Double(f - 1) / sampleRate >= seconds { f -= 1 }
        while Double(f) / sampleRate < seconds { f += 1 }
        return f
    }

    /// The first event after timeline frame `frame` (nil: none).
    @inline(__always)
    private func nextEvent(after frame: Int) -> Int? {
        var lo = 0, hi = events.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if events[mid] <= frame { lo = mid + 1 } else { hi = mid }
        }
        return lo < events.count ? events[lo] : nil
    }

    /// Starts again at the next block's frame, without a ramp (a seek). Render side.
    func restart() { expectedFrame = Int.min }

    /// Works out every track's factors for the block of `count` frames from mix frame `first`,
    /// whose first timeline frame is `timeline` (`period` > 0: the timeline starts again at 0
    /// after `period` frames, a loop). Render side, once per block.
    /// Vouched for, as `LiveGains.advance` is (docs/realtime.md): it reads its parameters and
    /// lanes from arrays of references; it allocates and locks nothing (the allocation
    /// counters: `AutomationAllocationTests.movingLanesAllocateNothingOnTheRenderThread`, its `mute` run).
    @_semantics("no_performance_analysis")
    func advance(fromFrame first: Int, count n: Int, timeline: Int, period: Int) {
        let n = min(n, capacity)
        guard n > 0 else { return }
        let jump = first != expectedFrame
        expectedFrame = first + n
        for k in 0..<trackCount {
            muteHands[k] = Self.hand(mutes[k])
            soloHands[k] = Self.hand(solos[k])
            ramped[k] = false
        }
        var i = 0
        while i < n {
            let f = LoopPosition.frame(timeline + i, period: period)
            var end = n
            if period > 0 { end = min(end, i + period - f) }
            if let e = nextEvent(after: f) { end = min(end, i + e - f) }
            var anySolo = false
            for k in 0..<trackCount {
                muted[k] = (muteHands[k].isNaN ? mutes[k].lane?.value(atFrame: f) ?? 0 : muteHands[k]) != 0
                soloed[k] = (soloHands[k].isNaN ? solos[k].lane?.value(atFrame: f) ?? 0 : soloHands[k]) != 0
                if soloed[k] { anySolo = true }
            }
            for k in 0..<trackCount {
                let target: Double = !muted[k] && (!anySolo || soloed[k]) ? 1 : 0
                if jump && i == 0 {
                    level[k] = target; from[k] = target; to[k] = target; done[k] = rampFrames
                } else if target != to[k] {
                    from[k] = level[k]; to[k] = target; done[k] = 0
                }
                let out = factors + k * capacity
                // (the factors are written only once a ramp runs in the block: before it, the
                // track's level held, which is 0 or 1)
                if done[k] < rampFrames && !ramped[k] {
                    out.update(repeating: level[k], count: i)
                    ramped[k] = true
                }
                guard ramped[k] else { continue }
                var j = i
                while j < end && done[k] < rampFrames {
                    done[k] += 1
                    level[k] = done[k] >= rampFrames ? to[k] : from[k] + (to[k] - from[k]) * Double(done[k]) / Double(rampFrames)
                    out[j] = level[k]
                    j += 1
                }
                if j < end { (out + j).update(repeating: level[k], count: end - j) }
            }
            i = end
        }
        for k in 0..<trackCount {
            guard ramped[k] else {
                states[k] = level[k] == 1 ? Self.open : Self.closed
                continue
            }
            let out = factors + k * capacity
            let v = out[0]
            var same = true
            for j in 1..<n where out[j] != v { same = false; break }
            states[k] = same && v == 1 ? Self.open : same && v == 0 ? Self.closed : Self.mixed
        }
    }

    /// What a switch plays this block when its lane does not: a touched one's hand value, or the
    /// value of one without a lane; NaN when its lane plays.
    @inline(__always)
    private static func hand(_ s: Switch) -> Double {
        let p = s.parameter
        return s.lane != nil && !p.isTouched ? .nan : p.clampedValue
    }
}
