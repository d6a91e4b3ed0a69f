// Renders a session through the MixFX library: two tracks, EQ and pitch, into a WAV file.
//
//     swift run RenderSession drums.wav lead.flac out.wav
//
// With no arguments it mixes the demo tracks in Demo/ into example-mix.wav.
import Foundation
import MixFX

let args = Array(CommandLine.arguments.dropFirst())
let inputs = args.count >= 2 ? Array(args.dropLast()) : ["Demo/1-drums.flac", "Demo/4-lead.flac"]
let output = args.count >= 2 ? args.last! : "example-mix.wav"

do {
    let engine = AudioEngine()
    for (i, path) in inputs.enumerated() {
        // player → shelf EQ → time-pitch → main mixer, as AVAudioEngine users know it
        let track = engine.addTrack(source: try SoundFileReader(path: path))
        track.eq.bassGain.value = 4            // dB, RBJ low shelf at 55 Hz
        track.eq.trebleGain.value = -2         // dB, RBJ high shelf at 5800 Hz
        track.timePitch.pitchCents = 200       // a whole tone up, duration kept
        track.player.pan = i % 2 == 0 ? -0.3 : 0.3
    }
    engine.mainMixer.outputVolume = 0.8

    var renderer = OfflineRenderer(outputPath: output, sampleFormat: .s24)
    renderer.overwrite = true
    let report = try renderer.render(engine)
    print("wrote \(report.outputPath): \(report.frameCount) frames, peak \(String(format: "%.1f", report.peakDBFS)) dBFS, "
          + "\(report.clippedSamples) clipped, \(String(format: "%.0f", report.speedTimesRealTime))× real time")
} catch {
    FileHandle.standardError.write(Data("RenderSession: \(error)\n".utf8))
    exit(1)
}
