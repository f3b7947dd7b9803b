import Bolts
import Foundation
import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#endif

/// Which executor runs a framework server's Swift tasks, from its first command-line argument.
public enum ExecutorChoice: String, CaseIterable, Sendable {
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

    /// Whether the handlers run on `ThreadPool.shared` (`bolts`, `bolts-preferred`), whose stall
    /// reports the server then counts (`StallTally`).
    public var runsHandlersOnPool: Bool { self == .bolts || self == .boltsPreferred }

    /// The choice named by the first argument; exits with status 64 on anything else.
    public static func fromArguments(server: String) -> ExecutorChoice {
        let arguments = CommandLine.arguments
        guard arguments.count >= 2, let choice = ExecutorChoice(rawValue: arguments[1]) else {
            let names = allCases.map(\.rawValue).joined(separator: "|")
            fail("usage: \(server) <\(names)> [--port N] [--job-rounds N]", status: 64)
        }
        return choice
    }

    /// Installs the chosen global executor, or exits with status 70 saying why it could not:
    /// a server that went on with Swift's default executor would be measured under the wrong
    /// name. Both installs refuse once a Swift task has started or Dispatch's queues were used,
    /// so this must be the first thing `main` does. Returns the choice.
    public func install() -> ExecutorChoice {
        let installed: Bool
        switch self {
        case .default, .boltsPreferred: return self
        case .nio: installed = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        case .bolts: installed = ThreadPool.shared.unsafeTryInstallAsConcurrencyGlobalExecutor()
        }
        if !installed {
            fail("installing the \(rawValue) executor as the global executor failed", status: 70)
        }
        return self
    }
}

/// A server's start, its first statement: installs the executor its first argument names
/// (exiting when it cannot: `ExecutorChoice.install()`), starts counting the pool's stall
/// reports when the handlers run on it (`StallTally`), reads the options after it, and sets
/// the jobs' rounds. The install must come before anything starts a Swift task or touches
/// Dispatch. `server` names the executable in the usage line.
public func startServer(named server: String) -> (choice: ExecutorChoice, options: Options) {
    let choice = ExecutorChoice.fromArguments(server: server).install()
    if choice.runsHandlersOnPool { StallTally.shared.observe() }
    let options = Options.parse(Array(CommandLine.arguments.dropFirst(2)))
    Job.rounds = options.jobRounds
    return (choice, options)
}

/// The options after the executor choice.
public struct Options: Sendable {
    /// The port to bind on 127.0.0.1; 0 lets the system pick one.
    public var port = 0
    /// Rounds of `Job.work` per job (the benchmark passes its own calibration for ~3 µs).
    public var jobRounds = 1_000

    /// The options in `arguments` (the command line after the executor choice); exits with
    /// status 64 on an unknown or malformed one.
    public static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var index = 0
        while index + 1 < arguments.count {
            guard let value = Int(arguments[index + 1]), value >= 0 else { break }
            switch arguments[index] {
            case "--port": options.port = value
            case "--job-rounds": options.jobRounds = max(1, value)
            default: fail("unknown option \(arguments[index])", status: 64)
            }
            index += 2
        }
        if index != arguments.count { fail("bad options \(arguments)", status: 64) }
        return options
    }
}

/// Says why on standard error and exits with `status`.
public func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(status)
}

/// Writes `port <port>` on standard output, unbuffered: the benchmark waits for this line
/// before it sends a request.
public func announce(port: Int) {
    FileHandle.standardOutput.write(Data("port \(port)\n".utf8))
}

/// Ends the process when its standard input reaches its end: the benchmark holds the other end
/// of a pipe, so if the benchmark dies, its servers go too. A thread of its own (not a Swift
/// task or Dispatch), so that it takes no part in any executor's work.
public enum ParentWatch {
    /// Starts the watching thread.
    public static func start() {
        let thread = Thread {
            var byte: UInt8 = 0
            while read(STDIN_FILENO, &byte, 1) > 0 {}
            _exit(0)
        }
        thread.name = "parent-watch"
        thread.start()
    }
}
