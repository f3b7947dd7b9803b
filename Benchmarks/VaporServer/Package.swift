// swift-tools-version:6.0
import PackageDescription

// The Vapor 4 server of the benchmark's "Inside a Vapor server" section (run with `--full`), a
// package of its own so that Vapor and its dependencies stay out of the root package's build
// and out of the default benchmark's. The benchmark builds it with
// `swift build -c release --package-path Benchmarks/VaporServer` and runs the `VaporServer`
// executable as its child processes. It serves the routes of `Benchmarks/ServerSupport`, as the
// Hummingbird server does, and depends on the root package by path, so it measures the Bolts of
// the same checkout; the root's `Benchmarks` target excludes this directory.
let package = Package(
    name: "VaporServer",
    dependencies: [
        .package(name: "Bolts", path: "../.."),
        .package(name: "ServerSupport", path: "../ServerSupport"),
        .package(url: "https://github.com/vapor/vapor", from: "4.122.3"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .executableTarget(
            name: "VaporServer",
            dependencies: [
                .product(name: "Bolts", package: "Bolts"),
                .product(name: "BenchmarkServerSupport", package: "ServerSupport"),
                .product(name: "Vapor", package: "vapor"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.enableUpcomingFeature("MemberImportVisibility")]
        )
    ],
    swiftLanguageModes: [.v6]
)
