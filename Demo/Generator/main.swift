// Generates the demo session's four tracks (drums, bass, chords, lead) as 16-bit FLAC in the
// folder given as the first argument (default: Demo). Deterministic: the same bytes every run.
//
//     swift run mixfx-demo-gen Demo
import Foundation
import MixFXDSP
import MixFXIO

let dir = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "Demo"
let rate = 44_100.0
let bpm = 112.0
let beat = 60 / bpm
let bars = 4
let seconds = beat * 4 * Double(bars)
let frames = Int(seconds * rate)

/// Deterministic white noise (xorshift64).
struct Noise {
    var state: UInt64 = 0x1234_5678_9ABC_DEF1
    mutating func next() -> Double {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        return Double(state >> 11) / Double(1 << 53) * 2 - 1
    }
}
var rng = Noise()
@MainActor func noise() -> Double { rng.next() }
func midi(_ n: Double) -> Double { 440 * pow(2, (n - 69) / 12) }

func write(_ name: String, _ channels: [[Double]]) throws {
    let buffer = AudioBuffer(channelCount: channels.count, capacityFrames: frames)
    for (c, ch) in channels.enumerated() { for i in 0..<frames { buffer.channel(c)[i] = Float(ch[i]) } }
    let w = try SoundFileWriter(path: "\(dir)/\(name).flac",
                                format: OutputFormat(container: .flac, sampleFormat: .s16, sampleRate: Int(rate),
                                                     channelCount: channels.count))
    try w.write(buffer, frameCount: frames)
    try w.close()
    print("wrote \(dir)/\(name).flac")
}

// Drums (mono): kick on 1 and 3, snare on 2 and 4, closed hats on eighths.
var drums = [Double](repeating: 0, count: frames)
for b in 0..<(bars * 4) {
    let t0 = Int(Double(b) * beat * rate)
    if b % 2 == 0 {
        var phase = 0.0
        for i in 0..<Int(0.35 * rate) where t0 + i < frames {
            let t = Double(i) / rate
            phase += 2 * .pi * (45 + 90 * exp(-t * 30)) / rate
            drums[t0 + i] += 0.9 * sin(phase) * exp(-t * 9)
        }
    } else {
        var lp = 0.0
        for i in 0..<Int(0.2 * rate) where t0 + i < frames {
            let t = Double(i) / rate
            lp += 0.5 * (noise() - lp)
            drums[t0 + i] += 0.45 * lp * exp(-t * 22) + 0.3 * sin(2 * .pi * 185 * t) * exp(-t * 30)
        }
    }
    for h in 0..<2 {
        let s = t0 + Int(Double(h) * beat / 2 * rate)
        var prev = 0.0
        for i in 0..<Int(0.05 * rate) where s + i < frames {
            let n = noise(); let hp = n - prev; prev = n
            drums[s + i] += 0.12 * hp * exp(-Double(i) / rate * 80)
        }
    }
}

// Bass (mono): a plucked, low-passed sawtooth on the roots.
let roots: [Double] = [45, 41, 36, 43]   // A1 F1 C1 G1 (MIDI)
var bass = [Double](repeating: 0, count: frames)
var lp1 = 0.0
for i in 0..<frames {
    let t = Double(i) / rate
    let bar = min(Int(t / (beat * 4)), bars - 1)
    let inNote = t.truncatingRemainder(dividingBy: beat / 2)
    let f = midi(roots[bar] + 12)
    let saw = 2 * (t * f - (t * f).rounded(.down)) - 1
    let env = exp(-inNote * 6)
    lp1 += (0.08 + 0.2 * env) * (saw - lp1)
    bass[i] = 0.5 * lp1 * (0.4 + 0.6 * env)
}

// Chords (stereo): detuned sine triads with a slow attack, a little wider on the right.
let chords: [[Double]] = [[57, 60, 64], [53, 57, 60], [48, 52, 55], [55, 59, 62]]
var padL = [Double](repeating: 0, count: frames), padR = padL
for i in 0..<frames {
    let t = Double(i) / rate
    let bar = min(Int(t / (beat * 4)), bars - 1)
    let inBar = t - Double(bar) * beat * 4
    let env = min(1, inBar / 0.4) * exp(-inBar * 0.3)
    var l = 0.0, r = 0.0
    for n in chords[bar] {
        let f = midi(n)
        l += sin(2 * .pi * f * 0.998 * t) + 0.3 * sin(4 * .pi * f * t)
        r += sin(2 * .pi * f * 1.002 * t) + 0.3 * sin(4 * .pi * f * t + 0.5)
    }
    padL[i] = 0.12 * env * l
    padR[i] = 0.12 * env * r
}

// Lead (mono): a melody with vibrato and a few harmonics.
let melody: [Double] = [69, 72, 76, 74, 72, 69, 67, 69, 65, 69, 72, 74, 72, 71, 67, 71]
var lead = [Double](repeating: 0, count: frames)
var leadPhase = 0.0
for i in 0..<frames {
    let t = Double(i) / rate
    let step = min(Int(t / beat), melody.count - 1)
    let inNote = t - Double(step) * beat
    let f = midi(melody[step]) * (1 + 0.004 * sin(2 * .pi * 5.5 * t) * min(1, inNote * 3))
    leadPhase += 2 * .pi * f / rate
    let env = min(1, inNote / 0.02) * exp(-inNote * 1.5)
    lead[i] = 0.3 * env * (sin(leadPhase) + 0.4 * sin(2 * leadPhase) + 0.2 * sin(3 * leadPhase))
}

do {
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    try write("1-drums", [drums])
    try write("2-bass", [bass])
    try write("3-chords", [padL, padR])
    try write("4-lead", [lead])
} catch {
    FileHandle.standardError.write(Data("mixfx-demo-gen: \(error)\n".utf8))
    exit(1)
}
