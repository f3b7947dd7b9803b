// swift-tools-version:6.0
import PackageDescription

// The Hummingbird 2 server of the benchmark's "Inside a Hummingbird server" section, a package
// of its own so that Hummingbird and its dependencies stay out of the root package's build
// (`swift build`, `swift test` and CI never resolve or compile them). The benchmark builds it
// with `swift build -c release --package-path Benchmarks/HummingbirdServer` and runs the
// `HummingbirdServer` executable as its child processes. It depends on the root package by
// path, so it measures the Bolts of the same checkout, and on `Benchmarks/ServerSupport`,
// which it shares with the Vapor server; the root's `Benchmarks` target excludes this directory.
let package = Package(
    name: "HummingbirdServer",
    dependencies: [
        .package(name: "Bolts", path: "../.."),
        .package(name: "ServerSupport", path: "../ServerSupport"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .executableTarget(
            name: "HummingbirdServer",
            dependencies: [
                .product(name: "Bolts", package: "Bolts"),
                .product(name: "BenchmarkServerSupport", package: "ServerSupport"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.enableUpcomingFeature("MemberImportVisibility")]
        )
    ],
    swiftLanguageModes: [.v6]
)
