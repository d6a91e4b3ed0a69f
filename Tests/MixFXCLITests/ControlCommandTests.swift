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
        #expect(try parse("\tpause") == .pause && parse("play") == .resume && parse("status") == .status && parse("exit") == .quit)
        #expect(try parse("debug stall 400") == .debugStall(milliseconds: 400))
    }

    @Test(arguments: ["seek nan", "seek inf", "seek 1e400", "seek 0x10", "master volume nan", "master volume 17",
                      "master volume -1", "track 4 pitch 0", "track 0 pitch 0", "track 1 pitch 2401", "track 1 pitch nan",
                      "track 1 wobble 1", "track 1 mute maybe", "track 99999999999999999999 pitch 1", "debug stall 99999999999",
                      "debug stall -1", "save", "save a b", "frobnicate", "track", "seek"])
    func hostileLinesAreRefusedWithAMessage(line: String) {
        do {
            _ = try parse(line)
            Issue.record("'\(line)' was accepted")
        } catch {
            #expect(!error.message.isEmpty)
        }
    }
}
