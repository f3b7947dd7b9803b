import Bolts
import BoltsAppLinksNIO
import BoltsAppLinksTestSupport
import BoltsTestSupport
import Foundation
import NIOCore
import NIOEmbedded
import NIOPosix
import Testing

@testable import BoltsAppLinks

#if canImport(Glibc)
    import Glibc
#endif

/// A fetcher with the default configuration, on SwiftNIO's singleton event loop group.
let nioFetcher = try! NIOAppLinkFetcher()

/// A GET of `url` with a 10-minute timeout and a 1 MiB limit. Tests that cancel or wait for the
/// server must never see the timeout win: in CI's sanitizer stage, CPU-heavy suites running in
/// parallel have held this test process off the CPU for over 30 s.
func request(
    _ url: URL, headers: [String: String] = ["Prefer-Html-Meta-Tags": "al"], timeout: Double = 600,
    limit: Int = 1 << 20, connectAddresses: [String] = []
) -> AppLinkHTTPRequest {
    AppLinkHTTPRequest(
        url: url, headers: headers, timeout: timeout, maximumBodySize: limit,
        connectAddresses: connectAddresses.map { AppLinkIPAddress($0)! })
}

/// The `underlying` error of a network failure, or nil (and a recorded issue) for any other outcome.
func networkFailure<T>(of task: Task<T>, sourceLocation: SourceLocation = #_sourceLocation) async -> (any Error)? {
    let error = await resolutionError(of: task, sourceLocation: sourceLocation)
    guard case .network(_, let underlying) = error else {
        Issue.record("expected a network failure, got \(String(describing: error))", sourceLocation: sourceLocation)
        return nil
    }
    return underlying
}

/// A loopback port on which nothing listens for as long as the returned socket stays open (it is bound, not
/// listening, so a connection to it is refused at once). Close the socket when done.
func refusingPort() throws -> (socket: Int32, port: UInt16) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    guard fd >= 0, bound else { throw TestHTTPServer.ServerError.socket(errno) }
    return (fd, UInt16(bigEndian: address.sin_port))
}

/// The fetcher's HTTP exchange with the loopback test server: what it sends, how it reads each kind of body, and
/// how it ends on limits, timeouts and cancellation. The requests carry no checked addresses and name the server by
/// its address, so the fetcher connects to that address literal.
@Suite("NIO fetcher: HTTP")
struct NIOFetcherHTTPTests {
    @Test func sendsOneGETAndReturnsStatusHeadersAndBody() async throws {
        let server = try TestHTTPServer { _ in
            TestHTTPServer.Response(
                status: 203, reason: "Whatever",
                headers: [("Content-Type", "text/html"), ("X-Mixed-Case", "Kept"), ("Set-Thing", "a"), ("Set-Thing", "b")],
                body: Array("hello".utf8))
        }
        defer { server.stop() }
        let url = URL(string: "http://127.0.0.1:\(server.port)/a%20b/c?q=1&r=%2F#fragment")!
        let response = try await nioFetcher.fetch(
            request(url, headers: ["Prefer-Html-Meta-Tags": "al", "User-Agent": "bolts-test"])
        ).value
        #expect(response.statusCode == 203)
        #expect(response.url == url)
        #expect(String(decoding: response.body, as: UTF8.self) == "hello")
        #expect(response.headers["x-mixed-case"] == "Kept")
        #expect(response.header("Content-Type") == "text/html")
        #expect(response.headers["set-thing"] == "a, b")
        #expect(response.headers.keys.allSatisfy { $0 == $0.lowercased() })
        let sent = try #require(server.requests.first)
        #expect(server.requests.count == 1)
        #expect(sent.method == "GET")
        #expect(sent.path == "/a%20b/c?q=1&r=%2F")
        #expect(sent.headers["host"] == "127.0.0.1:\(server.port)")
        #expect(sent.headers["prefer-html-meta-tags"] == "al")
        #expect(sent.headers["user-agent"] == "bolts-test")
        #expect(sent.headers["connection"] == "close")
    }

    @Test func anErrorStatusIsAResponseWithItsBody() async throws {
        let server = try TestHTTPServer { _ in .status(418, body: "teapot") }
        defer { server.stop() }
        let response = try await nioFetcher.fetch(request(server.url("/t"))).value
        #expect(response.statusCode == 418)
        #expect(String(decoding: response.body, as: UTF8.self) == "teapot")
    }

    @Test func aRedirectIsReturnedNotFollowed() async throws {
        let server = try TestHTTPServer { request in
            request.path == "/from" ? .redirect(to: "/to", status: 301) : .html("target")
        }
        defer { server.stop() }
        let response = try await nioFetcher.fetch(request(server.url("/from"))).value
        #expect(response.statusCode == 301)
        #expect(response.header("Location") == "/to")
        #expect(server.requests.map(\.path) == ["/from"])
    }

    @Test func readsAChunkedBody() async throws {
        let chunked = "5\r\nhello\r\n1\r\n,\r\n6\r\n world\r\n0\r\n\r\n"
        let server = try TestHTTPServer { _ in
            TestHTTPServer.Response(headers: [("Transfer-Encoding", "chunked")], body: Array(chunked.utf8))
        }
        defer { server.stop() }
        let response = try await nioFetcher.fetch(request(server.url("/chunked"))).value
        #expect(String(decoding: response.body, as: UTF8.self) == "hello, world")
        #expect(response.header("transfer-encoding") == "chunked")
    }

    @Test func readsABodyThatEndsWithTheConnection() async throws {
        // No Content-Length, not chunked: the body is whatever arrives until the server closes.
        let server = try TestHTTPServer { _ in
            TestHTTPServer.Response(streamedBodySize: 200_000, chunkSize: 7_000)
        }
        defer { server.stop() }
        let response = try await nioFetcher.fetch(request(server.url("/until-close"))).value
        #expect(response.header("content-length") == nil)
        #expect(response.body == Data(repeating: UInt8(ascii: "x"), count: 200_000))
    }

    @Test func aBodyOfExactlyTheLimitIsAccepted() async throws {
        let server = try TestHTTPServer { _ in .bytes(Array(repeating: 7, count: 4096), contentType: nil) }
        defer { server.stop() }
        let response = try await nioFetcher.fetch(request(server.url("/exact"), limit: 4096)).value
        #expect(response.body.count == 4096)
    }

    @Test func anAnnouncedOversizeBodyFaultsWithoutBeingRead() async throws {
        let server = try TestHTTPServer { _ in
            TestHTTPServer.Response(
                headers: [("Content-Length", "5000000")], streamedBodySize: 5_000_000, keptOpen: true)
        }
        defer { server.stop() }
        let url = server.url("/announced")
        let error = await resolutionError(of: nioFetcher.fetch(request(url, limit: 10_000)))
        guard case .responseTooLarge(let failed, 10_000) = error else {
            Issue.record("expected the 10 000-byte limit, got \(String(describing: error))")
            return
        }
        #expect(failed == url)
        // The fetcher hung up rather than reading the rest.
        #expect(await eventually(within: 20) { server.hangUps == 1 })
    }

    @Test func aStreamedOversizeBodyFaultsAsItPassesTheLimit() async throws {
        // No Content-Length, and a body that never ends: only the running count can stop it.
        let server = try TestHTTPServer { _ in
            TestHTTPServer.Response(streamedBodySize: 1_000_000, chunkSize: 8192, keptOpen: true)
        }
        defer { server.stop() }
        let error = await resolutionError(of: nioFetcher.fetch(request(server.url("/streamed"), limit: 20_000)))
        guard case .responseTooLarge(_, 20_000) = error else {
            Issue.record("expected the 20 000-byte limit, got \(String(describing: error))")
            return
        }
        #expect(await eventually(within: 20) { server.hangUps == 1 })
    }

    @Test func aServerThatNeverAnswersTimesOutAndIsHungUpOn() async throws {
        let server = try TestHTTPServer { _ in TestHTTPServer.Response(delay: .infinity) }
        defer { server.stop() }
        let url = server.url("/silent")
        let error = await resolutionError(of: nioFetcher.fetch(request(url, timeout: 0.5)))
        guard case .timedOut(let failed, let seconds) = error else {
            Issue.record("expected a timeout, got \(String(describing: error))")
            return
        }
        #expect(failed == url && seconds == 0.5)
        #expect(await eventually(within: 20) { server.hangUps == 1 })
    }

    @Test func cancellingMidTransferEndsTheTaskAtOnceAndClosesTheConnection() async throws {
        // 16 KiB of the body at once, then the connection stays open and the body never ends.
        let server = try TestHTTPServer { _ in
            TestHTTPServer.Response(
                headers: [("Content-Type", "text/html")], streamedBodySize: 16 * 1024, chunkSize: 4096, keptOpen: true)
        }
        defer { server.stop() }
        let source = CancellationTokenSource()
        let task = nioFetcher.fetch(request(server.url("/endless")), cancellationToken: source.token)
        #expect(await eventually(within: 20) { server.requests.count == 1 })
        #expect(!task.isCompleted)
        source.cancel()
        #expect(task.isCancelled, "the task ends before cancel() returns")
        #expect(await eventually(within: 20) { server.hangUps == 1 }, "the server sees the connection close")
    }

    @Test func anAlreadyCancelledTokenStartsNothing() async throws {
        let server = try TestHTTPServer { _ in .html("never") }
        defer { server.stop() }
        let source = CancellationTokenSource()
        source.cancel()
        let task = nioFetcher.fetch(request(server.url("/x")), cancellationToken: source.token)
        #expect(task.isCancelled)
        try await _Concurrency.Task.sleep(nanoseconds: 100_000_000)
        #expect(server.requests.isEmpty)
    }

    @Test func aRefusedConnectionIsANetworkFailure() async throws {
        let (socket, port) = try refusingPort()
        defer { close(socket) }
        let underlying = await networkFailure(
            of: nioFetcher.fetch(request(URL(string: "http://127.0.0.1:\(port)/")!)))
        guard case .couldNotConnect(let addresses, _) = underlying as? NIOAppLinkFetcherError else {
            Issue.record("expected couldNotConnect, got \(String(describing: underlying))")
            return
        }
        #expect(addresses == [AppLinkIPAddress("127.0.0.1")!])
    }

    @Test func aConnectionClosedBeforeTheEndOfTheBodyIsANetworkFailure() async throws {
        // Announces 100 bytes, sends 5 and closes.
        let server = try TestHTTPServer { _ in
            TestHTTPServer.Response(headers: [("Content-Length", "100")], body: Array("short".utf8))
        }
        defer { server.stop() }
        _ = await networkFailure(of: nioFetcher.fetch(request(server.url("/truncated"))))
    }

    @Test func otherSchemesAreRefused() async throws {
        let url = URL(string: "ftp://127.0.0.1/file")!
        guard case .unsupportedScheme(url) = await resolutionError(of: nioFetcher.fetch(request(url))) else {
            Issue.record("expected unsupportedScheme")
            return
        }
    }

    @Test func theResolverReadsMetaTagsThroughTheFetcher() async throws {
        let html = page(withTags: [("al:android:package", "org.bolts.nio"), ("al:android:url", "nio://item/7")])
        let server = try TestHTTPServer { request in
            request.path == "/start" ? .redirect(to: "/page") : .html(html)
        }
        defer { server.stop() }
        let link = try await loopbackResolver(fetcher: nioFetcher).appLink(
            from: server.url("/start"), platform: .android
        ).value
        #expect(link.targets == [AppLinkTarget(url: URL(string: "nio://item/7"), package: "org.bolts.nio")])
        #expect(server.requests.map(\.path) == ["/start", "/page"])
        #expect(server.requests.allSatisfy { $0.headers["prefer-html-meta-tags"] == "al" })
    }
}

/// The event loop group is borrowed: any NIOPosix group (or loop) serves, and the caller shuts it down.
@Suite("NIO fetcher: event loops")
struct NIOFetcherEventLoopTests {
    @Test func aGroupOfTheCallersOwnCarriesTheConnections() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try TestHTTPServer { _ in .html("own group") }
        defer { server.stop() }
        let fetcher = try NIOAppLinkFetcher(eventLoopGroup: group)
        let response = try await fetcher.fetch(request(server.url("/own"))).value
        #expect(String(decoding: response.body, as: UTF8.self) == "own group")
        try await group.shutdownGracefully()
    }

    @Test func aGroupThatCannotRunSocketsIsRefused() throws {
        #expect(throws: NIOAppLinkFetcherError.self) {
            _ = try NIOAppLinkFetcher(eventLoopGroup: EmbeddedEventLoop())
        }
    }

    @Test func tasksCompleteOnTheCompletionExecutorNotOnTheEventLoop() async throws {
        // Held until the continuation is in place: on a loaded machine the test's thread may
        // be descheduled long enough for a prompt answer to complete the task first, and the
        // continuation would then run inline here.
        let server = try TestHTTPServer { _ in
            var response = TestHTTPServer.Response.html("where")
            response.heldUntilReleased = true
            return response
        }
        defer { server.stop() }
        let queue = DispatchQueue(label: "bolts.applinks.nio-test.completion")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let fetcher = try NIOAppLinkFetcher(configuration: .init(completionExecutor: .queue(queue)))
        let onQueue = fetcher.fetch(request(server.url("/where"))).continueWith(.immediate) { _ in
            DispatchQueue.getSpecific(key: key) == true
        }
        server.release()
        #expect(try await onQueue.value)
    }
}
