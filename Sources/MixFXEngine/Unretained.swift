import MixFXDSP

/// An object the render path uses without reference counting, so that the compiler's realtime
/// check (`@_noAllocation`/`@_noLocks`) accepts the use: the engine's form of `Owned`
/// (`MixFXDSPTypes/Owned.swift`, which explains why), for objects something else keeps alive.
///
/// The check sees the code before the optimiser removes reference counting, and counts a class
/// reference loaded from a stored property, or bound from an enum's payload, as a copy. An
/// `Unmanaged` is a plain value: held here unretained, and opened only for the call, as
/// `ref { $0.method(…) }`. The owner keeps a strong reference for as long as the `Unretained`
/// is used (the kernels: their nodes, buffers, tracks and shifters, for the kernel's life). The
/// closure may capture only values (numbers, pointers, other `Unretained`s): capturing a class
/// reference — `self` too — is a copy again.
struct Unretained<Object: AnyObject> {
    let unmanaged: Unmanaged<Object>

    /// `object`, not retained: the caller keeps it alive. (`__shared`: taken as given, so
    /// `Unretained(self)` counts nothing.)
    @inline(__always)
    init(_ object: __shared Object) { unmanaged = .passUnretained(object) }

    /// Calls `body` with the object, kept alive by its owner for the call.
    @inline(__always)
    func callAsFunction<Result>(_ body: (Object) throws -> Result) rethrows -> Result {
        try unmanaged._withUnsafeGuaranteedRef(body)
    }
}

/// A buffer the render path writes through (`channel`, `planes`) or hands on.
typealias BufferRef = Unretained<AudioBuffer>
/// A parameter the render path reads.
typealias ParameterRef = Unretained<AudioParameter>
/// A track kernel the mix renders and reads.
typealias TrackHandle = Unretained<TrackKernel>

extension Unretained where Object == AudioBuffer {
    /// Where each channel starts (`AudioBuffer.planes`).
    var planes: AudioBuffer.Planes {
        @inline(__always) get { self { $0.planes } }
    }
}

extension Unretained where Object == AudioParameter {
    /// `AudioParameter.value`.
    var value: Double {
        @inline(__always) get { self { $0.value } }
    }
    /// `AudioParameter.clampedValue`.
    var clampedValue: Double {
        @inline(__always) get { self { $0.clampedValue } }
    }
}
