/// Lane maths for the render path: SIMD8 helpers the standard library has only as generic
/// calls, and polynomial atan2 and sincos without a library call (tested in FastMathTests), plus
/// the scalar rounding the per-sample loops use.

/// The smallest lane, as signed integers (which, unlike unsigned ones, x86 compares in vectors;
/// the stdlib's `min()` on SIMD is a generic call in the hot path, and a float version's
/// replace-and-select compiled to branches on the lanes).
@inline(__always) @_noAllocation @_noLocks
func minLane(_ v: SIMD8<Int32>) -> Int32 {
    let four = pointwiseMin(v.lowHalf, v.highHalf)
    let two = pointwiseMin(four.lowHalf, four.highHalf)
    return min(two[0], two[1])
}

/// The lanes of `mask` as the bits of a byte (lane i: bit i): each set lane's bit, summed by
/// halves. In `findPeaks` and the splice's onset test the stdlib's `any` and `wrappedSum`
/// compiled to extracting and testing each lane. `laneByte(m) == 0` is `!any(m)`.
@inline(__always) @_noAllocation @_noLocks
func laneByte(_ mask: SIMDMask<SIMD8<Int32>>) -> Int {
    let v = SIMD8<Int32>().replacing(with: SIMD8<Int32>(1, 2, 4, 8, 16, 32, 64, 128), where: mask)
    let four = v.lowHalf &+ v.highHalf, two = four.lowHalf &+ four.highHalf
    return Int(truncatingIfNeeded: two[0] &+ two[1])
}

/// The lanes of a four-lane `Double` comparison as the bits of a nibble, as `laneByte`.
@inline(__always) @_noAllocation @_noLocks
func laneBits(_ mask: SIMDMask<SIMD4<Int64>>) -> Int {
    let v = SIMD4<Int64>().replacing(with: SIMD4<Int64>(1, 2, 4, 8), where: mask)
    let two = v.lowHalf &+ v.highHalf
    return Int(truncatingIfNeeded: two[0] &+ two[1])
}

/// Each lane rounded to the nearest integer (ties to even), for |x| < 2^22: adding and
/// subtracting 1.5·2^23 leaves only the integer part under IEEE round-to-nearest.
@inline(__always) @_noAllocation @_noLocks
func roundLanes(_ x: SIMD8<Float>) -> SIMD8<Float> {
    let magic = SIMD8<Float>(repeating: 12_582_912)
    return (x + magic) - magic
}

/// |x| per lane (the sign bit cleared).
@inline(__always) @_noAllocation @_noLocks
func absLanes(_ x: SIMD8<Float>) -> SIMD8<Float> {
    unsafeBitCast(unsafeBitCast(x, to: SIMD8<UInt32>.self) & 0x7FFF_FFFF, to: SIMD8<Float>.self)
}

/// The principal argument per lane: x wrapped into [−π, π].
@inline(__always) @_noAllocation @_noLocks
func princarg(_ x: SIMD8<Float>) -> SIMD8<Float> {
    x - (2 * Float.pi) * roundLanes(x * (1 / (2 * Float.pi)))
}

/// atan2(y, x) per lane to within 2e-6 rad, without a library call: octant reduction to [0, 1]
/// and a degree-15 odd minimax polynomial for atan on [0, 1].
@inline(__always) @_noAllocation @_noLocks
func fastAtan2(_ y: SIMD8<Float>, _ x: SIMD8<Float>) -> SIMD8<Float> {
    let ax = absLanes(x), ay = absLanes(y)
    let yBigger = ay .> ax
    let mx = ax.replacing(with: ay, where: yBigger), mn = ay.replacing(with: ax, where: yBigger)
    let zero = SIMD8<Float>(), one = SIMD8<Float>(repeating: 1)   // named constants vectorise
    let a = mn / mx.replacing(with: one, where: mx .== zero)
    let s = a * a
    var poly = SIMD8<Float>(repeating: -0.0040540580)
    poly = poly * s + 0.0218612288
    poly = poly * s - 0.0559098861
    poly = poly * s + 0.0964200441
    poly = poly * s - 0.1390853351
    poly = poly * s + 0.1994653599
    poly = poly * s - 0.3332985605
    var r = poly * s * a + a
    r.replace(with: Float.pi / 2 - r, where: yBigger)
    r.replace(with: Float.pi - r, where: x .< zero)
    r.replace(with: -r, where: y .< zero)
    return r
}

/// (sin θ, cos θ) per lane for |θ| < 10⁵, to within 2e-6 near [−π, π], without a library call:
/// reduction to [−π/4, π/4] by the nearest quadrant k and Taylor polynomials (degree 9 for sin,
/// 8 for cos), then sin θ = ±sin x or ±cos x by k mod 4. The quadrant is rounded with the 1.5·2^23
/// trick, whose bit pattern then holds k mod 4 in its low bits.
@inline(__always) @_noAllocation @_noLocks
func fastSinCos(_ theta: SIMD8<Float>) -> (sin: SIMD8<Float>, cos: SIMD8<Float>) {
    let magic = SIMD8<Float>(repeating: 12_582_912)
    let shifted = theta * (2 / Float.pi) + magic
    let k = unsafeBitCast(shifted, to: SIMD8<UInt32>.self)
    let x = theta - (shifted - magic) * (Float.pi / 2)
    let x2 = x * x
    var s = x2 * Float(1.0 / 362_880) - Float(1.0 / 5040)
    s = s * x2 + Float(1.0 / 120)
    s = s * x2 - Float(1.0 / 6)
    s = (s * x2 + 1) * x
    var c = x2 * Float(1.0 / 40_320) - Float(1.0 / 720)
    c = c * x2 + Float(1.0 / 24)
    c = c * x2 - 0.5
    c = c * x2 + 1
    // k odd: sin and cos swap; sin's sign flips where k & 2, cos's where (k + 1) & 2 (bit ops
    // only: the stdlib's integer lane masks are not vectorised)
    let swap = SIMD8<UInt32>(repeating: 0) &- (k & 1)
    let sBits = unsafeBitCast(s, to: SIMD8<UInt32>.self), cBits = unsafeBitCast(c, to: SIMD8<UInt32>.self)
    let sinBits = ((cBits & swap) | (sBits & ~swap)) ^ ((k & 2) &<< 30)
    let cosBits = ((sBits & swap) | (cBits & ~swap)) ^ (((k &+ 1) & 2) &<< 30)
    return (unsafeBitCast(sinBits, to: SIMD8<Float>.self), unsafeBitCast(cosBits, to: SIMD8<Float>.self))
}

/// Lanes moved up by `by` (1, 2 or 4) places, zeros shifted in at lane 0.
@inline(__always) @_noAllocation @_noLocks
func shiftedUp(_ v: SIMD8<Float>, by n: Int) -> SIMD8<Float> {
    switch n {
    case 1: return SIMD8(0, v[0], v[1], v[2], v[3], v[4], v[5], v[6])
    case 2: return SIMD8(0, 0, v[0], v[1], v[2], v[3], v[4], v[5])
    default: return SIMD8(0, 0, 0, 0, v[0], v[1], v[2], v[3])
    }
}

/// The larger of each pair of lanes (the stdlib's `pointwiseMax` is a generic call in the hot
/// path).
@inline(__always) @_noAllocation @_noLocks
func pointwiseMaxLanes(_ a: SIMD8<Float>, _ b: SIMD8<Float>) -> SIMD8<Float> {
    a.replacing(with: b, where: b .> a)
}

/// ⌊x⌋ for finite x in Int's range, without the library call or the rounding-rule metadata
/// that `rounded(.down)` brings into a `@_noAllocation` function.
@inline(__always) @_noAllocation @_noLocks
func floorToInt(_ x: Double) -> Int {
    let k = Int(x)
    return Double(k) > x ? k - 1 : k
}

/// x rounded to the nearest integer (halves up), for x ≥ 0.
@inline(__always) @_noAllocation @_noLocks
func roundToInt(_ x: Double) -> Int { floorToInt(x + 0.5) }

/// ⌊x⌋ of four values, for |x| < 2^51, as whole `Double`s and as `Int`s: exactly
/// `Double(floorToInt(x))` and `floorToInt(x)`, with no conversion instruction and no trap
/// check, so all four in a few vector operations on any x86-64.
///
/// Adding M = 1.5·2^52 leaves no fraction bits (the sum lies in [2^52, 2^53), where doubles
/// are whole numbers), so (x + M) − M is x rounded to the nearest whole number, and one less
/// where that came out above x; added to M again, the whole number k is the bit pattern's low
/// bits: bits(M + k) = bits(M) + k.
@inline(__always) @_noAllocation @_noLocks
func floorWhole(_ x: SIMD4<Double>) -> (whole: SIMD4<Double>, int: SIMD4<Int>) {
    let magic = SIMD4<Double>(repeating: 0x1.8p52)
    let nearest = (x + magic) - magic
    let down = nearest.replacing(with: nearest - 1, where: nearest .> x)
    let bits = unsafeBitCast(down + magic, to: SIMD4<Int>.self)
    return (down, bits &- SIMD4(repeating: Int(bitPattern: UInt(0x1.8p52.bitPattern))))
}
