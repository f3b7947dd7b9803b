import BoltsAppLinksTestSupport
import Foundation
import NIOCore
import NIOPosix
import NIOSSL

@testable import BoltsAppLinks

/// The test certificates of `Fixtures/` (test-only keys; see the README there), read from the source tree.
enum Fixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Fixtures")

    /// The test CA, which issued ``serverCertificate()``.
    static func certificateAuthority() throws -> NIOSSLCertificate {
        try certificate("ca.pem")
    }

    /// The certificate for `applinks.test` (no other name, no IP address).
    static func serverCertificate() throws -> NIOSSLCertificate {
        try certificate("applinks.test.pem")
    }

    /// The one certificate of the PEM file `name`.
    private static func certificate(_ name: String) throws -> NIOSSLCertificate {
        let certificates = try NIOSSLCertificate.fromPEMFile(directory.appendingPathComponent(name).path)
        guard certificates.count == 1 else { throw NIOSSLError.failedToLoadCertificate }
        return certificates[0]
    }

    static func serverKey() throws -> NIOSSLPrivateKey {
        try NIOSSLPrivateKey(file: directory.appendingPathComponent("applinks.test.key").path, format: .pem)
    }
}

/// An HTTPS server on a loopback address, on SwiftNIO and SwiftNIO SSL, presenting the `applinks.test` certificate.
/// Every request gets the same page, with a `Content-Length`, and its connection is closed after it. It records the
/// requests it reads (a client that gives up during the handshake sends none).
final class TestTLSServer: Sendable {
    let port: Int
    let address: String
    private let channel: any Channel
    private let recorded: Locked<[TestHTTPServer.Request]>

    /// The requests read so far.
    var requests: [TestHTTPServer.Request] { recorded.current }

    /// Starts a server on `address` (a loopback address: 127.0.0.0/8 or ::1) that answers `page` to every request.
    static func start(address: String = "127.0.0.1", page: String) async throws -> TestTLSServer {
        precondition(address.hasPrefix("127.") || address == "::1", "the test server listens on loopback only")
        let configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try Fixtures.serverCertificate())],
            privateKey: .privateKey(try Fixtures.serverKey()))
        let context = try NIOSSLContext(configuration: configuration)
        let recorded = Locked<[TestHTTPServer.Request]>([])
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { child in
                do {
                    try child.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    try child.pipeline.syncOperations.addHandler(PageResponder(page: page, recorded: recorded))
                    return child.eventLoop.makeSucceededVoidFuture()
                } catch {
                    return child.eventLoop.makeFailedFuture(error)
                }
            }
            .bind(host: address, port: 0).get()
        return TestTLSServer(channel: channel, address: address, recorded: recorded)
    }

    private init(channel: any Channel, address: String, recorded: Locked<[TestHTTPServer.Request]>) {
        self.channel = channel
        self.address = address
        self.port = channel.localAddress?.port ?? 0
        self.recorded = recorded
    }

    /// Stops accepting connections.
    func stop() {
        channel.close(promise: nil)
    }
}

/// Reads one request head (as plain bytes, after TLS), records it, answers the page and closes the connection.
private final class PageResponder: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let page: String
    private let recorded: Locked<[TestHTTPServer.Request]>
    private var received = ByteBuffer()
    private var answered = false

    init(page: String, recorded: Locked<[TestHTTPServer.Request]>) {
        self.page = page
        self.recorded = recorded
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        received.writeBuffer(&bytes)
        guard !answered, let text = received.getString(at: received.readerIndex, length: received.readableBytes),
            let end = text.range(of: "\r\n\r\n")
        else { return }
        answered = true
        let lines = text[..<end.lowerBound].components(separatedBy: "\r\n")
        let parts = lines[0].split(separator: " ")
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        recorded.withLock {
            $0.append(
                TestHTTPServer.Request(
                    method: parts.first.map(String.init) ?? "", path: parts.count > 1 ? String(parts[1]) : "",
                    headers: headers))
        }
        let body = Array(page.utf8)
        let head =
            "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(body.count)\r\n"
            + "Connection: close\r\n\r\n"
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: Array(head.utf8) + body)), promise: written)
        written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
