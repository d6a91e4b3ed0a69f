/// Touch of settings whose DSP smooths every change itself: a shelf EQ's laned settings (its
/// gains, corners, slopes and global gain, for `EQLanes`; τ = 10 ms, every 32 frames) and a
/// pitch (the vocoder's glide, τ = 20 ms, per frame). A setting a hand holds
/// (`AudioParameter.isTouched`) plays its value instead of its lane, and that smoothing takes it
/// there and back, as it does any change. What the hand asked for is recorded into the
/// parameter's `touchRecording` at the timeline frames the setting is read at (a point when the
/// value changes, at least every 512 frames, and the frame before the release), so a take
/// written into the lane (`TouchTake`) renders offline through the same smoothing. Made with
/// the kernel; used by the thread that renders the track; no allocation.
final class SmoothedTouch {
    /// The parameters (an EQ's in `EQLanes`' order).
    private let parameters: [AudioParameter]
    /// Their recordings (`AudioParameter.touchRecording`).
    private let rings: [TouchRecording?]
    /// Per parameter: a take runs, the last point recorded.
    private let recording: UnsafeMutablePointer<Bool>
    /// Per parameter: the take that runs began at a loop's seam, continuing the one before it.
    private let overSeam: UnsafeMutablePointer<Bool>
    private let lastFrame: UnsafeMutablePointer<Int>
    private let lastValue: UnsafeMutablePointer<Double>

    /// Live looped playback: the timeline's length (0: no loop). A take held over the seam is
    /// held to the pass's last frame (a point there), and goes on in a new take from the next
    /// pass's first frame recorded. Control side, before rendering.
    var loopFrames = 0

    init(_ parameters: [AudioParameter]) {
        self.parameters = parameters
        rings = parameters.map { $0.makeTouchRecording() }
        recording = .allocate(capacity: parameters.count)
        recording.initialize(repeating: false, count: parameters.count)
        overSeam = .allocate(capacity: parameters.count)
        overSeam.initialize(repeating: false, count: parameters.count)
        lastFrame = .allocate(capacity: parameters.count)
        lastFrame.initialize(repeating: 0, count: parameters.count)
        lastValue = .allocate(capacity: parameters.count)
        lastValue.initialize(repeating: 0, count: parameters.count)
    }

    deinit {
        recording.deallocate()
        overSeam.deallocate()
        lastFrame.deallocate()
        lastValue.deallocate()
    }

    /// Playback jumped (a seek, a restart): a take that runs ends at its last point, and a
    /// touch still held starts a new one where playback goes on. Render side.
    func cut() {
        for i in parameters.indices { recording[i] = false }
    }

    /// Whether a change of parameter `i` heard before a loop's seam can be recorded there while
    /// the frames it records are past the seam (`record(acrossSeam:)`): no take runs, or the one
    /// that runs continues a take from before the seam (one begun past it has none to cut
    /// back into). Render side.
    /// Vouched for, as `record` is (docs/realtime.md): it reads two of its buffers.
    @_semantics("no_performance_analysis")
    func canRecordBeforeSeam(_ i: Int) -> Bool { !recording[i] || overSeam[i] }

    /// Whether parameter `i` is held by a hand at timeline frame `frame`, where it plays `value`
    /// (its own, clamped); records it. Render side.
    /// Vouched for, as `LiveGains.advance` is (docs/realtime.md).
    @_semantics("no_performance_analysis")
    func isTouched(_ i: Int, atFrame frame: Int, value: Double) -> Bool {
        record(i, touched: parameters[i].isTouched, atFrame: frame, value: value)
    }

    /// Whether parameter `i` is held by a hand (`touched`, read by the caller from
    /// `AudioParameter.isTouched`), recorded as `isTouched(_:atFrame:value:)` does; returns
    /// `touched`. `cutsBack`: what plays from now is heard from `frame` on, earlier than the
    /// frames recorded last (a pitch's switch, `PitchShifter.switches(toCents:)`), so a change
    /// or a release there replaces the points recorded from `frame` on. A change at the frame
    /// recorded last (a pitch's next vocoder frame, the same for a few blocks) replaces that
    /// point too. `acrossSeam` (looping, with `cutsBack`): `frame` is in the pass before the
    /// one the frames recorded last are in (a switch heard before the seam, while the next
    /// vocoder frame is already past it), so the change replaces the points recorded from
    /// `frame` on in the take before the seam (`TouchTake.takes`: a point that cuts back to a
    /// frame after its take's), and the take holds it to the pass's end; only where
    /// `canRecordBeforeSeam(i)`. Render side.
    @_semantics("no_performance_analysis")
    @discardableResult
    func record(_ i: Int, touched: Bool, atFrame frame: Int, value: Double, cutsBack: Bool = false, acrossSeam: Bool = false) -> Bool {
        guard let ring = rings[i], frame >= 0 else { return touched }
        // (values first: no `self` right of `&&`)
        let running = recording[i], last = lastFrame[i], changed = value != lastValue[i], period = loopFrames
        if running && overSeam[i] && cutsBack && acrossSeam && frame > last && period > 0 {
            ring.push(TouchPoint(frame: max(0, frame - 1), value: lastValue[i], startsTake: false, cutsBack: true))
            if touched {
                ring.push(TouchPoint(frame: frame, value: value, startsTake: false))
                if frame < period - 1 { ring.push(TouchPoint(frame: period - 1, value: value, startsTake: false)) }
            }
            recording[i] = touched
            lastFrame[i] = period - 1
            lastValue[i] = value
            return touched
        }
        if running && touched && !cutsBack && frame < last && period > 0 && last < period - 1 {
            // (the seam: the take held to the pass's end; a new one starts below)
            ring.push(TouchPoint(frame: period - 1, value: lastValue[i], startsTake: false))
        }
        let cut = running && (cutsBack ? frame <= last : touched && changed && frame == last)
        if cut {
            // (the value before the change on the frame before it, so the lane steps there)
            ring.push(TouchPoint(frame: max(0, frame - 1), value: lastValue[i], startsTake: false, cutsBack: true))
            if touched { ring.push(TouchPoint(frame: frame, value: value, startsTake: false)) }
            recording[i] = touched
            lastFrame[i] = frame
            lastValue[i] = value
        } else if touched {
            if !recording[i] || frame < lastFrame[i] {
                // (a take that ran and goes back is at a seam: a seek cuts first)
                overSeam[i] = recording[i] && period > 0
                ring.push(TouchPoint(frame: frame, value: value, startsTake: true))
            } else if frame > lastFrame[i] && (value != lastValue[i] || frame - lastFrame[i] >= 512) {
                // (a change: the value before it on the frame before, so the lane steps)
                if value != lastValue[i] && frame - 1 > lastFrame[i] {
                    ring.push(TouchPoint(frame: frame - 1, value: lastValue[i], startsTake: false))
                }
                ring.push(TouchPoint(frame: frame, value: value, startsTake: false))
            } else {
                return true
            }
            recording[i] = true
            lastFrame[i] = frame
            lastValue[i] = value
        } else if recording[i] {
            recording[i] = false
            if frame - 1 > lastFrame[i] { ring.push(TouchPoint(frame: frame - 1, value: lastValue[i], startsTake: false)) }
        }
        return touched
    }
}
