import MixFX

/// A live kernel of `engine` rendered in blocks of 256 frames (as `mixfx play` pulls them) for
/// `frames` frames or until it ends, `before(frame)` called before each block (a hand's move at
/// that frame); its first channel.
public func playLive(_ engine: AudioEngine, frames: Int, before: (Int) -> Void = { _ in }) throws -> [Float] {
    let kernel = try engine.makeKernel(maximumFrameCount: 256, mode: .live)
    try kernel.start()
    var y: [Float] = []
    while y.count < frames {
        before(y.count)
        let n = kernel.render(frameCount: 256)
        guard n > 0 else { break }
        y += UnsafeBufferPointer(start: kernel.output.channel(0), count: n)
    }
    return y
}
