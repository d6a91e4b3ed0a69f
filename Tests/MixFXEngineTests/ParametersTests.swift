import Foundation
import Testing
import MixFXDSP
@testable import MixFXEngine
import TestSupport

/// The registry (`ParameterID.spec`): each parameter declared once, and everything that names a
/// parameter reads it.
@Suite struct ParametersTests {
    /// Keys and preset paths are unique; every track parameter sets its own node parameter, of
    /// its own id; the master's (volume, limiter ceiling) are the only ones without a node.
    @Test func eachParameterIsDeclaredOnceAndBoundToItsNode() {
        let specs = ParameterID.allCases.map(\.spec)
        #expect(Set(specs.map(\.key)).count == specs.count)
        #expect(Set(specs.map { $0.presetPath.joined(separator: ".") }).count == specs.count)
        #expect(ParameterID.trackParameters == ParameterID.allCases.filter { $0 != .masterVolume && $0 != .limiterCeilingDBTP })
        let track = AudioEngine().addTrack(source: MemorySource(channels: [[0]], sampleRate: 48_000))
        var seen: [ObjectIdentifier] = []
        for id in ParameterID.trackParameters {
            let p = track.parameter(id)
            #expect(p?.id == id, "\(id) is bound to \(String(describing: p?.id))")
            if let p { seen.append(ObjectIdentifier(p)) }
            #expect(ParameterID.track(key: id.spec.key) == id)
            #expect(id.spec.contains(id.spec.defaultValue))
        }
        #expect(Set(seen).count == ParameterID.trackParameters.count)
        // every node parameter of the classic track is in the registry
        let nodeParameters = track.player.parameters + track.eq.parameters + track.timePitch.parameters
        #expect(Set(nodeParameters.map { ObjectIdentifier($0) }) == Set(seen))
        #expect(track.parameter(.masterVolume) == nil && ParameterID.track(key: "master-volume") == nil)
        #expect(track.parameter(.limiterCeilingDBTP) == nil && ParameterID.track(key: "limit") == nil)
        #expect(LimiterNode().parameters.map(\.id) == [.limiterCeilingDBTP])
    }

    /// DSP limits are the DSP's: the registry's pitch and overlap ranges are the shifter's.
    @Test func dspLimitsAreReferencedNotCopied() {
        let pitch = ParameterID.pitchCents.spec, overlap = ParameterID.pitchOverlap.spec
        #expect(pitch.minimum...pitch.maximum == PitchShifterSettings.centsRange)
        #expect(Int(overlap.minimum)...Int(overlap.maximum) == PitchShifterSettings.overlapRange)
        #expect(SincTableCache.maxCents == Int(PitchShifterSettings.centsRange.upperBound))
        for cents in [-2400.0, -700, 0, 1, 1200, 2400] {
            let r = PitchShifterSettings.ratio(cents: cents)
            #expect(abs(PitchShifterSettings.cents(ratio: r) - cents) < 1e-9)
        }
    }

    /// The render side clamps with the registry's range and falls back to its default.
    @Test func clampedValuesUseTheRegistry() {
        for id in ParameterID.allCases {
            let spec = id.spec
            let p = AudioParameter(id)
            #expect(p.value == spec.defaultValue)
            p.value = spec.maximum + 1000
            #expect(p.clampedValue == spec.maximum)
            p.value = spec.minimum - 1000
            #expect(p.clampedValue == spec.minimum)
            p.value = .nan
            #expect(p.clampedValue == spec.defaultValue)
        }
    }
}
