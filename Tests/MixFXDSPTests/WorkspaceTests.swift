import Testing
@testable import MixFXDSP
import TestSupport

/// Shifters keep their scratch in a `PitchShifterWorkspace` that several may share.
@Suite struct WorkspaceTests {
    /// Four stereo shifters (raised, lowered at overlap 4, with a tempo, with formants) run block
    /// by block in turn, each block in one of two shared workspaces, alternating, as tracks do on
    /// a render's worker threads (a block may be taken by the other thread). Their output is the
    /// bytes each gives with a workspace of its own.
    @Test func sharedWorkspacesGiveTheBytesOfOwnOnes() {
        let block = 512, blocks = 80
        let spec = ProcessSpec(sampleRate: 44_100, maximumFrameCount: block, channelCount: 2)
        let settings = [PitchShifterSettings(pitchCents: 300), PitchShifterSettings(pitchCents: -700, overlap: 4),
                        PitchShifterSettings(pitchCents: 200, tempo: 0.8),
                        PitchShifterSettings(pitchCents: 1200, preserveFormants: true)]
        let input = (0..<2).map { c in Signals.noise(frames: block * blocks * 2, amplitude: 0.3, seed: UInt64(11 + c)) }
        func run(sharing: Bool) -> [[Float]] {
            let shifters = settings.map { s in
                let p = PitchShifter()
                p.prepare(spec, settings: s, sharesWorkspace: sharing)
                return p
            }
            let bytes = shifters.map(\.workspaceByteCount).max()!
            let workspaces = [PitchShifterWorkspace(byteCount: bytes), PitchShifterWorkspace(byteCount: bytes)]
            let left = UnsafeMutablePointer<Float>.allocate(capacity: block), right = UnsafeMutablePointer<Float>.allocate(capacity: block)
            let pulled = UnsafeMutablePointer<Float>.allocate(capacity: 2 * block)
            defer { left.deallocate(); right.deallocate(); pulled.deallocate() }
            var out = [[Float]](repeating: [], count: shifters.count)
            var consumed = [Int](repeating: 0, count: shifters.count)
            for b in 0..<blocks {
                for (k, p) in shifters.enumerated() {
                    if sharing { p.use(workspaces[(b + k) % 2]) }
                    if p.settings.changesTempo {
                        p.process(into: left, right, frameCount: block, maximumPull: block) { n in
                            for i in 0..<n {
                                pulled[i] = input[0][consumed[k] + i]; pulled[block + i] = input[1][consumed[k] + i]
                            }
                            consumed[k] += n
                            return (UnsafePointer(pulled), UnsafePointer(pulled + block))
                        }
                    } else {
                        for i in 0..<block { left[i] = input[0][b * block + i]; right[i] = input[1][b * block + i] }
                        p.process(left: left, right: right, frameCount: block)
                    }
                    for i in 0..<block { out[k].append(left[i]); out[k].append(right[i]) }
                }
            }
            return out
        }
        let own = run(sharing: false), shared = run(sharing: true)
        for k in settings.indices {
            let first = own[k].indices.first { $0 < shared[k].count && own[k][$0] != shared[k][$0] }
            #expect(own[k].count == shared[k].count && first == nil,
                    "shifter \(k) (\(settings[k])) differs from sample \(first ?? -1) when it shares workspaces")
            // (and it did shift: the output is not silence)
            #expect(own[k].map { abs($0) }.max()! > 0.05)
        }
    }

    /// A shifter that shares its workspace refuses to run without one, or with one too small:
    /// it stops rather than write past the memory it was given.
    @Test func aSharedShifterStopsWithoutAWorkspaceBigEnough() async {
        await #expect(processExitsWith: .failure) {
            let p = PitchShifter()
            p.prepare(ProcessSpec(sampleRate: 44_100, maximumFrameCount: 256, channelCount: 1),
                      settings: PitchShifterSettings(pitchCents: 300), sharesWorkspace: true)
            var x = [Float](repeating: 0.1, count: 256)
            x.withUnsafeMutableBufferPointer { p.process(left: $0.baseAddress!, right: nil, frameCount: 256) }
        }
        await #expect(processExitsWith: .failure) {
            let p = PitchShifter()
            p.prepare(ProcessSpec(sampleRate: 44_100, maximumFrameCount: 256, channelCount: 1),
                      settings: PitchShifterSettings(pitchCents: 300), sharesWorkspace: true)
            p.use(PitchShifterWorkspace(byteCount: p.workspaceByteCount - 64))
        }
    }

    /// The workspace a shifter measures is what it carves: a stereo shifter at 44.1 kHz and
    /// 2048-frame blocks needs its FFT's work buffers, the power and the turned spectrum, the
    /// phase locking's peaks and the block's tables, about 160 KB (the frames' spectra are the
    /// vocoder's own: they swap with the previous frame's; the analysis windows are read in
    /// place from the input history, whose mirrored head covers one); a shifter with nothing to
    /// do needs none.
    @Test func aShifterMeasuresTheScratchItCarves() {
        let p = PitchShifter()
        p.prepare(ProcessSpec(sampleRate: 44_100, maximumFrameCount: 2048, channelCount: 2),
                  settings: PitchShifterSettings(pitchCents: 200), sharesWorkspace: true)
        let bins = 4096 / 2 + 1
        // the FFT (2 × 2048 floats, 2 × 512 SIMD4), power and the turned spectrum (3 × bins),
        // the locking (5 × bins), the tables (4 × 2048 × 8 bytes)
        let floats = 2 * 2048 + 2 * 512 * 4 + 3 * bins + 5 * bins
        let expected = 4 * floats + 4 * 2048 * 8
        #expect(p.workspaceByteCount >= expected && p.workspaceByteCount < expected + 16 * 64 + 8 * 4 * 4,
                "\(p.workspaceByteCount) bytes, about \(expected) expected")
        let neutral = PitchShifter()
        neutral.prepare(ProcessSpec(sampleRate: 44_100, maximumFrameCount: 2048, channelCount: 2),
                        settings: PitchShifterSettings(), sharesWorkspace: true)
        #expect(neutral.workspaceByteCount == 0)
    }
}
