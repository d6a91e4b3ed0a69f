import CMixFX
import MixFX

// The mixfx_timepitch_* functions of mixfx.h: argument checks, then `TimePitchProcessor`.

private func processor(_ handle: OpaquePointer?) throws(CAPIError) -> TimePitchProcessor {
    try Handle.object(handle, .timePitch, as: TimePitchProcessor.self, argument: "tp")
}

/// The rate, channel count and block size a processor takes (the engine's rate range).
func checkFormat(sampleRate: Double, channels: Int32) throws(CAPIError) {
    let rates = AudioEngine.outputSampleRateRange
    guard sampleRate.isFinite, sampleRate >= Double(rates.lowerBound), sampleRate <= Double(rates.upperBound) else {
        throw .range("sample_rate: \(sampleRate) Hz is not one mixfx runs at (allowed: from \(rates.lowerBound) to \(rates.upperBound) Hz)")
    }
    let allowed = TimePitchProcessor.channelRange
    guard allowed.contains(Int(channels)) else {
        throw .range("channels: \(channels) (allowed: from \(allowed.lowerBound) to \(allowed.upperBound))")
    }
}

@_cdecl("mixfx_timepitch_create")
public func mixfx_timepitch_create(_ sampleRate: Double, _ channels: Int32, _ mode: mixfx_mode, _ maxBlockFrames: Int,
                                   _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    cCall(#function) { () throws(CAPIError) in
        guard let out else { throw .null("out") }
        out.pointee = nil
        try checkFormat(sampleRate: sampleRate, channels: channels)
        guard mode == MIXFX_OFFLINE || mode == MIXFX_LIVE else {
            throw .range("mode: \(mode.rawValue) is not MIXFX_OFFLINE (0) or MIXFX_LIVE (1)")
        }
        let most = TimePitchProcessor.maximumBlockFrames
        guard maxBlockFrames >= 1 && maxBlockFrames <= most else {
            throw .range("max_block_frames: \(maxBlockFrames) (allowed: from 1 to \(most))")
        }
        let p = TimePitchProcessor(sampleRate: sampleRate, channelCount: Int(channels), live: mode == MIXFX_LIVE,
                                   maximumBlockFrames: maxBlockFrames)
        out.pointee = Handle.make(p, kind: .timePitch)
    }
}

@_cdecl("mixfx_timepitch_destroy")
public func mixfx_timepitch_destroy(_ tp: OpaquePointer?) -> Int32 {
    cCall(#function) { () throws(CAPIError) in try Handle.destroy(tp, .timePitch, argument: "tp") }
}

@_cdecl("mixfx_timepitch_set_pitch_cents")
public func mixfx_timepitch_set_pitch_cents(_ tp: OpaquePointer?, _ cents: Double) -> Int32 {
    cCall(#function) { () throws(CAPIError) in try processor(tp).setPitchCents(cents) }
}

@_cdecl("mixfx_timepitch_set_tempo")
public func mixfx_timepitch_set_tempo(_ tp: OpaquePointer?, _ tempo: Double) -> Int32 {
    cCall(#function) { () throws(CAPIError) in try processor(tp).setTempo(tempo) }
}

@_cdecl("mixfx_timepitch_set_formants")
public func mixfx_timepitch_set_formants(_ tp: OpaquePointer?, _ on: Int32) -> Int32 {
    cCall(#function) { () throws(CAPIError) in try processor(tp).setFormants(on) }
}

@_cdecl("mixfx_timepitch_set_overlap")
public func mixfx_timepitch_set_overlap(_ tp: OpaquePointer?, _ overlap: Int32) -> Int32 {
    cCall(#function) { () throws(CAPIError) in try processor(tp).setOverlap(overlap) }
}

@_cdecl("mixfx_timepitch_process")
public func mixfx_timepitch_process(_ tp: OpaquePointer?, _ input: UnsafePointer<UnsafePointer<Float>?>?, _ inputFrames: Int,
                                    _ output: UnsafePointer<UnsafeMutablePointer<Float>?>?, _ outputCapacity: Int,
                                    _ outputFrames: UnsafeMutablePointer<Int>?) -> Int32 {
    cCall(#function) { () throws(CAPIError) in
        let p = try processor(tp)
        guard let outputFrames else { throw .null("output_frames") }
        outputFrames.pointee = 0
        // (size_t arrives as Int: a "negative" count is one above Int.max)
        guard inputFrames >= 0 && inputFrames <= p.spec.maximumFrameCount else {
            throw .range("input_frames: \(UInt(bitPattern: inputFrames)) is more than max_block_frames (\(p.spec.maximumFrameCount))")
        }
        guard outputCapacity >= 0 else { throw .range("output_capacity: \(UInt(bitPattern: outputCapacity)) is not a frame count") }
        if inputFrames > 0 {
            guard let input else { throw .null("input") }
            for c in 0..<p.spec.channelCount where input[c] == nil { throw .null("input[\(c)]") }
        }
        guard let output else { throw .null("output") }
        for c in 0..<p.spec.channelCount where output[c] == nil { throw .null("output[\(c)]") }
        outputFrames.pointee = try p.process(input, frameCount: inputFrames, output, capacity: outputCapacity)
    }
}

@_cdecl("mixfx_timepitch_end_input")
public func mixfx_timepitch_end_input(_ tp: OpaquePointer?) -> Int32 {
    cCall(#function) { () throws(CAPIError) in try processor(tp).endInput() }
}

@_cdecl("mixfx_timepitch_latency")
public func mixfx_timepitch_latency(_ tp: OpaquePointer?, _ frames: UnsafeMutablePointer<Int>?) -> Int32 {
    cCall(#function) { () throws(CAPIError) in
        let p = try processor(tp)
        guard let frames else { throw .null("frames") }
        frames.pointee = p.latencyFrames
    }
}

@_cdecl("mixfx_timepitch_reset")
public func mixfx_timepitch_reset(_ tp: OpaquePointer?) -> Int32 {
    cCall(#function) { () throws(CAPIError) in try processor(tp).reset() }
}
