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
    @_semantics("no_performance_analysis")
    static func pow(_ x: Double, _ y: Double) -> Double { Glibc.pow(x, y) }

    @_semantics("no_performance_analysis")
    static func log10(_ x: Double) -> Double { Glibc.log10(x) }
}
