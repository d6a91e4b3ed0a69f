import Foundation
import Testing
import MixFXIO
import TestSupport

/// `analyze` takes the channel counts `render` takes (1 to 8, mono to 7.1; the loudness meter
/// keeps one K-weighting filter per channel, at most eight) and refuses more in the same words.
@Suite struct AnalysisChannelsTests {
    @Test func eightChannelsAreMeasuredAndNineRefused() throws {
        let dir = TempDir()
        defer { dir.remove() }
        // a 997 Hz tone at −20 dBFS in every channel, 1 s at 48 kHz
        let tone = (0..<48_000).map { Float(0.1 * sin(2 * Double.pi * 997 * Double($0) / 48_000)) }
        let eight = dir.file("eight.wav"), nine = dir.file("nine.wav")
        try AudioFiles.writeFloatWAVVerbatim([[Float]](repeating: tone, count: 8), to: eight, sampleRate: 48_000)
        try AudioFiles.writeFloatWAVVerbatim([[Float]](repeating: tone, count: 9), to: nine, sampleRate: 48_000)
        let a = try AudioAnalyzer.analyze(path: eight)
        #expect(a.channelCount == 8)
        // eight channels of a tone whose one channel reads −23.0 LUFS (G = 1 for each): 10·log10(8) more
        #expect(abs(a.integratedLUFS - (-23.01 + 10 * log10(8.0))) < 0.1, "\(a.integratedLUFS)")
        do {
            _ = try AudioAnalyzer.analyze(path: nine)
            Issue.record("a file of nine channels was analysed")
        } catch {
            #expect("\(error)".contains("9 channels (allowed: 1 to 8, mono to 7.1)"), "\(error)")
        }
    }
}
