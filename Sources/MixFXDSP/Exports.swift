// The types both compiled copies of the DSP kernels share (ProcessSpec, PitchShifterSettings,
// PitchShifting): whoever imports MixFXDSP sees them.
@_exported import MixFXDSPTypes

/// The engine holds a shifter as `any PitchShifting` (either copy's; see the protocol).
extension PitchShifter: PitchShifting {}
