/// Raised when a scenario's own check of its result fails (it measured the wrong thing).
enum BenchmarkError: Error, CustomStringConvertible {
    case wrongResult(String)

    var description: String {
        switch self {
        case .wrongResult(let what): return "wrong result: \(what)"
        }
    }
}

