import BenchmarkServerSupport
import Bolts
import Hummingbird
import Logging

/// The Hummingbird 2 server that the benchmark's "Inside a Hummingbird server" section loads
/// with wrk, one process per executor choice (`ExecutorChoice`).
///
/// Usage: `HummingbirdServer <default|nio|bolts|bolts-preferred> [--port N] [--job-rounds N]`.
/// It binds 127.0.0.1 (only loopback, ever) on port N, or on a port the system picks with 0
/// (the default), and prints `port <port>` on standard output once it accepts connections.
/// It serves until it is killed (SIGTERM or SIGINT end it gracefully) or its standard input
/// closes, so that it never outlives the benchmark that started it. Its routes are those of
/// `Handlers` (every one a GET).
@main
struct HummingbirdServer {
    static func main() async throws {
        // The first statement: installing a global executor must come before anything starts a
        // Swift task or touches Dispatch.
        let (choice, options) = startServer(named: "HummingbirdServer")
        let router = Router()
        if choice == .boltsPreferred { router.add(middleware: PoolPreferenceMiddleware()) }
        addRoutes(to: router)

        // Errors only, on standard error: the standard output carries the port line, and logging
        // per request would be measured as the server's work.
        LoggingSystem.bootstrap(StreamLogHandler.standardError)
        var logger = Logger(label: "HummingbirdServer")
        logger.logLevel = .error
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: options.port), serverName: nil),
            onServerRunning: { channel in announce(port: channel.localAddress?.port ?? -1) },
            logger: logger
        )
        ParentWatch.start()
        try await app.runService()
    }

    static func addRoutes(to router: Router<BasicRequestContext>) {
        router.get("plain") { _, _ in Handlers.plainText }
        router.get("json") { _, _ in JSONGreeting(Greeting()) }
        router.get("fanout") { _, _ in await Handlers.fanOut() }
        router.get("inline") { _, _ in Handlers.inline() }
        router.get("executeall") { _, _ in try await Handlers.executeAll() }
        router.get("bolts") { _, _ in try await Handlers.boltsTask() }
        router.get("block") { _, _ in Handlers.block() }
        router.get("thread") { _, _ in Handlers.threadDescription() }
        router.get("pool") { _, _ in Handlers.poolCounters() }
        router.get("stalls") { _, _ in Handlers.stallReports() }
    }
}

/// The body of `/json`, as Hummingbird encodes it.
struct JSONGreeting: ResponseEncodable {
    var greeting: Greeting

    init(_ greeting: Greeting) { self.greeting = greeting }

    func encode(to encoder: any Encoder) throws { try greeting.encode(to: encoder) }
}

/// Runs every route inside `withTaskExecutorPreference(ThreadPool.shared)`: the handler, its
/// task-group children and its resumptions after an await run on the pool, while Swift's
/// default executor stays the global one (the `bolts-preferred` choice).
struct PoolPreferenceMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        try await withTaskExecutorPreference(ThreadPool.shared) {
            try await next(request, context)
        }
    }
}
