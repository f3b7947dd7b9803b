// swift-tools-version:6.0
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "Bolts",
    products: [
        .library(name: "Bolts", targets: ["Bolts"]),
        .library(name: "BoltsAppLinks", targets: ["BoltsAppLinks"]),
        .library(name: "BoltsNIO", targets: ["BoltsNIO"]),
        .executable(name: "Benchmarks", targets: ["Benchmarks"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
    ],
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
        .target(
            name: "Bolts",
            dependencies: ["CBoltsRuntime"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "BoltsAppLinks",
            dependencies: ["Bolts"],
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
        .target(
            name: "CBenchmarkSupport",
            path: "Benchmarks/CBenchmarkSupport"
        ),
        .executableTarget(
            name: "Benchmarks",
            dependencies: [
                "Bolts",
                "BoltsNIO",
                "CBoltsRuntime",
                "CBenchmarkSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            path: "Benchmarks",
            exclude: ["CBenchmarkSupport", "RESULTS.md", "results", "Tools"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "BoltsTests",
            dependencies: ["Bolts", "CBoltsRuntime"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "GlobalExecutorChecks",
            dependencies: ["Bolts"],
            path: "Tests/GlobalExecutorChecks",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GlobalExecutorTests",
            dependencies: ["GlobalExecutorChecks"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "BoltsAppLinksTests",
            dependencies: ["BoltsAppLinks", "Bolts"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "BoltsNIOTests",
            dependencies: [
                "BoltsNIO", "Bolts",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
