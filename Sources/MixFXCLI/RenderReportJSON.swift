import Foundation
import MixFX

/// `mixfx render --report FILE.json`: what the render did and what it measured, for each track
/// and for the mix (the shape is `ReportSchema.json`, version 2: version 1 had no `automation`).
enum RenderReportJSON {
    static let version = 2

    /// The report as a JSON object.
    static func object(_ r: RenderReport, session: ResolvedSession, layout: EngineLayout) -> [String: Any] {
        var tracks: [[String: Any]] = []
        for (i, t) in layout.tracks.enumerated() {
            let f = t.player.source.format
            let v = session.tracks[i]
            var settings: [String: Any] = [:]
            for (id, value) in v { settings[id.spec.key] = id.spec.isBoolean ? (value != 0) as Any : value as Any }
            var track: [String: Any] = [
                "track": i + 1, "input": session.inputs[i], "sampleRateHz": f.sampleRate, "channels": f.channelCount,
                "frames": f.frameCount, "resampled": f.sampleRate != layout.sampleRate, "settings": settings,
                "latencyFrames": i < r.trackLatencyFrames.count ? r.trackLatencyFrames[i] : 0,
                "replacedSamples": i < r.trackReplacedSamples.count ? r.trackReplacedSamples[i] : 0,
            ]
            if i < r.trackMeasures.count {
                track["measures"] = measures(r.trackMeasures[i])
                track["history"] = history(r.trackHistories[i])
            }
            tracks.append(track)
        }
        var mix: [String: Any] = ["clippedSamples": r.clippedSamples]
        if let m = r.mixMeasures, let h = r.mixHistory {
            mix["measures"] = measures(m)
            mix["history"] = history(h)
        }
        return [
            "reportVersion": version, "generator": "mixfx",
            "output": ["path": r.outputPath, "container": r.format.container.rawValue,
                       "sampleFormat": r.format.storedSampleFormat?.rawValue ?? "lossy",
                       "sampleRateHz": r.format.sampleRate, "channels": r.format.channelCount,
                       "frames": r.frameCount, "durationSeconds": r.durationSeconds],
            "master": master(r, session: session, layout: layout),
            "tracks": tracks, "mix": mix, "processing": steps(r, session: session, layout: layout),
            "automation": session.lanes.map(AutomationFlags.json),
            "timing": ["elapsedSeconds": r.elapsedSeconds,
                       "speedTimesRealTime": r.speedTimesRealTime.isFinite ? r.speedTimesRealTime : 0],
        ]
    }

    /// Every step applied between the tracks and the file, in order.
    static func steps(_ r: RenderReport, session: ResolvedSession, layout: EngineLayout) -> [[String: Any]] {
        var out: [[String: Any]] = []
        // per track, in signal order: placement, downmix, speed, rate conversion, tempo
        for (i, t) in layout.tracks.enumerated() {
            let f = t.player.source.format, p = t.player.placement
            if !p.isNeutral {
                out.append(["step": "place", "track": i + 1, "startSeconds": p.startSeconds, "trimInSeconds": p.trimInSeconds,
                            "trimOutSeconds": p.trimOutSeconds, "fadeInSeconds": p.fadeInSeconds, "fadeOutSeconds": p.fadeOutSeconds])
            }
            if f.channelCount > 2 || (f.channelCount == 2 && layout.channelCount == 1) {
                out.append(["step": "downmix", "track": i + 1, "fromLayout": f.channelLayout.speakerList,
                            "layoutDeclared": f.channelLayout.isDeclared, "toChannels": layout.channelCount,
                            "lfeGainDB": jsonNumber(layout.lfeGainDB)])
            }
            let speed = t.player.speedParameter.clampedValue
            if speed != 1 { out.append(["step": "speed", "track": i + 1, "ratio": speed]) }
            if f.sampleRate != layout.sampleRate {
                out.append(["step": "resample", "track": i + 1, "fromHz": f.sampleRate, "toHz": layout.sampleRate])
            }
            if t.tempo != 1 { out.append(["step": "tempo", "track": i + 1, "ratio": t.tempo]) }
        }
        out.append(["step": "mix", "tracks": layout.tracks.count, "masterVolume": session.masterVolume])
        if let measured = r.measuredLUFS {
            out.append(["step": "normalize", "measuredLUFS": measured, "targetLUFS": jsonNumber(r.integratedLUFS),
                        "gainDB": r.appliedGainDB])
        } else if r.appliedGainDB != 0 {
            out.append(["step": "clipGain", "gainDB": r.appliedGainDB, "mixPeakDBFS": 20 * log10(Double(r.mixPeak)),
                        "truePeakDBTP": jsonNumber(r.truePeakDBTP), "renderedTwice": r.renderedTwice])
        }
        if let ceiling = r.limiterCeilingDBTP {
            out.append(["step": "limiter", "ceilingDBTP": ceiling, "maximumGainReductionDB": r.limiterMaximumReductionDB,
                        "secondsLimited": Double(r.limiterFramesLimited) / Double(r.format.sampleRate)])
        }
        if r.ditherApplied { out.append(["step": "dither", "kind": DitherMode.tpdf.rawValue]) }
        if let sf = r.format.storedSampleFormat {
            out.append(["step": "convert", "sampleFormat": sf.rawValue, "clipPolicy": sf.isInteger ? r.clipPolicy.rawValue : "none",
                        "clippedSamples": r.clippedSamples])
        } else {
            out.append(["step": "encode", "container": r.format.container.rawValue])
        }
        return out
    }

    /// Why the whole mix was given one gain after the limiter: `none`, `clipping` (the no-clip
    /// gain of `ClipPolicy.avoid`) or `normalize` (`--normalize`).
    static func gainReason(_ r: RenderReport) -> String {
        r.measuredLUFS != nil ? "normalize" : r.appliedGainDB != 0 ? "clipping" : "none"
    }

    /// What the render applied on the master bus and at the output, as the renderer and the
    /// engine took it: the mixer's volume, the loudness target, the limiter, the clipping
    /// policy, the dither asked for and whether it was applied, the gain given to the whole mix
    /// and the LFE's gain in downmixes.
    static func master(_ r: RenderReport, session: ResolvedSession, layout: EngineLayout) -> [String: Any] {
        ["volume": layout.mixer.outputVolumeParameter.clampedValue, "normalizeLUFS": jsonNumber(session.normalizeLUFS),
         "limitDBTP": jsonNumber(r.limiterCeilingDBTP), "clipPolicy": r.clipPolicy.rawValue,
         "dither": session.dither.rawValue, "ditherApplied": r.ditherApplied,
         "gainDB": r.appliedGainDB, "gainReason": gainReason(r), "lfeGainDB": jsonNumber(layout.lfeGainDB)]
    }

    static func measures(_ a: AudioAnalysis) -> [String: Any] {
        ["integratedLUFS": jsonNumber(a.integratedLUFS), "loudnessRangeLU": a.loudnessRangeLU,
         "momentaryMaxLUFS": jsonNumber(a.momentaryMaxLUFS), "shortTermMaxLUFS": jsonNumber(a.shortTermMaxLUFS),
         "truePeakDBTP": jsonNumber(a.truePeakDBTP), "samplePeakDBFS": jsonNumber(a.samplePeakDBFS),
         "samplesAtFullScale": a.samplesAtFullScale, "dcOffset": a.dcOffset,
         "correlation": jsonNumber(a.correlation), "monoSumLossDB": jsonNumber(a.monoSumLossDB)]
    }

    /// Series rounded to what a plot shows (0.01 dB, 1e-5 of full scale), so a minute of five
    /// series is about 100 KB.
    static func history(_ h: AnalysisHistory) -> [String: Any] {
        func db(_ v: [Double]) -> [Any] { v.map { $0.isFinite ? ($0 * 100).rounded() / 100 as Any : NSNull() } }
        func lin(_ v: [Float]) -> [Double] { v.map { (Double($0) * 1e5).rounded() / 1e5 } }
        return ["stepSeconds": h.stepSeconds, "minimum": lin(h.minimum), "maximum": lin(h.maximum),
                "truePeakDBTP": db(h.truePeakDBTP), "shortTermLUFS": db(h.shortTermLUFS)]
    }
}
