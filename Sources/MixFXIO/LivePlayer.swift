import Foundation
import Synchronization
import MixFXDSP
import MixFXEngine

/// How a live player opens its device.
public struct LiveOptions: Sendable {
    /// ALSA PCM name.
    public var device = "default"
    /// Device buffer, ms (≈ 50 by default: the control-to-sound latency).
    public var bufferMilliseconds = 50.0
    /// Period (one render block), ms; default a quarter of the buffer.
    public var periodMilliseconds: Double?
    /// Sample format to ask the device for (nil: float, falling back to what it takes).
    public var sampleFormat: SampleFormat?
    /// Where to start, seconds.
    public var startSeconds = 0.0
    /// Start again at the end.
    public var loop = false

    /// The defaults: `default` device, 50 ms buffer.
    public init() {}
}

/// What a live player reports; any thread may read it.
public struct LiveStatus: Sendable {
    /// What is being heard now, seconds into the session in song time (a tempo below 1 makes
    /// it advance slower than the clock; tracks at different tempos: the one furthest behind).
    public var positionSeconds: Double
    /// Seconds of playback heard since the start (pauses excluded): the wall time.
    public var playedSeconds: Double
    /// The tempo the song position moves at now (1 unless a tempo was set; on the mix's
    /// timeline, 1: the position is the timeline's).
    public var tempo: Double
    /// On the mix's timeline, each track's tempo where it is heard now: its tempo lane's or
    /// time map's there, or its steady tempo (in song time: empty, see `tempo`).
    public var trackTempos: [Double]
    /// The session's length, seconds.
    public var durationSeconds: Double
    /// Render time of the last period over the period's duration (1 = a full core's real time).
    public var dspLoad: Double
    /// The largest period load so far.
    public var maxDSPLoad: Double
    /// Mean render time over period duration, after the first periods.
    public var meanDSPLoad: Double
    /// Device underruns recovered so far.
    public var underruns: Int
    /// Frames of silence given because a file was read too late.
    public var diskUnderflowFrames: Int
    /// Paused (silence, position kept).
    public var isPaused: Bool
    /// Playback ended (end of session, stop, or error) and the device drained.
    public var isFinished: Bool
    /// Frames of the session rendered so far.
    public var framesRendered: Int
    /// Samples clamped on the way to an integer device format.
    public var clippedSamples: Int
}

/// Plays an engine through ALSA in real time on a dedicated render thread, while any thread
/// changes node parameters, pauses, seeks or stops.
///
/// The render thread renders one period at a time with a live `RenderKernel` (every change is
/// smoothed), converts it with the same `SampleConverter` as file output (so static settings give
/// the same samples as `mixfx render`), and writes it with blocking `snd_pcm_writei`, which paces
/// it. Its loop does not allocate, take locks or wait for anything but the device; files are
/// read ahead by a feeder thread into lock-free rings (`StreamingSource`). Pause, stop and seek
/// fade over about 10 ms.
///
/// **Loop** is the sources' (they go on from frame 0 at the session's end): the render thread
/// just renders on, and the seam is as smooth as the material. **Seek** is a hand-over: the
/// render thread fades out, asks every source to move (`StreamingSource.requestSeek`) and keeps
/// rendering silence while the feeder moves the files; then it clears the effects' state
/// (`RenderKernel.restartSignal`), renders the effects' latency silently (what a pre-roll would
/// have rendered at once) and fades in at the target frame, which from there on is exactly what
/// an offline render gives.
///
/// Threading: `start`, `pause`, `seek`, `stop`, `waitUntilFinished` and `status` may be called
/// from any thread except the render thread; parameters of the engine's nodes from any thread.
/// Cross-thread fields are atomics (requests, counters, status) except `failure`, behind a lock
/// taken only when something failed; `controlLock` serialises the control-side calls.
public final class LivePlayer: @unchecked Sendable {
    /// The live render kernel (its meters may be read from any thread).
    public let kernel: RenderKernel
    /// The opened device.
    public let output: ALSAOutput
    /// The read-ahead sources of the tracks.
    public let sources: [StreamingSource]
    /// The options it was opened with.
    public let options: LiveOptions

    private let interleaved: UnsafeMutableRawPointer
    private var converter: SampleConverter
    private let controlLock = Mutex<Void>(())
    private let stopRequested = Atomic<Bool>(false)
    private let pauseRequested = Atomic<Bool>(false)
    /// The frame a seek asked for (control side writes, render side clears when done; -1: none).
    private let seekTarget = Atomic<Int>(-1)
    private let finished = DispatchSemaphore(value: 0)
    private let feederFinished = DispatchSemaphore(value: 0)
    private let finishedFlag = Atomic<Bool>(false)
    private let feederStop = Atomic<Bool>(false)
    private let stallMilliseconds = Atomic<Int>(0)
    private let loadBits = Atomic<UInt64>(0)
    private let maxLoadBits = Atomic<UInt64>(0)
    private let meanLoadBits = Atomic<UInt64>(0)
    private let rendered = Atomic<Int>(0)
    // the song position (`RenderKernel.songPosition`) and frames played, as published by the
    // render thread with `rendered`
    private let songFrameBits = Atomic<UInt64>(0), songTempoBits = Atomic<UInt64>(1.0.bitPattern)
    private let played = Atomic<Int>(0)
    private let clipped = Atomic<Int>(0)
    private let underrunCount = Atomic<Int>(0)
    private let renderAllocations = Atomic<Int>(-1)
    private let warmUpAllocations = Atomic<Int>(-1)
    private var gain: Float = 1          // pause/stop/seek fade, render side
    private let firstWriteNanos = Atomic<UInt64>(0)
    private let drainedNanos = Atomic<UInt64>(0)
    /// The first error of the feeder or the render thread: written by either, read by any thread
    /// (`error`), so behind a lock (taken only when something failed, never in the render loop's
    /// normal path).
    private let failure = Mutex<(any Error)?>(nil)

    /// Opens the device and prepares the engine for it. The session is rendered at the rate the
    /// device takes (tracks are resampled when it differs from theirs).
    public init(engine: AudioEngine, sources: [StreamingSource], options: LiveOptions) throws {
        self.sources = sources
        self.options = options
        let layout = try engine.validate()
        // (a loop of no frames would have the feeder go round forever without writing)
        if options.loop && layout.frameCount == 0 { throw EngineError.nothingToLoop }
        let out = ALSAOutput(device: options.device)
        try out.open(sampleRate: layout.sampleRate, channelCount: layout.channelCount,
                     preferredFormat: options.sampleFormat, bufferMilliseconds: options.bufferMilliseconds,
                     periodMilliseconds: options.periodMilliseconds ?? options.bufferMilliseconds / 4)
        output = out
        if out.sampleRate != layout.sampleRate { engine.outputSampleRate = out.sampleRate }
        kernel = try engine.makeKernel(maximumFrameCount: out.periodFrames, mode: .live)
        converter = SampleConverter(sampleFormat: out.sampleFormat, channelCount: layout.channelCount)
        interleaved = .allocate(byteCount: out.periodFrames * layout.channelCount * 4, alignment: 16)
        if options.loop {
            kernel.loops = true
            // (the kernel's length: at the device's rate when the session was moved to it)
            for (i, s) in sources.enumerated() {
                s.setLoop(frames: kernel.trackSourceFramesPerPass[i])
            }
        }
        let start = options.startSeconds.isFinite ? min(max(0, options.startSeconds), durationSeconds) : 0
        try kernel.seek(toFrame: Int(start * Double(kernel.layout.sampleRate)))
        publishPosition()
    }

    deinit { interleaved.deallocate() }

    /// The session's length, seconds.
    public var durationSeconds: Double { Double(kernel.layout.frameCount) / Double(kernel.layout.sampleRate) }

    private let started = Atomic<Bool>(false)

    /// Starts the feeder and render threads.
    public func start() {
        guard !started.exchange(true, ordering: .relaxed) else { return }
        let feeder = Thread { [self] in feed() }
        feeder.name = "mixfx-feeder"
        feeder.start()
        let render = Thread { [self] in renderLoop() }
        render.name = "mixfx-render"
        render.stackSize = 1 << 20
        render.start()
    }

    /// Pauses (fading out) or resumes (fading in). Any thread but the render thread.
    public func pause(_ on: Bool) { pauseRequested.store(on, ordering: .relaxed) }

    /// Fades out and stops; `waitUntilFinished` returns once the device has drained the fade.
    public func stop() { stopRequested.store(true, ordering: .relaxed) }

    /// Test hook, for the package's own tests only (the CLI's `debug stall`): the render thread
    /// sleeps once for `milliseconds`, to provoke a real underrun.
    package func stall(milliseconds: Int) { stallMilliseconds.store(milliseconds, ordering: .relaxed) }

    /// Jumps to `seconds` (clamped to the session), with a short fade; returns once playback
    /// goes on from there (or has ended). Any thread but the render thread.
    public func seek(toSeconds requested: Double) throws {
        // anything but a finite time inside the session is clamped to it (NaN: the start)
        let seconds = requested.isNaN ? 0 : min(max(0, requested), durationSeconds)
        let frame = min(Int(seconds * Double(kernel.layout.sampleRate)), kernel.layout.frameCount)
        try controlLock.withLock { _ in
            guard !finishedFlag.load(ordering: .relaxed) else { return }
            guard started.load(ordering: .relaxed) else {
                // Not playing yet: the control side owns everything.
                try kernel.seek(toFrame: frame)
                publishPosition()
                return
            }
            seekTarget.store(frame, ordering: .relaxed)
            // the render thread hands over, the feeder moves the files, the effects start up
            while seekTarget.load(ordering: .relaxed) >= 0 && !finishedFlag.load(ordering: .relaxed) { usleep(1000) }
        }
    }

    /// Blocks until playback has ended and drained and both threads are done (neither touches
    /// the files or the device after it returns). Any thread but the render thread.
    public func waitUntilFinished() {
        finished.wait()
        finished.signal()
        guard started.load(ordering: .relaxed) else { return }
        feederFinished.wait()
        feederFinished.signal()
    }

    /// Allocations the render thread made after its warm-up, when the process runs with the test
    /// allocation counter preloaded (nil otherwise).
    public var renderThreadAllocations: Int? {
        let v = renderAllocations.load(ordering: .relaxed)
        return v < 0 ? nil : v
    }

    /// Allocations the render thread made in its first 16 periods (the warm-up), with the counter
    /// preloaded. A device's plugin may allocate there (PulseAudio's does); mixfx's own render
    /// path must not, not even once: a global first touched there would be built on the render
    /// thread (tested on the raw tap, whose plugin does not allocate).
    public var renderThreadWarmUpAllocations: Int? {
        let v = warmUpAllocations.load(ordering: .relaxed)
        return v < 0 ? nil : v
    }

    /// Wall-clock seconds from the first write to the end of the drain (after playback).
    public var playbackWallSeconds: Double {
        let a = firstWriteNanos.load(ordering: .relaxed), b = drainedNanos.load(ordering: .relaxed)
        return a > 0 && b > a ? Double(b - a) / 1e9 : 0
    }

    /// The error that ended playback early, if any.
    public var error: (any Error)? { failure.withLock { $0 } }

    /// Position, load and counters now. Any thread.
    public var status: LiveStatus {
        let rate = Double(kernel.layout.sampleRate)
        let frames = rendered.load(ordering: .relaxed)
        let delay = finishedFlag.load(ordering: .relaxed) ? 0 : min(output.bufferFrames, frames)
        let songTempo = Double(bitPattern: songTempoBits.load(ordering: .relaxed))
        var heard = max(0, Double(bitPattern: songFrameBits.load(ordering: .relaxed)) - Double(delay) * songTempo)
        if options.loop && kernel.layout.frameCount > 0 { heard = heard.truncatingRemainder(dividingBy: Double(kernel.layout.frameCount)) }
        return LiveStatus(
            positionSeconds: heard / rate,
            playedSeconds: Double(max(0, played.load(ordering: .relaxed) - delay)) / rate,
            tempo: songTempo,
            trackTempos: kernel.trackTempos(atTimelineFrame: Int(heard)),
            durationSeconds: durationSeconds,
            dspLoad: Double(bitPattern: loadBits.load(ordering: .relaxed)),
            maxDSPLoad: Double(bitPattern: maxLoadBits.load(ordering: .relaxed)),
            meanDSPLoad: Double(bitPattern: meanLoadBits.load(ordering: .relaxed)),
            underruns: underrunCount.load(ordering: .relaxed),
            diskUnderflowFrames: sources.reduce(0) { $0 + $1.underflowFrames },
            isPaused: pauseRequested.load(ordering: .relaxed),
            isFinished: finishedFlag.load(ordering: .relaxed),
            framesRendered: frames,
            clippedSamples: clipped.load(ordering: .relaxed))
    }

    // MARK: threads

    private func feed() {
        defer { feederFinished.signal() }
        while !feederStop.load(ordering: .relaxed) {
            do {
                for s in sources { try s.refill() }
            } catch {
                failure.withLock { if $0 == nil { $0 = error } }
                stop()
                return
            }
            usleep(5000)
        }
    }

    private func renderLoop() {
        RealtimePriority.raiseCurrentThread()
        let period = output.periodFrames
        let channels = kernel.layout.channelCount
        let periodSeconds = Double(period) / Double(kernel.layout.sampleRate)
        let fadeStep = 1 / Float(max(1, kernel.layout.sampleRate / 100))     // 10 ms
        let counter = AllocationCounter()
        var periods = 0
        var allocationsAtWarmUp: UInt64?
        let allocationsAtStart = counter.count
        var loadSum = 0.0
        // a seek under way: the frame playback resumes at, and whether the sources have moved
        var seekingTo = -1, sourcesMoved = false
        do {
            while true {
                if seekingTo < 0, case let target = seekTarget.load(ordering: .relaxed), target >= 0 {
                    // Fade out, then hand the sources to the feeder (see the type's notes).
                    try fadeOut(period: period, channels: channels, step: fadeStep)
                    seekingTo = target
                    sourcesMoved = false
                    for i in sources.indices { sources[i].requestSeek(toFrame: kernel.sourceFrame(track: i, restartingAt: target)) }
                }
                if seekingTo >= 0 && !sourcesMoved && allSourcesMoved() {
                    for s in sources { s.finishSeek() }
                    kernel.restartSignal(atFrame: seekingTo)
                    sourcesMoved = true
                }
                if seekingTo >= 0 && sourcesMoved && kernel.framesRendered >= seekingTo {
                    seekingTo = -1
                    publishPosition()
                    seekTarget.store(-1, ordering: .relaxed)
                }
                if stopRequested.load(ordering: .relaxed) {
                    try fadeOut(period: period, channels: channels, step: fadeStep)
                    break
                }
                let stall = stallMilliseconds.exchange(0, ordering: .relaxed)
                if stall > 0 { usleep(UInt32(stall * 1000)) }
                let t0 = DispatchTime.now().uptimeNanoseconds
                let paused = pauseRequested.load(ordering: .relaxed)
                var n = period
                if paused && gain == 0 && seekingTo < 0 {
                    kernel.output.clear(frameCount: period)
                } else {
                    // (seeking: up to the target frame exactly, silent)
                    let frames = seekingTo >= 0 && sourcesMoved ? min(period, seekingTo - kernel.framesRendered) : period
                    n = kernel.render(frameCount: frames)
                    if let failure = kernel.failure { throw failure }
                    if n == 0 { break }
                    applyGain(target: paused || seekingTo >= 0 ? 0 : 1, step: fadeStep, frames: n, channels: channels)
                }
                convertOutput(frames: n, channels: channels)
                let load = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9 / periodSeconds
                loadBits.store(load.bitPattern, ordering: .relaxed)
                if periods > 8 {
                    if load > Double(bitPattern: maxLoadBits.load(ordering: .relaxed)) {
                        maxLoadBits.store(load.bitPattern, ordering: .relaxed)
                    }
                    loadSum += load
                    meanLoadBits.store((loadSum / Double(periods - 8)).bitPattern, ordering: .relaxed)
                }
                if periods == 0 { firstWriteNanos.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed) }
                try output.write(interleaved, frameCount: n)
                if (!paused || gain > 0) && seekingTo < 0 {
                    played.add(n, ordering: .relaxed)
                    publishPosition()
                }
                underrunCount.store(output.underruns, ordering: .relaxed)
                clipped.store(converter.clippedSamples, ordering: .relaxed)
                periods += 1
                if periods == 16 {
                    allocationsAtWarmUp = counter.count
                    if let a = allocationsAtStart, let now = allocationsAtWarmUp {
                        warmUpAllocations.store(Int(now - a), ordering: .relaxed)
                    }
                }
            }
        } catch {
            failure.withLock { if $0 == nil { $0 = error } }
        }
        if let a = allocationsAtWarmUp, let now = counter.count {
            renderAllocations.store(Int(now - a), ordering: .relaxed)
        }
        output.drain()
        drainedNanos.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)
        underrunCount.store(output.underruns, ordering: .relaxed)
        feederStop.store(true, ordering: .relaxed)
        finishedFlag.store(true, ordering: .relaxed)
        finished.signal()
    }

    /// Publishes the position for `status` (render side, or the control side before the start).
    private func publishPosition() {
        rendered.store(kernel.framesRendered, ordering: .relaxed)
        let song = kernel.songPosition
        songFrameBits.store(song.frame.bitPattern, ordering: .relaxed)
        songTempoBits.store(song.tempo.bitPattern, ordering: .relaxed)
    }

    /// Whether the feeder has moved every source after a seek request (render side).
    private func allSourcesMoved() -> Bool {
        for s in sources where !s.seekIsDone { return false }
        return true
    }

    /// Ramps `gain` toward `target` across the block (pause and resume).
    private func applyGain(target: Float, step: Float, frames: Int, channels: Int) {
        guard gain != target || target != 1 else { return }
        var g = gain
        for i in 0..<frames {
            Smoother.linear(&g, toward: target, step: step)
            for c in 0..<channels { kernel.output.channel(c)[i] *= g }
        }
        gain = g
    }

    /// The kernel's output block into `interleaved`, in the device's format.
    private func convertOutput(frames: Int, channels: Int) {
        converter.convert(kernel.output, frameCount: frames, to: interleaved)
        output.fixup24(interleaved, sampleCount: frames * channels)
    }

    /// Renders one more period fading to silence and writes it.
    private func fadeOut(period: Int, channels: Int, step: Float) throws {
        guard gain > 0 else { return }
        let n = kernel.render(frameCount: period)
        if let failure = kernel.failure { throw failure }
        if n > 0 {
            let fadeStep = max(step, gain / Float(n))
            applyGain(target: 0, step: fadeStep, frames: n, channels: channels)
            convertOutput(frames: n, channels: channels)
            try output.write(interleaved, frameCount: n)
            played.add(n, ordering: .relaxed)
            publishPosition()
        }
        gain = 0
    }
}

/// Reads the per-thread allocation counter that the test support preloads
/// (`Tests/alsa/alloccount.c`, exporting `mixfx_alloc_count`). Absent in normal runs.
struct AllocationCounter {
    private typealias CountFunction = @convention(c) () -> UInt64
    private let function: CountFunction?

    init() {
        if let sym = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mixfx_alloc_count") {
            function = unsafeBitCast(sym, to: CountFunction.self)
        } else {
            function = nil
        }
    }

    var count: UInt64? { function?() }
}
