import Bolts

extension BenchmarksCommand {
    /// The server scenario's CPU-limit variant this run asks for, and the cgroup hierarchy it
    /// will use, or why it is skipped (`--quick`, `--cpu-limit 0`, no root, no writable `cpu`
    /// controller); nil when the server scenario does not run at all. Its configurations are
    /// those of `server` with 16 jobs (and, with `--full`, 1 job; else the first fan-out), of
    /// ~3 µs (else the longest job): within the default budget one configuration leaves the
    /// main server scenario its rounds.
    func cpuLimitVariant(server: ServerBenchmark) -> ServerCPULimitSection.Variant? {
        guard !server.peers.isEmpty else { return nil }
        var settings = server.settings
        let fanOuts = (full ? [16, 1] : [16]).filter(settings.fanOuts.contains)
        settings.fanOuts = fanOuts.isEmpty ? Array(settings.fanOuts.prefix(1)) : fanOuts
        settings.jobNanoseconds = [
            settings.jobNanoseconds.contains(3_000) ? 3_000 : (settings.jobNanoseconds.max() ?? 3_000)
        ]
        settings.cpus = cpuLimit
        let variant = ServerBenchmark(settings: settings, peers: server.peers)
        if quick { return (variant, .failure(.init(description: "not run with --quick"))) }
        if cpuLimit == 0 { return (variant, .failure(.init(description: "turned off with --cpu-limit 0"))) }
        return (variant, CPUQuotaCgroup.probe())
    }
}
