@testable import MixFXDSP

extension PitchShifter {
    /// What this streaming shifter plays of the mono input `x` (silence after it): `frames`
    /// output frames, in blocks of the sizes `blocks` (repeated, each at most the prepared
    /// maximum), pulling as much input as it asks for. `beforeBlock` is called with each
    /// block's first output frame before the block (live changes). Output the shifter did not
    /// write stays NaN.
    func streamed(_ x: [Float], frames: Int, blocks: [Int], beforeBlock: (Int) -> Void = { _ in }) -> [Float] {
        var y = [Float](repeating: .nan, count: frames)
        var scratch = [Float](repeating: 0, count: blocks.max()!)
        var pulled = 0, done = 0, b = 0
        y.withUnsafeMutableBufferPointer { p in
            while done < frames {
                let n = min(blocks[b % blocks.count], frames - done)
                beforeBlock(done)
                process(live: p.baseAddress! + done, nil, frameCount: n, maximumPull: n) { k in
                    for j in 0..<k { scratch[j] = pulled + j < x.count ? x[pulled + j] : 0 }
                    pulled += k
                    return scratch.withUnsafeBufferPointer { ($0.baseAddress!, nil) }
                }
                done += n
                b += 1
            }
        }
        return y
    }
}
