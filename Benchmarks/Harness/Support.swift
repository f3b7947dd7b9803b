/// Raised when a scenario's own check of its result fails (it measured the wrong thing).
enum BenchmarkError: Error, CustomStringConvertible {
    case wrongResult(String)

    var description: String {
        switch self {
        case .wrongResult(let what): return "wrong result: \(what)"
        }
    }
}

extension Int {
    /// 1000000 as "10^6", 10000 as "10^4"; other numbers as they are.
    var formatted: String {
        var power = 0
        var rest = self
        while rest >= 10, rest % 10 == 0 {
            rest /= 10
            power += 1
        }
        return rest == 1 && power >= 3 ? "10^\(power)" : String(self)
    }
}
