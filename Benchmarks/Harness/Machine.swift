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

    static func current() -> Machine {
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
        let formatter = ISO8601DateFormatter()
        return Machine(
            cpuModel: cpuModel,
            onlineCPUs: sysconf(Int32(_SC_NPROCESSORS_ONLN)),
            usableCPUs: System.coreCount,
            kernel: "Linux \(kernel) \(machine)",
            swiftCompiler: compilerVersion,
            build: isDebugBuild ? "debug" : "release",
            date: formatter.string(from: Date())
        )
    }

    var summary: String {
        "\(cpuModel), \(onlineCPUs) online CPUs (\(usableCPUs) usable), \(kernel), Swift \(swiftCompiler), \(build) build, \(date)"
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
