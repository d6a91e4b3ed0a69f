/// Hands out a shifter's scratch buffers from one block of memory (a `PitchShifterWorkspace`),
/// each 64-byte aligned, in the order they are taken. The same walk measures the block: a
/// carver without a base only counts (`byteCount`), and the pointers it hands out then point
/// into the lowest page of the address space, where any use traps.
///
/// Each part takes its buffers in `bindScratch(_:)`, in a fixed order, so measuring and binding
/// agree by construction.
struct ScratchCarver {
    private let base: UnsafeMutableRawPointer?
    /// Bytes handed out so far.
    private(set) var byteCount = 0

    /// A carver of the memory at `base` (64-byte aligned), or, without one, a counter.
    init(_ base: UnsafeMutableRawPointer?) { self.base = base }

    /// The next `count` values of `T`, 64-byte aligned.
    mutating func take<T>(_: T.Type, _ count: Int) -> UnsafeMutablePointer<T> {
        let offset = (byteCount + 63) & ~63
        byteCount = offset + max(0, count) * MemoryLayout<T>.stride
        guard let base else { return UnsafeMutablePointer(bitPattern: 64)! }
        return (base + offset).bindMemory(to: T.self, capacity: max(0, count))
    }
}
