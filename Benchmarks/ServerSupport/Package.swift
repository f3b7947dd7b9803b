// swift-tools-version:6.0
import PackageDescription

// What the benchmark's framework servers share (`Benchmarks/HummingbirdServer` and
// `Benchmarks/VaporServer`): the executor choice and its install, the command line, the jobs
// and the handlers' bodies, so that each server only binds the same routes to them in its
// framework's way. A package of its own, beside them and outside the root package's build, on
// the root by path (the Bolts of this checkout) and on SwiftNIO (its take-over).
let package = Package(
    name: "ServerSupport",
    products: [.library(name: "BenchmarkServerSupport", targets: ["BenchmarkServerSupport"])],
    dependencies: [
        .package(name: "Bolts", path: "../.."),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        .target(
            name: "BenchmarkServerSupport",
            dependencies: [
                .product(name: "Bolts", package: "Bolts"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: [.enableUpcomingFeature("MemberImportVisibility")]
        )
    ],
    swiftLanguageModes: [.v6]
)
