import Bolts
import BoltsServer
import Foundation
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Testing
import UnixSignals

@testable import ReadmeServerExample

#if canImport(Glibc)
    import Glibc
#endif

// The README's "In a server" example is the program Tests/ReadmeExamples/ReadmeServerExample
// (README.md's block, verbatim: ReadmeExampleTests checks it); its `ChecksumServer` is used
// from there. Its top-level code binds port 8080, which another process may hold, so the test
// runs the copy below instead, with the port a parameter.

/// The README's top-level code (its `port: 8080` made a parameter).
func runReadmeServer(port: Int) async throws {
    let logger = Logger(label: "checksum")
    TaskDiagnostics.logUnobservedErrors(to: logger, level: .warning)
    let pool = ThreadPool(threadCount: 4, name: "work")
    let metrics = ThreadPoolMetricsReporter(pool: pool, interval: .seconds(10))  // to MetricsSystem's backend
    let group = ServiceGroup(
        services: [
            try ThreadPoolService(pool: pool, metrics: metrics, logger: logger),  // first: it stops last
            ChecksumServer(pool: pool, port: port),
        ],
        gracefulShutdownSignals: [.sigterm, .sigint],
        logger: logger
    )
    try await group.run()
}

// MARK: - The test

@Suite struct ReadmeServerExampleTests {
    /// Runs the README's server in a process of its own (it installs process-wide
    /// handlers: the unobserved-error logger and the signal traps), sends it a message,
    /// then a SIGTERM, and expects it to answer and then exit cleanly.
    @Test func readmeServerAnswersAndShutsDownOnSIGTERM() async {
        await #expect(processExitsWith: .success) {
            let port = try await freeLoopbackPort()
            async let serving: Void = runReadmeServer(port: port)
            #expect(try await ask(port: port, "abc") == "294\n")  // 97 + 98 + 99
            kill(getpid(), SIGTERM)
            try await serving
        }
    }

    /// `runReadmeServer(port:)` is the program's top-level code, character for character but
    /// for the port.
    @Test func runReadmeServerIsTheProgramsTopLevelCode() throws {
        let here = URL(fileURLWithPath: #filePath)
        let source = try String(contentsOf: here, encoding: .utf8)
        let program = try String(
            contentsOf: here.deletingLastPathComponent()
                .appendingPathComponent("../ReadmeExamples/ReadmeServerExample/main.swift").standardized,
            encoding: .utf8)
        let function = try #require(section(of: source, from: "func runReadmeServer(port: Int)", to: "\n}\n"))
        let topLevel = function.split(separator: "\n", omittingEmptySubsequences: false).dropFirst()
            .map { $0.hasPrefix("    ") ? $0.dropFirst(4) : $0 }
            .joined(separator: "\n")
            .replacingOccurrences(of: "port: port)", with: "port: 8080)")
        #expect(program.contains(topLevel))
    }
}

/// The text of `source` from the start of `start` up to (not including) `end`.
private func section(of source: String, from start: String, to end: String) -> String? {
    guard let lower = source.range(of: start)?.lowerBound,
        let upper = source.range(of: end, range: lower..<source.endIndex)?.lowerBound
    else { return nil }
    return String(source[lower..<upper])
}

/// A port on 127.0.0.1 that was free a moment ago.
private func freeLoopbackPort() async throws -> Int {
    let probe = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .bind(host: "127.0.0.1", port: 0).get()
    let port = probe.localAddress?.port ?? 0
    try await probe.close()
    return port
}

/// Connects to the server (retrying while it starts), sends `message`, returns the answer.
private func ask(port: Int, _ message: String) async throws -> String? {
    let deadline = ContinuousClock.now + .seconds(10)
    while true {
        do {
            let client = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(host: "127.0.0.1", port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
            return try await client.executeThenClose { inbound, outbound in
                try await outbound.write(ByteBuffer(string: message))
                var answers = inbound.makeAsyncIterator()
                return try await answers.next().map { String(buffer: $0) }
            }
        } catch  where ContinuousClock.now < deadline {
            try await _Concurrency.Task.sleep(for: .milliseconds(20))
        }
    }
}
