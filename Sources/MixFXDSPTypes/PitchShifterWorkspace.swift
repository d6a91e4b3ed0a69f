/// Scratch memory for pitch shifters that never process at the same time: what a shifter needs
/// only while it processes a block (its FFT's work buffers, the frame's power and turned
/// spectrum, the phase locking's peaks, the block's ratios and table indices). A shifter's state (its signals, the previous frame's spectra, the
/// phasors) stays its own.
///
/// An offline render gives each thread that renders tracks one workspace, and the tracks it
/// renders use it in turn: a stereo shifter at 44.1/48 kHz needs about 160 KB of it, which 300
/// tracks then no longer each hold. A shifter prepared with `sharesWorkspace` must be handed
/// one of at least its `workspaceByteCount` bytes (`use(_:)`) before it processes; one prepared
/// without it makes its own.
///
/// Made on the control side (it allocates, zeroed, 64-byte aligned). `@unchecked Sendable`: raw
/// memory, which its owner lets one thread at a time use.
public final class PitchShifterWorkspace: @unchecked Sendable {
    /// Usable bytes from `base`.
    public let byteCount: Int
    /// The memory, 64-byte aligned.
    public let base: UnsafeMutableRawPointer

    /// A zeroed workspace of `byteCount` bytes (control side).
    public init(byteCount: Int) {
        self.byteCount = max(0, byteCount)
        let allocated = max(64, byteCount)
        base = .allocate(byteCount: allocated, alignment: 64)
        base.initializeMemory(as: UInt8.self, repeating: 0, count: allocated)
    }

    deinit { base.deallocate() }
}
