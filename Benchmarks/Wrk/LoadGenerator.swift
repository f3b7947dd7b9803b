import Foundation

/// wrk (the distribution's package), run as a separate process against the server on 127.0.0.1;
/// a Lua `done` hook prints its summary and latency percentiles as one JSON line, all this reads.
struct WrkLoadGenerator {
    let executable: String
    let threads: Int
    let connections: Int

    /// What one wrk run measured (latencies in microseconds, as wrk records them).
    struct Run: Codable {
        var requests: Int
        var seconds: Double
        var errors: Int
        var timeouts: Int
        var non2xx: Int
        var p50: Double
        var p90: Double
        var p99: Double
        var p999: Double
        var max: Double
        var mean: Double
    }

    enum Failure: Error, CustomStringConvertible {
        case notFound
        case failed(status: Int32, output: String)

        var description: String {
            switch self {
            case .notFound: "wrk is not installed (apt-get install -y wrk); the server scenario is skipped"
            case .failed(let status, let output): "wrk exited with status \(status): \(output.suffix(400))"
            }
        }
    }

    /// Finds wrk on PATH (or in /usr/bin or /usr/local/bin), or nil.
    static func find() -> String? { findExecutable("wrk", fallbacks: ["/usr/bin", "/usr/local/bin"]) }

    private static let marker = "BOLTS-WRK "

    /// The Lua hook: wrk's `done` gets the summary and the latency histogram.
    private static let script = """
        done = function(summary, latency, requests)
          local e = summary.errors
          io.write(string.format(
            '\(marker){"requests":%d,"seconds":%.6f,"errors":%d,"timeouts":%d,"non2xx":%d,' ..
            '"p50":%.1f,"p90":%.1f,"p99":%.1f,"p999":%.1f,"max":%.1f,"mean":%.1f}\\n',
            summary.requests, summary.duration / 1e6, e.connect + e.read + e.write, e.timeout, e.status,
            latency:percentile(50), latency:percentile(90), latency:percentile(99),
            latency:percentile(99.9), latency.max, latency.mean))
        end
        """

    /// Loads `url` for `seconds` and returns wrk's numbers. The timeout is far above any
    /// latency the scenario should see, so a stall is measured rather than cut off.
    func run(url: String, seconds: Int) throws -> Run {
        let scriptURL = FileManager.default.temporaryDirectory.appendingPathComponent("bolts-wrk-\(getpid()).lua")
        try Self.script.write(to: scriptURL, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: scriptURL) }

        let options = ["-t", String(threads), "-c", String(connections), "-d", "\(seconds)s", "--timeout", "30s"]
        let (data, status) = try runProcess(executable, options + ["-s", scriptURL.path, url], mergingErrors: true)
        let text = String(decoding: data, as: UTF8.self)
        guard status == 0, let line = text.split(separator: "\n").last(where: { $0.hasPrefix(Self.marker) }) else {
            throw Failure.failed(status: status, output: text)
        }
        return try JSONDecoder().decode(Run.self, from: Data(line.dropFirst(Self.marker.count).utf8))
    }
}
