import Foundation
import MixFXDSP
import MixFXEngine
import MixFXFiles

/// The mix as raw interleaved 32-bit floats in a file with no name: created beside the output and
/// unlinked at once, so it takes disk space only while it is open and nothing of it can outlive
/// the render (an error, a signal, even SIGKILL). Memory stays flat in the session's length.
///
/// Used when the render must see the whole mix before it can convert it (a gain that avoids
/// clipping, loudness normalisation). One thread at a time.
final class SpillFile {
    let channelCount: Int
    /// The output the spill belongs to, for messages.
    let reportedPath: String
    private var fd: Int32
    private var scratch: [Float] = []
    /// Frames written so far.
    private(set) var frameCount = 0

    /// Creates the file in `directory` (control side; `UnnamedFile`).
    init(directory: String, channelCount: Int, reportedPath: String) throws(SoundFileError) {
        self.channelCount = channelCount
        self.reportedPath = reportedPath
        switch UnnamedFile.create(in: directory) {
        case .success(let f): fd = f
        case .failure(let e): throw .cannotCreate(path: reportedPath, reason: "cannot make the temporary mix beside it: \(e.reason)")
        }
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Closes the file on a `SideThread` (the file can no longer be used). The kernel frees its
    /// cached pages in that `close`: 21 MB, 2–3.5 ms, for the benchmark's minute of stereo, which
    /// then overlap the output's final rename instead of following it. Where no thread can be
    /// had it closes here and returns nil; nil too if it was closed already.
    func closeConcurrently() -> SideThread? {
        guard fd >= 0 else { return nil }
        let f = fd
        fd = -1
        guard let side = SideThread.start({ close(f) }) else {
            close(f)
            return nil
        }
        return side
    }

    /// Appends `frames` frames of planar `buffer`.
    func append(_ buffer: AudioBuffer, frameCount frames: Int) throws(SoundFileError) {
        let n = frames * channelCount
        if scratch.count < n { scratch = [Float](repeating: 0, count: n) }
        let ch = channelCount
        let failure: Int32? = scratch.withUnsafeMutableBufferPointer { s in
            buffer.interleave(channels: ch, frameCount: frames, into: s.baseAddress!)
            var done = 0
            let bytes = n * 4
            let raw = UnsafeRawPointer(s.baseAddress!)
            while done < bytes {
                let w = write(fd, raw + done, bytes - done)
                if w < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                done += w
            }
            return nil
        }
        if let failure {
            throw .writeFailed(path: reportedPath, reason: SoundFileWriter.explain(String(cString: strerror(failure))) + " (while keeping the mix to measure it)")
        }
        frameCount += frames
    }

    /// Frames `first ..< first + frameCount` into planar `buffer`, read at their place (`pread`:
    /// any thread, beside others, each with its own `scratch` of frameCount·channelCount
    /// values); returns the frames read (fewer at the end).
    func read(frames first: Int, count frameCount: Int, into buffer: AudioBuffer,
              scratch: UnsafeMutablePointer<Float>) throws(SoundFileError) -> Int {
        let ch = channelCount
        let want = frameCount * ch * 4
        let base = off_t(first * ch * 4)
        var done = 0
        while done < want {
            let r = pread(fd, UnsafeMutableRawPointer(scratch) + done, want - done, base + off_t(done))
            if r < 0 && errno == EINTR { continue }
            if r < 0 {
                throw .readFailed(path: reportedPath, reason: String(cString: strerror(errno)) + " (reading back the kept mix)")
            }
            if r == 0 { break }
            done += r
        }
        let frames = done / (4 * ch)
        buffer.deinterleave(from: scratch, channels: ch, frameCount: frames)
        return frames
    }

    /// Back to the first frame, for reading.
    func rewind() { lseek(fd, 0, SEEK_SET) }

    /// Reads up to `maxFrames` frames into planar `buffer`; returns the frames read (0 at the end).
    func read(into buffer: AudioBuffer, maxFrames: Int) throws(SoundFileError) -> Int {
        let n = maxFrames * channelCount
        if scratch.count < n { scratch = [Float](repeating: 0, count: n) }
        let ch = channelCount
        let got: Int = scratch.withUnsafeMutableBufferPointer { s in
            var done = 0
            let want = n * 4
            let raw = UnsafeMutableRawPointer(s.baseAddress!)
            while done < want {
                let r = Foundation.read(fd, raw + done, want - done)
                if r < 0 && errno == EINTR { continue }
                if r <= 0 { break }
                done += r
            }
            let frames = done / (4 * ch)
            buffer.deinterleave(from: s.baseAddress!, channels: ch, frameCount: frames)
            return frames
        }
        return got
    }
}
