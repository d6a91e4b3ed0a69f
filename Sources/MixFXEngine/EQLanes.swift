import MixFXDSP

/// The lanes of one shelf EQ node, read by its `EQKernel`: each setting that can be automated
/// (the gains, corners, slopes and global gain; not the bypasses) as the node's parameter, a
/// constant or a moving lane (`AutomatedValue`). A setting a hand holds plays its own value
/// instead (touch, `SmoothedTouch`).
struct EQLanes {
    let bassGain, bassFrequency, bassSlope, trebleGain, trebleFrequency, trebleSlope, globalGain: AutomatedValue
    /// Whether any lane moves (else the constants simply replace the parameters' values).
    let moves: Bool
    /// (held unretained for the checked render path; retained once here, given up by `release`)
    private let touch: Unmanaged<SmoothedTouch>

    /// The lanes of `node`'s parameters, nil when it has none, unless `always` (live: a hand's
    /// moves of a setting without a lane are recorded too, and written into a lane at a save).
    /// Control side.
    init?(_ node: ShelfEQNode, sampleRate: Double, always: Bool = false) {
        let all = [node.bassGain, node.bassFrequency, node.bassSlopeParameter, node.trebleGain, node.trebleFrequency,
                   node.trebleSlopeParameter, node.globalGain]
        guard always || all.contains(where: { $0.automation != nil }) else { return nil }
        let v = all.map { AutomatedValue($0, sampleRate: sampleRate) }
        (bassGain, bassFrequency, bassSlope, trebleGain, trebleFrequency, trebleSlope, globalGain) = (v[0], v[1], v[2], v[3], v[4], v[5], v[6])
        moves = v.contains { $0.moves }
        touch = .passRetained(SmoothedTouch(all))
    }

    /// Playback jumped: touch takes that run end (`SmoothedTouch.cut`). Render side.
    func cutTakes() { touch._withUnsafeGuaranteedRef { $0.cut() } }

    /// Live looped playback: the timeline's length (0: no loop), for the touch takes held over
    /// a seam (`SmoothedTouch.loopFrames`). Control side.
    func setLoop(frames: Int) { touch._withUnsafeGuaranteedRef { $0.loopFrames = frames } }

    /// Gives up the lanes (the owner's `deinit`; see `AutomatedValue.release`).
    func release() {
        for a in [bassGain, bassFrequency, bassSlope, trebleGain, trebleFrequency, trebleSlope, globalGain] { a.release() }
        touch.release()
    }

    /// `base` (the node's settings) with each laned setting's value at timeline frame `frame`.
    func settings(_ base: ShelfEQSettings, atFrame frame: Int) -> ShelfEQSettings {
        var s = base
        let touch = touch
        func set(_ x: inout Double, _ a: AutomatedValue, _ i: Int) {
            // (touched, or no lane: the parameter's own value, which `base` holds)
            if touch._withUnsafeGuaranteedRef({ $0.isTouched(i, atFrame: frame, value: x) }) { return }
            if a.isParameter { return }
            x = a.value(atFrame: frame)
        }
        set(&s.bass.gainDB, bassGain, 0)
        set(&s.bass.frequencyHz, bassFrequency, 1)
        set(&s.bass.slope, bassSlope, 2)
        set(&s.treble.gainDB, trebleGain, 3)
        set(&s.treble.frequencyHz, trebleFrequency, 4)
        set(&s.treble.slope, trebleSlope, 5)
        set(&s.globalGainDB, globalGain, 6)
        return s
    }
}
