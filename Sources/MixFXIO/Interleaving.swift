import MixFXDSP

/// Between interleaved frames (L, R, L, R, … as files and devices hold them) and one run of
/// samples per channel (as `AudioBuffer` holds them). Values are copied, never changed. Stereo,
/// the common case, goes four frames a step through vector shuffles; one sample at a time, the
/// reader's split had taken 1.9 % of the band's CPU.
extension AudioBuffer {
    /// Frames `offset ..< offset + frameCount` of channels `0 ..< ch` from `source`, which
    /// holds `frameCount` frames of `ch` interleaved samples.
    func deinterleave(from source: UnsafePointer<Float>, channels ch: Int, frameCount: Int, offset: Int = 0) {
        precondition(ch <= channelCount)
        if ch == 1 {
            (channel(0) + offset).update(from: source, count: frameCount)
            return
        }
        var i = 0
        if ch == 2 {
            let src = UnsafeRawPointer(source)
            let left = UnsafeMutableRawPointer(channel(0) + offset), right = UnsafeMutableRawPointer(channel(1) + offset)
            while i &+ 4 <= frameCount {
                let x = src.loadUnaligned(fromByteOffset: 8 &* i, as: SIMD8<Float>.self)
                left.storeBytes(of: x.evenHalf, toByteOffset: 4 &* i, as: SIMD4<Float>.self)
                right.storeBytes(of: x.oddHalf, toByteOffset: 4 &* i, as: SIMD4<Float>.self)
                i &+= 4
            }
        }
        for c in 0..<ch {
            let dst = channel(c) + offset
            for j in i..<frameCount { dst[j] = source[j * ch + c] }
        }
    }

    /// Frames `0 ..< frameCount` of channels `0 ..< ch` into `destination`, interleaved.
    func interleave(channels ch: Int, frameCount: Int, into destination: UnsafeMutablePointer<Float>) {
        precondition(ch <= channelCount)
        if ch == 1 {
            destination.update(from: channel(0), count: frameCount)
            return
        }
        var i = 0
        if ch == 2 {
            let left = UnsafeRawPointer(channel(0)), right = UnsafeRawPointer(channel(1))
            let dst = UnsafeMutableRawPointer(destination)
            while i &+ 4 <= frameCount {
                let l = left.loadUnaligned(fromByteOffset: 4 &* i, as: SIMD4<Float>.self)
                let r = right.loadUnaligned(fromByteOffset: 4 &* i, as: SIMD4<Float>.self)
                dst.storeBytes(of: SIMD8(l[0], r[0], l[1], r[1], l[2], r[2], l[3], r[3]), toByteOffset: 8 &* i, as: SIMD8<Float>.self)
                i &+= 4
            }
        }
        for c in 0..<ch {
            let src = channel(c)
            for j in i..<frameCount { destination[j * ch + c] = src[j] }
        }
    }
}
