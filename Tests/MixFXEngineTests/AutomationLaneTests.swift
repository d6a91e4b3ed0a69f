import Foundation
import Testing
@testable import MixFXEngine

/// The automation model (`AutomationLane`, `AutomationCurve`): values against each curve's
/// formula, the holds before and after, and validation against the registry.
@Suite struct AutomationLaneTests {
    /// Each curve at a grid of times inside a segment equals its formula (written out here
    /// independently of the code's), and the segment's ends are its breakpoints' values.
    @Test(arguments: [(AutomationCurve.step, ParameterID.pan), (.linear, .pan), (.scurve, .pitchCents),
                      (.db, .volume), (.db, .bassGainDB), (.exp, .bassFrequencyHz), (.exp, .tempo)])
    func eachCurveFollowsItsFormula(curve: AutomationCurve, id: ParameterID) throws {
        let (v0, v1): (Double, Double) = switch id {
        case .pan: (-0.8, 0.6)
        case .pitchCents: (-300, 500)
        case .volume: (0.1, 2)
        case .bassGainDB: (-12, 9)
        case .bassFrequencyHz: (40, 400)
        default: (0.5, 2)
        }
        let t0 = 1.5, t1 = 4.0
        let lane = AutomationLane([.init(seconds: t0, value: v0, curve: curve), .init(seconds: t1, value: v1, curve: .step)])
        try lane.validate(for: id, lane: "test")
        let scale = try #require(id.spec.automation)
        for k in 0...40 {
            let t = t0 + (t1 - t0) * Double(k) / 40
            let u = (t - t0) / (t1 - t0)
            let expected: Double = switch curve {
            case .step: k == 40 ? v1 : v0
            case .linear: v0 + (v1 - v0) * u
            case .scurve: v0 + (v1 - v0) * (3 * u * u - 2 * u * u * u)
            case .db where scale == .decibels: v0 + (v1 - v0) * u
            // linear in dB: 20·log10 v moves linearly from 20·log10 v0 to 20·log10 v1
            case .db: pow(10, (20 * log10(v0) + (20 * log10(v1) - 20 * log10(v0)) * u) / 20)
            case .exp: v0 * pow(v1 / v0, u)
            }
            let got = lane.value(at: t, scale: scale)
            #expect(abs(got - expected) <= 1e-12 * max(1, abs(expected)), "\(curve) on \(id) at u = \(u): \(got), formula \(expected)")
        }
        #expect(lane.value(at: t0, scale: scale) == v0 && lane.value(at: t1, scale: scale) == v1)
    }

    /// Before the first breakpoint its value holds; after the last, the last; between two, the
    /// segment of the earlier one (its curve).
    @Test func valuesHoldOutsideTheBreakpoints() {
        let lane = AutomationLane([.init(seconds: 1, value: 100, curve: .step), .init(seconds: 2, value: 200, curve: .linear),
                                   .init(seconds: 3, value: -100, curve: .linear)])
        #expect(lane.value(at: 0, scale: .linear) == 100)
        #expect(lane.value(at: 0.999, scale: .linear) == 100)
        #expect(lane.value(at: 1.999, scale: .linear) == 100)      // step
        #expect(lane.value(at: 2.5, scale: .linear) == 50)         // linear 200 → −100
        #expect(lane.value(at: 3, scale: .linear) == -100)
        #expect(lane.value(at: 1e6, scale: .linear) == -100)
        #expect(lane.constantValue == nil)
        #expect(AutomationLane([(0, 3), (5, 3)]).constantValue == 3)
        #expect(AutomationLane([(2, 0.5)]).constantValue == 0.5)
    }

    /// Exactly the parameters that move live can be automated but the bypasses and the formant
    /// switch (mute and solo are the switches that take lanes, step lanes of 0 and 1), and
    /// every one has a scale in the registry.
    @Test func theRegistryMarksTheAutomatableParameters() {
        let automatable = ParameterID.allCases.filter { $0.spec.automation != nil }
        #expect(Set(automatable) == Set(ParameterID.allCases.filter { $0.spec.isLive && (!$0.spec.isBoolean || $0 == .mute || $0 == .solo) }))
        #expect(ParameterID.mute.spec.automation == .onOff && ParameterID.solo.spec.automation == .onOff)
        #expect(AutomationScale.onOff.defaultCurve == .step)
        #expect(AutomationCurve.allCases.filter { $0.applies(to: .onOff) } == [.step])
        for id in [ParameterID.volume, .pan, .bassGainDB, .trebleGainDB, .bassFrequencyHz, .trebleFrequencyHz, .eqGlobalGainDB,
                   .pitchCents, .tempo, .masterVolume, .limiterCeilingDBTP] {
            #expect(automatable.contains(id), "\(id)")
        }
        #expect(ParameterID.volume.spec.automation == .linearGain && ParameterID.bassGainDB.spec.automation == .decibels)
    }

    /// Errors name the lane, the breakpoint and what is allowed.
    @Test func validationNamesLaneBreakpointAndRange() {
        func error(_ lane: AutomationLane, _ id: ParameterID) -> String? {
            do { try lane.validate(for: id, lane: "track 2 \(id.spec.key)"); return nil } catch { return error.description }
        }
        #expect(error(AutomationLane([(0, 0), (4, 3000)]), .pitchCents)
                == "track 2 pitch lane, breakpoint 2: 3000 is above 2400 (allowed: from -2400 to 2400 cents)")
        #expect(error(AutomationLane([(0, 1), (0, 0.5)]), .volume)
                == "track 2 volume lane, breakpoint 2: 0 s is not after breakpoint 1 at 0 s (allowed: times that increase from one breakpoint to the next)")
        #expect(error(AutomationLane([(-1, 1)]), .volume)?.contains("breakpoint 1: the time -1 s") == true)
        #expect(error(AutomationLane([(0, 1), (2, 0)], curve: .db), .volume)?.contains("breakpoint 1: the db curve from 1 to 0 cannot reach 0") == true)
        #expect(error(AutomationLane([(0, 0), (2, 100)], curve: .exp), .pitchCents)?
                    .contains("the exp curve does not apply to pitch (allowed: for pitch: step, linear, scurve)") == true)
        #expect(error(AutomationLane([(0, 1)]), .bassBypass)?.hasPrefix("track 2 bass-bypass lane: bass-bypass cannot be automated") == true)
        // a switch: 0 or 1, and only steps
        #expect(error(AutomationLane([(0, 0), (1, 1)], curve: .step), .mute) == nil)
        #expect(error(AutomationLane([(0, 0), (1, 0.5)], curve: .step), .mute)
                == "track 2 mute lane, breakpoint 2: 0.5 is not 0 or 1 (mute is a switch) (allowed: 0 (off) or 1 (on))")
        #expect(error(AutomationLane([(0, 0), (1, 1)], curve: .linear), .solo)
                == "track 2 solo lane, breakpoint 1: the linear curve does not apply to solo (a switch: off or on) (allowed: for solo: step)")
        #expect(error(AutomationLane([]), .pan) == "track 2 pan lane: the lane has no breakpoints (allowed: at least one)")
        #expect(error(AutomationLane([(0, 55), (1, 200)], curve: .exp), .bassFrequencyHz) == nil)
        // the last breakpoint's curve is unused, whatever it is
        #expect(error(AutomationLane([.init(seconds: 0, value: 0, curve: .linear), .init(seconds: 1, value: 1, curve: .exp)]), .pan) == nil)
    }
    /// Read by frame, a geometric segment is the formula at every 32nd frame of the timeline
    /// and within 4e-15 (relative) of it between; `fill` gives `value(atFrame:)` to the bit
    /// from any first frame; the other curves are the formula exactly.
    @Test func aGeometricSegmentReadByFrameIsTheFormula() {
        let lane = AutomationLane([.init(seconds: 0.1, value: 0.05, curve: .db), .init(seconds: 1.3, value: 1.7, curve: .linear),
                                   .init(seconds: 2, value: 0.2, curve: .db), .init(seconds: 2.5, value: 0.2)])
        let rate = 48_000.0
        let prepared = PreparedLane(lane, scale: .linearGain, sampleRate: rate)
        var worst = 0.0
        for f in stride(from: 0, to: 130_000, by: 7) {
            let exact = lane.value(at: Double(f) / rate, scale: .linearGain), got = prepared.value(atFrame: f)
            if f % PreparedLane.anchorFrames == 0 || Double(f) / rate >= 1.3 { #expect(got == exact, "frame \(f)") }
            worst = max(worst, abs(got - exact) / exact)
        }
        #expect(worst < 4e-15 && worst > 0, "worst relative difference \(worst)")
        var block = [Double](repeating: 0, count: 1_000)
        for first in [4_799, 52_000, 62_390] {
            prepared.fill(&block, fromFrame: first, count: 1_000)
            #expect((0..<1_000).allSatisfy { block[$0] == prepared.value(atFrame: first + $0) }, "from \(first)")
        }
    }

    /// `fill` gives the lane's value at each frame to the bit on straight, S-curve and step
    /// segments too (computed four frames at a time within a segment), from first frames on
    /// either side of every segment's ends, at the frames and at their midpoints.
    @Test func fillIsTheLanesValueOnEveryCurve() {
        let lane = AutomationLane([.init(seconds: 0.01, value: 0.2, curve: .linear), .init(seconds: 0.5, value: 1.7, curve: .scurve),
                                   .init(seconds: 0.9, value: 0.3, curve: .step), .init(seconds: 1.2, value: 1.1, curve: .linear),
                                   .init(seconds: 1.4, value: 0.6)])
        let rate = 44_100.0
        let prepared = PreparedLane(lane, scale: .linear, sampleRate: rate)
        var block = [Double](repeating: 0, count: 1_000)
        for first in stride(from: 0, to: 70_000, by: 997) {
            prepared.fill(&block, fromFrame: first, count: 1_000)
            #expect((0..<1_000).allSatisfy { block[$0] == lane.value(at: Double(first + $0) / rate, scale: .linear) }, "from \(first)")
            prepared.fill(&block, fromFrame: first, count: 1_000, atMidpoints: true)
            #expect((0..<1_000).allSatisfy { block[$0] == lane.value(at: (Double(first + $0) + 0.5) / rate, scale: .linear) },
                    "midpoints from \(first)")
        }
    }

    /// A tempo map reads its lane at the frames' midpoints: the formula at (f + ½)/rate, from
    /// anchors every `anchorFrames` frames, whatever the runs it is read in.
    @Test func aGeometricSegmentReadAtMidpointsIsTheFormula() {
        let lane = AutomationLane([.init(seconds: 0, value: 0.5, curve: .exp), .init(seconds: 1.1, value: 2, curve: .linear),
                                   .init(seconds: 1.7, value: 1.2, curve: .exp), .init(seconds: 2.2, value: 0.8)])
        let rate = 44_100.0
        let prepared = PreparedLane(lane, scale: .positive, sampleRate: rate)
        let frames = 110_000
        var whole = [Double](repeating: 0, count: frames)
        prepared.fill(&whole, fromFrame: 0, count: frames, atMidpoints: true)
        var worst = 0.0
        for f in 0..<frames {
            let exact = lane.value(at: (Double(f) + 0.5) / rate, scale: .positive)
            let t = (Double(f) + 0.5) / rate
            if f % PreparedLane.anchorFrames == 0 || (t >= 1.1 && t < 1.7) || t >= 2.2 { #expect(whole[f] == exact, "frame \(f)") }
            worst = max(worst, abs(whole[f] - exact) / exact)
        }
        #expect(worst < 4e-15 && worst > 0, "worst relative difference \(worst)")
        // in runs of 1, 31, 64 and 1000 (a fresh lane: the hint and anchors start cold)
        for run in [1, 31, 64, 1_000] {
            let again = PreparedLane(lane, scale: .positive, sampleRate: rate)
            var block = [Double](repeating: 0, count: run)
            var first = 0, same = true
            while first < frames {
                let n = min(run, frames - first)
                again.fill(&block, fromFrame: first, count: n, atMidpoints: true)
                for k in 0..<n where block[k] != whole[first + k] { same = false }
                first += n
            }
            #expect(same, "runs of \(run)")
        }
        // the frames' own values are not the midpoints' (the offset is applied)
        #expect(prepared.value(atFrame: 1_000) != whole[1_000])
    }
}
