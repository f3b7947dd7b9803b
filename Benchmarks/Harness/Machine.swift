import Foundation
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// The machine a run happened on, for the report and the JSON.
struct Machine: Codable {
    var cpuModel: String
    /// Online CPUs (what `nproc` prints when no affinity mask narrows it).
    var onlineCPUs: Int
    /// CPUs this process may use (affinity and cgroup limits), as SwiftNIO counts them.
    var usableCPUs: Int
    var kernel: String
    var swiftCompiler: String
    var build: String
    var date: String
    /// /proc/loadavg's 1, 5 and 15 minute averages when the run started and when it ended:
    /// other work on the machine shows up here (the ratios stay same-run comparisons).
    var loadAverageAtStart: String
    var loadAverageAtEnd: String

    /// The current 1, 5 and 15 minute load averages.
    static func loadAverage() -> String {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "unknown" }
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    static func current(loadAverageAtStart: String) -> Machine {
        var cpuModel = "unknown CPU"
        if let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
            let line = info.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
            let colon = line.firstIndex(of: ":")
        {
            cpuModel = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var name = utsname()
        uname(&name)
        let kernel = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let machine = withUnsafeBytes(of: &name.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return Machine(
            cpuModel: cpuModel, onlineCPUs: sysconf(Int32(_SC_NPROCESSORS_ONLN)), usableCPUs: System.coreCount,
            kernel: "Linux \(kernel) \(machine)", swiftCompiler: compilerVersion,
            build: isDebugBuild ? "debug" : "release", date: ISO8601DateFormatter().string(from: Date()),
            loadAverageAtStart: loadAverageAtStart, loadAverageAtEnd: loadAverage())
    }

    var summary: String {
        "\(cpuModel), \(onlineCPUs) online CPUs (\(usableCPUs) usable), \(kernel), Swift \(swiftCompiler), "
            + "\(build) build, \(date); load average \(loadAverageAtStart) at the start, \(loadAverageAtEnd) at the end"
    }
}

#if compiler(>=6.4)
    private let compilerVersion = "6.4 or later"
#elseif compiler(>=6.3)
    private let compilerVersion = "6.3"
#elseif compiler(>=6.2)
    private let compilerVersion = "6.2"
#elseif compiler(>=6.1)
    private let compilerVersion = "6.1"
#else
    private let compilerVersion = "6.0"
#endif
