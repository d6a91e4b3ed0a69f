// swift-tools-version: 6.0
// mixfx: an audio effects engine and mixer CLI. Layers are targets; each imports only layers below.
//
//   MixFXDSPTypes what the DSP copies share: ProcessSpec, PitchShifterSettings, PitchShifting
//   MixFXDSP      pure maths: Biquad, ShelfEQ, FFT, Resampler, PitchShifter (no Foundation);
//                 MixFXDSPAVX2 is the same sources built for AVX2/FMA CPUs (see DSPCopy)
//   MixFXEngine   parameters, nodes, graph, validation, the render kernel
//   MixFXFiles    how mixfx touches the file system: identity, exclusive creation, safe reads
//   MixFXIO       libsndfile files, offline renderer
//   MixFXPresets  JSON presets: schema, validation, session building
//   MixFX         umbrella module for embedders (`import MixFX`)
//   MixFXCLI      the `mixfx` commands; `mixfx` is a three-line main.swift
//   MixFXC        the C API (`mixfx.h` in CMixFX, built as libmixfx-c.so with soname libmixfx.so.0)
//   MixFXLV2      the LV2 plugin (libmixfx_lv2.so; scripts/lv2-bundle.sh makes mixfx.lv2 of it),
//                 over CLV2, the LV2 core ABI declared here (no lv2-dev needed to build)
import PackageDescription

let package = Package(
    name: "mixfx",
    products: [
        .library(name: "MixFX", targets: ["MixFX"]),
        .executable(name: "mixfx", targets: ["mixfx"]),
        // The C API. Product names are unique and `mixfx` is the executable's, so the file built
        // is .build/<config>/libmixfx-c.so; it carries the soname libmixfx.so.0, the name it is
        // installed under (scripts/capi-install.sh lays out lib/ and include/).
        .library(name: "mixfx-c", type: .dynamic, targets: ["MixFXC"]),
        .library(name: "mixfx_lv2", type: .dynamic, targets: ["MixFXLV2"]),
    ],
    targets: [
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .target(name: "MixFXDSPTypes"),
        .target(name: "MixFXDSP", dependencies: ["MixFXDSPTypes"]),
        // The same kernels again for AVX2/FMA-class CPUs (a committed symlink to MixFXDSP); the
        // engine picks one copy at run time (`DSPCopy`). Unsafe flags are accepted for root
        // packages and for dependencies by path or branch.
        .target(name: "MixFXDSPAVX2", dependencies: ["MixFXDSPTypes"], path: "Sources/MixFXDSPAVX2",
                swiftSettings: [.unsafeFlags(["-target-cpu", "haswell"]), .define("MIXFX_WIDE_VECTORS")]),
        .target(name: "CPUFeatures"),
        .target(name: "CFileIO"),
        .target(name: "MixFXEngine", dependencies: ["MixFXDSP", "MixFXDSPAVX2", "CPUFeatures"]),
        .target(name: "MixFXFiles", dependencies: ["CFileIO"]),
        .target(name: "MixFXIO", dependencies: ["MixFXEngine", "MixFXFiles", "CSndFile", "CALSA", "CFileIO"]),
        .target(name: "MixFXPresets", dependencies: ["MixFXEngine", "MixFXFiles"]),
        .target(name: "MixFX", dependencies: ["MixFXDSP", "MixFXEngine", "MixFXFiles", "MixFXIO", "MixFXPresets"]),
        .target(name: "MixFXCLI", dependencies: ["MixFX", "CFileIO"]),
        .executableTarget(name: "mixfx", dependencies: ["MixFXCLI"]),
        // mixfx.h and the thread's last error message (C); the Swift target implements the rest
        .target(name: "CMixFX"),
        .target(name: "MixFXC", dependencies: ["CMixFX", "MixFX", "MixFXCLI"],
                linkerSettings: [.unsafeFlags(["-Xlinker", "-soname=libmixfx.so.0"])]),
        .target(name: "CLV2"),
        // The plugin library carries the Swift runtime inside (-static-stdlib): a host is a C
        // program on a machine that may have no Swift; the runtime's symbols stay hidden, and
        // -Bsymbolic binds the library's own calls to itself, so nothing in the host's process
        // (another Swift plugin, a Swift host) can stand in for them. `lv2_descriptor` is the
        // host's entry.
        .target(name: "MixFXLV2", dependencies: ["MixFXEngine", "CLV2"], exclude: ["bundle"],
                linkerSettings: [.unsafeFlags(["-static-stdlib", "-Xlinker", "-Bsymbolic",
                                               // only lv2_descriptor is exported (lv2lint's "Plugin Symbols")
                                               "-Xlinker", "--version-script=Sources/MixFXLV2/bundle/exports.map"])]),
        .executableTarget(name: "RenderSession", dependencies: ["MixFX"], path: "Examples/RenderSession"),
        .executableTarget(name: "LivePlayback", dependencies: ["MixFX"], path: "Examples/LivePlayback"),
        .executableTarget(name: "mixfx-bench", dependencies: ["MixFX", "MixFXDSP", "MixFXDSPAVX2", "TestSupport"],
                          path: "Benchmarks/MixFXBench"),
        .executableTarget(name: "mixfx-demo-gen", dependencies: ["MixFXIO"], path: "Demo/Generator"),
        .executableTarget(name: "mixfx-fuzz", dependencies: ["MixFXCLI", "MixFX"], path: "Fuzz/MixFXFuzz"),
        .target(name: "TestSupport", dependencies: ["MixFX"], path: "Tests/TestSupport"),
        .testTarget(name: "MixFXDSPTests", dependencies: ["MixFXDSP", "TestSupport"]),
        .testTarget(name: "MixFXEngineTests", dependencies: ["MixFX", "TestSupport"]),
        .testTarget(name: "MixFXIOTests", dependencies: ["MixFX", "TestSupport"]),
        .testTarget(name: "MixFXCLITests", dependencies: ["MixFXCLI", "TestSupport"]),
        .testTarget(name: "MixFXCTests", dependencies: ["MixFXC", "TestSupport"]),
        // (the plugin is tested as hosts load it: the built library, dlopen'ed or in a bundle)
        .testTarget(name: "MixFXLV2Tests", dependencies: ["CLV2", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
