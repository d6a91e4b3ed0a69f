import MixFXDSP
#if canImport(Glibc)
import Glibc
#endif

/// Offline rendering on several cores: worker threads render the tracks ahead of the mix, into
/// a ring of `depth` blocks per track; the render thread mixes whole blocks as they complete and
/// hands the slots back.
///
/// The render thread is one of the participants: while the block it must mix is incomplete, it
/// renders a track's next block itself (the track furthest behind) instead of sleeping, so N
/// cores run N threads, N − 1 workers and it. With a worker per core besides the render thread,
/// its mixing and writing had made three threads share two cores: 4 800 context switches for
/// the band, 62 now; CPU −3.7 % and wall −6 % (medians of 30 alternating runs).
///
/// Why not one parallel loop per block: a barrier per block leaves a core idle whenever the
/// tracks of one block take unequal time, and again while the render thread mixes and writes.
/// Running ahead by up to `depth` blocks absorbs both (measured on the 2-core band: 0.47 s of
/// wall time in the barrier loop for 0.86 s of track work; see `Benchmarks/run.sh`).
///
/// Scheduling: each participant owns some tracks (greedy longest-first, `balance`; the render
/// thread's are the last list) and a worker renders the block of its own that is furthest
/// behind, so a track's state stays in one core's cache. A worker with nothing of its own to do
/// (finished, or its tracks `depth` blocks ahead) takes the next block of another participant's
/// track that is not being rendered. Without that, in one measured run of the band, the worker
/// the render thread interrupted less finished 31 ms before the other, one core idle meanwhile.
/// A track renders one block at a time, in order, whichever thread runs it.
///
/// The result is the same as rendering the tracks one after another: each track sees the same
/// blocks in the same order, and the mix sums the tracks in track order.
///
/// Threading: created, consumed (`acquire`/`release`) and stopped by one thread, the render
/// thread. The schedule (which blocks are rendered, taken, mixed) is guarded by one pthread
/// mutex, held only to pick or finish a block, never while rendering; two condition variables
/// wake the workers and the render thread, and the lock orders the accesses to the slots. The
/// workers are threads of their own, not work items on a shared dispatch queue: they block while
/// the mix catches up, and blocked work items could starve an embedder's own use of that queue.
/// `@unchecked Sendable`: the slots and counters are only touched with the mutex held (above).
final class TrackPipeline: @unchecked Sendable {
    /// Blocks a track may render ahead of the mix.
    static let depth = 4
    /// Frames per block (the last block of the session may be shorter).
    let blockFrames: Int
    private let tracks: [TrackKernel]
    private let totalFrames: Int
    private let blockCount: Int
    private let owner: [Int]                 // the worker each track belongs to
    private let workerCount: Int
    private let slots: [[AudioBuffer]]       // [track][slot]
    /// Per worker, the scratch memory of the shifters it runs (`PitchShifterWorkspace`).
    private let workspaces: [PitchShifterWorkspace]
    private let lock: UnsafeMutablePointer<pthread_mutex_t>
    private let workReady: UnsafeMutablePointer<pthread_cond_t>    // workers wait on it
    private let blockReady: UnsafeMutablePointer<pthread_cond_t>   // the render thread waits on it
    // Guarded by `lock`: per track, blocks completed and whether a worker is on one; blocks mixed
    // (their slots free again); stop requested.
    private var completed: [Int]
    private var busy: [Bool]
    private var mixed = 0
    private var stopping = false
    private var idleWorkers = 0
    private var awaitedBlock = -1            // the block the render thread waits for, else −1
    private var threads: [SideThread] = []
    // Render-thread side: the block being mixed and how far.
    private var block = 0, offset = 0, held = false

    /// A pipeline for `tracks`, `totalFrames` frames from their current position, on `workers`
    /// threads, each with a workspace of `workspaceByteCount` bytes for their shifters (control
    /// side; call `start`).
    init(tracks: [TrackKernel], blockFrames: Int, totalFrames: Int, workers: Int, workspaceByteCount: Int) {
        self.tracks = tracks
        self.blockFrames = blockFrames
        self.totalFrames = totalFrames
        blockCount = (totalFrames + blockFrames - 1) / blockFrames
        let assignment = TrackPipeline.balance(costs: tracks.map(\.renderCost), workers: workers)
        var owner = [Int](repeating: 0, count: tracks.count)
        for (w, list) in assignment.enumerated() { for k in list { owner[k] = w } }
        self.owner = owner
        workerCount = assignment.count
        workspaces = (0..<workerCount).map { _ in PitchShifterWorkspace(byteCount: workspaceByteCount) }
        slots = tracks.map { t in
            (0..<TrackPipeline.depth).map { _ in AudioBuffer(channelCount: t.channelCount, capacityFrames: blockFrames) }
        }
        completed = [Int](repeating: 0, count: tracks.count)
        busy = [Bool](repeating: false, count: tracks.count)
        lock = .allocate(capacity: 1)
        workReady = .allocate(capacity: 1)
        blockReady = .allocate(capacity: 1)
        pthread_mutex_init(lock, nil)
        pthread_cond_init(workReady, nil)
        pthread_cond_init(blockReady, nil)
    }

    deinit {
        pthread_cond_destroy(workReady); workReady.deallocate()
        pthread_cond_destroy(blockReady); blockReady.deallocate()
        pthread_mutex_destroy(lock); lock.deallocate()
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

    /// The participant the render thread is: the last (its threads are the others).
    private var renderThreadIndex: Int { workerCount - 1 }

    /// Starts the workers; false (and none running) if the system refused a thread.
    func start() -> Bool {
        for w in 0..<renderThreadIndex {
            guard let thread = SideThread.start({ [self] in run(worker: w) }) else {
                stop()
                return false
            }
            threads.append(thread)
        }
        return true
    }

    /// The track worker `w` renders next (under `lock`): its own track furthest behind, else
    /// another worker's; nil if none may render now. A track may render its next block when no
    /// one is on it, it has blocks left (`blockCount`), and its slot is free (fewer than `depth`
    /// blocks ahead of the mix).
    private func pick(worker w: Int) -> Int? {
        let limit = blockCount
        // the render thread takes whichever track is furthest behind: the mix waits for it
        let anyOwner = w == renderThreadIndex
        var best: Int?, bestIsOwn = false
        for k in tracks.indices where !busy[k] && completed[k] < limit && completed[k] < mixed + TrackPipeline.depth {
            let own = anyOwner || owner[k] == w
            if let b = best, (bestIsOwn && !own) || (bestIsOwn == own && completed[b] <= completed[k]) { continue }
            best = k; bestIsOwn = own
        }
        return best
    }

    /// True when every track has rendered every block it will (under `lock`).
    private var allRendered: Bool {
        let limit = blockCount
        return completed.allSatisfy { $0 >= limit }
    }

    private func run(worker w: Int) {
        pthread_mutex_lock(lock)
        while true {
            if stopping || allRendered { break }
            guard let k = pick(worker: w) else {
                idleWorkers += 1
                pthread_cond_wait(workReady, lock)
                idleWorkers -= 1
                continue
            }
            renderBlock(track: k, as: w)
        }
        if idleWorkers > 0 { pthread_cond_broadcast(workReady) }   // (they may all be done now)
        pthread_mutex_unlock(lock)
    }

    /// Renders track `k`'s next block on this thread, participant `w` (called and returning with
    /// `lock` held; it is released while rendering).
    private func renderBlock(track k: Int, as w: Int) {
        busy[k] = true
        let b = completed[k]
        pthread_mutex_unlock(lock)
        let n = min(blockFrames, totalFrames - b * blockFrames)
        // (a source's read error is recorded by the track, which renders silence: see
        // `RenderFailures`)
        tracks[k].use(workspaces[w])
        tracks[k].render(frameCount: n, into: slots[k][b % TrackPipeline.depth])
        pthread_mutex_lock(lock)
        busy[k] = false
        completed[k] += 1
        // wake only who may now proceed: the render thread when its block is complete, an idle
        // worker when this track is free to take
        if awaitedBlock >= 0 && !completed.contains(where: { $0 <= awaitedBlock }) {
            pthread_cond_signal(blockReady)
        }
        if idleWorkers > 0 { pthread_cond_broadcast(workReady) }
    }

    /// Waits until the current block is complete for every track, rendering tracks' blocks
    /// meanwhile where one is free to take (`pick`); returns where mixing
    /// continues in it and how many frames it holds.
    func acquire() -> (offset: Int, frames: Int) {
        if !held {
            pthread_mutex_lock(lock)
            while completed.contains(where: { $0 <= block }) {
                // rather than sleep, render a track's next block here
                if let k = pick(worker: renderThreadIndex) {
                    renderBlock(track: k, as: renderThreadIndex)
                    continue
                }
                awaitedBlock = block
                pthread_cond_wait(blockReady, lock)
                awaitedBlock = -1
            }
            pthread_mutex_unlock(lock)
            held = true
        }
        return (offset, min(blockFrames, totalFrames - block * blockFrames))
    }

    /// Track `k`'s samples of the current block.
    func buffer(track k: Int) -> AudioBuffer { slots[k][block % TrackPipeline.depth] }

    /// Marks `frames` more of the current block mixed; a finished block's slots go back to the
    /// workers.
    func release(frames: Int) {
        offset += frames
        if offset >= min(blockFrames, totalFrames - block * blockFrames) {
            pthread_mutex_lock(lock)
            mixed += 1
            if idleWorkers > 0 { pthread_cond_broadcast(workReady) }
            pthread_mutex_unlock(lock)
            block += 1; offset = 0; held = false
        }
    }

    /// Stops the workers and waits for them (they finish the block they are on).
    func stop() {
        pthread_mutex_lock(lock)
        stopping = true
        pthread_cond_broadcast(workReady)
        pthread_mutex_unlock(lock)
        for t in threads { t.join() }
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
