import Foundation
import Testing
import MixFX
import TestSupport
import Synchronization

/// No node may ever hold a NaN: hostile samples (NaN, ±∞, absurd magnitudes) entering through
/// any source are replaced by 0 where they enter, so every node downstream renders exactly what
/// it would render with zeros there, before and after them.
@Suite struct HostileInputTests {
    static let hostile: [Float] = [.nan, -.nan, .infinity, -.infinity, 1e30, -3e7, .greatestFiniteMagnitude,
                                   Float(bitPattern: 0x7FA0_0000)]   // the last a signalling NaN

    func session(_ channels: [[Float]], mode: RenderMode, rate: Int) throws -> (output: [[Float]], replaced: [Int]) {
        let engine = AudioEngine()
        let t = engine.addTrack(source: MemorySource(channels: channels, sampleRate: rate))
        t.eq.bassGain.value = 24
        t.eq.trebleGain.value = -12
        t.timePitch.pitchCents = mode == .live ? -700 : 700
        t.timePitch.formantParameter.value = 1
        engine.outputSampleRate = 48_000   // 44.1 kHz sources go through the resampler too
        engine.masterLimiter = LimiterNode(ceilingDBTP: -6)   // live: the master section too
        let kernel = try engine.makeKernel(maximumFrameCount: 512, mode: mode)
        try kernel.start()
        var out = [[Float]](repeating: [], count: kernel.layout.channelCount)
        while true {
            let n = kernel.render(frameCount: 512)
            if n == 0 { break }
            for c in 0..<out.count { out[c] += UnsafeBufferPointer(start: kernel.output.channel(c), count: n) }
        }
        return (out, kernel.trackReplacedSamples)
    }

    @Test(arguments: [RenderMode.offline, .live], [44_100, 48_000])
    func hostileSamplesChangeNothingButThemselves(mode: RenderMode, rate: Int) throws {
        var x = Signals.noise(frames: 40_000, amplitude: 0.4, seed: 11)
        var zeroed = x
        for (k, v) in HostileInputTests.hostile.enumerated() {
            let i = 3_000 + k * 4_111
            x[i] = v
            zeroed[i] = 0
        }
        let (y, replaced) = try session([x, x.reversed()], mode: mode, rate: rate)
        let (reference, none) = try session([zeroed, zeroed.reversed()], mode: mode, rate: rate)
        #expect(replaced == [2 * HostileInputTests.hostile.count] && none == [0])
        #expect(y.allSatisfy { $0.allSatisfy(\.isFinite) })
        #expect(y == reference)
        #expect(Signals.rms(y[0][30_000...]) > 0.01)
    }

    @Test func theGuardReplacesOnlyWhatItMust() {
        var x: [Float] = [0, 1, -1, 1e6, -1e6, 1.0000001e6, .nan, .infinity, 0.5, -.infinity, 3, .leastNonzeroMagnitude, .leastNormalMagnitude / 1024]   // the last two subnormal
        let n = x.withUnsafeMutableBufferPointer { SampleGuard.sanitize($0.baseAddress!, count: $0.count) }
        #expect(n == 4)
        #expect(x.map { $0.bitPattern } == ([0, 1, -1, 1e6, -1e6, 0, 0, 0, 0.5, 0, 3, .leastNonzeroMagnitude, .leastNormalMagnitude / 1024] as [Float]).map { $0.bitPattern })
        // the eight-wide scan and the tail agree at every length and offset
        for count in 0..<40 {
            var y = (0..<count).map { Float($0) }
            if count > 5 { y[count / 2] = .nan }
            let m = y.withUnsafeMutableBufferPointer { SampleGuard.sanitize($0.baseAddress!, count: $0.count) }
            #expect(m == (count > 5 ? 1 : 0) && y.allSatisfy(\.isFinite))
        }
        // one bad sample at every lane and in the tail, among samples at the limit either side
        let bad: [Float] = [.nan, -.infinity, Float(bitPattern: SampleGuard.limit.bitPattern + 1), -Float(bitPattern: SampleGuard.limit.bitPattern + 1)]
        for count in 1..<20 {
            for at in 0..<count {
                var y = (0..<count).map { $0 % 2 == 0 ? SampleGuard.limit : -SampleGuard.limit }
                y[at] = bad[at % bad.count]
                let m = y.withUnsafeMutableBufferPointer { SampleGuard.sanitize($0.baseAddress!, count: $0.count) }
                #expect(m == 1 && y[at] == 0 && y.filter { abs($0) == SampleGuard.limit }.count == count - 1, "\(count) samples, bad at \(at)")
            }
        }
    }
}

/// Parameters set from several threads while a live kernel renders (the ThreadSanitizer build,
/// `make test-tsan`, checks the accesses; here the mix must stay finite and within the range
/// the settings allow).
@Suite struct LiveParameterThreadTests {
    @Test func parametersChangeFromThreeThreadsWhileRendering() throws {
        let engine = AudioEngine()
        var tracks: [Track] = []
        for k in 0..<3 {
            tracks.append(engine.addTrack(source: MemorySource(channels: [Signals.noise(frames: 384_000, amplitude: 0.3, seed: UInt64(k + 3))],
                                                               sampleRate: 48_000)))
        }
        let kernel = try engine.makeKernel(maximumFrameCount: 256, mode: .live)
        try kernel.start()
        let all = tracks
        let mixer = engine.mainMixer
        let done = Atomic<Bool>(false)
        let ids: [ParameterID] = [.bassGainDB, .trebleGainDB, .pitchCents, .volume, .pan, .mute, .bassFrequencyHz, .preserveFormants]
        let running = Atomic<Int>(3)
        let threads = (0..<3).map { _ in
            Thread {
                var rng = SystemRandomNumberGenerator()
                while !done.load(ordering: .relaxed) {
                    let id = ids[Int.random(in: 0..<ids.count, using: &rng)]
                    let spec = id.spec
                    let v = spec.isBoolean ? Double(Int.random(in: 0...1, using: &rng))
                        : Double.random(in: max(spec.minimum, -1200)...min(spec.maximum, 1200), using: &rng)
                    all[Int.random(in: 0..<all.count, using: &rng)].parameter(id)?.value = spec.minimumExcluded ? max(v, 0.01) : v
                    mixer.outputVolume = Double.random(in: 0...1, using: &rng)
                }
                running.subtract(1, ordering: .releasing)
            }
        }
        threads.forEach { $0.start() }
        func peakOf(blocks count: Int) -> (peak: Float, blocks: Int) {
            var peak: Float = 0, blocks = 0
            while blocks < count, case let n = kernel.render(frameCount: 256), n > 0 {
                for c in 0..<kernel.layout.channelCount {
                    for i in 0..<n { peak = max(peak, abs(kernel.output.channel(c)[i])); #expect(kernel.output.channel(c)[i].isFinite) }
                }
                blocks += 1
            }
            return (peak, blocks)
        }
        let storm = peakOf(blocks: 300)
        done.store(true, ordering: .relaxed)
        while running.load(ordering: .acquiring) > 0 { usleep(1000) }
        #expect(storm.blocks == 300)
        // An unstable state grows without bound. Three tracks of noise within ±0.3, volumes and
        // pan gains ≤ 1, and two shelves of at most +24 dB each (≤ +48 dB where they overlap):
        // a stable mix stays under 3 · 0.3 · 10^(48/20); the factor 2 leaves room for the
        // shifter's overlap-add and the filters' ringing while coefficients move.
        #expect(storm.peak < 3 * 0.3 * 251.2 * 2, "peak \(storm.peak)")
        // Back at neutral settings the mix returns to the plain sum: nothing kept a bad state.
        for track in all {
            for id in ids { track.parameter(id)?.value = id.spec.defaultValue }
        }
        mixer.outputVolume = 1
        _ = peakOf(blocks: 400)   // the smoothers, the shifter's crossfade and the filters settle
        let calm = peakOf(blocks: 100)
        #expect(calm.blocks == 100 && calm.peak <= 3 * 0.3 * 1.0001, "peak \(calm.peak) at neutral settings")
    }
}
