/// Streaming sample-rate converter between two integer rates, band-limited with a `SincTable`.
///
/// Output frame n is the input interpolated at position n·inRate/outRate (computed exactly in
/// integers, stepped frame by frame so that no product of a position and a rate is formed: it
/// cannot overflow however long the stream), so the output is aligned with the input at sample 0
/// and a finite input of L frames gives exactly ceil(L·outRate/inRate) frames. The caller pushes input with `write` and pulls
/// output with `read`; after `finish()` missing input is taken as silence.
/// `@unchecked Sendable`: it keeps signal state, so one thread at a time (a track's, which an
/// offline render may hand to a worker thread).
public final class Resampler: @unchecked Sendable {
    /// Input frames per second.
    public let inRate: Int
    /// Output frames per second.
    public let outRate: Int
    /// Channels converted together.
    public let channelCount: Int
    /// The most frames one `write` may take.
    public let maxWriteFrames: Int
    private let table: SincTable
    /// The same as a value, for the render side (`SincTable.View`: no reference counting).
    private let tableView: SincTable.View
    private let capacity: Int
    private let buffers: UnsafeMutablePointer<Float>
    private var bufferStart = 0      // absolute input index of buffers[0]
    private var bufferFill = 0       // frames held
    private var outIndex = 0         // next output frame
    // its input position: outIndex·inRate = inIndex·outRate + inRemainder, 0 ≤ inRemainder < outRate
    private var inIndex = 0
    private var inRemainder = 0
    private let stepWhole: Int, stepRemainder: Int   // inRate / outRate, inRate % outRate
    private var inputFrames = 0      // input frames received
    private var finished = false

    /// Allocates for the rate pair (control side); `quality` sets the filter.
    public init(inRate: Int, outRate: Int, channelCount: Int, maxWriteFrames: Int,
                quality: ResamplerQuality = .mastering) {
        precondition(inRate > 0 && outRate > 0 && channelCount > 0)
        self.inRate = inRate
        self.outRate = outRate
        self.channelCount = channelCount
        self.maxWriteFrames = maxWriteFrames
        stepWhole = inRate / outRate
        stepRemainder = inRate % outRate
        table = SincTable(scale: Double(outRate) / Double(inRate), quality: quality)
        tableView = table.view
        capacity = 2 * table.taps + 2 * maxWriteFrames + 16
        buffers = .allocate(capacity: capacity * channelCount)
        reset()
    }

    deinit { buffers.deallocate() }

    /// Frames of input the output lags behind (what a live caller must feed before output flows).
    public var latencyInputFrames: Int { table.rightFrames }

    /// Back to input sample 0, with silence before it. Does not allocate.
    @_noAllocation @_noLocks
    public func reset() {
        buffers.initialize(repeating: 0, count: capacity * channelCount)
        // Left history before sample 0 is silence.
        bufferStart = -tableView.leftFrames
        bufferFill = tableView.leftFrames
        outIndex = 0
        inIndex = 0
        inRemainder = 0
        inputFrames = 0
        finished = false
    }

    /// Output frames a finite input of `inputFrames` frames yields: ceil(inputFrames·outRate /
    /// inRate), the product taken in 128 bits (a long input times a reduced rate pair such as
    /// 44101·9999 → 384000·10000 passes 2^63). The result must fit an Int (any length the
    /// engine accepts does: at most 2^40 frames times a ratio of at most 1536).
    public static func outputFrameCount(inputFrames: Int, inRate: Int, outRate: Int) -> Int {
        resampledFrameCount(inputFrames: inputFrames, inRate: inRate, outRate: outRate)
    }

    /// Appends up to `maxWriteFrames` frames of planar input.
    public func write(_ channels: [UnsafePointer<Float>], frameCount: Int) {
        channels.withUnsafeBufferPointer { p in write(frameCount: frameCount) { c in p[c] } }
    }

    /// Appends `frameCount` frames, channel c read from `channel(c)`.
    @_noAllocation @_noLocks
    public func write(frameCount: Int, channel: (Int) -> UnsafePointer<Float>) {
        let most = maxWriteFrames, open = !finished   // (values: a condition is a closure; see `Owned`)
        precondition(frameCount <= most && open)
        compact()
        for c in 0..<channelCount {
            vcopy(channel(c), into: buffers + c * capacity + bufferFill, frameCount)
        }
        bufferFill += frameCount
        inputFrames += frameCount
    }

    /// No more input: the rest of the output is computed against silence.
    @_noAllocation @_noLocks
    public func finish() {
        guard !finished else { return }
        compact()
        let pad = tableView.rightFrames + 1
        for c in 0..<channelCount { (buffers + c * capacity + bufferFill).update(repeating: 0, count: pad) }
        bufferFill += pad
        finished = true
    }

    /// True once every output frame of a finished input has been read.
    public var isDrained: Bool {
        @_noAllocation @_noLocks get {
            guard finished else { return false }
            return outIndex >= resampledFrameCount(inputFrames: inputFrames, inRate: inRate, outRate: outRate)
        }
    }

    /// Whether `write` is needed before `read` can give another frame.
    public var needsInput: Bool {
        @_noAllocation @_noLocks get {
            guard !finished else { return false }
            return !canProduce()
        }
    }

    @inline(__always)
    private func canProduce() -> Bool {
        if finished {
            return outIndex < resampledFrameCount(inputFrames: inputFrames, inRate: inRate, outRate: outRate)
        }
        return inIndex + tableView.rightFrames < bufferStart + bufferFill
    }

    /// Writes up to `maxFrames` output frames into `output` channels starting at `offset`;
    /// returns how many were written.
    @_noAllocation @_noLocks
    public func read(into output: (Int) -> UnsafeMutablePointer<Float>, offset: Int, maxFrames: Int) -> Int {
        var n = 0
        while n < maxFrames {
            guard canProduce() else { break }   // (no `self` right of `&&`: see `Owned`)
            let frac = Double(inRemainder) / Double(outRate)
            for c in 0..<channelCount {
                let base = buffers + c * capacity
                output(c)[offset + n] = tableView.interpolate(base, index: inIndex - bufferStart, fraction: frac)
            }
            outIndex += 1
            inIndex += stepWhole
            inRemainder += stepRemainder
            if inRemainder >= outRate { inRemainder -= outRate; inIndex += 1 }
            n += 1
        }
        return n
    }

    private func compact() {
        let firstNeeded = inIndex - tableView.leftFrames + 1
        let drop = firstNeeded - bufferStart
        let full = bufferFill + maxWriteFrames + tableView.rightFrames + 2 > capacity   // (values: see `Owned`)
        if drop > 0 && full {
            let keep = bufferFill - drop
            for c in 0..<channelCount {
                let base = buffers + c * capacity
                vcopy(base + drop, into: base, keep)
            }
            bufferStart += drop
            bufferFill = keep
        }
        let fits = bufferFill + maxWriteFrames + tableView.rightFrames + 2 <= capacity
        precondition(fits)
    }
}

/// `Resampler.outputFrameCount`: ceil(inputFrames·outRate / inRate) in 128 bits. (A function:
/// a class's static method takes the class's metadata, which the realtime check refuses.)
@inline(__always)
func resampledFrameCount(inputFrames: Int, inRate: Int, outRate: Int) -> Int {
    precondition(inputFrames >= 0 && inRate > 0 && outRate > 0)
    let product = inputFrames.multipliedFullWidth(by: outRate)
    let (low, carry) = product.low.addingReportingOverflow(UInt(inRate - 1))
    return inRate.dividingFullWidth((product.high + (carry ? 1 : 0), low)).quotient
}
