import Foundation

#if canImport(Glibc)
    import Glibc
#endif

import BoltsTestSupport

/// A small HTTP/1.1 server on 127.0.0.1 (or another loopback IPv4 address) for the resolver tests: one thread
/// accepts, one thread per connection answers, every connection is closed after its response. Handlers decide status, headers, body, how slowly it is
/// sent, and whether it is held back or kept open. It listens only on loopback and stops when the test calls
/// `stop()`, which also ends every wait and response still in progress, so a test's teardown never waits for one.
package final class TestHTTPServer: Sendable {
    package struct Request: Sendable {
        package var method: String
        package var path: String
        /// Header names lowercased.
        package var headers: [String: String]

        /// A request as received (the memberwise form).
        package init(method: String, path: String, headers: [String: String]) {
            self.method = method
            self.path = path
            self.headers = headers
        }
    }

    package struct Response: Sendable {
        package var status: Int = 200
        package var reason: String = "OK"
        package var headers: [(String, String)] = []
        package var body: [UInt8] = []
        /// Seconds to wait before sending anything; `.infinity` never answers (the connection stays open until the
        /// client hangs up or the server stops).
        package var delay: Double = 0
        /// When set, the body is not `body` but this many bytes of filler, sent in 64 KiB chunks (stopping early if
        /// the client hangs up), with no `Content-Length` unless `headers` gives one.
        package var streamedBodySize: Int?
        /// Seconds to wait before each streamed chunk (a slow body).
        package var chunkDelay: Double = 0
        /// Bytes per streamed chunk.
        package var chunkSize: Int = 64 * 1024
        /// Nothing is sent until the test calls ``TestHTTPServer/release()`` (after `delay`).
        package var heldUntilReleased = false
        /// After the body the connection stays open, the response never ending, until the client hangs up (a
        /// hang-up) or the server stops. With `streamedBodySize` (and no `Content-Length`) this is a body that
        /// never ends, without growing past any size limit however long the client takes.
        package var keptOpen = false

        /// A response with every field given or left at its default (the memberwise form).
        package init(
            status: Int = 200, reason: String = "OK", headers: [(String, String)] = [], body: [UInt8] = [],
            delay: Double = 0, streamedBodySize: Int? = nil, chunkDelay: Double = 0, chunkSize: Int = 64 * 1024,
            heldUntilReleased: Bool = false, keptOpen: Bool = false
        ) {
            self.status = status
            self.reason = reason
            self.headers = headers
            self.body = body
            self.delay = delay
            self.streamedBodySize = streamedBodySize
            self.chunkDelay = chunkDelay
            self.chunkSize = chunkSize
            self.heldUntilReleased = heldUntilReleased
            self.keptOpen = keptOpen
        }

        package static func html(_ text: String, contentType: String = "text/html; charset=utf-8") -> Response {
            Response(headers: [("Content-Type", contentType)], body: Array(text.utf8))
        }

        package static func bytes(_ bytes: [UInt8], contentType: String?) -> Response {
            Response(headers: contentType.map { [("Content-Type", $0)] } ?? [], body: bytes)
        }

        package static func redirect(to location: String, status: Int = 302) -> Response {
            Response(status: status, reason: "Found", headers: [("Location", location)])
        }

        package static func status(_ code: Int, body: String = "error page") -> Response {
            Response(status: code, reason: "Status", headers: [("Content-Type", "text/html")], body: Array(body.utf8))
        }
    }

    /// What `stop()` and `release()` change, and the connections still being served.
    private struct State {
        var stopped = false
        var released = false
        var connections: Set<Int32> = []
    }

    package let port: UInt16
    /// The loopback IPv4 address it listens on.
    package let address: String
    private let listener: Int32
    private let recorded = LockedValue<[Request]>([])
    private let completed = LockedValue<[String]>([])
    private let hungUp = LockedValue(0)
    private let state = LockedValue(State())
    private let handler: @Sendable (Request) -> Response

    /// Listens on `address` (a loopback IPv4 address, 127.0.0.1 by default) and `port` (0: one the system picks).
    package init(address: String = "127.0.0.1", port: UInt16 = 0, handler: @escaping @Sendable (Request) -> Response) throws {
        precondition(address.hasPrefix("127."), "the test server listens on loopback only")
        self.handler = handler
        self.address = address
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ServerError.socket(errno) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        socketAddress.sin_port = port.bigEndian
        socketAddress.sin_addr.s_addr = inet_addr(address)
        let bound = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            close(fd)
            throw ServerError.socket(errno)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.port = UInt16(bigEndian: socketAddress.sin_port)
        listener = fd
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    package enum ServerError: Error {
        case socket(Int32)
    }

    /// `http://<address>:<port><path>`.
    package func url(_ path: String) -> URL {
        URL(string: "http://\(address):\(port)\(path)")!
    }

    /// The requests received so far, in arrival order.
    package var requests: [Request] {
        recorded.withLock { $0 }
    }

    /// The paths of the responses sent to the end (kept-open ones excepted), in the order they ended.
    package var answeredPaths: [String] {
        completed.withLock { $0 }
    }

    /// How many responses could not be sent to the end because the client had closed the connection (a response
    /// kept open counts when the client closes it). Responses cut short by `stop()` do not count.
    package var hangUps: Int {
        hungUp.withLock { $0 }
    }

    /// Lets the responses held by ``Response/heldUntilReleased`` go, those waiting now and those to come.
    package func release() {
        state.withLock { $0.released = true }
    }

    /// Stops accepting and ends every response in progress: waits end, held responses are never sent, and the
    /// open connections are shut down.
    package func stop() {
        let first = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.stopped = true
            for connection in state.connections {
                shutdown(connection, Int32(SHUT_RDWR))
            }
            return true
        }
        // Only shut down here: the accept thread closes the listener once `accept` has failed. Closing it here
        // would let the next server's socket reuse its number while this server's accept thread, if it had not
        // reached `accept` yet (a loaded run can delay a new thread that long), would then take that server's
        // connections and answer them with this server's handler.
        if first { shutdown(listener, Int32(SHUT_RDWR)) }
    }

    private var isStopped: Bool {
        state.withLock { $0.stopped }
    }

    private func acceptLoop() {
        defer { close(listener) }
        while !isStopped {
            let connection = accept(listener, nil, nil)
            if connection < 0 {
                if errno == EINTR { continue }
                return
            }
            let accepted = state.withLock { state -> Bool in
                guard !state.stopped else { return false }
                state.connections.insert(connection)
                return true
            }
            guard accepted else {
                close(connection)
                return
            }
            let thread = Thread { [self] in serve(connection) }
            thread.start()
        }
    }

    private func serve(_ connection: Int32) {
        // Closed under the lock that `stop()` shuts connections down with, so it never shuts down a reused number.
        defer {
            state.withLock { state in
                state.connections.remove(connection)
                close(connection)
            }
        }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard let request = readRequest(connection) else { return }
        recorded.withLock { $0.append(request) }
        let response = handler(request)
        if response.delay > 0 {
            let deadline = response.delay.isFinite ? DispatchTime.now() + response.delay : nil
            guard wait(on: connection, until: { deadline.map { DispatchTime.now() >= $0 } ?? false }) else { return }
        }
        if response.heldUntilReleased {
            guard wait(on: connection, until: { state.withLock { $0.released } }) else { return }
        }
        var head = "HTTP/1.1 \(response.status) \(response.reason)\r\nConnection: close\r\n"
        let names = Set(response.headers.map { $0.0.lowercased() })
        for (name, value) in response.headers {
            head += "\(name): \(value)\r\n"
        }
        // A response that declares its own framing (`Transfer-Encoding: chunked`, its body already in chunks) gets
        // no length either.
        if response.streamedBodySize == nil, !names.contains("content-length"), !names.contains("transfer-encoding") {
            head += "Content-Length: \(response.body.count)\r\n"
        }
        head += "\r\n"
        guard send(connection, Array(head.utf8)) else {
            noteHangUp()
            return
        }
        if let size = response.streamedBodySize {
            let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: response.chunkSize)
            var sent = 0
            while sent < size {
                if response.chunkDelay > 0 {
                    let deadline = DispatchTime.now() + response.chunkDelay
                    guard wait(on: connection, until: { DispatchTime.now() >= deadline }) else { return }
                }
                let count = min(chunk.count, size - sent)
                guard !isStopped, send(connection, Array(chunk[0..<count])) else {
                    noteHangUp()
                    return
                }
                sent += count
            }
        } else if !send(connection, response.body) {
            noteHangUp()
            return
        }
        if response.keptOpen {
            _ = wait(on: connection, until: { false })
            return
        }
        completed.withLock { $0.append(request.path) }
    }

    /// Counts a hang-up, unless the connection failed because the server is stopping.
    private func noteHangUp() {
        guard !isStopped else { return }
        hungUp.withLock { $0 += 1 }
    }

    /// Waits, checking every 10 ms, until `ready()` holds; false (a hang-up counted, unless the server stopped)
    /// when the client closes the connection first or the server stops.
    private func wait(on connection: Int32, until ready: () -> Bool) -> Bool {
        while true {
            if isStopped { return false }
            if ready() { return true }
            var descriptor = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, 10) > 0, clientHungUp(connection) {
                noteHangUp()
                return false
            }
        }
    }

    /// Whether the client has closed its end (end of stream or a reset); anything else it sent is read and dropped.
    private func clientHungUp(_ connection: Int32) -> Bool {
        var scratch = [UInt8](repeating: 0, count: 1024)
        let count = recv(connection, &scratch, scratch.count, Int32(MSG_DONTWAIT))
        if count > 0 { return false }
        return count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
    }

    private func readRequest(_ connection: Int32) -> Request? {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while buffer.count < 65_536 {
            let count = recv(connection, &chunk, chunk.count, 0)
            guard count > 0 else { return nil }
            buffer += chunk[0..<count]
            if let text = String(bytes: buffer, encoding: .utf8), let end = text.range(of: "\r\n\r\n") {
                let lines = text[..<end.lowerBound].components(separatedBy: "\r\n")
                let parts = lines[0].split(separator: " ")
                guard parts.count >= 2 else { return nil }
                var headers: [String: String] = [:]
                for line in lines.dropFirst() {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    let name = line[..<colon].lowercased()
                    headers[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
                return Request(method: String(parts[0]), path: String(parts[1]), headers: headers)
            }
        }
        return nil
    }

    /// Sends all of `bytes`; false when the peer has gone away.
    private func send(_ connection: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes {
                Glibc.send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }
}
