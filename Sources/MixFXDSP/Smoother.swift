#if canImport(Glibc)
import Glibc
#endif

/// The ramps that keep a change from clicking, in one place. Each moves a value one step toward
/// a target; the caller keeps the value and calls once per sample (or per block, or per frame).
///
/// - `linear`: by at most `step`, landing exactly on the target (fades: the shifter's wet/dry
///   crossfade, the player's pause, stop and seek fades);
/// - `onePole`: x += (target − x)·α, exactly the target once within `snap` (time constant τ:
///   α = 1 − e^(−T/τ) for steps T apart; the pitch glide, EQ gains and slopes);
/// - `onePoleLog`: the same on a log scale, x *= (target/x)^α, for frequencies.
///
/// `LinearRamp` below is the fourth kind: a ramp that reaches its target in an exact number of
/// samples (the mixer's gains).
public enum Smoother {
    @inline(__always) @_noAllocation @_noLocks
    public static func linear(_ x: inout Float, toward target: Float, step: Float) {
        x = target > x ? min(target, x + step) : max(target, x - step)
    }

    @inline(__always) @_noAllocation @_noLocks
    public static func onePole(_ x: inout Double, toward target: Double, coefficient alpha: Double, snap: Double) {
        x += (target - x) * alpha
        if abs(target - x) < snap { x = target }
    }

    @inline(__always) @_noAllocation @_noLocks
    public static func onePoleLog(_ x: inout Double, toward target: Double, coefficient alpha: Double, snapRatio: Double) {
        x *= Libm.pow(target / x, alpha)
        if abs(target / x - 1) < snapRatio { x = target }
    }
}

/// A linear ramp that reaches its target in exactly the number of steps it is given, and is
/// then exactly the target (the mixer's gains: a change takes 10 ms, whatever the block size).
public struct LinearRamp: Sendable {
    /// The value now.
    public private(set) var value: Float
    /// Where the ramp is heading (the value when not ramping).
    public private(set) var target: Float
    /// Steps left; 0: not ramping.
    public private(set) var stepsLeft = 0
    private var step: Float = 0

    /// At `value`, not ramping.
    public init(_ value: Float) { self.value = value; target = value }

    /// Jumps to `value` (ends any ramp).
    @_noAllocation @_noLocks
    public mutating func jump(to value: Float) {
        self.value = value
        target = value
        stepsLeft = 0
    }

    /// Heads for `target` in `steps` steps from the value now (`steps` ≥ 1).
    @_noAllocation @_noLocks
    public mutating func ramp(to target: Float, steps: Int) {
        self.target = target
        stepsLeft = steps
        step = (target - value) / Float(steps)
    }

    /// One step (while `stepsLeft` > 0; call `finish(steps:)` after a run of them).
    @inline(__always) @_noAllocation @_noLocks
    public mutating func next() -> Float {
        value += step
        return value
    }

    /// Counts `steps` steps taken by `next`; at the end the value is the target exactly.
    @inline(__always) @_noAllocation @_noLocks
    public mutating func finish(steps: Int) {
        stepsLeft -= steps
        if stepsLeft == 0 { jump(to: target) }
    }
}
