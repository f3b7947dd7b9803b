import Foundation

/// A framework the benchmark measures a server of: its nested package `Benchmarks/<Name>Server`,
/// whose `<Name>Server` executable serves the routes of `Benchmarks/ServerSupport` under the
/// protocol `FrameworkServerProcess` speaks.
enum Framework: String, Codable, CaseIterable, Sendable {
    case hummingbird
    case vapor

    /// "Hummingbird", "Vapor".
    var name: String { rawValue.capitalized }

    /// The name with the major version measured: "Hummingbird 2", "Vapor 4".
    var versionedName: String { "\(name) \(self == .hummingbird ? 2 : 4)" }

    /// The section's heading, and the group of its verdicts.
    var group: String { "Inside a \(name) server" }

    /// The section its verdict rows carry ("hummingbird server", "vapor server").
    var section: Section { Section(rawValue: "\(rawValue) server") }

    /// The nested package, relative to the root package, and its server executable.
    var packageDirectory: String { "Benchmarks/\(product)" }
    var product: String { "\(name)Server" }

    /// What its section adds to the run's seed (`SectionContext.seed`): distinct from the other
    /// sections' offsets, so that each replays alone.
    var seedOffset: UInt64 { self == .hummingbird ? 4 : 5 }
}

/// The section "Inside a <framework> server" (`FrameworkSection`): a framework's server under
/// wrk, a child process per executor choice (`Arm`) and round, with the default executor's twin
/// for the A/A, in an order drawn at random, so each arm has the machine to itself. In each
/// child: a short wrk warm-up, one wrk run per route (1 thread, 32 connections) with the child's
/// CPU time around it, then (not in the twin) the blocking-handler run (`BlockingRun`).
///
/// Verdicts, paired by round: each route's requests/s, CPU per request and p99 for every arm
/// against the default executor, and for the pool installed against NIO's take-over; per arm,
/// `/plain`'s requests/s beside the blocking handlers ÷ alone just before, in the same child.
enum FrameworkBenchmark {
    /// An executor choice, the child's first argument (`rawValue`): Swift's default executor,
    /// SwiftNIO's event loops taking over as the global executor, `ThreadPool.shared` installed as
    /// the global executor, or the default executor with every route preferring the pool.
    enum Arm: String, Codable, CaseIterable, Sendable {
        case defaultExecutor = "default"
        case nio
        case bolts
        case boltsPreferred = "bolts-preferred"

        /// Its name in the verdicts, and the short one of tables and the progress line.
        private var titles: (long: String, short: String) {
            switch self {
            case .defaultExecutor: return ("Swift's default executor", "default executor")
            case .nio: return ("SwiftNIO's event loops as the global executor", "NIO take-over")
            case .bolts: return ("Bolts pool installed as the global executor", "Bolts installed")
            case .boltsPreferred: return ("Bolts pool as the routes' task executor preference", "Bolts preferred")
            }
        }

        var title: String { titles.long }
        var shortTitle: String { titles.short }

        /// Whether the child's handlers run on `ThreadPool.shared` (installed, or preferred): its
        /// `/thread` should say `onPool=true`, and its `/stalls` counts the pool's stall reports.
        var runsHandlersOnPool: Bool { self == .bolts || self == .boltsPreferred }
    }

    /// A route measured alone under wrk (`/block` is measured only beside `/plain`).
    enum Route: String, Codable, CaseIterable, Sendable {
        case plain
        case json
        case fanout
        case inline
        case executeall
        case bolts

        var path: String { rawValue }

        /// The route and what its handler does (the verdicts' names).
        var title: String {
            switch self {
            case .plain: return "/plain: plain text"
            case .json: return "/json: a small Codable value"
            case .fanout: return "/fanout: task group of 16 jobs of ~3 µs"
            case .inline: return "/inline: /fanout's 16 jobs in the handler, one after another (no tasks)"
            case .executeall: return "/executeall: Task.executeAll(.pool(.shared), count: 16) of ~3 µs"
            case .bolts: return "/bolts: one Bolts pool task of ~3 µs, awaited"
            }
        }
    }

    /// How the section loads its servers; `/plain` is always among `routes`, in the order each
    /// child runs them (the blocking ratio's denominator).
    struct Settings: Codable {
        var arms: [Arm]
        var routes: [Route]
        /// Seconds of each wrk run, and of the warm-up run (`/fanout`) in each child.
        var seconds: Int
        var warmUpSeconds: Int
        var wrkThreads: Int
        var connections: Int
        /// Connections of the second wrk, to `/block`, during the blocking-handler run.
        var blockConnections: Int
        /// The target duration of one job, and the rounds of the server's xorshift work that
        /// take about that long here (`serverJobRounds`, calibrated in this process).
        var jobNanoseconds: Int
        var jobRounds: Int

        var wrk: WrkSettings { WrkSettings(seconds: seconds, wrkThreads: wrkThreads, connections: connections) }
    }

    typealias Outcome = WrkOutcome<Arm, Settings>
}
