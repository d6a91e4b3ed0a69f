// Plays tracks live through ALSA with the MixFX library and changes the mix while it plays:
// a pitch glide on track 1 and a fade of track 2, from this (control) thread.
//
//     swift run -c release LivePlayback a.wav b.flac [ALSA-device]
//
// With no arguments it plays the first two demo tracks on the default device.
import Foundation
import MixFX

let args = Array(CommandLine.arguments.dropFirst())
let paths = args.count >= 2 ? Array(args.prefix(2)) : ["Demo/2-bass.flac", "Demo/4-lead.flac"]

do {
    let engine = AudioEngine()
    var tracks: [Track] = []
    var sources: [StreamingSource] = []
    for path in paths {
        // A StreamingSource reads the file ahead on a feeder thread: the render thread never
        // touches the disk.
        let source = StreamingSource(reader: try SoundFileReader(path: path))
        try source.seek(toFrame: 0)
        sources.append(source)
        tracks.append(engine.addTrack(source: source))
    }
    tracks[0].eq.bassGain.value = 3
    var options = LiveOptions()
    options.device = args.count >= 3 ? args[2] : "default"
    let player = try LivePlayer(engine: engine, sources: sources, options: options)
    player.start()                         // the render thread starts; we are the control thread
    for step in 0..<40 {                   // two seconds of changes, any thread may make them
        tracks[0].timePitch.pitchCents = Double(step) * 10       // glides up to +390 cents
        tracks[1].player.volume = 1 - Double(step) / 80           // fades to 0.5
        usleep(50_000)
    }
    player.waitUntilFinished()             // until the session ends (player.stop() ends it early)
    let status = player.status
    print("played \(String(format: "%.2f", status.positionSeconds)) s, underruns: \(status.underruns), "
          + "mean DSP load \(String(format: "%.1f", status.meanDSPLoad * 100))%")
} catch {
    FileHandle.standardError.write(Data("LivePlayback: \(error)\n".utf8))
    exit(1)
}
