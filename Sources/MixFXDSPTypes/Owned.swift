/// An object one part of the render path owns and calls without reference counting, so that
/// the compiler's realtime check (`@_noAllocation`/`@_noLocks`) accepts the call.
///
/// The check sees the code before the optimiser removes reference counting: a class reference
/// loaded from a stored property (a `let` too, `unowned(unsafe)` too) is a copy, refused as a
/// possible lock, and its end a possible deallocation. A reference a function is given (`self`,
/// a parameter) is not, and neither is one held as `Unmanaged` and used through
/// `_withUnsafeGuaranteedRef`. So the owner holds its parts as `Owned` (retained once in `init`,
/// released in its `deinit`: `release()`), and calls one as `part { $0.method(…) }`. The closure
/// may capture only plain values (numbers, pointers, other `Owned`s): a captured class
/// reference — `self` too, through any of its properties — is a copy again, so what it needs
/// of `self` is read into a local first. Nested calls do not capture the outer object either:
/// pass the other part as `Owned` (`reader.read(…, from: vocoder)`) and open it inside.
@frozen
public struct Owned<Object: AnyObject>: @unchecked Sendable {
    public let unmanaged: Unmanaged<Object>

    /// Retains `object` until `release()`.
    @inlinable
    public init(_ object: Object) { unmanaged = .passRetained(object) }

    /// Gives up this hold (the owner's `deinit`, or when the part is replaced).
    @inlinable
    public func release() { unmanaged.release() }

    /// Calls `body` with the object, guaranteed alive by the owner for the call.
    @inlinable @inline(__always)
    public func callAsFunction<Result>(_ body: (Object) throws -> Result) rethrows -> Result {
        try unmanaged._withUnsafeGuaranteedRef(body)
    }

    /// The object, retained (control side only: the render path uses the call above).
    @inlinable
    public var object: Object { unmanaged.takeUnretainedValue() }

    /// Whether both hold the same object.
    @inlinable
    public static func === (a: Owned, b: Owned) -> Bool { a.unmanaged.toOpaque() == b.unmanaged.toOpaque() }
}
