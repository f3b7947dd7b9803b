import Bolts
import BoltsServer
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

/// A TCP service that answers each message with the sum of its bytes, computed on the pool.
struct ChecksumServer: Service {
    let pool: ThreadPool
    let port: Int

    func run() async throws {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        // Graceful shutdown closes the listening socket; open connections finish first.
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { connections in
                try await server.executeThenClose { inbound in
                    for try await connection in inbound {
                        connections.addTask { try? await serve(connection) }
                    }
                }
            }
        } onGracefulShutdown: {
            server.channel.close(promise: nil)
        }
    }

    private func serve(_ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>) async throws {
        try await connection.executeThenClose { inbound, outbound in
            for try await message in inbound {
                let bytes = Array(buffer: message)
                let sum = try await Task.execute(.pool(pool)) { bytes.reduce(0) { $0 + Int($1) } }.value
                try await outbound.write(ByteBuffer(string: "\(sum)\n"))
            }
        }
    }
}

let logger = Logger(label: "checksum")
TaskDiagnostics.logUnobservedErrors(to: logger, level: .warning)
let pool = ThreadPool(threadCount: 4, name: "work")
let metrics = ThreadPoolMetricsReporter(pool: pool, interval: .seconds(10))  // to MetricsSystem's backend
let group = ServiceGroup(
    services: [
        try ThreadPoolService(pool: pool, metrics: metrics, logger: logger),  // first: it stops last
        ChecksumServer(pool: pool, port: 8080),
    ],
    gracefulShutdownSignals: [.sigterm, .sigint],
    logger: logger
)
try await group.run()
