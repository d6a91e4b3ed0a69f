/// Live, what a hand did to the tracks' mute and solo switches, written into each switch's
/// `touchRecording` as it was heard, so that `save` writes it back as step breakpoints
/// (`TouchTakes.mergedLane`, `TouchTake.mergedSwitch`).
///
/// Read once per block at the block's first timeline frame, as the mix reads the switches (a
/// hand's change is heard from the block the render side sees it in, its 10 ms ramp starting
/// there): a touch, and each new hand value while touched, is a point (frame, value), the first
/// starting a take; the release is a point with the value the switch plays from then on (its
/// lane's there, or without a lane the hand's, which stays), ending the take. A jump in the
/// mix's frames (a seek) while touched starts a new take at the target. Looping, a switch held
/// over the seam is held to the pass's last frame (a point there ends the take, so the lane's
/// steps after the touch are written over) and again from the next pass's first frame (a new
/// take), as it was heard.
///
/// It also keeps each switch's `playedValue`: the hand's, or its lane's at the block.
///
/// Made with a live kernel (control side); advanced by the thread that mixes. No allocation,
/// lock or wait (the rings are `TouchRecording`'s).
final class SwitchTouches {
    private struct Switch {
        let parameter: AudioParameter
        let record: TouchRecording
        let lane: PreparedLane?
        var wasTouched = false
        var last = 0.0
    }
    private var switches: [Switch]
    private var expectedFrame = Int.min

    /// The mute and solo switches of `players`, their lanes read at `sampleRate`.
    init(players: [PlayerNode], sampleRate: Double) {
        switches = players.flatMap { [$0.muteParameter, $0.soloParameter] }.compactMap { p in
            guard let record = p.makeTouchRecording() else { return nil }
            let lane = p.automation.flatMap { l in p.id.spec.automation.map { PreparedLane(l, scale: $0, sampleRate: sampleRate) } }
            return Switch(parameter: p, record: record, lane: lane)
        }
    }

    /// Records the block of `count` frames from mix frame `first`, whose first timeline frame
    /// is `timeline` (`period` > 0: the timeline starts again at 0 after `period` frames, a
    /// loop). Render side, once per block.
    /// Vouched for, as `LiveGains.advance` is (docs/realtime.md): it reads its parameters and
    /// rings from an array of references.
    @_semantics("no_performance_analysis")
    func advance(fromFrame first: Int, count n: Int, timeline: Int, period: Int) {
        let jump = first != expectedFrame
        expectedFrame = first + n
        for k in switches.indices {
            let p = switches[k].parameter
            let touched = p.isTouched
            // what the switch plays from this block (the terminal mixer shows and toggles it)
            p.playedValue = touched ? p.clampedValue : switches[k].lane?.value(atFrame: max(0, timeline)) ?? p.clampedValue
            // (the frames before the mix's first, while effects start up after a seek)
            guard timeline >= 0 else { continue }
            if touched {
                let v = p.clampedValue
                if !switches[k].wasTouched || jump || v != switches[k].last {
                    switches[k].record.push(TouchPoint(frame: timeline, value: v, startsTake: !switches[k].wasTouched || jump))
                    switches[k].last = v
                }
                if period > 0 && timeline + n >= period {
                    // (the block reaches the seam: held to the pass's end, and from the next one's start)
                    switches[k].record.push(TouchPoint(frame: period - 1, value: v, startsTake: false))
                    switches[k].record.push(TouchPoint(frame: 0, value: v, startsTake: true))
                }
            } else if switches[k].wasTouched {
                let v = switches[k].lane?.value(atFrame: timeline) ?? p.clampedValue
                switches[k].record.push(TouchPoint(frame: timeline, value: v, startsTake: false))
            }
            switches[k].wasTouched = touched
        }
    }
}
