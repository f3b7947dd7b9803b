import BenchmarkServerSupport
import Bolts
import Logging
import Vapor

/// The Vapor 4 server that the benchmark's "Inside a Vapor server" section loads with wrk, one
/// process per executor choice (`ExecutorChoice`); the same command line, port line, lifetime
/// and routes (`Handlers`) as `HummingbirdServer`, with Vapor's default middleware.
///
/// Usage: `VaporServer <default|nio|bolts|bolts-preferred> [--port N] [--job-rounds N]`.
/// It binds 127.0.0.1 (only loopback, ever) and serves until it is killed or its standard
/// input closes.
@main
struct VaporServer {
    static func main() async throws {
        // The first statement: installing a global executor must come before anything starts a
        // Swift task or touches Dispatch.
        let (choice, options) = startServer(named: "VaporServer")

        // Errors only, on standard error: the standard output carries the port line, and logging
        // per request would be measured as the server's work. The environment gets no arguments:
        // ours are not Vapor commands.
        LoggingSystem.bootstrap(StreamLogHandler.standardError)
        var logger = Logger(label: "VaporServer")
        logger.logLevel = .error
        let app = try await Application.make(
            Environment(name: "production", arguments: ["VaporServer"]), logger: logger)
        addRoutes(to: app, preferringPool: choice == .boltsPreferred)

        try await app.asyncBoot()
        try await app.server.start(address: .hostname("127.0.0.1", port: options.port))
        guard let port = app.http.server.shared.localAddress?.port else {
            fail("VaporServer: the server has no local address", status: 70)
        }
        announce(port: port)
        ParentWatch.start()
        // Serves until the process ends: the parent closes our standard input, or a signal.
        while true { try await Task.sleep(for: .seconds(3_600)) }
    }

    /// Every handler is an `async` closure, as in Hummingbird: Vapor runs those as Swift tasks on
    /// the global executor (a synchronous closure would run on the event loop, under no executor).
    /// With `preferringPool`, each handler's body runs inside
    /// `withTaskExecutorPreference(ThreadPool.shared)`: in the handler rather than in a
    /// middleware, because Vapor starts the route's task apart from the middleware's, and an
    /// unstructured task does not keep the middleware's preference.
    static func addRoutes(to app: Application, preferringPool: Bool) {
        func route<Body: AsyncResponseEncodable & Sendable>(
            _ path: PathComponent, _ body: @escaping @Sendable () async throws -> Body
        ) {
            app.get(path) { _ async throws -> Body in
                guard preferringPool else { return try await body() }
                return try await withTaskExecutorPreference(ThreadPool.shared) { try await body() }
            }
        }
        route("plain") { Handlers.plainText }
        route("json") { JSONGreeting(Greeting()) }
        route("fanout") { await Handlers.fanOut() }
        route("inline") { Handlers.inline() }
        route("executeall") { try await Handlers.executeAll() }
        route("bolts") { try await Handlers.boltsTask() }
        route("block") { Handlers.block() }
        route("thread") { Handlers.threadDescription() }
        route("pool") { Handlers.poolCounters() }
        route("stalls") { Handlers.stallReports() }
    }
}

/// The body of `/json`, as Vapor encodes it.
struct JSONGreeting: Content, Sendable {
    var message: String
    var id: Int
    var tags: [String]

    init(_ greeting: Greeting) {
        message = greeting.message
        id = greeting.id
        tags = greeting.tags
    }
}
