import CALSA
import Foundation
import MixFXDSP
import MixFXEngine
import MixFXFiles

/// Errors of the sound device, each naming the device.
public enum DeviceError: Error, Equatable, CustomStringConvertible {
    case cannotOpen(device: String, reason: String, available: [String])
    case cannotConfigure(device: String, reason: String)
    case writeFailed(device: String, reason: String)
    /// The device gave a period longer than half its buffer (it rounds what it was asked).
    case tooFewPeriods(device: String, periodFrames: Int, bufferFrames: Int)

    /// One line naming the device, the problem and what to try.
    public var description: String { description(naming: { $0 }) }

    /// `description` with each setting named by `name` (given `device=default`,
    /// `periodMilliseconds`, `bufferMilliseconds`: `LiveOptions`' properties): the CLI passes
    /// its flags.
    public func description(naming name: (String) -> String) -> String {
        switch self {
        case .cannotOpen(let d, let r, let available):
            "cannot open ALSA device '\(d)': \(r)"
                + (available.isEmpty ? "" : " (available: \(available.joined(separator: ", ")))")
                + (d == "default" ? "" : "; try \(name("device=default"))")
        case .cannotConfigure(let d, let r): "cannot configure ALSA device '\(d)': \(r)"
        case .tooFewPeriods(let d, let period, let buffer):
            "cannot configure ALSA device '\(d)': it gave a period of \(period) frames for a buffer of \(buffer); mixfx needs at least two periods in the buffer (choose a \(name("periodMilliseconds")) of at most half the \(name("bufferMilliseconds")))"
        case .writeFailed(let d, let r): "ALSA device '\(d)' failed: \(r)"
        }
    }
}

/// A PCM device as `mixfx devices` lists it.
public struct DeviceInfo: Sendable, Equatable {
    /// The PCM name for `--device`.
    public var name: String
    /// One line naming the device, the problem and what to try.
    public var description: String
}

/// Playback through ALSA (libasound), interleaved, blocking writes.
///
/// `open` negotiates: the sample format (the session's if the device takes it, else float, s32,
/// s24, s16), the rate (the device's nearest; the caller renders at `sampleRate`), buffer and
/// period sizes in milliseconds. The start threshold is the whole buffer, so a start or a
/// restart after an underrun begins with a full buffer (no underrun spiral). `write` recovers from
/// underruns (-EPIPE) and suspends and counts them.
/// `@unchecked Sendable`: `open` and `close` on the control side before and after playback,
/// `write` and `drain` on the render thread between them (which publishes `underruns` to other
/// threads through an atomic of its own); the format fields are set by `open`, before the render
/// thread starts.
public final class ALSAOutput: @unchecked Sendable {
    /// The ALSA PCM name.
    public let device: String
    /// The rate the device took (after `open`).
    public private(set) var sampleRate = 0
    /// Channels per frame.
    public private(set) var channelCount = 0
    /// The sample format the device took.
    public private(set) var sampleFormat = SampleFormat.f32
    /// Device buffer, frames.
    public private(set) var bufferFrames = 0
    /// Device period (one write), frames.
    public private(set) var periodFrames = 0
    /// Underruns recovered so far.
    public private(set) var underruns = 0
    private var pcm: OpaquePointer?
    private var deviceS24 = false     // S24_LE: right-justified 24-bit in 32

    /// A closed output for the PCM `device`.
    public init(device: String) { self.device = device }

    deinit { close() }

    /// Opens and configures the device (control side); see the type's notes.
    public func open(sampleRate requestedRate: Int, channelCount: Int, preferredFormat: SampleFormat?,
                     bufferMilliseconds: Double, periodMilliseconds: Double) throws(DeviceError) {
        var handle: OpaquePointer?
        mixfx_alsa_quiet()   // ALSA's own stderr lines would precede mixfx's (the errors still come back)
        // a sound server's plugin starts its client thread here: it inherits real-time scheduling
        // opened without blocking (a device another program holds is "busy" at once, rather than
        // an open that no signal ends), then switched to blocking writes
        // the name's own bytes (PathBytes), so a file device writes the very name that was checked
        var err = RealtimePriority.inherited {
            PathBytes.withCString(device) { snd_pcm_open(&handle, $0, SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK) }
        }
        guard err >= 0, let handle else {
            let names = ALSAOutput.devices().map(\.name)
            throw .cannotOpen(device: device, reason: ALSAOutput.describe(err), available: names)
        }
        err = snd_pcm_nonblock(handle, 0)
        guard err >= 0 else {
            snd_pcm_close(handle)
            throw .cannotOpen(device: device, reason: ALSAOutput.describe(err), available: [])
        }
        pcm = handle
        var hw: OpaquePointer?
        snd_pcm_hw_params_malloc(&hw)
        defer { snd_pcm_hw_params_free(hw) }
        func check(_ e: Int32, _ what: String) throws(DeviceError) {
            if e < 0 { throw .cannotConfigure(device: device, reason: "\(what): \(ALSAOutput.describe(e))") }
        }
        try check(snd_pcm_hw_params_any(handle, hw), "no configurations")
        try check(snd_pcm_hw_params_set_access(handle, hw, SND_PCM_ACCESS_RW_INTERLEAVED), "interleaved access")
        let candidates: [SampleFormat] = (preferredFormat.map { [$0] } ?? []) + [.f32, .s32, .s24, .s16]
        var chosen: SampleFormat?
        for f in candidates where snd_pcm_hw_params_test_format(handle, hw, ALSAOutput.alsaFormat(f)) == 0 {
            chosen = f
            break
        }
        guard let chosen else { throw .cannotConfigure(device: device, reason: "it takes none of FLOAT_LE, S32_LE, S24_LE, S16_LE") }
        sampleFormat = chosen
        deviceS24 = chosen == .s24
        try check(snd_pcm_hw_params_set_format(handle, hw, ALSAOutput.alsaFormat(chosen)), "format")
        try check(snd_pcm_hw_params_set_channels(handle, hw, UInt32(channelCount)), "\(channelCount) channels")
        var rate = UInt32(requestedRate)
        var dir: Int32 = 0
        try check(snd_pcm_hw_params_set_rate_near(handle, hw, &rate, &dir), "rate \(requestedRate) Hz")
        var bufferUS = UInt32(bufferMilliseconds * 1000)
        var periodUS = UInt32(periodMilliseconds * 1000)
        try check(snd_pcm_hw_params_set_buffer_time_near(handle, hw, &bufferUS, &dir), "buffer \(bufferMilliseconds) ms")
        try check(snd_pcm_hw_params_set_period_time_near(handle, hw, &periodUS, &dir), "period \(periodMilliseconds) ms")
        try check(snd_pcm_hw_params(handle, hw), "applying the hardware parameters")
        var bufferSize: snd_pcm_uframes_t = 0, periodSize: snd_pcm_uframes_t = 0
        snd_pcm_hw_params_get_buffer_size(hw, &bufferSize)
        snd_pcm_hw_params_get_period_size(hw, &periodSize, &dir)
        sampleRate = Int(rate)
        self.channelCount = channelCount
        bufferFrames = Int(bufferSize)
        periodFrames = Int(periodSize)
        // A period as long as the buffer leaves no room to write while the device plays: the
        // render loop would wait on a buffer that never has a period free.
        guard periodFrames >= 1 && periodFrames * 2 <= bufferFrames else {
            throw .tooFewPeriods(device: device, periodFrames: periodFrames, bufferFrames: bufferFrames)
        }

        var sw: OpaquePointer?
        snd_pcm_sw_params_malloc(&sw)
        defer { snd_pcm_sw_params_free(sw) }
        try check(snd_pcm_sw_params_current(handle, sw), "software parameters")
        try check(snd_pcm_sw_params_set_start_threshold(handle, sw, bufferSize), "start threshold")
        try check(snd_pcm_sw_params_set_avail_min(handle, sw, periodSize), "avail min")
        try check(snd_pcm_sw_params(handle, sw), "applying the software parameters")
        err = snd_pcm_prepare(handle)
        try check(err, "prepare")
    }

    /// Writes `frameCount` interleaved frames (in `sampleFormat`, `channelCount` channels),
    /// blocking until the device took them all. Underruns are recovered and counted.
    /// Render thread: no allocation, no locks of ours (ALSA's plugins may lock internally).
    public func write(_ data: UnsafeRawPointer, frameCount: Int) throws(DeviceError) {
        guard let pcm else { return }
        let frameBytes = channelCount * (sampleFormat == .s16 ? 2 : 4)
        var done = 0
        while done < frameCount {
            let w = snd_pcm_writei(pcm, data + done * frameBytes, snd_pcm_uframes_t(frameCount - done))
            if w >= 0 {
                done += Int(w)
                continue
            }
            if w == -Int(EPIPE) {
                underruns += 1
                if snd_pcm_prepare(pcm) < 0 { throw .writeFailed(device: device, reason: "cannot recover from an underrun") }
            } else if w == -Int(EAGAIN) || w == -Int(EINTR) {
                continue
            } else {
                let e = snd_pcm_recover(pcm, Int32(w), 1)
                if e < 0 { throw .writeFailed(device: device, reason: ALSAOutput.describe(Int32(w))) }
            }
        }
    }

    /// Adjusts an s24 block converted left-justified (file convention) to the device's S24_LE.
    public func fixup24(_ data: UnsafeMutableRawPointer, sampleCount: Int) {
        guard deviceS24 else { return }
        let p = data.assumingMemoryBound(to: Int32.self)
        for i in 0..<sampleCount { p[i] >>= 8 }
    }

    /// Frames written but not yet played (ALSA's delay), or 0.
    public var delayFrames: Int {
        guard let pcm else { return 0 }
        var d: snd_pcm_sframes_t = 0
        return snd_pcm_delay(pcm, &d) >= 0 ? max(0, Int(d)) : 0
    }

    /// Plays what is buffered, then stops.
    public func drain() {
        guard let pcm else { return }
        // A buffer that never reached the start threshold has not started: start it so it drains.
        if snd_pcm_state(pcm) == SND_PCM_STATE_PREPARED { snd_pcm_start(pcm) }
        snd_pcm_drain(pcm)
    }

    /// Closes the device (control side, after the render thread stopped).
    public func close() {
        if let pcm { snd_pcm_close(pcm) }
        pcm = nil
    }

    static func alsaFormat(_ f: SampleFormat) -> snd_pcm_format_t {
        switch f {
        case .s16: SND_PCM_FORMAT_S16_LE
        case .s24: SND_PCM_FORMAT_S24_LE
        case .s32: SND_PCM_FORMAT_S32_LE
        case .f32: SND_PCM_FORMAT_FLOAT_LE
        }
    }

    static func describe(_ err: Int32) -> String {
        let text = String(cString: snd_strerror(err))
        if err == -EBUSY { return "\(text) (another program is using it)" }
        if err == -ENOENT { return "\(text) (no such device)" }
        return text
    }

    /// The PCM devices ALSA knows (`snd_device_name_hint`), output-capable ones only.
    public static func devices() -> [DeviceInfo] {
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        guard snd_device_name_hint(-1, "pcm", &hints) >= 0, let hints else { return [] }
        defer { snd_device_name_free_hint(hints) }
        var result: [DeviceInfo] = []
        var i = 0
        while let h = hints[i] {
            i += 1
            func get(_ key: String) -> String? {
                guard let s = snd_device_name_get_hint(h, key) else { return nil }
                defer { free(s) }
                return String(cString: s)
            }
            if let io = get("IOID"), io != "Output" { continue }
            guard let name = get("NAME") else { continue }
            let desc = (get("DESC") ?? "").replacingOccurrences(of: "\n", with: " ")
            result.append(DeviceInfo(name: name, description: desc))
        }
        return result
    }
}
