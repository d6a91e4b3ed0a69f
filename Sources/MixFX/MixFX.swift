// The umbrella module for embedders: `import MixFX` brings the DSP processors, the engine and its
// nodes, file I/O with the offline renderer, and presets.
@_exported import MixFXDSP
@_exported import MixFXEngine
@_exported import MixFXFiles
@_exported import MixFXIO
@_exported import MixFXPresets
