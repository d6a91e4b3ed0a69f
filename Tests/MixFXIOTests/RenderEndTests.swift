import Foundation
import Testing
@testable import MixFXIO
import MixFX
import TestSupport

/// What a render does around its last sample so that the end is short: the output goes to disk
/// while it is written (`ProgressiveWriteback`), the file it replaces leaves the page cache while
/// the tracks render (`OutputFile.releaseReplacedPages`), and the spill closes on a thread of its
/// own (`SpillFile.closeConcurrently`).
@Suite struct RenderEndTests {
    /// The writer asks for the file's writeback in steps as it grows: every whole step of what
    /// was written is requested, in order, and the file reads back as written.
    @Test func theWriterSendsTheOutputOnAsItGrows() throws {
        let dir = TempDir(); defer { dir.remove() }
        let path = dir.file("w.wav")
        let w = try SoundFileWriter(path: path, format: OutputFormat(container: .wav, sampleFormat: .s16,
                                                                      sampleRate: 48_000, channelCount: 2))
        let frames = [1_000, 77_777, 4_097, 250_000, 13, 100_000]
        let buffer = AudioBuffer(channelCount: 2, capacityFrames: frames.max()!)
        var written = 0, sent: [Int] = []
        var expected: [[Float]] = [[], []]
        for (k, n) in frames.enumerated() {
            for c in 0..<2 {
                let x = Signals.noise(frames: n, amplitude: 0.5, seed: UInt64(10 * k + c + 1)).map { ($0 * 32768).rounded() / 32768 }
                for i in 0..<n { buffer.channel(c)[i] = x[i] }
                expected[c] += x
            }
            try w.write(buffer, frameCount: n)
            written += 4 * n
            sent.append(w.writebackRequestedBytes)
        }
        try w.close()
        let step = ProgressiveWriteback.stepBytes
        // after each write: all of it requested once a step had gathered, none of it before
        var last = 0, total = 0
        for (k, n) in frames.enumerated() {
            total += 4 * n
            let due = total - last >= step
            #expect(sent[k] == (due ? total : last), "write \(k)")
            if due { last = total }
        }
        #expect(sent.last! > written - step && sent.last! <= written)
        let (back, _) = try AudioFiles.read(path)
        #expect(back == expected)
    }

    /// The file an output will replace is dropped from the page cache, unchanged on disk; an
    /// output that replaces nothing does nothing.
    @Test func theReplacedFileLeavesTheCache() throws {
        let dir = TempDir(); defer { dir.remove() }
        let path = dir.file("old.wav")
        let bytes = Data((0..<(2 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) })
        try bytes.write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDONLY); defer { close(fd) }
        fsync(fd)                                   // clean pages, which the kernel may drop
        _ = try Data(contentsOf: URL(fileURLWithPath: path))   // and in the cache
        let before = try residentPages(fd, byteCount: bytes.count)
        try #require(before > bytes.count / 4096 / 2, "the file should be cached after reading it")
        try OutputFile(path: path, inputs: [], overwrite: true).releaseReplacedPages()
        let after = try residentPages(fd, byteCount: bytes.count)
        #expect(after == 0, "\(after) of \(before) pages still cached")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        try OutputFile(path: dir.file("new.wav"), inputs: [], overwrite: true).releaseReplacedPages()
        #expect(!FileManager.default.fileExists(atPath: dir.file("new.wav")))
    }

    /// The spill, closed concurrently, is gone once the thread is joined; a second close is none.
    @Test func theSpillClosesOnItsOwnThread() throws {
        let dir = TempDir(); defer { dir.remove() }
        let spill = try SpillFile(directory: dir.path, channelCount: 2, reportedPath: dir.file("out.wav"))
        let buffer = AudioBuffer(channelCount: 2, capacityFrames: 4_096)
        try spill.append(buffer, frameCount: 4_096)
        #expect(openSpills(in: dir.path) == 1)
        let closing = try #require(spill.closeConcurrently())
        closing.join()
        #expect(openSpills(in: dir.path) == 0)
        #expect(spill.closeConcurrently() == nil)
    }

    /// With `--clip` (or `--strict`) the spill only serves the auto dither's second pass, for a
    /// mix whose every sample is already a 16-bit value: it is dropped at the first block that
    /// needs rounding. The default keeps it to the end (a clipped mix is converted again from it),
    /// and so does a `--clip` render of a pass-through.
    @Test(arguments: [(ClipPolicy.clamp, true, 0), (.avoid, true, 1), (.clamp, false, 1)])
    func theSpillIsKeptOnlyWhileItCanBeNeeded(policy: ClipPolicy, boosted: Bool, expectedSpills: Int) throws {
        let dir = TempDir(); defer { dir.remove() }
        let x = Signals.noise(frames: 44_100, amplitude: 0.3).map { ($0 * 32768).rounded() / 32768 }
        let engine = AudioEngine()
        let track = engine.addTrack(source: MemorySource(channels: [x, x], sampleRate: 44_100))
        if boosted { track.eq.bassGain.value = 4 }
        var renderer = OfflineRenderer(outputPath: dir.file("out.wav"), sampleFormat: .s16)
        renderer.clipPolicy = policy
        var seen: [Int] = []
        renderer.progress = { _, _ in seen.append(openSpills(in: dir.path)) }
        let report = try renderer.render(engine)
        #expect(seen.count > 5 && seen.allSatisfy { $0 == expectedSpills }, "open spills while rendering: \(seen)")
        #expect(report.ditherApplied == boosted)
        #expect(openSpills(in: dir.path) == 0)
    }

    /// Pages of the file open as `fd` that are in the page cache (`mincore` of a mapping).
    private func residentPages(_ fd: Int32, byteCount: Int) throws -> Int {
        let map = mmap(nil, byteCount, PROT_READ, MAP_SHARED, fd, 0)
        try #require(map != MAP_FAILED)
        defer { munmap(map, byteCount) }
        let pages = (byteCount + 4095) / 4096
        var vec = [UInt8](repeating: 0, count: pages)
        try #require(mincore(map, byteCount, &vec) == 0)
        return vec.filter { $0 & 1 != 0 }.count
    }

    /// This process's descriptors open on a spill file in `directory` (unlinked, so the link
    /// reads "… (deleted)").
    private func openSpills(in directory: String) -> Int {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.filter { fd in
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + fd)) ?? ""
            // named and unlinked at once, or never named (O_TMPFILE: "DIR/#INODE (deleted)")
            return target.hasPrefix(directory + "/.mixfx-unnamed-")
                || target.hasPrefix(directory + "/#") && target.hasSuffix(" (deleted)")
        }.count
    }
}
