import MixFXDSP

/// A track's downmix (`MixFXDSP.Downmix`: a source of more channels than the track to its one
/// or two) in the form the checked render path runs: the gains behind a pointer (a `Downmix`
/// holds them in an array, which the realtime check refuses to read), the channels as
/// `AudioBuffer.Planes`. The same sums in the same order as `Downmix.process`, so the same
/// samples. Made on the control side; `deallocate()` once, by its owner.
struct DownmixMatrix {
    /// Channels in, channels out.
    let inputCount: Int, outputCount: Int
    /// gains[o · inputCount + i]: how much of input channel i goes to output channel o.
    private let gains: UnsafeMutablePointer<Float>

    /// `downmix`'s matrix.
    init(_ downmix: Downmix) {
        inputCount = downmix.inputCount
        outputCount = downmix.outputCount
        gains = .allocate(capacity: max(1, downmix.gains.count))
        gains.initialize(from: downmix.gains, count: downmix.gains.count)
    }

    func deallocate() { gains.deallocate() }

    /// Writes `frameCount` frames: output channel o at `output[o] + offset`, from input channel
    /// i at `input[i]`. The output may not alias the input.
    @inline(__always) @_noAllocation @_noLocks
    func process(input: AudioBuffer.Planes, output: AudioBuffer.Planes, offset: Int, frameCount: Int) {
        for o in 0..<outputCount {
            let out = output[o] + offset
            out.update(repeating: 0, count: frameCount)
            for i in 0..<inputCount {
                let g = gains[o * inputCount + i]
                guard g != 0 else { continue }
                let x = input[i]
                for k in 0..<frameCount { out[k] += g * x[k] }
            }
        }
    }
}
