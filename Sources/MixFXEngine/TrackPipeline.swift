import Dispatch
import MixFXDSP
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Offline rendering on several cores: worker threads render the tracks ahead of the mix, each
/// worker always the same tracks, into a ring of `depth` blocks per track; the render thread
/// mixes whole blocks as they complete and hands the slots back.
///
/// Why not one parallel loop per block: a barrier per block leaves a core idle whenever the
/// tracks of one block take unequal time, and again while the render thread mixes and writes.
/// Running ahead by up to `depth` blocks absorbs both (measured on the 2-core band: 0.47 s of
/// wall time in the barrier loop for 0.86 s of track work; see `Benchmarks/run.sh`).
///
/// The result is the same as rendering the tracks one after another: each track sees the same
/// blocks in the same order, and the mix sums the tracks in track order.
///
/// Threading: created, consumed (`acquire`/`release`) and stopped by one thread, the render
/// thread; the workers touch only their own tracks and slots, and hand blocks over through
/// semaphores (which order the memory accesses). The workers are threads of their own, not
/// work items on a shared dispatch queue: they block while the mix catches up, and blocked work
/// items could starve an embedder's own use of that queue.
final class TrackPipeline: @unchecked Sendable {
    /// Blocks a track may render ahead of the mix.
    static let depth = 4
    /// Frames per block (the last block of the session may be shorter).
    let blockFrames: Int
    private let tracks: [TrackKernel]
    private let totalFrames: Int
    private let assignment: [[Int]]          // track indices per worker
    private let slots: [[AudioBuffer]]       // [track][slot]
    private let ready: [DispatchSemaphore]   // per worker: blocks completed
    private let free: [DispatchSemaphore]    // per worker: slots it may fill
    private let failure = Mutex<(block: Int, error: any Error)?>(nil)   // the first block that failed
    private let stopping = Atomic<Bool>(false)
    private var threads: [pthread_t] = []
    // Render-thread side: the block being mixed and how far.
    private var block = 0, offset = 0, held = false

    /// A pipeline for `tracks`, `totalFrames` frames from their current position, on `workers`
    /// threads (control side; call `start`).
    init(tracks: [TrackKernel], blockFrames: Int, totalFrames: Int, workers: Int) {
        self.tracks = tracks
        self.blockFrames = blockFrames
        self.totalFrames = totalFrames
        assignment = TrackPipeline.balance(costs: tracks.map(\.renderCost), workers: workers)
        slots = tracks.map { t in
            (0..<TrackPipeline.depth).map { _ in AudioBuffer(channelCount: t.channelCount, capacityFrames: blockFrames) }
        }
        ready = assignment.map { _ in DispatchSemaphore(value: 0) }
        // Semaphores start at 0 and are signalled up: libdispatch traps when a semaphore is
        // released below the value it was created with.
        free = assignment.map { _ in DispatchSemaphore(value: 0) }
        for f in free { for _ in 0..<TrackPipeline.depth { f.signal() } }
    }

    /// Greedy longest-first assignment: each track, dearest first, to the least loaded worker.
    static func balance(costs: [Int], workers: Int) -> [[Int]] {
        var lists = [[Int]](repeating: [], count: max(1, min(workers, costs.count)))
        var load = [Int](repeating: 0, count: lists.count)
        for k in costs.indices.sorted(by: { (costs[$0], $1) > (costs[$1], $0) }) {
            let w = load.indices.min { load[$0] < load[$1] }!
            lists[w].append(k)
            load[w] += costs[k]
        }
        return lists.map { $0.sorted() }
    }

    /// Starts the workers; false (and none running) if the system refused a thread.
    func start() -> Bool {
        for w in assignment.indices {
            guard let thread = Worker.spawn({ [self] in run(worker: w) }) else {
                stop()
                return false
            }
            threads.append(thread)
        }
        return true
    }

    private func run(worker w: Int) {
        var done = 0, b = 0
        while done < totalFrames {
            free[w].wait()
            if stopping.load(ordering: .acquiring) { return }
            let n = min(blockFrames, totalFrames - done)
            for k in assignment[w] {
                do {
                    try tracks[k].render(frameCount: n, into: slots[k][b % TrackPipeline.depth])
                } catch {
                    failure.withLock { $0 = $0 ?? (b, error) }
                    ready[w].signal()
                    return
                }
            }
            ready[w].signal()
            done += n; b += 1
        }
    }

    /// Waits until the current block is complete for every track; returns where mixing
    /// continues in it and how many frames it holds. Throws what a worker threw while rendering
    /// this block (the blocks before it mix as usual, as they would one after another).
    func acquire() throws -> (offset: Int, frames: Int) {
        if !held {
            for r in ready { r.wait() }
            held = true
        }
        if let failed = failure.withLock({ $0 }), failed.block == block { throw failed.error }
        return (offset, min(blockFrames, totalFrames - block * blockFrames))
    }

    /// Track `k`'s samples of the current block.
    func buffer(track k: Int) -> AudioBuffer { slots[k][block % TrackPipeline.depth] }

    /// Marks `frames` more of the current block mixed; a finished block's slots go back to the
    /// workers.
    func release(frames: Int) {
        offset += frames
        if offset >= min(blockFrames, totalFrames - block * blockFrames) {
            for f in free { f.signal() }
            block += 1; offset = 0; held = false
        }
    }

    /// Stops the workers and waits for them (they finish the block they are on).
    func stop() {
        stopping.store(true, ordering: .releasing)
        for f in free { f.signal() }
        for t in threads { pthread_join(t, nil) }
        threads = []
    }

    /// Cores online, at least 1. (Under `taskset` with fewer cores the workers share them; the
    /// result is the same.)
    static func availableCores() -> Int {
        #if canImport(Glibc)
        return max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        #else
        return 1
        #endif
    }
}

/// A thread of its own running a closure (pthreads: the engine does not use Foundation).
private final class Worker: @unchecked Sendable {
    let body: @Sendable () -> Void
    private init(_ body: @escaping @Sendable () -> Void) { self.body = body }

    /// Starts `body` on a new thread; nil if the system refused one.
    static func spawn(_ body: @escaping @Sendable () -> Void) -> pthread_t? {
        let context = Unmanaged.passRetained(Worker(body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { context in
            Unmanaged<Worker>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, context)
        guard rc == 0 else {
            Unmanaged<Worker>.fromOpaque(context).release()
            return nil
        }
        return thread
    }
}
