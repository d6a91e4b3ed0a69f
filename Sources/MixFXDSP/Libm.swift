#if canImport(Glibc)
import Glibc
#endif

/// The C library's maths (glibc's libm) for functions the compiler checks for the render path
/// (`@_noAllocation`/`@_noLocks`). These functions neither allocate nor lock, but they are C:
/// the compiler's check cannot see their bodies and rejects a call to them ("called function is
/// not available in this module"). Each wrapper here vouches for one function
/// (`no_performance_analysis`: the check does not enter it, as with the standard library's
/// `_unsafePerformance`), and nothing else: the check covers everything around the call. The
/// optimiser inlines the wrappers afterwards, so the code is the plain call.
enum Libm {
    @_semantics("no_performance_analysis") @inline(__always)
    static func pow(_ x: Double, _ y: Double) -> Double { Glibc.pow(x, y) }

    @_semantics("no_performance_analysis") @inline(__always)
    static func log10(_ x: Double) -> Double { Glibc.log10(x) }

    @_semantics("no_performance_analysis") @inline(__always)
    static func logf(_ x: Float) -> Float { Glibc.logf(x) }

    @_semantics("no_performance_analysis") @inline(__always)
    static func expf(_ x: Float) -> Float { Glibc.expf(x) }

    @_semantics("no_performance_analysis") @inline(__always)
    static func log(_ x: Double) -> Double { Glibc.log(x) }

    @_semantics("no_performance_analysis") @inline(__always)
    static func exp(_ x: Double) -> Double { Glibc.exp(x) }

    @_semantics("no_performance_analysis") @inline(__always)
    static func cos(_ x: Double) -> Double { Glibc.cos(x) }

    @_semantics("no_performance_analysis") @inline(__always)
    static func sin(_ x: Double) -> Double { Glibc.sin(x) }

    /// (The standard library's square root is the C shim `_stdlib_squareRootf`, the one
    /// instruction `sqrtss`, which the check cannot see into either.)
    @_semantics("no_performance_analysis") @inline(__always)
    static func squareRoot(_ x: Float) -> Float { x.squareRoot() }

    /// ⌈x⌉ (`x.rounded(.up)`: the rounding rule is an enum the check counts as metadata).
    @_semantics("no_performance_analysis") @inline(__always)
    static func sqrt(_ x: Double) -> Double { Glibc.sqrt(x) }

    @_semantics("no_performance_analysis") @inline(__always)
    static func roundedUp(_ x: Double) -> Double { x.rounded(.up) }

    @_semantics("no_performance_analysis") @inline(__always)
    static func roundedDown(_ x: Double) -> Double { x.rounded(.down) }

    /// x rounded to the nearest whole, halves away from 0 (`x.rounded()`).
    @_semantics("no_performance_analysis") @inline(__always)
    static func rounded(_ x: Double) -> Double { x.rounded() }

    @_semantics("no_performance_analysis") @inline(__always)
    static func squareRoot(_ x: SIMD8<Float>) -> SIMD8<Float> { x.squareRoot() }
}
