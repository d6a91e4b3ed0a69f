import Foundation
import Testing
import MixFX
import TestSupport

/// Renders a whole engine offline into planar arrays.
func renderAll(_ engine: AudioEngine, block: Int = 1024) throws -> [[Float]] {
    let kernel = try engine.makeKernel(maximumFrameCount: block)
    try kernel.start()
    var out = [[Float]](repeating: [], count: kernel.layout.channelCount)
    while true {
        let n = kernel.render(frameCount: block)
        if n == 0 { break }
        for c in 0..<out.count { out[c] += UnsafeBufferPointer(start: kernel.output.channel(c), count: n) }
    }
    return out
}

@Suite struct MixerTests {
    @Test func plainSumWithoutHiddenScaling() throws {
        let a = Signals.noise(frames: 5000, amplitude: 0.3, seed: 1)
        let b = Signals.noise(frames: 5000, amplitude: 0.3, seed: 2)
        let engine = AudioEngine()
        engine.addTrack(source: MemorySource(channels: [a], sampleRate: 48_000))
        engine.addTrack(source: MemorySource(channels: [b], sampleRate: 48_000))
        let out = try renderAll(engine)
        #expect(out.count == 1)
        #expect(out[0] == zip(a, b).map { $0 + $1 })
    }

    @Test func volumesAndMasterMultiply() throws {
        let a = Signals.noise(frames: 3000, amplitude: 0.3, seed: 3)
        let engine = AudioEngine()
        let t = engine.addTrack(source: MemorySource(channels: [a], sampleRate: 44_100))
        t.player.volume = 0.5
        engine.mainMixer.outputVolume = 0.25
        let out = try renderAll(engine)
        #expect(out[0] == a.map { Float(0.125) * $0 })
    }

    @Test func monoSourceIsPannedWithConstantPower() throws {
        let a = Signals.noise(frames: 2000, amplitude: 0.5, seed: 4)
        let s = Signals.noise(frames: 2000, amplitude: 0.1, seed: 5)
        for pan in [-1.0, -0.5, 0, 0.3, 1] {
            let engine = AudioEngine()
            let t = engine.addTrack(source: MemorySource(channels: [a], sampleRate: 44_100))
            t.player.pan = pan
            engine.addTrack(source: MemorySource(channels: [s, s], sampleRate: 44_100))  // makes the output stereo
            let out = try renderAll(engine)
            let g = PanLaw.monoGains(pan: pan)
            for i in stride(from: 0, to: 2000, by: 97) {
                #expect(abs(out[0][i] - (Float(g.left) * a[i] + s[i])) < 1e-7)
                #expect(abs(out[1][i] - (Float(g.right) * a[i] + s[i])) < 1e-7)
            }
        }
        // centre: −3.01 dB each side
        let g = PanLaw.monoGains(pan: 0)
        #expect(abs(20 * log10(g.left) - -3.0103) < 1e-3 && g.left == g.right)
    }

    @Test func stereoSourceUsesBalance() throws {
        let l = Signals.noise(frames: 2000, amplitude: 0.5, seed: 6), r = Signals.noise(frames: 2000, amplitude: 0.5, seed: 7)
        let engine = AudioEngine()
        let t = engine.addTrack(source: MemorySource(channels: [l, r], sampleRate: 48_000))
        t.player.pan = -0.25
        let out = try renderAll(engine)
        #expect(out[0] == l)
        #expect(out[1] == r.map { 0.75 * $0 })
    }

    @Test func mixLastsAsLongAsTheLongestTrack() throws {
        let engine = AudioEngine()
        engine.addTrack(source: MemorySource(channels: [Signals.noise(frames: 1000)], sampleRate: 44_100))
        engine.addTrack(source: MemorySource(channels: [Signals.noise(frames: 7777)], sampleRate: 44_100))
        let out = try renderAll(engine, block: 512)
        #expect(out[0].count == 7777)
    }

    @Test func mixedSampleRatesAreConvertedToTheHighest() throws {
        let rate1 = 44_100, rate2 = 48_000
        let a = Signals.sine(frequencyHz: 1000, sampleRate: Double(rate1), frames: rate1, amplitude: 0.25)
        let b = Signals.sine(frequencyHz: 3000, sampleRate: Double(rate2), frames: rate2 / 2, amplitude: 0.25)
        let engine = AudioEngine()
        engine.addTrack(source: MemorySource(channels: [a], sampleRate: rate1))
        engine.addTrack(source: MemorySource(channels: [b], sampleRate: rate2))
        let layout = try engine.validate()
        #expect(layout.sampleRate == 48_000)
        #expect(layout.frameCount == 48_000)
        let out = try renderAll(engine)
        #expect(out[0].count == 48_000)
        // The 44.1 kHz tone arrives at 1000 Hz; after the 3 kHz tone ends, only it is left.
        let tail = out[0][30_000..<46_000]
        #expect(abs(Signals.cents(Signals.frequency(tail, sampleRate: 48_000), 1000)) < 0.01)
        #expect(Signals.residualDB(tail, frequencyHz: 1000, sampleRate: 48_000) < -90)
    }

    @Test func monoAndStereoMixToStereo() throws {
        let engine = AudioEngine()
        engine.addTrack(source: MemorySource(channels: [[0.5, 0.5]], sampleRate: 44_100))
        engine.addTrack(source: MemorySource(channels: [[0.1, 0.1], [0.2, 0.2]], sampleRate: 44_100))
        let out = try renderAll(engine)
        let g = Float(0.5.squareRoot())
        #expect(out.count == 2)
        #expect(abs(out[0][0] - (0.5 * g + 0.1)) < 1e-7 && abs(out[1][0] - (0.5 * g + 0.2)) < 1e-7)
    }
}

@Suite struct EngineTests {
    @Test func defaultSettingsAreABitExactBypass() throws {
        let l = Signals.noise(frames: 20_000, seed: 8), r = Signals.noise(frames: 20_000, seed: 9)
        let engine = AudioEngine()
        engine.addTrack(source: MemorySource(channels: [l, r], sampleRate: 44_100))
        let out = try renderAll(engine)
        #expect(out[0] == l && out[1] == r)
    }

    @Test func resultDoesNotDependOnBlockSize() throws {
        func make() -> AudioEngine {
            let engine = AudioEngine()
            let t1 = engine.addTrack(source: MemorySource(channels: [Signals.noise(frames: 30_000, seed: 10)], sampleRate: 44_100))
            t1.eq.bassGain.value = 4
            t1.timePitch.pitchCents = 200
            let t2 = engine.addTrack(source: MemorySource(channels: [Signals.noise(frames: 20_000, seed: 11),
                                                                    Signals.noise(frames: 20_000, seed: 12)], sampleRate: 48_000))
            t2.eq.trebleGain.value = -6
            t2.timePitch.pitchCents = -700
            t2.player.pan = 0.4
            return engine
        }
        let a = try renderAll(make(), block: 64)
        let b = try renderAll(make(), block: 4096)
        let c = try renderAll(make(), block: 1000)
        #expect(a == b && b == c)
        #expect(a[0].count == 32_654)   // ceil(30000·48000/44100 = 32653.06)
    }

    /// The tracks render ahead on worker threads (`TrackPipeline`); the mix must be the same
    /// samples as rendering them one after another, whatever the request sizes, across a seek.
    @Test func tracksOnSeveralCoresMixLikeOneAfterAnother() throws {
        func make() -> AudioEngine {
            let engine = AudioEngine()
            for k in 0..<5 {
                let frames = 20_000 + 3_000 * k
                let t = engine.addTrack(source: MemorySource(channels: [Signals.noise(frames: frames, seed: 20 + UInt64(k)),
                                                                        Signals.noise(frames: frames, seed: 30 + UInt64(k))],
                                                             sampleRate: 44_100))
                t.timePitch.pitchCents = [0, 200, -500, 1200, 0][k]
                t.eq.bassGain.value = Double(k)
                t.player.volume = 0.5
            }
            return engine
        }
        func render(parallel: Bool, request: Int, seekTo: Int?) throws -> [[Float]] {
            let kernel = try make().makeKernel(maximumFrameCount: 1024)
            kernel.parallelTracks = parallel
            try kernel.start()
            #expect(kernel.rendersTracksInParallel == (parallel && ProcessInfo.processInfo.activeProcessorCount > 1))
            var out: [[Float]] = [[], []]
            var seeked = false
            while true {
                let n = kernel.render(frameCount: request)
                if n == 0 { break }
                for c in 0..<2 { out[c] += UnsafeBufferPointer(start: kernel.output.channel(c), count: n) }
                if let seekTo, !seeked && out[0].count > 9_000 {
                    try kernel.seek(toFrame: seekTo)
                    seeked = true
                }
            }
            return out
        }
        let sequential = try render(parallel: false, request: 1024, seekTo: nil)
        #expect(sequential[0].count == 32_000)
        #expect(try render(parallel: true, request: 1024, seekTo: nil) == sequential)
        #expect(try render(parallel: true, request: 700, seekTo: nil) == sequential)
        let seekedSequential = try render(parallel: false, request: 700, seekTo: 15_000)
        #expect(try render(parallel: true, request: 700, seekTo: 15_000) == seekedSequential)
    }

    /// The live seek without a pre-roll (`restartSignal`, what `mixfx play` does on the render
    /// thread): with the sources moved to `sourceFrames(restartingAt:)` and the effects' latency
    /// rendered, the mix from the target frame on is the same samples as after `seek`, for
    /// shifted tracks at two rates.
    @Test(arguments: [0, 15_000, 31_000])
    func aRestartIsASeekWithoutThePreRoll(target: Int) throws {
        func make() -> AudioEngine {
            let engine = AudioEngine()
            for k in 0..<3 {
                let t = engine.addTrack(source: MemorySource(channels: [Signals.noise(frames: 40_000, seed: 50 + UInt64(k))],
                                                             sampleRate: k == 2 ? 44_100 : 48_000))
                t.timePitch.pitchCents = [-500, 300, 0][k]
                t.eq.bassGain.value = 3
            }
            return engine
        }
        func tail(_ kernel: RenderKernel) throws -> [Float] {
            var out: [Float] = []
            while case let n = kernel.render(frameCount: 512), n > 0 {
                out += UnsafeBufferPointer(start: kernel.output.channel(0), count: n)
            }
            return out
        }
        let engine = make()
        let sought = try engine.makeKernel(maximumFrameCount: 512, mode: .live)
        try sought.seek(toFrame: target)
        let expected = try tail(sought)
        let restarted = try engine.makeKernel(maximumFrameCount: 512, mode: .live)
        try restarted.start()
        for _ in 0..<7 { _ = restarted.render(frameCount: 512) }
        for (i, t) in try engine.validate().tracks.enumerated() {
            try t.player.source.seek(toFrame: max(0, restarted.sourceFrame(track: i, restartingAt: target)))
        }
        restarted.restartSignal(atFrame: target)
        while restarted.framesRendered < target {
            _ = restarted.render(frameCount: min(512, target - restarted.framesRendered))
        }
        let got = try tail(restarted)
        #expect(got.count == expected.count && got == expected)
    }

    /// A source that fails on a worker thread: `render` does not throw, the error reaches the
    /// caller through `failure` no later than with the block that failed (which, like any block
    /// after it, is not to be used), and the blocks before it render as usual (the shifted
    /// tracks, slower, are still behind the cheap failing one when it fails).
    @Test func aWorkerThreadsErrorReachesTheCaller() throws {
        final class FailingSource: AudioSource, @unchecked Sendable {
            struct Broken: Error {}
            let format = SourceFormat(sampleRate: 44_100, channelCount: 1, frameCount: 100_000)
            let name = "failing"
            var position = 0
            func read(into buffer: AudioBuffer, offset: Int, frameCount: Int) throws -> Int {
                if position > 20_000 { throw Broken() }
                buffer.clear(frameCount: offset + frameCount)
                position += frameCount
                return frameCount
            }
            func seek(toFrame frame: Int) throws { position = frame }
        }
        let engine = AudioEngine()
        engine.addTrack(source: FailingSource())
        for k in 0..<3 {
            let t = engine.addTrack(source: MemorySource(channels: [Signals.noise(frames: 100_000, seed: 40 + UInt64(k))],
                                                         sampleRate: 44_100))
            t.timePitch.pitchCents = 700
        }
        let kernel = try engine.makeKernel(maximumFrameCount: 1024)
        try kernel.start()
        var rendered = 0
        while true {
            let n = kernel.render(frameCount: 1024)
            if n == 0 || kernel.failure != nil { break }
            rendered += n
        }
        #expect(kernel.failure is FailingSource.Broken)
        // reads of 1024 frames: the one starting at 20 480 throws, so blocks 0…19 are good; the
        // caller may learn of it earlier, as the workers render up to 4 blocks ahead of the mix
        #expect(rendered <= 20_480 && rendered >= 20_480 - 4 * 1024, "rendered \(rendered)")
    }

    @Test func pitchedTrackIsAlignedAndExactLength() throws {
        let rate = 44_100
        let x = Signals.sine(frequencyHz: 440, sampleRate: Double(rate), frames: 3 * rate)
        let engine = AudioEngine()
        let t = engine.addTrack(source: MemorySource(channels: [x], sampleRate: rate))
        t.timePitch.pitchCents = 700
        let out = try renderAll(engine, block: 333)
        #expect(out[0].count == x.count)
        let measured = Signals.frequency(out[0][rate / 2..<5 * rate / 2], sampleRate: Double(rate))
        #expect(abs(Signals.cents(measured, 440 * pow(2, 700.0 / 1200))) < 1)
    }

    @Test func validationErrorsAreTyped() throws {
        let src = MemorySource(channels: [[0, 0]], sampleRate: 44_100)
        // unconnected effect
        let e1 = AudioEngine()
        let p = PlayerNode(source: src)
        let eq = ShelfEQNode(name: "lonely EQ")
        e1.attach(p); e1.attach(eq)
        try e1.connect(p, to: e1.mainMixer)
        #expect(throws: EngineError.unconnectedNode(node: "lonely EQ")) { try e1.validate() }
        // player going nowhere
        let e2 = AudioEngine()
        let p2 = PlayerNode(source: src, name: "p2")
        e2.attach(p2)
        #expect(throws: EngineError.unconnectedNode(node: "p2")) { try e2.validate() }
        // not attached
        #expect(throws: EngineError.nodeNotAttached(node: "x")) { try e2.connect(p2, to: ShelfEQNode(name: "x")) }
        // cycle
        let e3 = AudioEngine()
        let a = ShelfEQNode(name: "a"), b = ShelfEQNode(name: "b")
        e3.attach(a); e3.attach(b)
        try e3.connect(a, to: b)
        #expect(throws: EngineError.cycle(node: "b")) { try e3.connect(b, to: a) }
        // no tracks
        #expect(throws: EngineError.noTracks) { try AudioEngine().validate() }
        // out of range
        let e4 = AudioEngine()
        let t = e4.addTrack(source: src, name: "t")
        t.eq.bassGain.value = 40
        #expect(throws: EngineError.parameterOutOfRange(node: "t EQ", parameter: .bassGainDB,
                                                        problem: "40 is above 24", allowed: "from -96 to 24 dB")) { try e4.validate() }
        t.eq.bassGain.value = 0
        t.eq.trebleFrequency.value = 23_000
        t.eq.trebleGain.value = 2
        #expect { try e4.validate() } throws: { error in
            guard case EngineError.parameterOutOfRange(_, .trebleFrequencyHz, let problem, _) = error else { return false }
            return problem.contains("Nyquist")
        }
        t.eq.trebleFrequency.value = 5800
        t.timePitch.pitchCents = .nan
        #expect(throws: EngineError.self) { try e4.validate() }
        // unsupported channel count
        let e5 = AudioEngine()
        e5.addTrack(source: MemorySource(channels: Array(repeating: [0], count: 9), sampleRate: 44_100, name: "9ch"))
        #expect(throws: EngineError.unsupportedFormat(source: "9ch", reason: "9 channels (allowed: 1 to 8, mono to 7.1)")) {
            try e5.validate()
        }
    }
}

extension MixerTests {
    /// Meters measure every channel: a mono track panned hard right reads what it reads centred
    /// (constant power), not silence, and the master reads the mix of both channels.
    @Test(arguments: [RenderMode.offline, .live])
    func metersReadEveryChannel(mode: RenderMode) throws {
        let x = Signals.sine(frequencyHz: 1000, sampleRate: 48_000, frames: 4800, amplitude: 0.5)
        var readings: [Double: (track: Float, master: Float, peak: Float)] = [:]
        for pan in [-1.0, 0, 1] {
            let engine = AudioEngine()
            let t = engine.addTrack(source: MemorySource(channels: [x], sampleRate: 48_000))
            t.player.pan = pan
            engine.addTrack(source: MemorySource(channels: [[Float](repeating: 0, count: 4800), [Float](repeating: 0, count: 4800)],
                                                 sampleRate: 48_000))   // a silent stereo track: the mix is stereo
            let kernel = try engine.makeKernel(maximumFrameCount: 4800, mode: mode)
            try kernel.start()
            _ = kernel.render(frameCount: 4800)
            readings[pan] = (kernel.trackMeters[0].rms, kernel.masterMeter.rms, kernel.trackMeters[0].takePeak())
        }
        // the sine's RMS is 0.5/√2; over two output channels at constant power: 0.5/√2/√2 = 0.25
        for (pan, r) in readings {
            #expect(abs(r.track - 0.25) < 0.002, "pan \(pan): track meter \(r.track)")
            #expect(abs(r.master - r.track) < 1e-4, "pan \(pan): master \(r.master)")
            #expect(r.peak > 0.35, "pan \(pan): peak \(r.peak)")
        }
    }
}
