import CMixFX
import MixFX
import Synchronization

/// What `mixfx_timepitch` is: the engine's time-pitch processor (`DSPCopy.active`'s
/// `PitchShifter`, as a track of `mixfx render` or `mixfx play` runs it) behind a queue, so that
/// a C caller pushes planar blocks and takes the frames that are ready.
///
/// - Offline without a tempo: the in-place shifter; output n is input n − L (L its latency),
///   and `endInput` drains L frames of silence through it.
/// - Offline with a tempo R: the shifter pulls its input from the queue as its output needs it
///   (`process(into:...pull:)`); a frame is ready once the input it needs is queued, and after
///   `endInput` the output ends at round(n/R) frames, the engine's length for a track.
/// - Live: the streaming shifter, which reads ahead of its output; the queue starts with
///   `lookAheadFrames` of silence (the look-ahead of every live setting), so that a caller
///   that cannot give input ahead gets a fixed latency instead. A block is run only as far as
///   the input time stays that far behind the input queued.
///
/// Threading: one thread at a time, except the live setters (`pitchCents`, `tempo`,
/// `formants`), which store atomics that `process` reads once per call.
final class TimePitchProcessor: @unchecked Sendable {
    /// The largest block a C caller may give (the header states it).
    static let maximumBlockFrames = 65_536
    /// The C API's channel counts: the shifter's.
    static let channelRange = 1...2

    let isLive: Bool
    let spec: ProcessSpec
    /// What the shifter was prepared with (live: the overlap; the rest are the atomics').
    private(set) var settings = PitchShifterSettings()
    private let shifter: any PitchShifting
    private var queue: InputQueue
    /// Input taken since `reset`; frames handed to the shifter (tempo and live); output written.
    private var inputFrames = 0, pulledFrames = 0, outputFrames = 0
    /// Offline without a tempo, after `endInput`: silent frames still to run through.
    private var drainFrames = 0
    private(set) var inputEnded = false
    /// Input was taken since creation or `reset` (offline settings are then fixed).
    private(set) var started = false
    /// Frames a pull asked for that were not queued (silence instead; stays 0: tests check it).
    private(set) var underrunFrames = 0

    /// Live targets, as bit patterns of their doubles (any thread).
    private let pitchBits = Atomic<UInt64>(0.0.bitPattern)
    private let tempoBits = Atomic<UInt64>(1.0.bitPattern)
    private let formantsOn = Atomic<Bool>(false)

    /// Checked by the caller: rate, channels and block size in range. Control side.
    init(sampleRate: Double, channelCount: Int, live: Bool, maximumBlockFrames: Int) {
        isLive = live
        spec = ProcessSpec(sampleRate: sampleRate, maximumFrameCount: maximumBlockFrames, channelCount: channelCount)
        shifter = DSPCopy.active.makePitchShifter()
        queue = InputQueue(channelCount: channelCount, capacityFrames: 1)
        prepare()
        // the registry's specs are made on first use: here, not in the first setter, which
        // must not allocate (mixfx.h)
        for id in [ParameterID.pitchCents, .tempo, .pitchOverlap] { _ = id.spec.problem(with: id.spec.defaultValue) }
    }

    /// The output's lag behind the input, frames: offline the shifter's (0 with a tempo), live
    /// the silence the queue starts with.
    var latencyFrames: Int { isLive ? shifter.lookAheadFrames : shifter.latencyFrames }

    /// Prepares the shifter for `settings` and sizes the queue (allocates; control side).
    private func prepare() {
        shifter.prepare(spec, settings: settings, mode: isLive ? .streaming : .offline, sharesWorkspace: false, bounds: nil)
        let block = spec.maximumFrameCount
        let capacity: Int
        if isLive {
            // the look-ahead's silence, and blocks at any live tempo
            let fastest = PitchShifterSettings.liveTempoRange.upperBound
            capacity = shifter.lookAheadFrames + Int((Double(block) * fastest).rounded(.up)) + 8 * block
        } else if settings.changesTempo {
            capacity = shifter.inputAheadFrames + Int((Double(block) * settings.tempo).rounded(.up)) + 2 * block + 8
        } else {
            capacity = 2 * block
        }
        queue = InputQueue(channelCount: spec.channelCount, capacityFrames: capacity)
        if isLive { warmUp() }
        reset()
    }

    /// Live: one block through the whole path, so that nothing a first call would set up
    /// (runtime metadata, tables) is left for the real-time thread.
    private func warmUp() {
        reset()
        let scratch = AudioBuffer(channelCount: spec.channelCount, capacityFrames: spec.maximumFrameCount)
        let out = (0..<spec.channelCount).map { Optional(scratch.channel($0)) }
        queue.append(nil, frameCount: min(queue.room, spec.maximumFrameCount))
        out.withUnsafeBufferPointer { o in
            _ = runLive(o.baseAddress!, capacity: spec.maximumFrameCount)
        }
    }

    /// Clears the signal and the queue (live: the queue is primed again); settings kept. No
    /// allocation.
    func reset() {
        shifter.reset()
        queue.clear()
        if isLive { queue.append(nil, frameCount: shifter.lookAheadFrames) }
        inputFrames = 0; pulledFrames = 0; outputFrames = 0; drainFrames = 0
        inputEnded = false
        started = false
    }

    // MARK: - Settings

    /// Offline, or any live setting that needs a new shifter: only before processing starts.
    private func reprepare(_ change: (inout PitchShifterSettings) -> Void, what: String) throws(CAPIError) {
        guard !started else {
            throw .state("\(what) is fixed once processing has started\(isLive ? "" : " (offline)"): call mixfx_timepitch_reset first")
        }
        change(&settings)
        prepare()
    }

    func setPitchCents(_ cents: Double) throws(CAPIError) {
        try check(.pitchCents, cents, name: "cents")
        if isLive { pitchBits.store(cents.bitPattern, ordering: .relaxed); return }
        try reprepare({ $0.pitchCents = cents }, what: "the pitch")
    }

    func setTempo(_ tempo: Double) throws(CAPIError) {
        if isLive {
            let live = PitchShifterSettings.liveTempoRange
            guard tempo.isFinite, live.contains(tempo) else {
                throw .range("tempo: \(tempo) is outside the live range (allowed: from \(live.lowerBound) to \(live.upperBound) ×)")
            }
            tempoBits.store(tempo.bitPattern, ordering: .relaxed)
            return
        }
        try check(.tempo, tempo, name: "tempo")
        try reprepare({ $0.tempo = tempo }, what: "the tempo")
    }

    func setFormants(_ on: Int32) throws(CAPIError) {
        guard on == 0 || on == 1 else { throw .range("on: \(on) is not 0 (off) or 1 (on)") }
        if isLive { formantsOn.store(on == 1, ordering: .relaxed); return }
        try reprepare({ $0.preserveFormants = on == 1 }, what: "formant preservation")
    }

    func setOverlap(_ overlap: Int32) throws(CAPIError) {
        try check(.pitchOverlap, Double(overlap), name: "overlap")
        try reprepare({ $0.overlap = Int(overlap) }, what: "the overlap")
    }

    /// A value checked against the engine's parameter registry.
    private func check(_ id: ParameterID, _ value: Double, name: String) throws(CAPIError) {
        let spec = id.spec
        if let problem = spec.problem(with: value) { throw .range("\(name): \(problem) (allowed: \(spec.allowedText))") }
    }

    // MARK: - Processing

    /// Offline: no more input; the rest drains.
    func endInput() throws(CAPIError) {
        guard !isLive else { throw .state("a live processor has no end of input (it runs until reset)") }
        if !inputEnded { drainFrames = shifter.latencyFrames }
        inputEnded = true
        started = true
    }

    /// Queues `frameCount` input frames and writes at most `capacity` ready frames to
    /// `output`; the count written. No allocation.
    func process(_ input: UnsafePointer<UnsafePointer<Float>?>?, frameCount: Int,
                 _ output: UnsafePointer<UnsafeMutablePointer<Float>?>, capacity: Int) throws(CAPIError) -> Int {
        if frameCount > 0 {
            guard !inputEnded else { throw .state("input after mixfx_timepitch_end_input: call mixfx_timepitch_reset to start again") }
            guard frameCount <= queue.room else {
                throw CAPIError(MIXFX_ERR_FULL, "the input queue has room for \(queue.room) frames, not \(frameCount): take output first (input_frames 0)")
            }
            queue.append(input, frameCount: frameCount)
            inputFrames += frameCount
            started = true
        }
        if isLive { return runLive(output, capacity: capacity) }
        return settings.changesTempo ? runTempo(output, capacity: capacity) : runInPlace(output, capacity: capacity)
    }

    /// Offline without a tempo: queued input (then the drain's silence) shifted in place in the
    /// output, one frame out per frame in.
    private func runInPlace(_ output: UnsafePointer<UnsafeMutablePointer<Float>?>, capacity: Int) -> Int {
        var done = 0
        while done < capacity {
            let fromQueue = queue.count > 0
            let n = min(capacity - done, spec.maximumFrameCount, fromQueue ? queue.count : drainFrames)
            if n == 0 { break }
            let left = output[0]! + done, right = spec.channelCount > 1 ? output[1]! + done : nil
            if fromQueue {
                let (l, r) = queue.take(n)
                left.update(from: l, count: n)
                if let right, let r { right.update(from: r, count: n) }
            } else {
                left.update(repeating: 0, count: n)
                right?.update(repeating: 0, count: n)
                drainFrames -= n
            }
            shifter.process(left: left, right: right, frameCount: n)
            done += n
        }
        outputFrames += done
        return done
    }

    /// Offline with a tempo R: output frame o reads input up to ⌈o·R⌉ + the shifter's input
    /// look-ahead, so frames are ready while that is queued; after the end, up to round(n/R).
    private func runTempo(_ output: UnsafePointer<UnsafeMutablePointer<Float>?>, capacity: Int) -> Int {
        let tempo = settings.tempo
        let ready: Int
        if inputEnded {
            ready = max(0, Int((Double(inputFrames) / tempo).rounded()) - outputFrames)
        } else {
            let available = pulledFrames + queue.count
            func needed(_ frames: Int) -> Int {   // input needed for output frames 0..<frames
                Int((Double(frames - 1) * tempo).rounded(.up)) + shifter.inputAheadFrames
            }
            var end = max(outputFrames, Int(Double(available - shifter.inputAheadFrames) / tempo) + 1)
            while end > outputFrames && needed(end) > available { end -= 1 }
            while needed(end + 1) <= available { end += 1 }
            ready = end - outputFrames
        }
        var done = 0
        let limit = min(capacity, ready)
        while done < limit {
            let n = min(limit - done, spec.maximumFrameCount)
            shifter.process(into: output[0]! + done, spec.channelCount > 1 ? output[1]! + done : nil, frameCount: n,
                            maximumPull: spec.maximumFrameCount, pull: pull)
            done += n
        }
        outputFrames += done
        return done
    }

    /// Live: the settings once per call, then blocks while the input time after a block stays
    /// `lookAheadFrames` behind the input queued (at tempo 1: as many frames out as came in).
    private func runLive(_ output: UnsafePointer<UnsafeMutablePointer<Float>?>, capacity: Int) -> Int {
        let tempo = Double(bitPattern: tempoBits.load(ordering: .relaxed))
        shifter.setPitchCents(Double(bitPattern: pitchBits.load(ordering: .relaxed)))
        shifter.setPreserveFormants(formantsOn.load(ordering: .relaxed))
        shifter.setTempo(tempo)
        let lookAhead = shifter.lookAheadFrames
        var done = 0
        while done < capacity {
            // the input time advances at most this fast in a block (the glide lies between)
            let fastest = max(shifter.currentTempo, tempo)
            let room = Double(pulledFrames + queue.count - lookAhead) - shifter.inputTime
            let n = min(capacity - done, spec.maximumFrameCount, max(0, Int((room / fastest).rounded(.down))))
            if n == 0 { break }
            shifter.process(live: output[0]! + done, spec.channelCount > 1 ? output[1]! + done : nil, frameCount: n,
                            maximumPull: spec.maximumFrameCount, pull: pull)
            done += n
        }
        outputFrames += done
        return done
    }

    /// The shifter's input: the next `n` queued frames; past the end (or, never expected, past
    /// what is queued) silence.
    private func pull(_ n: Int) -> (UnsafePointer<Float>, UnsafePointer<Float>?) {
        if queue.count < n {
            if !inputEnded { underrunFrames += n - queue.count }
            queue.append(nil, frameCount: n - queue.count)
        }
        pulledFrames += n
        return queue.take(n)
    }
}
