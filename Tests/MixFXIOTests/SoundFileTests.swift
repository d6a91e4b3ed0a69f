import Foundation
import Testing
import MixFX
import TestSupport

@Suite struct SoundFileTests {
    @Test(arguments: [("wav", SampleFormat.s16), ("wav", .s24), ("wav", .s32), ("wav", .f32),
                      ("flac", .s16), ("flac", .s24), ("aiff", .s24), ("caf", .f32)])
    func losslessRoundTrip(ext: String, format: SampleFormat) throws {
        let dir = TempDir(); defer { dir.remove() }
        // Values already on the target grid survive exactly.
        let scale = Float(1 << (format == .f32 ? 24 : format.bits - 1))
        let x = Signals.noise(frames: 10_000, amplitude: 0.9).map { ($0 * scale).rounded() / scale }
        let y = Signals.noise(frames: 10_000, amplitude: 0.9, seed: 99).map { ($0 * scale).rounded() / scale }
        let path = dir.file("t.\(ext)")
        try AudioFiles.write([x, y], to: path, sampleRate: 48_000, sampleFormat: format)
        let (back, f) = try AudioFiles.read(path)
        #expect(f.sampleRate == 48_000 && f.channelCount == 2 && f.frameCount == 10_000)
        #expect(back[0] == x && back[1] == y)
    }

    /// 16-bit PCM is read as integers and converted by mixfx (`IntegerSamples`): every one of
    /// the 65 536 values must come back as v/32768, as libsndfile's own conversion gives it, in
    /// little- and big-endian containers, mono and stereo, through blocks of odd sizes that end
    /// between the eight-sample steps, and at an offset into the buffer.
    @Test(arguments: [("wav", 1), ("wav", 2), ("aiff", 2), ("caf", 1)])
    func everySixteenBitValueReadsExactly(ext: String, channelCount: Int) throws {
        let dir = TempDir(); defer { dir.remove() }
        let all = (0..<65_536 + 13).map { Float(Int16(truncatingIfNeeded: $0 &* 40_503)) / 32768 }   // every value, shuffled
        let channels = (0..<channelCount).map { c in Array(all[(c * 7)...] + all[..<(c * 7)]) }
        let path = dir.file("v.\(ext)")
        try AudioFiles.write(channels, to: path, sampleRate: 44_100, sampleFormat: .s16)
        let r = try SoundFileReader(path: path)
        #expect(r.format.bitsPerSample == 16)
        let buffer = AudioBuffer(channelCount: channelCount, capacityFrames: 1_010)
        var done = 0
        while done < all.count {
            let got = try r.read(into: buffer, offset: 3, frameCount: 1_001)
            #expect(got > 0)
            for c in 0..<channelCount {
                for i in 0..<got where buffer.channel(c)[3 + i] != channels[c][done + i] {
                    Issue.record("channel \(c) frame \(done + i): \(buffer.channel(c)[3 + i]) for \(channels[c][done + i])")
                    return
                }
            }
            done += got
        }
        #expect(done == all.count)
        #expect(try r.read(into: buffer, offset: 0, frameCount: 16) == 0)
    }

    @Test func oggVorbisRoundTripIsClose() throws {
        let dir = TempDir(); defer { dir.remove() }
        let x = Signals.sine(frequencyHz: 440, sampleRate: 44_100, frames: 44_100, amplitude: 0.5)
        let path = dir.file("t.ogg")
        try AudioFiles.write([x], to: path, sampleRate: 44_100)
        let (back, f) = try AudioFiles.read(path)
        #expect(f.frameCount == 44_100)
        #expect(Signals.residualDB(back[0][4000..<40000], frequencyHz: 440, sampleRate: 44_100) < -30)
    }

    @Test func integerOutputClampsAndCountsInsteadOfWrapping() throws {
        let dir = TempDir(); defer { dir.remove() }
        let path = dir.file("c.wav")
        let buffer = AudioBuffer(channelCount: 1, capacityFrames: 4)
        let values: [Float] = [1.5, -2, 0.5, 1]
        for i in 0..<4 { buffer.channel(0)[i] = values[i] }
        let w = try SoundFileWriter(path: path, format: OutputFormat(container: .wav, sampleFormat: .s16, sampleRate: 8000, channelCount: 1))
        try w.write(buffer, frameCount: 4)
        try w.close()
        #expect(w.clippedSamples == 3)   // 1.5, −2 and 1.0 (32768 > 32767)
        #expect(w.peak == 2)
        let (back, _) = try AudioFiles.read(path)
        #expect(back[0] == [32767.0 / 32768, -1, 0.5, 32767.0 / 32768])
    }

    @Test func unreadableFilesGiveClearErrors() throws {
        let dir = TempDir(); defer { dir.remove() }
        #expect(throws: SoundFileError.cannotOpen(path: dir.file("nope.wav"), reason: "no such file")) {
            try SoundFileReader(path: dir.file("nope.wav"))
        }
        let text = dir.file("notes.txt")
        try "hello, not audio".write(toFile: text, atomically: true, encoding: .utf8)
        #expect { try SoundFileReader(path: text) } throws: { e in
            "\(e)".contains("notes.txt") && "\(e)".contains("not an audio file")
        }
    }
}
