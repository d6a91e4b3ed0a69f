import MixFXDSP
import MixFXEngine

/// One instance of the plugin: the host's port pointers and the chain they drive. The host
/// calls `connect` for every port, then `activate`, then `run` for each block (any frame count:
/// the chain runs its own blocks; `FixedLatencyChain`).
///
/// All state is in the control ports: a host that restores their values (every LV2 host saves
/// and restores control inputs with a session or preset) restores the plugin; there is no other
/// state, so no state extension.
final class LV2Plugin {
    let channelCount: Int
    let chain: FixedLatencyChain
    /// Where the host keeps each port's value or samples (nil until connected).
    private let ports: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    private let portCount: Int
    /// Each control input's range and default (indexed by port), read from the registry here
    /// rather than in `run`.
    private let minimum: UnsafeMutablePointer<Double>, maximum: UnsafeMutablePointer<Double>,
                defaults: UnsafeMutablePointer<Double>
    /// Set by `activate`: the next `run` starts from clear state at the ports' values.
    private var needsReset = true

    /// An instance at `sampleRate` with 1 or 2 channels (control side: allocates).
    init(sampleRate: Double, channelCount: Int) {
        self.channelCount = channelCount
        chain = FixedLatencyChain(sampleRate: sampleRate, channelCount: channelCount)
        portCount = LV2Port.count(channels: channelCount)
        ports = .allocate(capacity: portCount)
        ports.initialize(repeating: nil, count: portCount)
        minimum = .allocate(capacity: portCount)
        maximum = .allocate(capacity: portCount)
        defaults = .allocate(capacity: portCount)
        for i in 0..<portCount {
            let b = LV2Port(rawValue: UInt32(i))?.bounds ?? (0, 0, 0)
            (minimum[i], maximum[i], defaults[i]) = b
        }
    }

    deinit {
        ports.deallocate()
        minimum.deallocate()
        maximum.deallocate()
        defaults.deallocate()
    }

    /// `connect_port`: remembers where port `index` lives (any thread, never during `run`).
    func connect(_ index: UInt32, to location: UnsafeMutableRawPointer?) {
        guard Int(index) < portCount else { return }
        ports[Int(index)] = location
    }

    /// `activate`: the next `run` resets.
    func activate() { needsReset = true }

    /// `run`: reads the control inputs once, then processes `frameCount` frames (audio thread:
    /// no allocation, lock or log). Writes the latency port even when `frameCount` is 0, as LV2
    /// asks of latent plugins.
    func run(_ frameCount: Int) {
        if let latency = ports[Int(LV2Port.latency.rawValue)] {
            latency.assumingMemoryBound(to: Float.self).pointee = Float(chain.latencyFrames)
        }
        let settings = controlSettings()
        if needsReset {
            chain.reset(settings)
            needsReset = false
        }
        guard frameCount > 0, let inL = audio(.inputLeft), let outL = audio(.outputLeft) else { return }
        var inR: UnsafeMutablePointer<Float>?, outR: UnsafeMutablePointer<Float>?
        if channelCount == 2 {
            guard let i = audio(.inputRight), let o = audio(.outputRight) else { return }
            (inR, outR) = (i, o)
        }
        chain.process(inLeft: inL, inRight: inR.map { UnsafePointer($0) }, outLeft: outL, outRight: outR,
                      frameCount: frameCount, settings: settings)
    }

    private func audio(_ port: LV2Port) -> UnsafeMutablePointer<Float>? {
        ports[Int(port.rawValue)]?.assumingMemoryBound(to: Float.self)
    }

    /// A control input's value: the default when unconnected or not a number, else clamped to
    /// its range.
    private func control(_ port: LV2Port) -> Double {
        let i = Int(port.rawValue)
        guard let p = ports[i] else { return defaults[i] }
        let v = Double(p.assumingMemoryBound(to: Float.self).pointee)
        return v.isNaN ? defaults[i] : min(max(v, minimum[i]), maximum[i])
    }

    /// The chain's settings from the control inputs: cents + 100 × semitones (clamped to the
    /// pitch's range), the formant toggle above ½, the two shelves at slope 1.
    private func controlSettings() -> FixedLatencyChain.Settings {
        let cents = control(.cents) + 100 * control(.semitones).rounded()
        let pitch = Int(LV2Port.cents.rawValue)
        let eq = ShelfEQSettings(bass: ShelfBandSettings(frequencyHz: control(.bassFreq), gainDB: control(.bass)),
                                 treble: ShelfBandSettings(frequencyHz: control(.trebleFreq), gainDB: control(.treble)))
        return FixedLatencyChain.Settings(pitchCents: min(max(cents, minimum[pitch]), maximum[pitch]),
                                          preserveFormants: control(.formant) > 0.5, eq: eq, wet: Float(control(.wet)))
    }
}
