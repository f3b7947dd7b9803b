/// Whose implementation a scenario measures.
enum Subject: String, Codable, Sendable {
    case bolts = "Bolts"
    case nio = "SwiftNIO"
    case concurrency = "Swift Concurrency"
    case dispatch = "Dispatch"
    case foundation = "Foundation"
}
