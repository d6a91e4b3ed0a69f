/// What the engine asks of a time-pitch processor: `PitchShifter`'s API, as a protocol so the
/// engine can hold either compiled copy of the DSP kernels (`MixFXDSP`, built for any x86-64,
/// or `MixFXDSPAVX2`, the same sources built for AVX2/FMA-class CPUs; see `DSPCopy` in the
/// engine). Both copies' `PitchShifter` conform to it: the engine's control side (prepare,
/// latencies, workspace) calls through it, and its render path calls the chosen copy's
/// `PitchShifter` directly (`ShifterRef` in the engine: a witness table is a call the compiler's
/// realtime check cannot follow), once per block, everything under it running in that copy.
/// The types it mentions live here, below both copies, so the copies share them.
public protocol PitchShifting: AnyObject, Sendable {
    /// The settings of the last `prepare` (pitch and tempo updated by the setters).
    var settings: PitchShifterSettings { get }
    /// Offline or streaming, from `prepare`.
    var mode: PitchShifterMode { get }
    /// Output lags input by this many frames (0 with a tempo offline).
    var latencyFrames: Int { get }
    /// How far past the input time of a block's first output frame the input may be pulled
    /// (the plan's look-ahead; streaming, for every live setting): what a caller that cannot
    /// read its input ahead delays it by.
    var lookAheadFrames: Int { get }
    /// Offline with a tempo: how far past an output frame's input time its input is pulled.
    var inputAheadFrames: Int { get }
    /// Streaming: the delay of its input that lets it run without reading ahead (every pitch of
    /// the range, tempo 1); 0 for other modes.
    var liveLatencyFrames: Int { get }
    /// Live: the input time of the next output frame.
    var inputTime: Double { get }
    /// Live: the tempo the frames run now have glided to.
    var currentTempo: Double { get }

    /// Bytes of scratch memory it needs (`use(_:)`), from `prepare`.
    var workspaceByteCount: Int { get }

    /// Allocates for `spec`, `settings` and `mode` (control side); with `sharesWorkspace`, all
    /// but its scratch memory, which `use(_:)` then gives it. `bounds` (streaming): the
    /// pitches and tempos it will be asked for, when known before it runs (nil: any live ones).
    func prepare(_ spec: ProcessSpec, settings: PitchShifterSettings, mode: PitchShifterMode, sharesWorkspace: Bool,
                 bounds: StreamingBounds?)
    /// Takes its scratch memory from `workspace` (at least `workspaceByteCount` bytes, render
    /// side, no allocation): before a shifter prepared with `sharesWorkspace` first processes,
    /// and whenever another thread's workspace is to serve it.
    func use(_ workspace: PitchShifterWorkspace)
    /// Clears all signal state (render side; does not allocate).
    func reset()
    /// Live: the pitch to glide to.
    func setPitchCents(_ cents: Double)
    /// Streaming, offline automation: each vocoder frame's pitch from `map` at the frame's
    /// input time plus `originFrame` (the lane's timeline frame of input frame 0); nil: none.
    /// Set before `reset`. Replaces `setPitchCents`.
    func setPitchMap(_ map: PitchMap?, originFrame: Int)
    /// Streaming, offline automation: output frame n read at input time
    /// `map.position(atFrame: originFrame + n) − map.position(atFrame: originFrame)`, each
    /// vocoder frame at the map's tempo there, without a glide (`TempoMap`); nil: none. Set
    /// before `reset`. Replaces `setTempo`.
    func setTempoMap(_ map: TempoMap?, originFrame: Int)
    /// Streaming with a pitch map, live touch: a hand holds the pitch at `cents` over the map;
    /// nil lets go (see `PitchShifter.holdPitch`).
    func holdPitch(_ cents: Double?)
    /// Live: the tempo to glide to.
    func setTempo(_ tempo: Double)
    /// Formant preservation on or off (live; an offline shifter keeps what it was prepared with).
    func setPreserveFormants(_ on: Bool)
    /// Offline without a tempo: shifts in place with latency `latencyFrames`.
    func process(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?, frameCount: Int)
    /// Offline with a tempo: output frames, input pulled on demand.
    func process(into left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, frameCount: Int,
                 maximumPull: Int, pull: (Int) throws -> (UnsafePointer<Float>, UnsafePointer<Float>?)) rethrows
    /// Live, any tempo: output frames, input pulled on demand.
    func process(live left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, frameCount: Int,
                 maximumPull: Int, pull: (Int) throws -> (UnsafePointer<Float>, UnsafePointer<Float>?)) rethrows
}
