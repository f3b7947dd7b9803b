import Bolts
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#endif

/// The Hummingbird 2 server that the benchmark's "Inside a Hummingbird server" section loads
/// with wrk, one process per executor choice (`ExecutorChoice`).
///
/// Usage: `HummingbirdServer <default|nio|bolts|bolts-preferred> [--port N] [--job-rounds N]`.
/// It binds 127.0.0.1 (only loopback, ever) on port N, or on a port the system picks with 0
/// (the default), and prints `port <port>` on standard output once it accepts connections.
/// It serves until it is killed (SIGTERM or SIGINT end it gracefully) or its standard input
/// closes, so that it never outlives the benchmark that started it.
///
/// Routes (every one a GET):
/// - `/plain`: a short plain-text body.
/// - `/json`: a small `Codable` value, encoded as JSON.
/// - `/fanout`: a task group of 16 child tasks, each one CPU job (`Job`).
/// - `/inline`: the same 16 jobs run in the handler, one after another: `/fanout` without the
///   executor's part.
/// - `/executeall`: `Task.executeAll(.pool(.shared), count: 16)` of the same jobs, awaited.
/// - `/bolts`: one Bolts task on `ThreadPool.shared` running one job, awaited.
/// - `/block`: blocks its thread for 20 ms with `usleep`, as a synchronous driver would, with
///   no cooperation with any executor.
/// - `/thread`: where the handler runs: the thread's name and whether it is a worker of
///   `ThreadPool.shared` (for checking each executor choice, not measured).
@main
struct HummingbirdServer {
    static func main() async throws {
        // The first statement: installing a global executor must come before anything starts a
        // Swift task or touches Dispatch (see `ExecutorChoice.install()`).
        let choice = ExecutorChoice.fromArguments().install()

        let options = Options.parse(Array(CommandLine.arguments.dropFirst(2)))
        Job.rounds = options.jobRounds
        let router = Router()
        if choice == .boltsPreferred { router.add(middleware: PoolPreferenceMiddleware()) }
        Routes.add(to: router)

        // Errors only, on standard error: the standard output carries the port line, and logging
        // per request would be measured as the server's work.
        LoggingSystem.bootstrap(StreamLogHandler.standardError)
        var logger = Logger(label: "HummingbirdServer")
        logger.logLevel = .error
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: options.port), serverName: nil),
            onServerRunning: { channel in
                // Unbuffered: the benchmark waits for this line before it sends a request.
                let port = channel.localAddress?.port ?? -1
                FileHandle.standardOutput.write(Data("port \(port)\n".utf8))
            },
            logger: logger
        )
        ParentWatch.start()
        try await app.runService()
    }
}

/// Which executor runs the process's Swift tasks, from the first command-line argument.
enum ExecutorChoice: String, CaseIterable {
    /// Swift's default global executor (Dispatch's threads).
    case `default`
    /// SwiftNIO's event loops take over as the global executor
    /// (`NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()`),
    /// so the handlers run on the loops that serve the sockets.
    case nio
    /// `ThreadPool.shared` installed as the global executor.
    case bolts
    /// Swift's default executor, with every route run inside
    /// `withTaskExecutorPreference(ThreadPool.shared)`.
    case boltsPreferred = "bolts-preferred"

    /// The choice named by the first argument; exits with status 64 on anything else.
    static func fromArguments() -> ExecutorChoice {
        let arguments = CommandLine.arguments
        guard arguments.count >= 2, let choice = ExecutorChoice(rawValue: arguments[1]) else {
            let names = allCases.map(\.rawValue).joined(separator: "|")
            fail("usage: HummingbirdServer <\(names)> [--port N] [--job-rounds N]", status: 64)
        }
        return choice
    }

    /// Installs the chosen global executor, or exits with status 70 saying why it could not:
    /// a server that went on with Swift's default executor would be measured under the wrong
    /// name. Both installs refuse once a Swift task has started or Dispatch's queues were used.
    /// Returns the choice.
    func install() -> ExecutorChoice {
        let installed: Bool
        switch self {
        case .default, .boltsPreferred: return self
        case .nio: installed = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        case .bolts: installed = ThreadPool.shared.unsafeTryInstallAsConcurrencyGlobalExecutor()
        }
        if !installed {
            fail("HummingbirdServer: installing the \(rawValue) executor as the global executor failed", status: 70)
        }
        return self
    }
}

/// The options after the executor choice.
struct Options {
    var port = 0
    /// Rounds of `Job.work` per job (the benchmark passes its own calibration for ~3 µs).
    var jobRounds = 1_000

    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var index = 0
        while index + 1 < arguments.count {
            guard let value = Int(arguments[index + 1]), value >= 0 else { break }
            switch arguments[index] {
            case "--port": options.port = value
            case "--job-rounds": options.jobRounds = max(1, value)
            default:
                fail("HummingbirdServer: unknown option \(arguments[index])", status: 64)
            }
            index += 2
        }
        if index != arguments.count {
            fail("HummingbirdServer: bad options \(arguments)", status: 64)
        }
        return options
    }
}

/// Says why on standard error and exits with `status`.
func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(status)
}

/// Ends the process when its standard input reaches its end: the benchmark holds the other end
/// of a pipe, so if the benchmark dies, its servers go too. A thread of its own (not a Swift
/// task or Dispatch), so that it takes no part in any executor's work.
enum ParentWatch {
    static func start() {
        let thread = Thread {
            var byte: UInt8 = 0
            while read(STDIN_FILENO, &byte, 1) > 0 {}
            _exit(0)
        }
        thread.name = "parent-watch"
        thread.start()
    }
}
