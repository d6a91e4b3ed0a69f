import Synchronization

/// Scheduled changes of a gain parameter (AVAudioEngine's `AUParameter` ramps,
/// `scheduleParameterBlock`): `AudioParameter.schedule(value:atFrame:rampFrames:)` from any
/// thread, applied sample-accurately by the kernel that renders the mix (offline and live).
///
/// An event (F, R, v): from frame F of the mix's timeline the value moves from what it is at
/// F − 1 (v₀) to v in R frames, linearly: frame F + k holds v₀ + (v − v₀)·min(1, (k + 1)/R), so
/// frame F + R − 1 holds v, and R = 0 (or 1) is a step at F. An event whose frame has passed
/// when the kernel takes it starts at the next frame rendered; a later event replaces what is
/// left of a ramp, from where the ramp is. When its ramp is over, the parameter's `value` is v
/// (the control side sees it); while a schedule runs, it, not `value`, sets the gain.
///
/// The queue between the callers and the render side: a bounded MPSC ring (`capacity` events,
/// per slot a sequence number, D. Vyukov's bounded queue): a caller claims a slot with one
/// compare-exchange and publishes it with a release store; the render side takes events with
/// an acquire load. No lock, no allocation on either side; full, `schedule` throws
/// `ScheduleError.full` and nothing is queued.
public final class ParameterEventQueue: @unchecked Sendable {
    /// One scheduled change.
    public struct Event: Sendable, Equatable {
        public var frame: Int
        public var rampFrames: Int
        public var value: Double
    }

    /// Events the queue holds before `schedule` reports it full.
    public static let capacity = 256
    private let mask = ParameterEventQueue.capacity - 1
    private let slots: UnsafeMutablePointer<Event>
    private let sequences: UnsafeMutablePointer<Atomic<Int>>
    private let enqueuePosition = Atomic<Int>(0)
    /// The render side's position (one consumer).
    private var dequeuePosition = 0

    init() {
        slots = .allocate(capacity: Self.capacity)
        slots.initialize(repeating: Event(frame: 0, rampFrames: 0, value: 0), count: Self.capacity)
        sequences = .allocate(capacity: Self.capacity)
        for i in 0..<Self.capacity { (sequences + i).initialize(to: Atomic(i)) }
    }

    deinit {
        slots.deallocate()
        sequences.deinitialize(count: Self.capacity)
        sequences.deallocate()
    }

    /// Queues `event`; false when full. Any thread, lock-free.
    func push(_ event: Event) -> Bool {
        var position = enqueuePosition.load(ordering: .relaxed)
        while true {
            let sequence = sequences[position & mask].load(ordering: .acquiring)
            let difference = sequence - position
            if difference == 0 {
                let (exchanged, original) = enqueuePosition.compareExchange(expected: position, desired: position + 1, ordering: .relaxed)
                if exchanged { break }
                position = original
            } else if difference < 0 {
                return false   // the slot still holds an event the render side has not taken
            } else {
                position = enqueuePosition.load(ordering: .relaxed)
            }
        }
        slots[position & mask] = event
        sequences[position & mask].store(position + 1, ordering: .releasing)
        return true
    }

    /// Whether no event waits (render side).
    @inline(__always)
    var isEmpty: Bool { sequences[dequeuePosition & mask].load(ordering: .acquiring) != dequeuePosition + 1 }

    /// The next event, nil when none. The render side only (one consumer); no allocation.
    @inline(__always)
    func pop() -> Event? {
        let position = dequeuePosition
        let sequence = sequences[position & mask].load(ordering: .acquiring)
        guard sequence == position + 1 else { return nil }
        let event = slots[position & mask]
        sequences[position & mask].store(position + Self.capacity, ordering: .releasing)
        dequeuePosition = position + 1
        return event
    }
}

/// Why `AudioParameter.schedule` refused an event.
public enum ScheduleError: Error, Equatable, CustomStringConvertible {
    /// The queue holds `ParameterEventQueue.capacity` events the render side has not taken yet.
    case full(parameter: String)
    /// Only gains are scheduled (the volumes and the pan).
    case notSchedulable(parameter: String)
    /// A value outside the parameter's range, a frame or a ramp below 0.
    case invalid(parameter: String, problem: String)

    public var description: String {
        switch self {
        case .full(let p):
            "\(p): \(ParameterEventQueue.capacity) scheduled events are waiting for the render side (allowed: at most \(ParameterEventQueue.capacity) at a time; retry once it has rendered)"
        case .notSchedulable(let p):
            "\(p) cannot be scheduled (allowed: volume, pan and the master volume; lanes move the others)"
        case .invalid(let p, let problem):
            "\(p): \(problem)"
        }
    }
}

extension AudioParameter {
    /// Schedules the value `value` at frame `frame` of the mix's timeline, reached in
    /// `rampFrames` frames (see `ParameterEventQueue`). Any thread; lock-free, no allocation.
    /// Throws when the queue is full, the parameter is not a gain, or an argument is invalid.
    public func schedule(value: Double, atFrame frame: Int, rampFrames: Int = 0) throws(ScheduleError) {
        guard let events else { throw .notSchedulable(parameter: id.spec.key) }
        if let problem = id.spec.problem(with: value) { throw .invalid(parameter: id.spec.key, problem: "\(problem) (allowed: \(id.spec.allowedText))") }
        guard frame >= 0, rampFrames >= 0 else {
            throw .invalid(parameter: id.spec.key, problem: "frame \(frame), ramp \(rampFrames) (allowed: frames and ramps from 0)")
        }
        guard events.push(.init(frame: frame, rampFrames: rampFrames, value: value)) else { throw .full(parameter: id.spec.key) }
    }
}

/// The render side of one parameter's schedule: the events taken from its queue, in frame
/// order (those started are kept while there is room, so that a render's second pass, or a
/// seek back, plays them again), and the ramp that runs. `render` writes the values of a
/// block's frames. Made with the kernel (control side: its event list is allocated then); used
/// by the thread that mixes. One kernel at a time takes a parameter's events (the queue has
/// one consumer).
final class ScheduledValue {
    let parameter: AudioParameter
    private let queue: ParameterEventQueue
    /// Events taken, sorted by frame (insertion order among equal frames); `next` is the first
    /// not started.
    private let events: UnsafeMutablePointer<ParameterEventQueue.Event>
    private var eventCount = 0, next = 0
    private let capacity = ParameterEventQueue.capacity * 2
    /// The ramp: from `from` to `to` over `length` frames starting at `start` (length 0: none).
    private var start = 0, length = 0
    private var from = 0.0, to = 0.0
    /// The value before the next frame rendered while a ramp runs.
    private var last = 0.0
    /// The value before the first event kept started (nil: none started yet).
    private var initialValue: Double?

    /// `parameter` and `queue` as the render side reads them (see `Unretained`).
    private let parameterRef: ParameterRef
    private let queueRef: Unretained<ParameterEventQueue>

    init?(_ parameter: AudioParameter) {
        guard let queue = parameter.events else { return nil }
        self.parameter = parameter
        self.queue = queue
        parameterRef = ParameterRef(parameter)
        queueRef = Unretained(queue)
        events = .allocate(capacity: capacity)
    }

    deinit { events.deallocate() }

    /// Nothing queued, waiting or running (render side).
    /// (Conditions on locals here: the right side of `&&` is a closure, and one capturing `self`
    /// is refused by the realtime check.)
    @inline(__always)
    var isIdle: Bool {
        if length != 0 { return false }
        if next != eventCount { return false }
        return queueRef.unmanaged._withUnsafeGuaranteedRef { $0.isEmpty }
    }

    /// Takes the queued events (render side, once per block; no allocation). An event for a
    /// frame already rendered goes first among those not started (it starts at the next frame
    /// rendered). When the list is full, the started events make room; events beyond that
    /// wait in the queue.
    func take() {
        let queue = queueRef.unmanaged
        while !queue._withUnsafeGuaranteedRef({ $0.isEmpty }) {
            if eventCount == capacity {
                guard next > 0 else { return }
                // (a memmove: `update(from:count:)` is refused by the realtime check)
                UnsafeMutableRawPointer(events).copyMemory(from: events + next,
                                                           byteCount: (eventCount - next) * MemoryLayout<ParameterEventQueue.Event>.stride)
                eventCount -= next
                next = 0
                initialValue = nil
            }
            guard let e = queue._withUnsafeGuaranteedRef({ $0.pop() }) else { return }
            var i = eventCount
            let events = events, first = next
            while i > first && events[i - 1].frame > e.frame { events[i] = events[i - 1]; i -= 1 }
            events[i] = e
            eventCount += 1
        }
    }

    /// Whether frames `first ..< first + count` are the schedule's (a ramp runs, or an event
    /// starts within them).
    func isActive(fromFrame first: Int, count: Int) -> Bool {
        if length > 0 { return true }
        let next = next, eventCount = eventCount, events = events
        return next < eventCount && events[next].frame < first + count
    }

    /// The values of frames `first ..< first + count` into `out` (`base`: the value before any
    /// event, the parameter's or its lane's at `first`). When a ramp ends, the parameter's
    /// value becomes its target. Render side; no allocation.
    func render(into out: UnsafeMutablePointer<Double>, fromFrame first: Int, count: Int, base: Double) {
        // (no ramp running: from the value the gain has now)
        var value = length > 0 ? last : base
        let events = events, eventCount = eventCount
        for i in 0..<count {
            let f = first + i
            var n = next
            while n < eventCount && events[n].frame <= f {
                let e = events[n]
                if n == 0 { if initialValue == nil { initialValue = value } }
                n += 1
                next = n
                from = value; to = e.value; start = f; length = max(1, e.rampFrames)
            }
            if length > 0 {
                let k = f - start + 1
                if k >= length {
                    value = to
                    length = 0
                    let v = to
                    parameterRef { $0.value = v }
                } else {
                    value = from + (to - from) * Double(k) / Double(length)
                }
            }
            out[i] = value
        }
        last = value
    }

    /// Back to frame `frame` (a seek, or a render's next pass from 0): no ramp runs, the
    /// events kept from that frame on will start again, and the parameter's value is what
    /// those before it left (the last one's target, or the value before the first). Render
    /// side.
    func reset(toFrame frame: Int) {
        length = 0
        next = 0
        while next < eventCount && events[next].frame < frame { next += 1 }
        if next > 0 {
            parameter.value = events[next - 1].value
        } else if let initialValue {
            parameter.value = initialValue
        }
    }
}
