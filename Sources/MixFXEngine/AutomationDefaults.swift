extension AutomationScale {
    /// The curve a breakpoint takes when none is given (the CLI's `--automate`, a preset's lane):
    /// `db` for gains (levels in dB and linear gains: equal steps in dB per second), `exp` for
    /// positive quantities heard on a log scale (corners, slopes, tempo: equal ratios per
    /// second), `step` for the switches (mute, solo), `linear` for the rest (pan, cents).
    public var defaultCurve: AutomationCurve {
        switch self {
        case .decibels, .linearGain: .db
        case .positive: .exp
        case .linear: .linear
        case .onOff: .step
        }
    }
}

extension ParameterID {
    /// The parameters that take automation lanes, in the registry's order.
    public static var automatable: [ParameterID] { allCases.filter { $0.spec.automation != nil } }

    /// Whether the parameter is the master bus's (the main mixer's or its limiter's), not a
    /// track's.
    public var isMaster: Bool { spec.node == nil }
}
