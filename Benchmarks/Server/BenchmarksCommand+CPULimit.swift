import Bolts

extension BenchmarksCommand {
    /// The server scenario's CPU-limit variant this run asks for, and the cgroup hierarchy it
    /// will use, or why it is skipped (`--quick`, `--cpu-limit 0`, no root, no writable `cpu`
    /// controller); nil when the server scenario does not run at all. Its configurations are
    /// those of `server` with 16 jobs (and, with `--full`, 1 job; else the first fan-out), of
    /// ~3 µs (else the longest job): within the default budget one configuration leaves the
    /// main server scenario its rounds.
    func cpuLimitVariant(
        server: ServerBenchmark,
        peers: [ServerPeer]
    ) -> (variant: ServerCPULimit, hierarchy: Result<CgroupCPULimit.Hierarchy, CPUQuotaCgroup.Failure>)? {
        guard !peers.isEmpty else { return nil }
        let settings = server.settings
        var fanOuts = (full ? [16, 1] : [16]).filter(settings.fanOuts.contains)
        if fanOuts.isEmpty { fanOuts = Array(settings.fanOuts.prefix(1)) }
        let job = settings.jobNanoseconds.contains(3_000) ? 3_000 : (settings.jobNanoseconds.max() ?? 3_000)
        let configurations = fanOuts.map { fanOut in
            ServerBenchmark.Configuration(
                fanOut: fanOut,
                jobNanoseconds: job,
                rounds: serverJobRounds(forNanoseconds: Double(job))
            )
        }
        let variant = ServerCPULimit(
            settings: .init(
                cpus: cpuLimit,
                configurations: configurations,
                seconds: settings.seconds,
                eventLoops: settings.eventLoops,
                wrkThreads: settings.wrkThreads,
                connections: settings.connections
            ),
            peers: peers
        )
        if quick { return (variant, .failure(.init(description: "not run with --quick"))) }
        if cpuLimit == 0 { return (variant, .failure(.init(description: "turned off with --cpu-limit 0"))) }
        return (variant, CPUQuotaCgroup.probe())
    }
}
