import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
import MixFX
import TestSupport

/// `mixfx eq-curve`: well-formed SVG whose plotted points are the EQ's measured response.
@Suite struct EQCurveTests {
    let dir = TempDir("mixfx-eqcurve")

    /// The polyline's points mapped back to (Hz, dB) through the plot's data- attributes.
    func plotted(_ svg: String) throws -> [(Double, Double)] {
        func attribute(_ name: String) throws -> Double {
            let r = try #require(svg.range(of: "\(name)=\""))
            return try #require(Double(svg[r.upperBound...].prefix { $0 != "\"" }))
        }
        let fMin = try attribute("data-fmin"), fMax = try attribute("data-fmax")
        let dbMin = try attribute("data-dbmin"), dbMax = try attribute("data-dbmax")
        let left = try attribute("data-left"), top = try attribute("data-top")
        let w = try attribute("data-width"), h = try attribute("data-height")
        let r = try #require(svg.range(of: "id=\"response\""))
        let p = try #require(svg[r.upperBound...].range(of: "points=\""))
        let text = svg[p.upperBound...].prefix { $0 != "\"" }
        return text.split(separator: " ").map { pair in
            let xy = pair.split(separator: ",").map { Double($0)! }
            return (fMin * pow(fMax / fMin, (xy[0] - left) / w), dbMax - (xy[1] - top) / h * (dbMax - dbMin))
        }
    }

    /// The gain the running ShelfEQ gives a sine at `f` (a steady-state measurement).
    func measured(_ settings: ShelfEQSettings, _ f: Double, rate: Double) -> Double {
        var eq = ShelfEQ()
        eq.prepare(ProcessSpec(sampleRate: rate, maximumFrameCount: 96_000, channelCount: 1))
        eq.update(settings)
        var x = Signals.sine(frequencyHz: f, sampleRate: rate, frames: 96_000, amplitude: 0.1)
        let input = x
        x.withUnsafeMutableBufferPointer { eq.process(left: $0.baseAddress!, right: nil, frameCount: 96_000) }
        return Signals.db(Signals.rms(x[48_000...]) / Signals.rms(input[48_000...]))
    }

    @Test func plottedPointsAreTheMeasuredResponse() throws {
        defer { dir.remove() }
        let out = dir.file("c.svg")
        let r = try MixFXBinary.run(["eq-curve", "--bass", "9", "--bass-freq", "120", "--bass-slope", "0.6",
                                     "--treble", "-7", "--treble-freq", "4000", "--eq-gain", "-2", "-o", out])
        #expect(r.status == 0, "\(r.stderr)")
        let svg = try String(contentsOfFile: out, encoding: .utf8)
        #expect(XMLParser(data: Data(svg.utf8)).parse(), "the SVG is not well-formed XML")
        #expect(svg.contains("frequency (Hz)") && svg.contains("gain (dB)") && svg.contains(">1k<") && svg.contains(">20k<"))
        let points = try plotted(svg)
        #expect(points.count == 300 && abs(points.first!.0 - 20) < 0.01 && abs(points.last!.0 - 20_000) < 1)
        let settings = ShelfEQSettings(bass: .init(frequencyHz: 120, gainDB: 9, slope: 0.6),
                                       treble: .init(frequencyHz: 4000, gainDB: -7), globalGainDB: -2)
        for k in stride(from: 10, to: 300, by: 40) {
            let (f, db) = points[k]
            let m = measured(settings, f, rate: 48_000)
            #expect(abs(db - m) < 0.05, "\(f) Hz: plotted \(db) dB, measured \(m) dB")
        }
        // the flat EQ is a line at 0 dB, and an existing file needs --force
        let flat = try plotted(try { () throws -> String in
            #expect(try MixFXBinary.run(["eq-curve", "-o", dir.file("flat.svg")]).status == 0)
            return try String(contentsOfFile: dir.file("flat.svg"), encoding: .utf8)
        }())
        #expect(flat.allSatisfy { abs($0.1) < 0.05 })
        #expect(try MixFXBinary.run(["eq-curve", "-o", out]).status == 2)
        #expect(try MixFXBinary.run(["eq-curve", "-o", dir.file("c.png")]).status == 2)
    }
}
