import Synchronization
import MixFXDSP
import MixFXEngine

/// A single-producer single-consumer ring of planar float frames. The producer and the consumer
/// may run on different threads without locks: each owns one index, published with
/// release/acquire atomics.
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
public final class StreamingSource: AudioSource, @unchecked Sendable {
    /// The file the feeder reads.
    public let reader: SoundFileReader
    /// The frames read ahead.
    public let ring: FrameRing
    private let chunk: AudioBuffer
    private let ended = Atomic<Bool>(false)
    private let underflows = Atomic<Int>(0)
    private var framesFed = 0

    /// The file's format.
    public var format: SourceFormat { reader.format }
    /// The file's path.
    public var name: String { reader.name }

    /// `bufferSeconds` of audio are kept ahead.
    public init(reader: SoundFileReader, bufferSeconds: Double = 2) {
        self.reader = reader
        let f = reader.format
        ring = FrameRing(channelCount: f.channelCount, capacity: max(8192, Int(Double(f.sampleRate) * bufferSeconds)))
        chunk = AudioBuffer(channelCount: f.channelCount, capacityFrames: 4096)
    }

    /// Frames of silence given because the ring was empty before the end of the file.
    public var underflowFrames: Int { underflows.load(ordering: .relaxed) }

    /// Feeder side: tops the ring up from the file. Returns true if it read anything.
    @discardableResult
    public func refill() throws -> Bool {
        var any = false
        while !ended.load(ordering: .relaxed) && ring.freeFrames >= chunk.capacityFrames {
            let n = try reader.read(into: chunk, offset: 0, frameCount: chunk.capacityFrames)
            if n == 0 {
                ended.store(true, ordering: .releasing)
                break
            }
            ring.write(from: chunk, count: n)
            framesFed += n
            any = true
        }
        return any
    }

    /// Render side.
    public func read(into buffer: AudioBuffer, offset: Int, frameCount: Int) throws -> Int {
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

    /// Control side, while neither the feeder nor the render thread use this source: moves the
    /// file to `frame` and refills the ring.
    public func seek(toFrame frame: Int) throws {
        try reader.seek(toFrame: frame)
        ring.reset()
        ended.store(false, ordering: .relaxed)
        framesFed = frame
        try refill()
    }
}
