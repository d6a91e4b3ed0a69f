import MixFXDSP

/// The render-side state of one effect node.
enum EffectKernel {
    case eq(node: ShelfEQNode, kernel: EQKernel)
    case pitch(node: TimePitchNode, shifter: PitchShifter)
}

/// Holds a `ShelfEQ` by reference so the effect array is never copied on the render path.
final class EQKernel {
    var eq = ShelfEQ()
}

/// The render-side state of one track: reads its source (converting the rate when needed) and
/// runs its effects into `buffer`.
final class TrackKernel {
    let layout: TrackLayout
    let source: any AudioSource
    let channelCount: Int
    let buffer: AudioBuffer
    private let readBuffer: AudioBuffer
    private let resampler: Resampler?
    private var effects: [EffectKernel] = []
    let latencyFrames: Int

    init(layout: TrackLayout, outputRate: Int, maximumFrameCount: Int) {
        self.layout = layout
        source = layout.player.source
        let f = source.format
        channelCount = f.channelCount
        buffer = AudioBuffer(channelCount: channelCount, capacityFrames: maximumFrameCount)
        readBuffer = AudioBuffer(channelCount: channelCount, capacityFrames: maximumFrameCount)
        resampler = f.sampleRate == outputRate ? nil
            : Resampler(inRate: f.sampleRate, outRate: outputRate, channelCount: channelCount,
                        maxWriteFrames: maximumFrameCount)
        let spec = ProcessSpec(sampleRate: Double(outputRate), maximumFrameCount: maximumFrameCount,
                               channelCount: channelCount)
        var latency = 0
        for node in layout.effects {
            if let eqNode = node as? ShelfEQNode {
                let k = EQKernel()
                k.eq.prepare(spec)
                k.eq.update(eqNode.settings)
                effects.append(.eq(node: eqNode, kernel: k))
            } else if let pitchNode = node as? TimePitchNode {
                let shifter = PitchShifter()
                shifter.prepare(spec, settings: pitchNode.settings)
                latency += shifter.latencyFrames
                effects.append(.pitch(node: pitchNode, shifter: shifter))
            }
        }
        latencyFrames = latency
    }

    /// Back to sample 0 of the source with clear filter state.
    func reset() throws {
        try source.seek(toFrame: 0)
        resampler?.reset()
        for e in effects {
            switch e {
            case .eq(_, let k): k.eq.reset()
            case .pitch(_, let s): s.reset()
            }
        }
    }

    /// Renders the next `frameCount` frames of this track into `buffer` (silence after the end).
    func render(frameCount: Int) throws {
        try pull(frameCount: frameCount)
        let left = buffer.channel(0)
        let right: UnsafeMutablePointer<Float>? = channelCount > 1 ? buffer.channel(1) : nil
        for e in effects {
            switch e {
            case .eq(let node, let k):
                let s = node.settings
                if s != k.eq.settings { k.eq.update(s) }
                k.eq.process(left: left, right: right, frameCount: frameCount)
            case .pitch(_, let shifter):
                shifter.process(left: left, right: right, frameCount: frameCount)
            }
        }
    }

    private func pull(frameCount: Int) throws {
        var done = 0
        if let resampler {
            while done < frameCount {
                done += resampler.read(into: { self.buffer.channel($0) }, offset: done, maxFrames: frameCount - done)
                guard done < frameCount else { break }
                if resampler.isDrained { break }
                if resampler.needsInput {
                    let n = try source.read(into: readBuffer, offset: 0, frameCount: readBuffer.capacityFrames)
                    if n == 0 {
                        resampler.finish()
                    } else {
                        resampler.write(frameCount: n) { UnsafePointer(self.readBuffer.channel($0)) }
                    }
                }
            }
        } else {
            while done < frameCount {
                let n = try source.read(into: buffer, offset: done, frameCount: frameCount - done)
                if n == 0 { break }
                done += n
            }
        }
        if done < frameCount {
            for c in 0..<channelCount { (buffer.channel(c) + done).update(repeating: 0, count: frameCount - done) }
        }
    }
}
