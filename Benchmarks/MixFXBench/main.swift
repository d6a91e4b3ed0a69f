// Release-mode benchmark of mixfx's processors and of the "band" session.
//
//     swift build -c release && .build/release/mixfx-bench            per-node × real time
//     .build/release/mixfx-bench --make-band DIR                      writes the band's 4 tracks
//
// The band: four 60-second 44.1 kHz stereo tracks, bass +4 dB, pitch +200 cents, mixed.
// Benchmarks/run.sh runs the same band through SoX and soundstretch and prints the ratios.
import Foundation
import MixFX

let rate = 44_100
let seconds = 60
let frames = rate * seconds

/// A deterministic musical-ish test signal: a few partials plus noise, different per track.
func trackSignal(_ index: Int, channel: Int) -> [Float] {
    var s: UInt64 = 0x9E37_79B9_7F4A_7C15 &+ UInt64(index * 2 + channel)
    let base = [55.0, 110.0, 220.0, 440.0][index % 4]
    return (0..<frames).map { n in
        s ^= s << 13; s ^= s >> 7; s ^= s << 17
        let t = Double(n) / Double(rate)
        let env = 0.5 + 0.5 * sin(2 * .pi * 0.5 * t)
        var v = 0.0
        for k in 1...4 { v += sin(2 * .pi * base * Double(k) * t + Double(channel)) / Double(k) }
        return Float(0.12 * env * v + 0.02 * (Double(s >> 11) / Double(1 << 53) - 0.5))
    }
}

func makeBand(in dir: String) throws -> [String] {
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    return try (0..<4).map { i in
        let path = "\(dir)/track\(i + 1).wav"
        if FileManager.default.fileExists(atPath: path) { return path }
        let l = trackSignal(i, channel: 0), r = trackSignal(i, channel: 1)
        let block = 44_100
        let buffer = AudioBuffer(channelCount: 2, capacityFrames: block)
        let w = try SoundFileWriter(path: path, format: OutputFormat(container: .wav, sampleFormat: .s16, sampleRate: rate, channelCount: 2))
        var done = 0
        while done < frames {
            let n = min(block, frames - done)
            for k in 0..<n { buffer.channel(0)[k] = l[done + k]; buffer.channel(1)[k] = r[done + k] }
            try w.write(buffer, frameCount: n)
            done += n
        }
        try w.close()
        return path
    }
}

func timeIt(_ body: () throws -> Void) rethrows -> Double {
    let t0 = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9
}

func report(_ name: String, audioSeconds: Double, wall: Double) {
    print(name.padding(toLength: 52, withPad: " ", startingAt: 0)
          + String(format: "%9.1f× real time  (%.3f s for %.0f s of audio)", audioSeconds / wall, wall, audioSeconds))
}

let args = CommandLine.arguments
if args.count == 2 && args[1] == "--fft" {
    // ns per real forward transform, as Benchmarks/fftw_bench.c prints FFTW's, of the DSP copy
    // a render runs on this CPU (FFTBench.swift)
    fftBench()
    exit(0)
}
if args.count >= 2 && args[1] == "--quality" {
    // --quality [--recordings DIR] [--band-times "tool=seconds;tool=seconds…"] [--tools "mixfx,bungee…"]
    var recordings: String?, bandTimes: [String: Double] = [:], only: Set<String>?
    var i = 2
    while i + 1 < args.count {
        if args[i] == "--recordings" { recordings = args[i + 1] }
        if args[i] == "--band-times" {
            for pair in args[i + 1].split(separator: ";") {
                let kv = pair.split(separator: "=", maxSplits: 1)
                if kv.count == 2, let v = Double(kv[1]) { bandTimes[String(kv[0])] = v }
            }
        }
        if args[i] == "--tools" { only = Set(args[i + 1].split(separator: ",").map(String.init)) }
        i += 2
    }
    try QualityBenchmark.run(recordings: recordings, bandTimes: bandTimes, only: only)
    exit(0)
}
if args.count == 2 && args[1] == "--spikes" {
    // Longest single block of a streaming shifter (600-frame blocks at 48 kHz, as mixfx play
    // runs it): render-time spikes.
    let ps = PitchShifter()
    ps.prepare(ProcessSpec(sampleRate: 48_000, maximumFrameCount: 600, channelCount: 2), settings: PitchShifterSettings(pitchCents: 200), mode: .streaming)
    let l = trackSignal(0, channel: 0), r = trackSignal(0, channel: 1)
    var outL = [Float](repeating: 0, count: 600), outR = outL
    var worst = 0.0, at = 0, pulled = 0
    l.withUnsafeBufferPointer { lp in r.withUnsafeBufferPointer { rp in
        outL.withUnsafeMutableBufferPointer { ol in outR.withUnsafeMutableBufferPointer { or in
            var i = 0
            while i + 600 <= frames {
                let t = timeIt {
                    ps.process(live: ol.baseAddress!, or.baseAddress!, frameCount: 600, maximumPull: 600) { k in
                        // (the look-ahead runs past the end: from the start again)
                        if pulled + k > frames { pulled = 0 }
                        defer { pulled += k }
                        return (lp.baseAddress! + pulled, rp.baseAddress! + pulled)
                    }
                }
                if t > 0.005 { print("block at \(i): \(t * 1000) ms") }
                if t > worst { worst = t; at = i }
                i += 600
            }
        } }
    } }
    print("worst block \(worst * 1000) ms at frame \(at)")
    exit(0)
}
if args.count >= 4 && args[1] == "--lv2" {
    // --lv2 RECORDINGS URI=LATENCY... (Benchmarks/lv2-compare.sh; LV2Compare.swift)
    let plugins = args[3...].compactMap { a -> (uri: String, latency: Int)? in
        guard let eq = a.lastIndex(of: "="), let l = Int(a[a.index(after: eq)...]) else { return nil }
        return (String(a[..<eq]), l)
    }
    try LV2Comparison.run(recordings: args[2], plugins: plugins)
    exit(0)
}
if args.count >= 3 && args[1] == "--automation" {
    try AutomationBench.cost(band: args[2], runs: args.count > 3 ? Int(args[3]) ?? 5 : 5, kind: args.count > 4 ? args[4] : "volume")
    exit(0)
}
if args.count >= 2 && args[1] == "--automation-allocations" {
    try AutomationBench.allocations(mode: args.count < 3 ? "lanes" : args[2])
    exit(0)
}
if args.count == 3 && args[1] == "--make-band" {
    for p in try makeBand(in: args[2]) { print(p) }
    exit(0)
}

let block = 1024
let left = trackSignal(0, channel: 0), right = trackSignal(0, channel: 1)
let spec = ProcessSpec(sampleRate: Double(rate), maximumFrameCount: block, channelCount: 2)
let audio = Double(seconds)
print("mixfx-bench: 60 s of 44.1 kHz stereo per line, blocks of \(block) frames")

do {
    var l = left, r = right
    var eq = ShelfEQ()
    eq.prepare(spec)
    eq.update(ShelfEQSettings(bass: .init(frequencyHz: 55, gainDB: 4), treble: .init(frequencyHz: 5800, gainDB: -2)))
    let t = timeIt {
        l.withUnsafeMutableBufferPointer { lp in r.withUnsafeMutableBufferPointer { rp in
            var i = 0
            while i < frames { let n = min(block, frames - i); eq.process(left: lp.baseAddress! + i, right: rp.baseAddress! + i, frameCount: n); i += n }
        } }
    }
    report("shelf EQ (bass +4, treble -2)", audioSeconds: audio, wall: t)
}
for cents in [200.0, -500.0, 1200.0] {
    var l = left, r = right
    let ps = PitchShifter()
    ps.prepare(spec, settings: PitchShifterSettings(pitchCents: cents))
    let t = timeIt {
        l.withUnsafeMutableBufferPointer { lp in r.withUnsafeMutableBufferPointer { rp in
            var i = 0
            while i < frames { let n = min(block, frames - i); ps.process(left: lp.baseAddress! + i, right: rp.baseAddress! + i, frameCount: n); i += n }
        } }
    }
    report("pitch shifter \(cents > 0 ? "+" : "")\(Int(cents)) cents (latency \(ps.latencyFrames) frames)", audioSeconds: audio, wall: t)
}
do {
    // The latency the shifter adds offline (removed by pre-roll; a streaming shifter, as mixfx
    // play runs it, has none: it reads its input ahead).
    var row = "shifter latency, frames (ms) at 44.1 kHz by overlap:"
    for overlap in [3, 4, 8, 16, 32] {
        let off = PitchShifter()
        off.prepare(spec, settings: PitchShifterSettings(pitchCents: 200, overlap: overlap))
        row += String(format: "  %d: offline +200 ct %d (%.0f);", overlap, off.latencyFrames,
                      Double(off.latencyFrames) / Double(rate) * 1000)
    }
    print(row)
}
do {
    let rs = Resampler(inRate: 44_100, outRate: 48_000, channelCount: 2, maxWriteFrames: block)
    var out = [Float](repeating: 0, count: 2 * block)
    let t = timeIt {
        left.withUnsafeBufferPointer { lp in right.withUnsafeBufferPointer { rp in
            out.withUnsafeMutableBufferPointer { op in
                var i = 0
                while !rs.isDrained {
                    if rs.needsInput {
                        if i < frames {
                            let n = min(block, frames - i)
                            rs.write([lp.baseAddress! + i, rp.baseAddress! + i], frameCount: n)
                            i += n
                        } else { rs.finish() }
                    }
                    _ = rs.read(into: { op.baseAddress! + $0 * block }, offset: 0, maxFrames: block)
                }
            }
        } }
    }
    report("resampler 44.1 → 48 kHz", audioSeconds: audio, wall: t)
}
do {
    let engine = AudioEngine()
    for i in 0..<4 {
        engine.addTrack(source: MemorySource(channels: [trackSignal(i, channel: 0), trackSignal(i, channel: 1)], sampleRate: rate))
    }
    let kernel = try engine.makeKernel(maximumFrameCount: block)
    let t = try timeIt {
        try kernel.start()
        while kernel.render(frameCount: block) > 0 {}
    }
    report("mixer, 4 stereo tracks (no effects)", audioSeconds: audio, wall: t)
}
do {
    let dir = try workDirectory("mixfx-band")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let paths = try makeBand(in: dir)
    let engine = AudioEngine()
    for p in paths {
        let t = engine.addTrack(source: try SoundFileReader(path: p))
        t.eq.bassGain.value = 4
        t.timePitch.pitchCents = 200
    }
    var renderer = OfflineRenderer(outputPath: dir + "/band-mix.wav", sampleFormat: .s16)
    renderer.overwrite = true
    let r = try renderer.render(engine)
    report("band: 4 tracks, bass +4, pitch +200, to s16", audioSeconds: audio, wall: r.elapsedSeconds)
}
