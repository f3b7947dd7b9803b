import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A SwiftNIO HTTP/1.1 server on 127.0.0.1 (keep-alive, `eventLoops` loops) whose one route,
/// `GET /<peer>?fan=<jobs>&rounds=<work per job>` (`<peer>` a `ServerPeer` raw value), fans each
/// request out to CPU jobs and answers `200 ok` when they have all run, or `400` with a reason
/// for a request it cannot parse (so a mistyped URL fails the run instead of measuring nothing).
final class FanOutHTTPServer: Sendable {
    private let group: MultiThreadedEventLoopGroup
    private let executors: ServerExecutors
    private let counters: Counters
    private let channel: any Channel

    var port: Int { channel.localAddress?.port ?? 0 }

    init(eventLoops: Int) throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: eventLoops)
        let executors = ServerExecutors(group: group)
        let counters = Counters()
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    let handler = FanOutHandler(executors: executors, counters: counters)
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            }
        do {
            channel = try bootstrap.bind(host: "127.0.0.1", port: 0).wait()
        } catch {
            executors.shutdown()
            try? group.syncShutdownGracefully()
            throw error
        }
        self.group = group
        self.executors = executors
        self.counters = counters
    }

    /// Requests answered so far (200) and failed.
    var counts: (answered: Int, failed: Int) {
        (counters.answered.load(ordering: .relaxed), counters.failed.load(ordering: .relaxed))
    }

    func shutdown() {
        try? channel.close().wait()
        executors.shutdown()
        try? group.syncShutdownGracefully()
    }

    /// Requests answered (200) and failed, counted on the event loops.
    final class Counters: Sendable {
        let answered = Atomic<Int>(0)
        let failed = Atomic<Int>(0)
    }
}

/// Parses the request line, hands the work to the peer, writes the answer on the loop.
private final class FanOutHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let executors: ServerExecutors
    let counters: FanOutHTTPServer.Counters
    private var pending: Result<(ServerPeer, Int, Int), ParseError>?
    private var keepAlive = true

    struct ParseError: Error { var reason: String }

    init(executors: ServerExecutors, counters: FanOutHTTPServer.Counters) {
        self.executors = executors
        self.counters = counters
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            keepAlive = head.isKeepAlive
            pending = Self.parse(head.uri)
        case .body: break
        case .end:
            guard let request = pending else { return }
            pending = nil
            switch request {
            case .failure(let error):
                respond(context: context, status: .badRequest, body: error.reason + "\n")
            case .success(let (peer, fanOut, rounds)):
                let loop = context.eventLoop
                let promise = loop.makePromise(of: Void.self)
                executors.handle(peer, fanOut: fanOut, rounds: rounds, loop: loop, promise: promise)
                promise.futureResult.assumeIsolated().whenComplete { result in
                    switch result {
                    case .success: self.respond(context: context, status: .ok, body: "ok\n")
                    case .failure(let error):
                        self.respond(context: context, status: .internalServerError, body: "\(error)\n")
                    }
                }
            }
        }
    }

    private func respond(context: ChannelHandlerContext, status: HTTPResponseStatus, body: String) {
        if status == .ok {
            counters.answered.add(1, ordering: .relaxed)
        } else {
            counters.failed.add(1, ordering: .relaxed)
        }
        var headers = HTTPHeaders()
        headers.add(name: "Content-Length", value: String(body.utf8.count))
        headers.add(name: "Content-Type", value: "text/plain")
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        let head = HTTPResponseHead(version: .http1_1, status: status, headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        var buffer = context.channel.allocator.buffer(capacity: body.utf8.count)
        buffer.writeString(body)
        context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        let keepAlive = self.keepAlive
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
            if !keepAlive { context.close(promise: nil) }
        }
    }

    /// `/<peer>?fan=<n>&rounds=<n>`.
    static func parse(_ uri: String) -> Result<(ServerPeer, Int, Int), ParseError> {
        let parts = uri.split(separator: "?", maxSplits: 1)
        guard let path = parts.first, let peer = ServerPeer(rawValue: String(path.dropFirst())) else {
            return .failure(ParseError(reason: "unknown peer in \(uri)"))
        }
        var fanOut: Int?
        var rounds: Int?
        for pair in parts.count == 2 ? parts[1].split(separator: "&") : [] {
            let keyValue = pair.split(separator: "=", maxSplits: 1)
            guard keyValue.count == 2, let value = Int(keyValue[1]), value >= 0 else { continue }
            if keyValue[0] == "fan" { fanOut = value }
            if keyValue[0] == "rounds" { rounds = value }
        }
        guard let fanOut, (1...4096).contains(fanOut), let rounds else {
            return .failure(ParseError(reason: "need fan=1...4096 and rounds=N in \(uri)"))
        }
        return .success((peer, fanOut, rounds))
    }
}
