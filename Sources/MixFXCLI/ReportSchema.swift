import MixFX

/// The JSON Schema (draft 2020-12) of `mixfx render --report FILE.json`, version 2 (version 1
/// had no `automation`): printed by
/// `mixfx render --report-schema`, checked by the tests against real reports. The output's sample
/// formats, rates and channels are the session-option registry's (`SessionOption.spec`).
enum ReportSchema {
    /// A JSON array of strings: ["s16", "s24"].
    static func list(_ items: [String]) -> String { "[" + items.map { "\"\($0)\"" }.joined(separator: ", ") + "]" }

    /// A whole-number option's schema: {"type": "integer", "minimum": 1, "maximum": 2}.
    static func range(_ option: SessionOption) -> String {
        let spec = option.spec
        return #"{"type": "integer", "minimum": \#(Int(spec.minimum)), "maximum": \#(Int(spec.maximum))}"#
    }

    /// A number option's schema: {"type": "number", "minimum": 0, "maximum": 16}.
    static func number(_ option: SessionOption) -> String {
        let spec = option.spec
        return #"{"type": "number", "minimum": \#(spec.minimum), "maximum": \#(spec.maximum)}"#
    }

    /// The schema of a track's settings: every track parameter of the registry by its key
    /// (switches as booleans, the rest as numbers within their range).
    static var settings: String {
        let ids = ParameterID.trackParameters
        let properties = ids.map { id -> String in
            let spec = id.spec
            let type = spec.isBoolean ? #"{"type": "boolean""#
                : #"{"type": "number", "\#(spec.minimumExcluded ? "exclusiveMinimum" : "minimum")": \#(spec.minimum), "maximum": \#(spec.maximum)"#
            return #""\#(spec.key)": \#(type), "description": "\#(spec.summary)\#(spec.unit.isEmpty ? "" : ", " + spec.unit)"}"#
        }
        return #"{"type": "object", "description": "Every setting the track was rendered with, by its key (the flag without --).", "required": \#(list(ids.map(\.spec.key))), "additionalProperties": false, "properties": {\#(properties.joined(separator: ", "))}}"#
    }

    static let json = #"""
    {
      "$schema": "https://json-schema.org/draft/2020-12/schema",
      "$id": "mixfx-render-report-2",
      "title": "mixfx render report, version 2",
      "description": "What one `mixfx render` did and measured. Levels: LUFS (ITU-R BS.1770-4), LU (EBU Tech 3342), dBTP (4x oversampled true peak), dBFS. null stands for minus infinity (silence) or a measure that does not apply.",
      "type": "object",
      "required": ["reportVersion", "generator", "output", "master", "tracks", "mix", "processing", "timing", "automation"],
      "additionalProperties": false,
      "properties": {
        "reportVersion": {"const": 2},
        "automation": {
          "type": "array",
          "description": "The automation lanes the render applied (--automate, --pitchmap, the preset's), each on one track or on the master; empty when none.",
          "items": {
            "type": "object",
            "required": ["parameter", "unit", "breakpoints", "minimum", "maximum"],
            "additionalProperties": false,
            "properties": {
              "track": {"type": "integer", "minimum": 1, "description": "The track (from 1); absent for the master's parameters."},
              "parameter": {"enum": \#(list(ParameterID.automatable.map(\.spec.key)))},
              "unit": {"type": "string"},
              "minimum": {"type": "number", "description": "The lane's smallest breakpoint value."},
              "maximum": {"type": "number", "description": "The lane's largest breakpoint value."},
              "breakpoints": {
                "type": "array", "minItems": 1,
                "items": {
                  "type": "object",
                  "required": ["seconds", "value"],
                  "additionalProperties": false,
                  "properties": {
                    "seconds": {"type": "number", "minimum": 0, "description": "On the mix's timeline."},
                    "value": {"type": "number", "description": "In the parameter's unit."},
                    "curve": {"enum": \#(list(AutomationCurve.allCases.map(\.rawValue))), "description": "The curve to the next breakpoint (absent on the last)."}
                  }
                }
              }
            }
          }
        },
        "generator": {"const": "mixfx"},
        "output": {
          "type": "object",
          "required": ["path", "container", "sampleFormat", "sampleRateHz", "channels", "frames", "durationSeconds"],
          "additionalProperties": false,
          "properties": {
            "path": {"type": "string"},
            "container": {"enum": \#(list(Container.allCases.map(\.rawValue)))},
            "sampleFormat": {"enum": \#(list(SessionOption.sampleFormat.spec.choices + ["lossy"]))},
            "sampleRateHz": \#(range(.sampleRateHz)),
            "channels": \#(range(.channels)),
            "frames": {"type": "integer", "minimum": 0},
            "durationSeconds": {"type": "number", "minimum": 0}
          }
        },
        "master": {
          "type": "object",
          "description": "What was applied on the master bus and at the output (the output's format is in output).",
          "required": ["volume", "normalizeLUFS", "limitDBTP", "clipPolicy", "dither", "ditherApplied", "gainDB", "gainReason", "lfeGainDB"],
          "additionalProperties": false,
          "properties": {
            "volume": \#(number(.masterVolume)),
            "normalizeLUFS": {"type": ["number", "null"], "description": "The loudness target, LUFS; null: none."},
            "limitDBTP": {"type": ["number", "null"], "description": "The limiter's ceiling, dBTP; null: no limiter."},
            "clipPolicy": {"enum": \#(list(SessionOption.clipping.spec.choices))},
            "dither": {"enum": \#(list(SessionOption.dither.spec.choices)), "description": "The dither asked for; ditherApplied: whether the written samples were dithered."},
            "ditherApplied": {"type": "boolean"},
            "gainDB": {"type": "number", "description": "The one gain given to the whole mix after the limiter, dB (0: none). The tracks' measures are taken before it (and before the limiter), the mix's after."},
            "gainReason": {"enum": ["none", "clipping", "normalize"], "description": "clipping: the mix would have clipped (clipPolicy avoid); normalize: the loudness target."},
            "lfeGainDB": {"type": ["number", "null"], "description": "The LFE's gain in downmixed tracks, dB; null: dropped."}
          }
        },
        "tracks": {
          "type": "array",
          "minItems": 1,
          "items": {
            "type": "object",
            "required": ["track", "input", "sampleRateHz", "channels", "frames", "resampled", "settings", "latencyFrames", "replacedSamples", "measures", "history"],
            "additionalProperties": false,
            "properties": {
              "track": {"type": "integer", "minimum": 1},
              "input": {"type": "string"},
              "sampleRateHz": {"type": "integer", "minimum": 1000},
              "channels": {"type": "integer", "minimum": 1},
              "frames": {"type": "integer", "minimum": 0},
              "resampled": {"type": "boolean"},
              "settings": \#(settings),
              "latencyFrames": {"type": "integer", "minimum": 0},
              "replacedSamples": {"type": "integer", "minimum": 0},
              "measures": {"$ref": "#/$defs/measures"},
              "history": {"$ref": "#/$defs/history"}
            }
          }
        },
        "mix": {
          "type": "object",
          "required": ["clippedSamples", "measures", "history"],
          "additionalProperties": false,
          "properties": {
            "clippedSamples": {"type": "integer", "minimum": 0},
            "measures": {"$ref": "#/$defs/measures"},
            "history": {"$ref": "#/$defs/history"}
          }
        },
        "processing": {
          "type": "array",
          "items": {
            "type": "object",
            "required": ["step"],
            "properties": {
              "step": {"enum": ["place", "downmix", "speed", "resample", "tempo", "mix", "normalize", "clipGain", "limiter", "dither", "convert", "encode"]}
            }
          }
        },
        "timing": {
          "type": "object",
          "required": ["elapsedSeconds", "speedTimesRealTime"],
          "additionalProperties": false,
          "properties": {
            "elapsedSeconds": {"type": "number", "minimum": 0},
            "speedTimesRealTime": {"type": "number", "minimum": 0}
          }
        }
      },
      "$defs": {
        "level": {"type": ["number", "null"]},
        "measures": {
          "type": "object",
          "required": ["integratedLUFS", "loudnessRangeLU", "momentaryMaxLUFS", "shortTermMaxLUFS", "truePeakDBTP", "samplePeakDBFS", "samplesAtFullScale", "dcOffset", "correlation", "monoSumLossDB"],
          "additionalProperties": false,
          "properties": {
            "integratedLUFS": {"$ref": "#/$defs/level"},
            "loudnessRangeLU": {"type": "number", "minimum": 0},
            "momentaryMaxLUFS": {"$ref": "#/$defs/level"},
            "shortTermMaxLUFS": {"$ref": "#/$defs/level"},
            "truePeakDBTP": {"$ref": "#/$defs/level"},
            "samplePeakDBFS": {"$ref": "#/$defs/level"},
            "samplesAtFullScale": {"type": "integer", "minimum": 0},
            "dcOffset": {"type": "array", "items": {"type": "number"}, "minItems": 1},
            "correlation": {"type": ["number", "null"], "minimum": -1.000001, "maximum": 1.000001},
            "monoSumLossDB": {"type": ["number", "null"]}
          }
        },
        "history": {
          "type": "object",
          "required": ["stepSeconds", "minimum", "maximum", "truePeakDBTP", "shortTermLUFS"],
          "additionalProperties": false,
          "properties": {
            "stepSeconds": {"type": "number", "exclusiveMinimum": 0, "description": "Seconds per point, value k at the end of (k + 1) steps: the loudness meter's 100 ms, doubled each time the series were merged to stay within 4096 points (neighbours in pairs: the smaller minimum, the larger maximum and true peak, the mean energy of the short-term loudness). The last point may cover less than a step."},
            "minimum": {"type": "array", "items": {"type": "number"}, "maxItems": 4096},
            "maximum": {"type": "array", "items": {"type": "number"}, "maxItems": 4096},
            "truePeakDBTP": {"type": "array", "items": {"$ref": "#/$defs/level"}, "maxItems": 4096},
            "shortTermLUFS": {"type": "array", "items": {"$ref": "#/$defs/level"}, "maxItems": 4096}
          }
        }
      }
    }
    """#
}
