import Synchronization

/// One point of a touch take: the value a gain played at a frame of the mix's timeline.
public struct TouchPoint: Sendable, Equatable {
    /// The timeline frame (at the kernel's rate; with `--loop`, the frame within the pass).
    public var frame: Int
    /// The value played there, in the parameter's unit.
    public var value: Double
    /// The first point of a take (a touch began, or playback jumped: a seek, a loop's seam).
    public var startsTake: Bool
    /// The point replaces what its take recorded at its frame and after: a pitch's points are
    /// recorded at the frame the next vocoder frame is heard from, ahead of the output, and a
    /// change that switches to a fresh vocoder is heard at the output at once.
    public var cutsBack: Bool

    public init(frame: Int, value: Double, startsTake: Bool, cutsBack: Bool = false) {
        self.frame = frame
        self.value = value
        self.startsTake = startsTake
        self.cutsBack = cutsBack
    }
}

/// What a touched gain played, on its way from the render side to the control side: a bounded
/// single-producer, single-consumer ring of `TouchPoint`s. The render side (the one kernel that
/// plays the parameter) writes with `push`, which never allocates, locks or waits (a full ring
/// drops the point and counts it); the control side drains it with `drain`, one thread at a
/// time (`TouchTakes` holds a lock around it). A slot is 16 bytes (the frame, its top bits
/// `startsTake` and `cutsBack`, and the value), left uninitialised until written, so a ring costs memory only
/// once something is recorded (every gain of every session has one).
public final class TouchRecording: @unchecked Sendable {
    /// Points the ring holds: a render side writes one to three per block while a touch lasts
    /// (at 48 kHz in blocks of 256 frames, at most about 560 a second), so about 4 s of them.
    public static let capacity = 2048
    private let mask = TouchRecording.capacity - 1
    private static let startFlag = 1 << 62, cutFlag = 1 << 61
    private let slots: UnsafeMutablePointer<(frame: Int, value: Double)>
    /// Points written (render side stores, control side loads), points read (the reverse).
    private let written = Atomic<Int>(0), read = Atomic<Int>(0)
    private let droppedCount = Atomic<Int>(0)

    init() {
        slots = .allocate(capacity: Self.capacity)
    }

    deinit { slots.deallocate() }

    /// Points dropped because the control side had not drained the ring. Any thread.
    public var dropped: Int { droppedCount.load(ordering: .relaxed) }

    /// Adds a point (render side; false, and counted, when the ring is full).
    @discardableResult
    func push(_ point: TouchPoint) -> Bool {
        let w = written.load(ordering: .relaxed)
        guard w - read.load(ordering: .acquiring) < Self.capacity else {
            droppedCount.add(1, ordering: .relaxed)
            return false
        }
        // (frames are from 0 and far below 2^61: the top bits carry `startsTake` and `cutsBack`)
        let flags = (point.startsTake ? Self.startFlag : 0) | (point.cutsBack ? Self.cutFlag : 0)
        (slots + (w & mask)).initialize(to: (point.frame | flags, point.value))
        written.store(w + 1, ordering: .releasing)
        return true
    }

    /// Takes every point written so far, in order (control side, one thread at a time).
    public func drain(into out: inout [TouchPoint]) {
        let r = read.load(ordering: .relaxed)
        let w = written.load(ordering: .acquiring)
        for i in r..<w {
            let (f, v) = slots[i & mask]
            out.append(TouchPoint(frame: f & ~(Self.startFlag | Self.cutFlag), value: v, startsTake: f & Self.startFlag != 0,
                                  cutsBack: f & Self.cutFlag != 0))
        }
        read.store(w, ordering: .releasing)
    }
}
