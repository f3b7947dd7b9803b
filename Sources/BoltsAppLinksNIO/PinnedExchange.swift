import Bolts
import BoltsAppLinks
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// One fetch of a ``NIOAppLinkFetcher``: connecting to the planned addresses one after the other, sending the
/// request, reading the response within its limits, and ending the task.
///
/// It lives on one event loop: it is created there, every method runs there (callbacks are registered through
/// `assumeIsolated()`, which checks it), and other threads reach it only through `NIOLoopBound` and
/// `EventLoop.execute`. It is not `Sendable`.
final class PinnedExchange {
    private let plan: ExchangePlan
    private let loop: any EventLoop
    private let sslContext: NIOSSLContext?
    private let source: TaskCompletionSource<AppLinkHTTPResponse>
    private let completionExecutor: Executor

    /// The task has ended (or is being ended): nothing more is read, and any channel is closed.
    private var ended = false
    /// The channel of the current connection attempt or connection, from its creation on.
    private var channel: (any Channel)?
    private var timer: Scheduled<Void>?
    /// The final response's head, once it arrived (informational 1xx heads are skipped).
    private var head: HTTPResponseHead?
    /// Whether the parts being read belong to an informational (1xx) response, which is skipped.
    private var skippingInformational = false
    private var body = ByteBuffer()

    init(
        plan: ExchangePlan, loop: any EventLoop, sslContext: NIOSSLContext?,
        source: TaskCompletionSource<AppLinkHTTPResponse>, completionExecutor: Executor
    ) {
        self.plan = plan
        self.loop = loop
        self.sslContext = sslContext
        self.source = source
        self.completionExecutor = completionExecutor
    }

    private var url: URL { plan.request.url }

    // MARK: Connecting

    /// Arms the deadline and makes the first connection attempt, unless the task already ended (cancelled before
    /// the event loop got to it).
    func start(deadline: NIODeadline) {
        guard !source.task.isCompleted else {
            ended = true
            return
        }
        timer = loop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            fail(.timedOut(url: url, seconds: plan.request.timeout))
        }
        switch plan.destination {
        case .addresses(let addresses, let port):
            connect(to: addresses[...], port: port, tried: [], deadline: deadline)
        case .name(let host, let port):
            bootstrap(deadline: deadline).connect(host: host, port: port).assumeIsolated().whenComplete { [self] in
                connected($0)
            }
        }
    }

    /// Tries `addresses` in order; the first connection made carries the request.
    private func connect(
        to addresses: ArraySlice<AppLinkIPAddress>, port: Int, tried: [AppLinkIPAddress], deadline: NIODeadline
    ) {
        guard !ended, let address = addresses.first else { return }
        let attempted = tried + [address]
        let remaining = addresses.dropFirst()
        do {
            let socketAddress = try SocketAddress(ipAddress: address.description, port: port)
            bootstrap(deadline: deadline).connect(to: socketAddress).assumeIsolated().whenComplete { [self] result in
                switch result {
                case .success:
                    connected(result)
                case .failure(let error):
                    attemptFailed(error, remaining: remaining, port: port, tried: attempted, deadline: deadline)
                }
            }
        } catch {
            attemptFailed(error, remaining: remaining, port: port, tried: attempted, deadline: deadline)
        }
    }

    /// One address could not be reached: the next one is tried, or the task fails when none is left.
    private func attemptFailed(
        _ error: any Error, remaining: ArraySlice<AppLinkIPAddress>, port: Int, tried: [AppLinkIPAddress],
        deadline: NIODeadline
    ) {
        guard !ended else { return }
        channel = nil
        if remaining.isEmpty {
            let failure = NIOAppLinkFetcherError.couldNotConnect(addresses: tried, underlying: error)
            fail(.network(url: url, underlying: failure))
        } else {
            connect(to: remaining, port: port, tried: tried, deadline: deadline)
        }
    }

    private func bootstrap(deadline: NIODeadline) -> ClientBootstrap {
        let bound = NIOLoopBound(self, eventLoop: loop)
        let remaining = max(deadline - .now(), .milliseconds(1))
        return ClientBootstrap(group: loop)
            .connectTimeout(remaining)
            .channelInitializer { channel in
                // Runs on `loop`: the bootstrap's group is that one loop.
                do {
                    try bound.value.prepare(channel)
                    return channel.eventLoop.makeSucceededVoidFuture()
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
            }
    }

    /// Sets a new channel's pipeline up: TLS (for `https`), the HTTP codec, and the handler that reports back here.
    ///
    /// A name lookup may make several channels at once (Happy Eyeballs races the answers), so a channel becomes
    /// the exchange's only once its connection is the one made (``connected(_:)``); until then its handler
    /// reports nothing. Connections to planned addresses are made one at a time, so that channel is kept from the
    /// start, for ``abandon()`` to close while it connects.
    private func prepare(_ channel: any Channel) throws {
        if case .addresses = plan.destination { self.channel = channel }
        if ended {
            channel.close(promise: nil)
            return
        }
        let pipeline = channel.pipeline.syncOperations
        if let sslContext {
            try pipeline.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: plan.serverName))
        }
        try pipeline.addHTTPClientHandlers()
        try pipeline.addHandler(ExchangeHandler(exchange: self))
    }

    /// A connection attempt ended: a name lookup's failure ends the task; a connection that was made carries the
    /// request, unless the task ended meanwhile.
    private func connected(_ result: Result<any Channel, any Error>) {
        switch result {
        case .success(let channel):
            self.channel = channel
            guard !ended else {
                channel.close(promise: nil)
                return
            }
            do {
                try channel.pipeline.syncOperations.handler(type: ExchangeHandler.self).send(plan.head)
            } catch {
                fail(.network(url: url, underlying: error))
            }
        case .failure(let error):
            channel = nil
            fail(.network(url: url, underlying: error))
        }
    }

    // MARK: Reading

    /// A part of the response, from the HTTP decoder.
    func received(_ part: HTTPClientResponsePart) {
        guard !ended else { return }
        let limit = plan.request.maximumBodySize
        switch part {
        case .head(let responseHead):
            if (100..<200).contains(responseHead.status.code), responseHead.status.code != 101 {
                skippingInformational = true
                return
            }
            head = responseHead
            if let announced = responseHead.headers.first(name: "content-length").flatMap(Int.init), announced > limit {
                fail(.responseTooLarge(url: url, limit: limit))
            }
        case .body(var bytes):
            guard !skippingInformational else { return }
            guard body.readableBytes + bytes.readableBytes <= limit else {
                fail(.responseTooLarge(url: url, limit: limit))
                return
            }
            body.writeBuffer(&bytes)
        case .end:
            if skippingInformational {
                skippingInformational = false
                return
            }
            guard let head else { return }
            var headers: [String: String] = [:]
            for (name, value) in head.headers {
                let key = name.lowercased()
                headers[key] = headers[key].map { $0 + ", " + value } ?? value
            }
            let response = AppLinkHTTPResponse(
                url: url, statusCode: Int(head.status.code), headers: headers, body: Data(body.readableBytesView))
            end { $0.trySet(result: response) }
        }
    }

    /// The pipeline reported an error (TLS, a malformed response, a reset, a failed write).
    func failed(_ error: any Error) {
        fail(.network(url: url, underlying: error))
    }

    /// The connection closed; before the end of the response that is a failure.
    func closed() {
        fail(.network(url: url, underlying: NIOAppLinkFetcherError.connectionClosedEarly))
    }

    // MARK: Ending

    /// The task was cancelled: stop the timer and close the connection, or drop the attempt in progress.
    func abandon() {
        end(nil)
    }

    private func fail(_ error: AppLinkResolutionError) {
        end { $0.trySet(error: error) }
    }

    /// Ends the exchange once: stops the timer, closes the channel, and completes the task on the completion
    /// executor with `complete` (nil when the task has already ended).
    private func end(_ complete: (@Sendable (TaskCompletionSource<AppLinkHTTPResponse>) -> Void)?) {
        guard !ended else { return }
        ended = true
        timer?.cancel()
        timer = nil
        channel?.close(promise: nil)
        channel = nil
        if let complete {
            let source = self.source
            completionExecutor.execute { complete(source) }
        }
    }
}

/// The last handler of a fetch's pipeline: it sends the request once the exchange has chosen its channel, and from
/// then on passes what the HTTP decoder reads, errors and the end of the connection to its ``PinnedExchange``.
///
/// It holds the exchange strongly; the channel's pipeline lets go of the handler when the channel closes.
final class ExchangeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let exchange: PinnedExchange
    private var context: ChannelHandlerContext?
    /// Whether this channel is the exchange's (the request was sent on it); a channel that lost a Happy Eyeballs
    /// race never is, and what happens to it is not reported.
    private var live = false

    init(exchange: PinnedExchange) {
        self.exchange = exchange
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    /// Sends the request on this handler's channel, which becomes the exchange's.
    func send(_ head: HTTPRequestHead) {
        guard let context else { return }
        live = true
        // A write that fails (a header value the encoder refuses, a connection that went away) fails the exchange;
        // nothing else would report it.
        let written = context.eventLoop.makePromise(of: Void.self)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: written)
        let exchange = self.exchange
        written.futureResult.assumeIsolated().whenFailure { exchange.failed($0) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if live { exchange.received(unwrapInboundIn(data)) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if live { exchange.failed(error) }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if live { exchange.closed() }
        context.fireChannelInactive()
    }
}

@available(*, unavailable)
extension ExchangeHandler: Sendable {}

@available(*, unavailable)
extension PinnedExchange: Sendable {}
