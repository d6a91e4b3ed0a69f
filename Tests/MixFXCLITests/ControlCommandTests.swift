import Foundation
import Testing
@testable import MixFXCLI
import MixFX

/// The live control protocol's parser, alone: every command, and the hostile values that must
/// be refused before they reach the player.
@Suite struct ControlCommandTests {
    func parse(_ line: String) throws(ControlCommand.ParseError) -> ControlCommand? {
        try ControlCommand.parse(line, trackCount: 3)
    }

    @Test func everyCommand() throws {
        #expect(try parse("   ") == nil)
        #expect(try parse("track 2 pitch -300") == .setTrack(track: 2, id: .pitchCents, value: -300))
        #expect(try parse("track 1 mute on") == .setTrack(track: 1, id: .mute, value: 1))
        #expect(try parse("master volume 0.5") == .masterVolume(0.5))
        #expect(try parse("seek 12.5") == .seek(seconds: 12.5, relative: false))
        #expect(try parse("seek -5") == .seek(seconds: -5, relative: true))
        #expect(try parse("save a.json --force") == .save(path: "a.json", force: true))
        #expect(try parse("save \"q.json\"") == .save(path: "q.json", force: false) && parse("save 'q.json' --force") == .save(path: "q.json", force: true))
        #expect(try parse("save ./--force") == .save(path: "./--force", force: false))
        #expect(try parse("\tpause") == .pause && parse("play") == .resume && parse("status") == .status && parse("exit") == .quit)
        #expect(try parse("debug stall 400") == .debugStall(milliseconds: 400))
        #expect(try parse("track 3 tempo 0.8") == .setTrack(track: 3, id: .tempo, value: 0.8))
        #expect(try parse("track all tempo 80%") == .setAllTracks(id: .tempo, value: 0.8))
        #expect(try parse("track all pitch -100") == .setAllTracks(id: .pitchCents, value: -100))
    }

    /// Touch: a hand move holds a setting until released; the release forms, and what is
    /// refused.
    @Test func releaseCommands() throws {
        #expect(try parse("track 2 volume release") == .releaseTrack(track: 2, id: .volume))
        #expect(try parse("track all pan release") == .releaseAllTracks(id: .pan))
        #expect(try parse("master volume release") == .releaseMaster)
        #expect(try parse(" release ") == .releaseAll)
        for (line, message) in [("release now", "expected: release (every setting moved by hand)"),
                                ("track 4 volume release", "track 4: tracks go from 1 to 3"),
                                ("track 1 speed release", "track 1 speed: fixed when playback starts"),
                                ("track 1 volume", "expected: track N KEY VALUE, track all KEY VALUE or track N KEY release"),
                                ("master release", "expected: master volume V, master volume release")] {
            do {
                _ = try parse(line)
                Issue.record("'\(line)' was accepted")
            } catch {
                #expect(error.message.hasPrefix(message), "\(error.message)")
            }
        }
    }

    /// Live tempos are 0.25…4 (render for the rest); settings fixed at the start say so.
    @Test func liveLimitsAreNamed() {
        for (line, message) in [("track 1 tempo 8", "track 1 tempo 8: live playback takes tempos from 0.25 to 4"),
                                ("track all tempo 0.2", "track all tempo 0.2: live playback takes tempos from 0.25 to 4"),
                                ("track 2 speed 0.5", "track 2 speed: fixed when playback starts")] {
            do {
                _ = try parse(line)
                Issue.record("'\(line)' was accepted")
            } catch {
                #expect(error.message.hasPrefix(message), "\(error.message)")
            }
        }
    }

    @Test(arguments: ["seek nan", "seek inf", "seek 1e400", "seek 0x10", "master volume nan", "master volume 17",
                      "master volume -1", "track 4 pitch 0", "track 0 pitch 0", "track 1 pitch 2401", "track 1 pitch nan",
                      "track 1 wobble 1", "track 1 mute maybe", "track 99999999999999999999 pitch 1", "debug stall 99999999999",
                      "debug stall -1", "save", "save a b", "save --force", "frobnicate", "track", "seek", "track all", "track all tempo",
                      "track all tempo nan", "track any tempo 1"])
    func hostileLinesAreRefusedWithAMessage(line: String) {
        do {
            _ = try parse(line)
            Issue.record("'\(line)' was accepted")
        } catch {
            #expect(!error.message.isEmpty)
        }
    }
}
