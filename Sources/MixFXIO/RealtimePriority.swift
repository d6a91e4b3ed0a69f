import Foundation

/// Real-time scheduling for the audio path, where the system allows it (root, or an `rtprio`
/// limit); harmless when refused: the thread keeps its normal policy.
///
/// Two kinds of thread carry the sound: the one that renders and writes periods, and the ones a
/// sound server's ALSA plugin starts inside our process (PulseAudio's `threaded-ml`, which does
/// the actual socket writes). The second kind is created during `snd_pcm_open`, and a new thread
/// inherits its creator's policy (glibc's default `PTHREAD_INHERIT_SCHED`), so the device is
/// opened with the opening thread raised for the moment of the call.
enum RealtimePriority {
    /// SCHED_FIFO priority of the render thread and of the plugin threads: above PulseAudio's own
    /// sink threads (SCHED_RR 5), below the kernel's interrupt threads (50).
    static let audioPriority: Int32 = 20

    /// Raises the calling thread to SCHED_FIFO at `audioPriority`; whether it was granted.
    @discardableResult
    static func raiseCurrentThread() -> Bool {
        var param = sched_param()
        param.sched_priority = audioPriority
        return pthread_setschedparam(pthread_self(), Int32(SCHED_FIFO), &param) == 0
    }

    /// Runs `body` with the calling thread raised, so that threads created inside it inherit
    /// real-time scheduling, then gives the calling thread back its own policy.
    static func inherited<T, E: Error>(by body: () throws(E) -> T) throws(E) -> T {
        var policy: Int32 = 0
        var saved = sched_param()
        let known = pthread_getschedparam(pthread_self(), &policy, &saved) == 0
        let raised = known && raiseCurrentThread()
        defer { if raised { _ = pthread_setschedparam(pthread_self(), policy, &saved) } }
        return try body()
    }
}
