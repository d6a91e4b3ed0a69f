import Synchronization

/// One parameter value that any thread may set and the render thread reads once per block.
/// The value is a `Double` stored as bits in a relaxed atomic: no locks, no allocation.
public final class AudioParameter: Sendable {
    /// Which parameter this is (its unit, range and default are `id.spec`).
    public let id: ParameterID
    private let bits: Atomic<UInt64>
    // the range and default, copied from the registry once (the render side reads them)
    private let minimum: Double, maximum: Double, defaultValue: Double
    private let lane = Mutex<AutomationLane?>(nil)
    /// The gains' scheduled events (`schedule(value:atFrame:rampFrames:)`), nil for the others.
    let events: ParameterEventQueue?
    private let touched = Atomic<Bool>(false)
    private let beforeTouchBits = Atomic<UInt64>(Double.nan.bitPattern)
    private let playedBits: Atomic<UInt64>
    /// The touch takes of the gains, the EQ's settings, pitch and the switches (made with the first live kernel
    /// that plays the parameter, so offline renders never pay for it).
    private let recording = Mutex<TouchRecording?>(nil)
    private let recordsTouch: Bool
    /// The settings that record touches besides the gains: pitch, the EQ's, mute and solo.
    static let recordsTouches: [ParameterID] = [.mute, .solo, .pitchCents, .bassGainDB, .trebleGainDB, .bassFrequencyHz, .trebleFrequencyHz, .bassSlope, .trebleSlope,
                                                .eqGlobalGainDB]

    /// A parameter at `value`, or at its default. Any thread.
    public init(_ id: ParameterID, value: Double? = nil) {
        self.id = id
        let spec = id.spec
        minimum = spec.minimum
        maximum = spec.maximum
        defaultValue = spec.defaultValue
        bits = Atomic((value ?? spec.defaultValue).bitPattern)
        let gain = [.volume, .pan, .masterVolume].contains(id)
        events = gain ? ParameterEventQueue() : nil
        recordsTouch = gain || Self.recordsTouches.contains(id)
        playedBits = Atomic((value ?? spec.defaultValue).bitPattern)
    }

    /// Whether a hand holds the parameter (live playback: a move in the terminal mixer or on
    /// the control input). A touched gain plays `value` instead of its lane (reached in 10 ms
    /// from what played); released, the lane comes back over 250 ms (`TouchedValue`). Any
    /// thread; the render side reads it once per block.
    public var isTouched: Bool {
        get { touched.load(ordering: .relaxed) }
        set { touched.store(newValue, ordering: .relaxed) }
    }

    /// What a live kernel played while a hand held the parameter (`isTouched`) and while its
    /// lane came back (`TouchedValue`, `SmoothedTouch`): the gains' and the EQ's settings, once a live
    /// kernel plays them; nil before, and for the others. Control side, any thread.
    public var touchRecording: TouchRecording? { recording.withLock { $0 } }

    /// The recording a live kernel writes into, made the first time (control side, when the
    /// kernel is made); nil for a parameter that records no touches.
    func makeTouchRecording() -> TouchRecording? {
        guard recordsTouch else { return nil }
        return recording.withLock { r in
            if let r { return r }
            let made = TouchRecording()
            r = made
            return made
        }
    }

    /// Sets the value by hand and holds the parameter (`isTouched`) until `release()`.
    /// Any thread.
    public func touch(_ newValue: Double) {
        _ = beforeTouchBits.compareExchange(expected: Double.nan.bitPattern, desired: value.bitPattern, ordering: .relaxed)
        value = newValue
        isTouched = true
    }

    /// The value before the first `touch` (nil: never touched): what a parameter without a lane
    /// held until a hand moved it (`TouchTakes.mergedLane` writes it before the first take).
    /// Any thread.
    public var valueBeforeFirstTouch: Double? {
        let v = Double(bitPattern: beforeTouchBits.load(ordering: .relaxed))
        return v.isNaN ? nil : v
    }

    /// Lets the parameter go: its lane, if it has one, takes over again. Any thread.
    public func release() { isTouched = false }

    /// What a live kernel played last (at the end of each block: the lane, the hand or the way
    /// between them; the gains, the EQ's settings and the pitch, as smoothed; mute and solo as
    /// switched, the hand's or the lane's); the value until a live kernel plays it. Any thread.
    public internal(set) var playedValue: Double {
        get { Double(bitPattern: playedBits.load(ordering: .relaxed)) }
        set { playedBits.store(newValue.bitPattern, ordering: .relaxed) }
    }

    /// The value as set (possibly out of range: `AudioEngine.validate()` reports that).
    /// Any thread.
    public var value: Double {
        @_noAllocation @_noLocks
        get { Double(bitPattern: bits.load(ordering: .relaxed)) }
        set { bits.store(newValue.bitPattern, ordering: .relaxed) }
    }

    /// The parameter's automation lane (nil: none; its value then holds for the whole mix).
    /// Read when a kernel is made (`AudioEngine.makeKernel`), which validates it against the
    /// registry; the render side never reads it. Control side, any thread.
    public var automation: AutomationLane? {
        get { lane.withLock { $0 } }
        set { lane.withLock { $0 = newValue } }
    }

    /// The value clamped into the parameter's range; what the render side uses.
    public var clampedValue: Double {
        @inline(__always) @_noAllocation @_noLocks
        get {
            let v = value
            guard v.isFinite else { return defaultValue }
            return min(max(v, minimum), maximum)
        }
    }
}
