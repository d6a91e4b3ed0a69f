import Foundation
import Testing
@testable import MixFXIO
import MixFXDSP
import MixFXEngine
import TestSupport

/// `StreamingSource`: the feeder's loop and the seek hand-over, driven from one thread.
@Suite struct StreamingSourceTests {
    let dir = TempDir("mixfx-streaming")

    /// Reads `frames` frames (refilling in between, as the feeder does).
    func read(_ s: StreamingSource, frames: Int) throws -> [Float] {
        let buffer = AudioBuffer(channelCount: 1, capacityFrames: 1000)
        var out: [Float] = []
        while out.count < frames {
            try s.refill()
            let n = try s.read(into: buffer, offset: 0, frameCount: min(1000, frames - out.count))
            out += UnsafeBufferPointer(start: buffer.channel(0), count: n)
        }
        return out
    }

    /// A loop of a length that is not whole at the source's rate (a 44.1 kHz track in a 48 kHz
    /// session of 12001 frames: 11025.92 source frames): loop k starts at round(k·λ) exactly, the
    /// file plays, then silence to the seam, and the seams never drift.
    @Test func loopSeamsFallAtRoundedMultiples() throws {
        defer { dir.remove() }
        let x = (0..<9000).map { Float($0 + 1) / 32768 }   // never 0: the file is told from the padding
        try AudioFiles.write([x], to: dir.file("x.wav"), sampleRate: 44_100)
        let s = StreamingSource(reader: try SoundFileReader(path: dir.file("x.wav")), bufferSeconds: 0.3)
        let loop = 12_001.0 * 44_100 / 48_000
        s.setLoop(frames: loop)
        try s.seek(toFrame: 0)
        let y = try read(s, frames: Int(40 * loop))
        for k in 0..<39 {
            let seam = Int((Double(k) * loop).rounded())
            #expect(Array(y[seam..<(seam + 9000)]) == x, "loop \(k) does not start at \(seam)")
            let next = Int((Double(k + 1) * loop).rounded())
            #expect(y[(seam + 9000)..<next].allSatisfy { $0 == 0 }, "loop \(k): no silence up to \(next)")
        }
    }

    /// The seek hand-over: after `requestSeek` the render side reads silence (not counted as an
    /// underflow) until it finishes the seek, which it can once the feeder has moved the file;
    /// then it reads from the target frame (before 0: that much silence first).
    @Test(arguments: [3000, -250])
    func aSeekIsHandedOverWithoutLocks(target: Int) throws {
        defer { dir.remove() }
        let x = (0..<9000).map { Float($0 + 1) / 32768 }
        try AudioFiles.write([x], to: dir.file("x.wav"), sampleRate: 48_000)
        let s = StreamingSource(reader: try SoundFileReader(path: dir.file("x.wav")))
        try s.seek(toFrame: 0)
        let buffer = AudioBuffer(channelCount: 1, capacityFrames: 512)
        _ = try s.read(into: buffer, offset: 0, frameCount: 512)
        s.requestSeek(toFrame: target)
        #expect(!s.seekIsDone)
        _ = try s.read(into: buffer, offset: 0, frameCount: 512)
        #expect(UnsafeBufferPointer(start: buffer.channel(0), count: 512).allSatisfy { $0 == 0 })
        try s.refill()   // the feeder
        #expect(s.seekIsDone)
        // still silence until the render side finishes the seek at a block boundary of its own
        _ = try s.read(into: buffer, offset: 0, frameCount: 512)
        #expect(UnsafeBufferPointer(start: buffer.channel(0), count: 512).allSatisfy { $0 == 0 })
        s.finishSeek()
        let y = try read(s, frames: 2000)
        let expected = target >= 0 ? Array(x[target..<(target + 2000)]) : [Float](repeating: 0, count: -target) + x[0..<(2000 + target)]
        #expect(y == expected)
        #expect(s.underflowFrames == 0)
    }
}

extension StreamingSourceTests {
    /// Live, the placement is read by the feeder: a seek and a loop land in the placed track
    /// (its silence, its segment, its fades), exactly as offline.
    @Test func theFeederReadsThePlacedTrackThroughSeeksAndLoops() throws {
        defer { dir.remove() }
        let x = (0..<9000).map { Float($0 + 1) / 32768 }
        try AudioFiles.write([x], to: dir.file("x.wav"), sampleRate: 48_000)
        let placement = Placement(startSeconds: 0.01, trimInSeconds: 0.02, trimOutSeconds: 0.15, fadeInSeconds: 0.005, fadeOutSeconds: 0.01)
        let placed = PlacedSource(MemorySource(channels: [x], sampleRate: 48_000), placement: placement)
        #expect(placed.format.frameCount == 480 + 6240)
        try placed.seek(toFrame: 0)
        let buffer = AudioBuffer(channelCount: 1, capacityFrames: 8000)
        let n = try placed.read(into: buffer, offset: 0, frameCount: 8000)
        let reference = Array(UnsafeBufferPointer(start: buffer.channel(0), count: n))
        #expect(n == 6720)
        let s = StreamingSource(reader: try SoundFileReader(path: dir.file("x.wav")), bufferSeconds: 0.3)
        s.place(placement, speed: 1)
        #expect(s.format.frameCount == 6720 && s.unplacedFormat.frameCount == 9000)
        s.setLoop(frames: 8000)
        try s.seek(toFrame: 0)
        let y = try read(s, frames: 24_000)
        for loop in 0..<3 {
            #expect(Array(y[(loop * 8000)..<(loop * 8000 + 6720)]) == reference, "loop \(loop)")
            #expect(y[(loop * 8000 + 6720)..<((loop + 1) * 8000)].allSatisfy { $0 == 0 })
        }
        try s.seek(toFrame: 3000)
        #expect(try read(s, frames: 3720) == Array(reference[3000...]))
    }
}
