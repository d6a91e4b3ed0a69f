#if canImport(Glibc)
import Glibc
#endif

/// The C library's maths (glibc's libm) the engine's render path calls, vouched for one function
/// at a time as in `MixFXDSP.Libm` (which is that module's own): the compiler's realtime check
/// (`@_noAllocation`/`@_noLocks`) cannot see a C function's body and refuses the call ("called
/// function is not available in this module"). These functions neither allocate nor lock, so
/// each wrapper is marked for the check not to enter it (`no_performance_analysis`), and inlines
/// to the same call.
enum Libm {
    @_semantics("no_performance_analysis") @inline(__always)
    static func pow(_ x: Double, _ y: Double) -> Double { Glibc.pow(x, y) }

    @_semantics("no_performance_analysis") @inline(__always)
    static func exp(_ x: Double) -> Double { Glibc.exp(x) }

    @_semantics("no_performance_analysis") @inline(__always)
    static func log(_ x: Double) -> Double { Glibc.log(x) }

    @_semantics("no_performance_analysis") @inline(__always)
    static func cos(_ x: Double) -> Double { Glibc.cos(x) }

    /// √x (the standard library's is not available to the check).
    @_semantics("no_performance_analysis") @inline(__always)
    static func squareRoot(_ x: Float) -> Float { x.squareRoot() }

    /// ⌊x⌋ (as `roundedUp`).
    @_semantics("no_performance_analysis") @inline(__always)
    static func roundedDown(_ x: Double) -> Double { x.rounded(.down) }

    /// ⌈x⌉ (`x.rounded(.up)`: the rounding rule is an enum the check counts as metadata).
    @_semantics("no_performance_analysis") @inline(__always)
    static func roundedUp(_ x: Double) -> Double { x.rounded(.up) }
}
