import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What the machine was doing during one round, from the kernel's own accounts (`/proc/stat`,
/// `getrusage`): stolen CPU time, other processes' CPU time (the machine's busy time less this
/// process's and its children's), involuntary context switches, and the load average.
struct RoundNoise: Codable, Sendable {
    var seconds: Double
    /// Stolen CPU time ÷ all CPU time, in percent.
    var stealPercent: Double
    /// CPUs' worth of time used by other processes on average (1.0: one whole CPU).
    var otherProcessesCPUs: Double
    /// This process's (and its waited-for children's) CPU time ÷ the wall time.
    var cpuOverWall: Double
    /// Involuntary context switches of this process and its children, per second.
    var involuntarySwitchesPerSecond: Double
    /// The 1-minute load average when the round started.
    var loadAverage: Double
    /// Why the round looks contaminated; empty when it does not.
    var flags: [String]

    var isContaminated: Bool { !flags.isEmpty }
}

/// Takes the readings before and after a round.
struct NoiseProbe {
    /// Flag a round when more than this percentage of CPU time was stolen.
    static let stealLimitPercent = 2.0
    /// Flag a round when other processes used more than this many CPUs on average; judged
    /// only on rounds of at least `minimumSecondsForOthers`, since `/proc/stat` counts in
    /// 10 ms ticks.
    static let otherProcessesLimit = 0.25
    static let minimumSecondsForOthers = 0.25
    /// Flag a round whose involuntary switch rate exceeds this multiple of its comparison's
    /// median (preempted far more than its neighbours).
    static let switchRateLimit = 4.0

    /// The clock, `/proc/stat`, this process's and its children's CPU time and involuntary
    /// switches (`getrusage`), and the load average, at one moment.
    typealias Reading = (
        time: UInt64, cpu: CPUTimes, ownCPUSeconds: Double, involuntarySwitches: Int, loadAverage: Double
    )

    /// `/proc/stat`'s aggregate line, in ticks.
    typealias CPUTimes = (busy: Double, steal: Double, total: Double)

    static func read() -> Reading {
        var own = rusage()
        var children = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &own)
        getrusage(__rusage_who_t(RUSAGE_CHILDREN.rawValue), &children)
        let cpuSeconds = [own.ru_utime, own.ru_stime, children.ru_utime, children.ru_stime].reduce(0.0) {
            $0 + (Double($1.tv_sec) + Double($1.tv_usec) / 1e6)
        }
        return (now(), cpuTimes(), cpuSeconds, own.ru_nivcsw + children.ru_nivcsw, loadAverage())
    }

    static func between(_ start: Reading, _ end: Reading) -> RoundNoise {
        let wall = max(Double(end.time &- start.time) / 1e9, 1e-9)
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let total = end.cpu.total - start.cpu.total
        let steal = total > 0 ? 100 * (end.cpu.steal - start.cpu.steal) / total : 0
        let busySeconds = (end.cpu.busy - start.cpu.busy) / ticks
        let own = end.ownCPUSeconds - start.ownCPUSeconds
        let others = max(0, busySeconds - own) / wall
        var flags: [String] = []
        if steal > stealLimitPercent { flags.append("steal \(steal.fixed(1))%") }
        if wall >= minimumSecondsForOthers, others > otherProcessesLimit {
            flags.append("other processes \(others.fixed(2)) CPUs")
        }
        return RoundNoise(
            seconds: wall, stealPercent: steal, otherProcessesCPUs: others, cpuOverWall: own / wall,
            involuntarySwitchesPerSecond: Double(end.involuntarySwitches - start.involuntarySwitches) / wall,
            loadAverage: start.loadAverage, flags: flags)
    }

    /// Adds the switch-rate flag to the rounds of one comparison, against their median.
    static func flagPreemption(_ rounds: inout [RoundNoise]) {
        let rates = rounds.map(\.involuntarySwitchesPerSecond).sorted()
        guard rates.count >= 3 else { return }
        let median = rates[rates.count / 2]
        guard median > 0 else { return }
        for index in rounds.indices where rounds[index].involuntarySwitchesPerSecond > switchRateLimit * median {
            rounds[index].flags.append(
                "preempted \(rounds[index].involuntarySwitchesPerSecond.fixed(0))×/s (median \(median.fixed(0))×/s)"
            )
        }
    }

    static func cpuTimes() -> CPUTimes {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") })
        else { return (0, 0, 0) }
        // user nice system idle iowait irq softirq steal guest guest_nice (guest time is
        // already inside user and nice).
        let fields = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard fields.count >= 8 else { return (0, 0, 0) }
        let busy = fields[0] + fields[1] + fields[2] + fields[5] + fields[6]
        return (busy, fields[7], fields[0..<8].reduce(0, +))
    }

    /// The 1-minute load average (0 when unknown).
    static func loadAverage() -> Double {
        Machine.loadAverage().split(separator: " ").first.flatMap { Double($0) } ?? 0
    }
}

/// A comparison's noise, summed over its rounds.
struct NoiseSummary: Codable, Sendable {
    var rounds: Int
    var contaminatedRounds: Int
    var stealPercent: Double
    var otherProcessesCPUs: Double
    var maximumLoadAverage: Double

    init(_ rounds: [RoundNoise]) {
        self.rounds = rounds.count
        contaminatedRounds = rounds.filter(\.isContaminated).count
        let seconds = rounds.reduce(0) { $0 + $1.seconds }
        stealPercent = seconds > 0 ? rounds.reduce(0) { $0 + $1.stealPercent * $1.seconds } / seconds : 0
        otherProcessesCPUs = seconds > 0 ? rounds.reduce(0) { $0 + $1.otherProcessesCPUs * $1.seconds } / seconds : 0
        maximumLoadAverage = rounds.map(\.loadAverage).max() ?? 0
    }
}
