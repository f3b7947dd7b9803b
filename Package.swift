// swift-tools-version:6.0
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("MemberImportVisibility"),
]

// The libraries' and tests' package dependencies, then those only the benchmark uses.
let libraryDependencies: [Package.Dependency] = [
    .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
    .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    // Tests only: the metrics reporter's exposition, end to end.
    .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
]
let benchmarkDependencies: [Package.Dependency] = [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
]

let package = Package(
    name: "Bolts",
    products: [
        .library(name: "Bolts", targets: ["Bolts"]),
        .library(name: "BoltsAppLinks", targets: ["BoltsAppLinks"]),
        .library(name: "BoltsAppLinksNIO", targets: ["BoltsAppLinksNIO"]),
        .library(name: "BoltsNIO", targets: ["BoltsNIO"]),
        .library(name: "BoltsServer", targets: ["BoltsServer"]),
    ],
    dependencies: libraryDependencies + benchmarkDependencies,
    targets: [
        .systemLibrary(
            name: "CURCU",
            path: "CSupport/CURCU",
            pkgConfig: "liburcu-memb",
            providers: [.apt(["liburcu-dev"])]
        ),
        .target(
            name: "CBoltsRuntime",
            dependencies: ["CURCU"],
            path: "CSupport/CBoltsRuntime",
            linkerSettings: [
                .linkedLibrary("urcu-memb"),
                .linkedLibrary("urcu-common"),
                .linkedLibrary("urcu-cds"),
                .linkedLibrary("pthread"),
            ]
        ),
        // The C core's tunable constants and test hooks: not API, so not in CBoltsRuntime's
        // public headers; Bolts imports it `internal`, the tests directly.
        .systemLibrary(
            name: "CBoltsTuning",
            path: "CSupport/CBoltsTuning"
        ),
        .target(
            name: "Bolts",
            dependencies: ["CBoltsRuntime", "CBoltsTuning"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "BoltsAppLinks",
            dependencies: ["Bolts"],
            swiftSettings: swiftSettings
        ),
        // An App Links fetcher that connects only to the addresses the egress policy checked, on
        // SwiftNIO and SwiftNIO SSL. A module of its own so that `BoltsAppLinks` keeps no package
        // dependency (and BoringSSL is built only for those who use it).
        .target(
            name: "BoltsAppLinksNIO",
            dependencies: [
                "Bolts",
                "BoltsAppLinks",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "BoltsNIO",
            dependencies: [
                "Bolts",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The pool in a Swift server: metrics through swift-metrics, unobserved task errors
        // through swift-log, the pool as a swift-service-lifecycle service. A module of its
        // own so that `Bolts` keeps no package dependency.
        .target(
            name: "BoltsServer",
            dependencies: [
                "Bolts",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CBenchmarkSupport",
            path: "Benchmarks/CBenchmarkSupport"
        ),
        // The benchmark's statistics (intervals, verdicts), apart so that a test can check them.
        .target(
            name: "BenchmarkStatistics",
            path: "Benchmarks/Statistics",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "Benchmarks",
            dependencies: [
                "Bolts",
                "BoltsNIO",
                "CBoltsRuntime",
                "CBenchmarkSupport",
                "BenchmarkStatistics",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            path: "Benchmarks",
            exclude: ["CBenchmarkSupport", "Statistics", "RESULTS.md", "METHODOLOGY.md", "results", "Tools", "HummingbirdServer", "VaporServer", "ServerSupport"],
            swiftSettings: swiftSettings
        ),
        // The helpers several test targets share (waits, counters, recorders, lifetime
        // trackers, thread runners): one definition each. A plain target, in no product.
        .target(
            name: "BoltsTestSupport",
            dependencies: ["Bolts"],
            path: "Tests/BoltsTestSupport",
            swiftSettings: swiftSettings
        ),
        // The App Links test targets' shared helpers (a loopback HTTP server, outcome and page
        // helpers, a stub host resolver). A plain target, in no product, like BoltsTestSupport.
        .target(
            name: "BoltsAppLinksTestSupport",
            dependencies: ["BoltsAppLinks", "Bolts", "BoltsTestSupport"],
            path: "Tests/BoltsAppLinksTestSupport",
            swiftSettings: swiftSettings
        ),
        // The README's Swift blocks, one program each, every file the block verbatim (the
        // README check in BoltsTests/Integration/ReadmeExampleTests.swift says how): built by
        // `swift test`, so a block that stops compiling fails the build. The test targets that
        // run one depend on it. Compiled as a new package compiles them: Swift 6 language mode,
        // no upcoming feature (with `MemberImportVisibility`, the server example's `.sigterm`
        // would need `import UnixSignals` too).
        .executableTarget(
            name: "ReadmeExample",
            dependencies: ["Bolts"],
            path: "Tests/ReadmeExamples/ReadmeExample"
        ),
        .executableTarget(
            name: "ReadmeGlobalExecutorExample",
            dependencies: ["Bolts"],
            path: "Tests/ReadmeExamples/ReadmeGlobalExecutorExample"
        ),
        .executableTarget(
            name: "ReadmeServerExample",
            dependencies: [
                "Bolts", "BoltsServer",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/ReadmeExamples/ReadmeServerExample"
        ),
        .executableTarget(
            name: "ReadmeAppLinksExample",
            dependencies: ["BoltsAppLinks", "BoltsAppLinksNIO"],
            path: "Tests/ReadmeExamples/ReadmeAppLinksExample"
        ),
        .testTarget(
            name: "BoltsTests",
            dependencies: ["Bolts", "CBoltsRuntime", "CBoltsTuning", "BoltsTestSupport", "ReadmeExample", "StallReportChecks"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "GlobalExecutorChecks",
            dependencies: ["Bolts", "BoltsTestSupport"],
            path: "Tests/GlobalExecutorChecks",
            swiftSettings: swiftSettings
        ),
        // The stall reports end to end (DESIGN.md §5's names alone), run by BoltsTests in a
        // child process: one mode installs the pool as the global executor.
        .executableTarget(
            name: "StallReportChecks",
            dependencies: ["Bolts"],
            path: "Tests/StallReportChecks",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "GlobalExecutorAsyncMainChecks",
            dependencies: ["Bolts", "BoltsTestSupport"],
            path: "Tests/GlobalExecutorAsyncMainChecks",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GlobalExecutorTests",
            dependencies: [
                "GlobalExecutorChecks", "GlobalExecutorAsyncMainChecks", "ReadmeGlobalExecutorExample",
                "CGlobalExecutorSwitch", "BoltsTestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CGlobalExecutorSwitch",
            dependencies: ["CBoltsRuntime"],
            path: "Tests/CGlobalExecutorSwitch"
        ),
        .testTarget(
            name: "BenchmarkStatisticsTests",
            dependencies: ["BenchmarkStatistics"],
            swiftSettings: swiftSettings
        ),
        // The harness's own decisions (stopping, pairing, run-wide A/A intervals, baselines,
        // goals), tested through the benchmark executable's module.
        .testTarget(
            name: "BenchmarkHarnessTests",
            dependencies: ["Benchmarks", "BenchmarkStatistics"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "BoltsAppLinksTests",
            dependencies: ["BoltsAppLinks", "Bolts", "BoltsTestSupport", "BoltsAppLinksTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "BoltsAppLinksNIOTests",
            dependencies: [
                "BoltsAppLinksNIO", "BoltsAppLinks", "Bolts", "BoltsTestSupport", "BoltsAppLinksTestSupport",
                "ReadmeAppLinksExample",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            // The TLS certificates and keys (test-only) are read from the source tree.
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "BoltsNIOTests",
            dependencies: [
                "BoltsNIO", "Bolts", "BoltsTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "BoltsServerTests",
            dependencies: [
                "BoltsServer", "Bolts", "BoltsNIO", "BoltsTestSupport", "ReadmeServerExample",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)

// `BOLTS_PACKAGE_SCOPE` narrows the package for CI's sanitizer stages, so that they do not
// compile what they do not run. `core`: the task runtime and its own tests (no package
// dependency, no NIO, no benchmark), for the AddressSanitizer stage. `tests`: every library
// and test target, without the benchmark executable, its harness's tests and the packages
// only it uses, for the ThreadSanitizer stage. Nothing else reads it; without it the package
// is the one declared above.
switch Context.environment["BOLTS_PACKAGE_SCOPE"] {
case "core":
    let core: Set<String> = [
        "CURCU", "CBoltsRuntime", "CBoltsTuning", "Bolts", "BoltsTestSupport", "BoltsTests",
        "GlobalExecutorChecks", "GlobalExecutorAsyncMainChecks", "GlobalExecutorTests", "CGlobalExecutorSwitch",
        "StallReportChecks", "ReadmeExample", "ReadmeGlobalExecutorExample",
    ]
    package.targets.removeAll { !core.contains($0.name) }
    package.products.removeAll { $0.name != "Bolts" }
    package.dependencies = []
case "tests":
    let benchmark: Set<String> = ["Benchmarks", "CBenchmarkSupport", "BenchmarkHarnessTests"]
    package.targets.removeAll { benchmark.contains($0.name) }
    package.dependencies = libraryDependencies
default:
    break
}
