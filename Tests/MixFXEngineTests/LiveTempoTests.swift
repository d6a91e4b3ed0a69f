import Foundation
import Testing
import MixFX
import TestSupport

/// Tempo changed while playing (`TimePitchNode.rate` on a live kernel): heard within the
/// latency, click-free, the pitch kept, the song position following it, and tempo 1 at 0 cents
/// exact passthrough again.
@Suite struct LiveTempoTests {
    static let rate = 48_000
    static let block = 512

    /// Renders a live kernel block by block for `frames` frames (or to its end), calling
    /// `change(frame)` before each block with the frames rendered so far.
    static func renderLive(_ engine: AudioEngine, frames: Int, change: (Int) -> Void = { _ in }) throws -> (out: [Float], kernel: RenderKernel) {
        let kernel = try engine.makeKernel(maximumFrameCount: block, mode: .live)
        try kernel.start()
        var out: [Float] = []
        while out.count < frames {
            change(out.count)
            let n = kernel.render(frameCount: min(block, frames - out.count))
            if n == 0 { break }
            out += UnsafeBufferPointer(start: kernel.output.channel(0), count: n)
        }
        return (out, kernel)
    }

    /// Short hits every `spacing` frames (2 ms attack, 15 ms decay); their onsets.
    static func clicks(frames: Int, spacing: Int) -> (signal: [Float], onsets: [Int]) {
        var x = [Float](repeating: 0, count: frames)
        let n = Signals.noise(frames: frames, amplitude: 0.8, seed: 11)
        var onsets: [Int] = []
        var t = spacing / 2
        while t + spacing < frames {
            onsets.append(t)
            for i in 0..<(spacing / 3) {
                let s = Double(i) / Double(rate)
                x[t + i] = n[t + i] * Float(min(1, s / 0.002) * exp(-s / 0.015))
            }
            t += spacing
        }
        return (x, onsets)
    }

    /// Where each hit starts in `y`: the first frame of a 1 ms RMS above 0.05 after 20 ms below.
    static func onsets(_ y: [Float]) -> [Int] {
        let ms = rate / 1000
        var found: [Int] = [], quiet = 0, i = 0
        while i + ms <= y.count {
            let level = Signals.rms(y[i..<(i + ms)])
            if level > 0.05 {
                if quiet >= 20 * ms {
                    // refine to the first sample above a tenth of the hit's start
                    var j = max(0, i - ms)
                    while j < i + ms && abs(y[j]) < 0.02 { j += 1 }
                    found.append(j)
                }
                quiet = 0
            } else {
                quiet += 1
            }
            i += 1
        }
        return found
    }

    /// The attack near `o` in `y`: the first frame whose 1 ms RMS passes half the peak of that
    /// envelope within 30 ms either side.
    static func halfPeak(_ y: [Float], around o: Int) -> Int {
        let ms = rate / 1000, w = 30 * ms
        let lo = max(0, o - w), hi = min(y.count - ms, o + w)
        let env = (lo..<hi).map { i in Signals.rms(y[i..<(i + ms)]) }
        let peak = env.max() ?? 0
        return lo + (env.firstIndex { $0 > peak / 2 } ?? 0)
    }

    @Test func aTempoChangeIsHeardWithinTheLatencyAndThenHolds() throws {
        let spacing = 4_800
        let x = Self.clicks(frames: 10 * Self.rate, spacing: spacing).signal
        let inputOnsets = Self.onsets(x)   // (found as in the output)
        let engine = AudioEngine()
        let track = engine.addTrack(source: MemorySource(channels: [x], sampleRate: Self.rate))
        let changeAt = 2 * Self.rate
        let (out, kernel) = try Self.renderLive(engine, frames: 7 * Self.rate) { frame in
            if frame >= changeAt { track.timePitch.rate = 0.8 }
        }
        let latency = kernel.trackLatencyFrames[0]
        let heard = Self.onsets(out)
        #expect(heard.count > 40)
        // before the change (and its latency) the hits are exactly where they were
        let before = heard.filter { $0 < changeAt }
        #expect(before == Array(inputOnsets.prefix(before.count)), "\(before.prefix(4)) vs \(inputOnsets.prefix(4))")
        // the change shows within the buffer (a block here) plus 60 ms (the look-ahead of a
        // streaming shifter at tempo 1, 0 cents: 85 ms of input, less the half window the first
        // frames made at the new tempo reach back): the first hit later than the tempo-1 grid
        // comes no later than one (slowed) spacing after that
        let late = heard.first { o in !inputOnsets.contains { abs($0 - o) <= 2 } }
        let deadline = changeAt + Self.block + latency + Self.rate * 60 / 1000 + spacing * 5 / 4
        #expect(late != nil && late! >= changeAt && late! <= deadline, "first late hit \(late ?? -1), change at \(changeAt), deadline \(deadline)")
        // and once the glide is over (τ = 100 ms) the hits come every spacing/0.8 frames
        let settled = heard.filter { $0 > changeAt + latency + Self.block + Self.rate * 7 / 10 }
        #expect(settled.count > 12)
        // (each within 1 ms of a grid of spacing/0.8, as the issue asks of attacks at a tempo;
        // timed by the half peak of the 1 ms RMS envelope, as in the offline tempo tests: the
        // first sample above a threshold moves with the noise's sample values, which the
        // attack read at a fractional position does not keep)
        let offsets = settled.enumerated().map { Double(Self.halfPeak(out, around: $1) - $0 * 6_000) }
        let mean = offsets.reduce(0, +) / Double(offsets.count)
        #expect(offsets.allSatisfy { abs($0 - mean) <= Double(Self.rate) / 1000 }, "\(offsets.map { $0 - mean })")
        // the song position moves at 0.8, and is where the hits say
        let song = kernel.songPosition
        #expect(song.tempo == 0.8)
        // (behind the plain 0.8 × by what the look-ahead and the glide's 100 ms held at faster tempos)
        let plain = Double(changeAt) + 0.8 * Double(out.count - changeAt)
        #expect(song.frame > plain && song.frame - plain < 0.2 * 0.2 * Double(Self.rate), "\(song.frame) vs \(plain)")
    }

    @Test func aToneKeepsItsPitchAndNothingClicksAcrossTempoChanges() throws {
        let x = Signals.sine(frequencyHz: 440, sampleRate: Double(Self.rate), frames: 12 * Self.rate)
        let engine = AudioEngine()
        let track = engine.addTrack(source: MemorySource(channels: [x], sampleRate: Self.rate))
        track.timePitch.pitchCents = 100
        let (out, _) = try Self.renderLive(engine, frames: 9 * Self.rate) { frame in
            track.timePitch.rate = frame >= 6 * Self.rate ? 1 : frame >= 4 * Self.rate ? 0.5 : frame >= 2 * Self.rate ? 1.6 : 1
        }
        #expect(out.count == 9 * Self.rate)
        let expectedHz = 440 * pow(2, 100.0 / 1200)
        for (from, label) in [(1, "tempo 1"), (3, "tempo 1.6"), (5, "tempo 0.5"), (8, "tempo 1 again")] {
            let f = Signals.frequency(out[(from * Self.rate)..<(from * Self.rate + Self.rate / 2)], sampleRate: Double(Self.rate))
            #expect(abs(Signals.cents(f, expectedHz)) < 0.1, "\(label): \(f) Hz")
        }
        // no click: the largest step between samples stays near that of the steady tone (a
        // jump of half a sample in the read position, the snap this replaced, gave 1.55×; the
        // glide from 1.6 to 0.5 bends the wave by up to 1.13×), and the level stays within 1 dB,
        // in 10 ms windows, through every change
        let steadyStep = 0.5 * 2 * Double.pi * expectedHz / Double(Self.rate)
        let start = Self.rate / 10   // (after the tone's own abrupt start)
        let steps = (start..<out.count).map { Double(abs(out[$0] - out[$0 - 1])) }
        let worst = steps.indices.max { steps[$0] < steps[$1] }!
        #expect(steps[worst] < 1.1 * steadyStep, "step \(steps[worst]) at \(start + worst), tone's \(steadyStep)")
        // and, finer, the fourth difference (a tone's is 0.5·(2 sin(ω/2))⁴ ≈ 1e-5 here; a step
        // of d in the signal shows as about 3d): a jump of half a sample in the read position
        // gave 0.09, frames made at tempos 1.6 and 0.86 side by side 0.06 (a 20 ms tempo glide);
        // the 100 ms glide from 1.6 to 0.5 leaves 0.007
        let d4 = (start..<out.count).map { (i: Int) -> Float in
            let outer: Float = out[i] + out[i - 4], inner: Float = 4 * (out[i - 1] + out[i - 3])
            return abs(outer - inner + 6 * out[i - 2])
        }
        let worst4 = d4.indices.max { d4[$0] < d4[$1] }!
        #expect(d4[worst4] < 0.02, "fourth difference \(d4[worst4]) at \(start + worst4)")
        let w = Self.rate / 100
        let levels = stride(from: Self.rate / 10, to: out.count - w, by: w).map { Signals.db(Signals.rms(out[$0..<($0 + w)]) / (0.5 / 2.0.squareRoot())) }
        #expect(levels.allSatisfy { abs($0) < 1 }, "level from \(levels.min()!) to \(levels.max()!) dB")
    }

    @Test func backAtTempo1And0CentsThePassthroughIsExactAgain() throws {
        let x = Signals.noise(frames: 10 * Self.rate, amplitude: 0.3, seed: 5)
        let engine = AudioEngine()
        let track = engine.addTrack(source: MemorySource(channels: [x], sampleRate: Self.rate))
        let (out, _) = try Self.renderLive(engine, frames: 8 * Self.rate) { frame in
            track.timePitch.rate = frame >= 2 * Self.rate && frame < 4 * Self.rate ? 0.8 : 1
        }
        // before the change: the input itself
        #expect(out[..<(2 * Self.rate)].elementsEqual(x[..<(2 * Self.rate)]))
        // after it (latency, glides and the fade to dry long past): the input, later by what the
        // slower tempo took (about 0.2 × 2 s), sample for sample
        let tail = (6 * Self.rate)..<(8 * Self.rate)
        let delay = (0...(Self.rate)).first { d in out[tail.lowerBound..<(tail.lowerBound + 256)].elementsEqual(x[(tail.lowerBound - d)..<(tail.lowerBound - d + 256)]) }
        #expect(delay != nil)
        if let d = delay {
            #expect(abs(Double(d) - 0.2 * 2 * Double(Self.rate)) < 0.02 * Double(Self.rate), "delay \(d)")
            #expect(out[tail].elementsEqual(x[(tail.lowerBound - d)..<(tail.upperBound - d)]))
        }
    }

    @Test func aLiveSessionEndsWhenItsSlowestTrackDoes() throws {
        let engine = AudioEngine()
        let a = engine.addTrack(source: MemorySource(channels: [Signals.noise(frames: Self.rate, amplitude: 0.2, seed: 1)], sampleRate: Self.rate))
        engine.addTrack(source: MemorySource(channels: [Signals.noise(frames: Self.rate, amplitude: 0.2, seed: 2)], sampleRate: Self.rate))
        a.timePitch.rate = 0.5
        let (out, kernel) = try Self.renderLive(engine, frames: 10 * Self.rate)
        // the session's length is song time; track 1 at half speed plays it in twice the time
        #expect(kernel.layout.frameCount == Self.rate)
        #expect(abs(out.count - 2 * Self.rate) <= 1, "\(out.count)")
        #expect(abs(kernel.songPosition.frame - Double(Self.rate)) <= 1)
    }

    @Test func liveKernelsTakeTempos025To4AndRefuseOthersWithAReason() throws {
        let engine = AudioEngine()
        let t = engine.addTrack(source: MemorySource(channels: [[Float](repeating: 0, count: 100)], sampleRate: 48_000, name: "a.wav"))
        for ok in [0.25, 0.9, 4] {
            t.timePitch.rate = ok
            _ = try engine.makeKernel(mode: .live)
        }
        for refused in [0.2, 4.5, 32] {
            t.timePitch.rate = refused
            #expect { try engine.makeKernel(mode: .live) } throws: { "\($0)".contains("tempo \(refused): live playback takes tempos from 0.25 to 4.0") }
        }
    }
}

