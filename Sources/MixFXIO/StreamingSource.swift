import Synchronization
import MixFXDSP
import MixFXEngine

/// A single-producer single-consumer ring of planar float frames. The producer and the consumer
/// may run on different threads without locks: each owns one index, published with
/// release/acquire atomics.
/// `@unchecked Sendable`: the storage is shared, but a slot is written by the producer only
/// before it publishes it and read by the consumer only after (the indexes' release/acquire).
public final class FrameRing: @unchecked Sendable {
    /// Channels per frame.
    public let channelCount: Int
    /// Frames the ring holds.
    public let capacity: Int
    private let storage: UnsafeMutablePointer<Float>
    private let writeIndex = Atomic<Int>(0)
    private let readIndex = Atomic<Int>(0)

    /// An empty ring (control side).
    public init(channelCount: Int, capacity: Int) {
        self.channelCount = channelCount
        self.capacity = capacity
        storage = .allocate(capacity: channelCount * capacity)
        storage.initialize(repeating: 0, count: channelCount * capacity)
    }

    deinit { storage.deallocate() }

    /// Frames the consumer can read now.
    public var availableFrames: Int { writeIndex.load(ordering: .acquiring) - readIndex.load(ordering: .relaxed) }
    /// Frames the producer can write now.
    public var freeFrames: Int { capacity - (writeIndex.load(ordering: .relaxed) - readIndex.load(ordering: .acquiring)) }

    /// Producer: appends `count` frames from `buffer` (count ≤ freeFrames).
    public func write(from buffer: AudioBuffer, count: Int) {
        let w = writeIndex.load(ordering: .relaxed)
        for c in 0..<channelCount {
            let base = storage + c * capacity
            let src = buffer.channel(c)
            for i in 0..<count { base[(w + i) % capacity] = src[i] }
        }
        writeIndex.store(w + count, ordering: .releasing)
    }

    /// Consumer: reads up to `count` frames into `buffer` at `offset`; returns the frames read.
    public func read(into buffer: AudioBuffer, offset: Int, count: Int) -> Int {
        let r = readIndex.load(ordering: .relaxed)
        let n = min(count, writeIndex.load(ordering: .acquiring) - r)
        guard n > 0 else { return 0 }
        for c in 0..<channelCount {
            let base = storage + c * capacity
            let dst = buffer.channel(c) + offset
            for i in 0..<n { dst[i] = base[(r + i) % capacity] }
        }
        readIndex.store(r + n, ordering: .releasing)
        return n
    }

    /// Empties the ring. Only while neither side runs.
    public func reset() {
        writeIndex.store(0, ordering: .relaxed)
        readIndex.store(0, ordering: .relaxed)
    }
}

/// An `AudioSource` for real-time rendering: a feeder thread (`refill`) reads the file into a
/// ring ahead of time, and the render thread's `read` only copies from the ring: no file I/O,
/// no locks, no allocation on the render thread. If the disk falls behind, `read` gives silence
/// for the missing frames and counts them in `underflowFrames`.
///
/// **Looping** (`setLoop`) happens here, in the feeder: at the end of the file it writes silence
/// up to the session's length and goes on from frame 0, so the ring holds the loop seam like any
/// other samples and the effects after it run straight through (no seek, no pre-roll, no click).
///
/// **Seeking while playing** (`requestSeek`) is a hand-over, without locks: the render thread
/// asks and stops touching the ring (it reads silence, not counted as an underflow); the feeder
/// moves the file, empties and refills the ring, and publishes that it is done
/// (`seekIsDone`). Threading: one feeder thread (`refill`, producer) and one render
/// thread (`read`, `requestSeek`, consumer); `seek` and `setLoop` only while neither runs.
/// `@unchecked Sendable`: the feeder's fields are the feeder's, `seeking` the render thread's;
/// what crosses is atomics and the ring.
public final class StreamingSource: PlacingSource, @unchecked Sendable {
    /// The file the feeder reads.
    public let reader: SoundFileReader
    /// What the feeder reads: the file, or the file as its track's placement puts it (`place`).
    private var file: any AudioSource
    /// The frames read ahead.
    public let ring: FrameRing
    private let chunk: AudioBuffer
    private let ended = Atomic<Bool>(false)
    private let underflows = Atomic<Int>(0)
    // the seek hand-over: the frame asked for (Int.min: none), and whether it is not yet done
    private let seekRequest = Atomic<Int>(Int.min)
    private let seekPending = Atomic<Bool>(false)
    private var seeking = false   // render side: between requestSeek and finishSeek
    // Feeder side: frames written since the last seek's frame 0 (the loop's time line), silence
    // still to write before the file (a seek before frame 0), and the loop.
    private var position = 0
    private var leadingSilence = 0
    private var fileFrame = 0
    private var fileEnd = Int.max   // where the file ended when it was read to its end
    private var loopFrames: Double?
    private var loopCount = 0, nextSeam = Int.max   // the loop being written, where it ends

    /// The placed file's format (the file's, as long as the placement makes it).
    public var format: SourceFormat { file.format }
    /// The file's own format.
    public var unplacedFormat: SourceFormat { reader.format }

    /// Reads the file as `placement` puts it (silence before, the trimmed segment, its fades),
    /// so a seek or a loop lands in the placed track. Control side, before playing.
    public func place(_ placement: Placement, speed: Double) {
        file = placement.isNeutral ? reader : PlacedSource(reader, placement: placement, speed: speed)
    }
    /// The file's path.
    public var name: String { reader.name }

    /// `bufferSeconds` of audio are kept ahead.
    public init(reader: SoundFileReader, bufferSeconds: Double = 2) {
        self.reader = reader
        file = reader
        let f = reader.format
        ring = FrameRing(channelCount: f.channelCount, capacity: max(8192, Int(Double(f.sampleRate) * bufferSeconds)))
        chunk = AudioBuffer(channelCount: f.channelCount, capacityFrames: 4096)
    }

    /// Frames of silence given because the ring was empty before the end of the file.
    public var underflowFrames: Int { underflows.load(ordering: .relaxed) }

    /// Loops every `frames` frames of this source (the session's length at this source's rate;
    /// not always whole: seam k falls at round(k·frames), so tracks at other rates stay within
    /// a sample of the session). The file plays, then silence to the seam. nil: no loop.
    /// Control side, before playing.
    /// `frames` must be above 0 (`LivePlayer` refuses to loop an empty session).
    public func setLoop(frames: Double?) {
        precondition(frames.map { $0 > 0 } ?? true, "StreamingSource: a loop of \(frames ?? 0) frames")
        loopFrames = frames
    }

    /// Feeder side: carries out a seek the render thread asked for, then tops the ring up from
    /// the file. Returns true if it wrote anything.
    @discardableResult
    public func refill() throws -> Bool {
        let request = seekRequest.load(ordering: .acquiring)
        if request != Int.min {
            // the render thread no longer touches the ring (see `requestSeek`)
            try moveFile(toFrame: request)
            ring.reset()
            seekRequest.store(Int.min, ordering: .relaxed)
            seekPending.store(false, ordering: .releasing)
        }
        var any = false
        while !ended.load(ordering: .relaxed) && ring.freeFrames >= chunk.capacityFrames {
            var n = 0
            if leadingSilence > 0 {
                n = min(leadingSilence, chunk.capacityFrames)
                chunk.clear(frameCount: n)
                leadingSilence -= n
            } else if let loop = loopFrames {
                // the file, then silence, up to the seam; then the file again from its start
                if position >= nextSeam {
                    try file.seek(toFrame: 0)
                    fileFrame = 0
                    loopCount += 1
                    nextSeam = Int((Double(loopCount + 1) * loop).rounded())
                    continue
                }
                let room = nextSeam - position
                if fileFrame < fileEnd {
                    n = try file.read(into: chunk, offset: 0, frameCount: min(room, chunk.capacityFrames))
                    if n == 0 { fileEnd = fileFrame; continue }
                    fileFrame += n
                } else {
                    n = min(room, chunk.capacityFrames)
                    chunk.clear(frameCount: n)
                }
            } else {
                n = try file.read(into: chunk, offset: 0, frameCount: chunk.capacityFrames)
                if n == 0 {
                    ended.store(true, ordering: .releasing)
                    break
                }
            }
            ring.write(from: chunk, count: n)
            position += n
            any = true
        }
        return any
    }

    /// Feeder or control side: the file to `frame` (before 0: silence first).
    private func moveFile(toFrame frame: Int) throws {
        let f = max(0, frame)
        try file.seek(toFrame: min(f, file.format.frameCount))
        leadingSilence = max(0, -frame)
        fileFrame = f
        position = f
        if let loop = loopFrames {
            loopCount = 0
            nextSeam = Int(loop.rounded())
            while position >= nextSeam { loopCount += 1; nextSeam = Int((Double(loopCount + 1) * loop).rounded()) }
        }
        ended.store(false, ordering: .relaxed)
    }

    /// Render side: silence from `requestSeek` until `finishSeek`, else the ring's frames.
    public func read(into buffer: AudioBuffer, offset: Int, frameCount: Int) throws -> Int {
        if seeking {
            for c in 0..<buffer.channelCount { (buffer.channel(c) + offset).update(repeating: 0, count: frameCount) }
            return frameCount
        }
        let n = ring.read(into: buffer, offset: offset, count: frameCount)
        if n == frameCount { return n }
        // The ring is empty: the end of the file, or the disk is late.
        if ended.load(ordering: .acquiring) && ring.availableFrames == 0 {
            return n + ring.read(into: buffer, offset: offset + n, count: frameCount - n)
        }
        for c in 0..<buffer.channelCount { (buffer.channel(c) + offset + n).update(repeating: 0, count: frameCount - n) }
        underflows.add(frameCount - n, ordering: .relaxed)
        return frameCount
    }

    /// Render side: asks the feeder to move to `frame` (before 0: that much silence first) and
    /// stops reading the ring (`read` gives silence) until `finishSeek`. Never waits.
    public func requestSeek(toFrame frame: Int) {
        seeking = true
        seekPending.store(true, ordering: .relaxed)
        seekRequest.store(frame, ordering: .releasing)
    }

    /// Render side: whether the feeder has moved the file since `requestSeek` (true without
    /// one).
    public var seekIsDone: Bool { !seeking || !seekPending.load(ordering: .acquiring) }

    /// Render side, once `seekIsDone`: `read` reads the moved file from here on (so that every
    /// track of a session starts reading at one block boundary).
    public func finishSeek() {
        precondition(seekIsDone, "finishSeek before the feeder moved the file")
        seeking = false
    }

    /// Control side, while neither the feeder nor the render thread use this source: moves the
    /// file to `frame` and refills the ring.
    public func seek(toFrame frame: Int) throws {
        try moveFile(toFrame: frame)
        ring.reset()
        try refill()
    }
}
