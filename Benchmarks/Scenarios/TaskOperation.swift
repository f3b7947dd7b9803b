import NIOCore

/// A task-operation scenario as data: what the report names and keys it by, and the body
/// that measures one sample, so that `Catalog.taskOperations` declares every arm in one table.
final class TaskOperation: Scenario {
    /// Its identifier in verdict keys (`VerdictKey.arm`), unique within its comparison.
    let id: String
    let subject: Subject
    let name: String
    let unit: String
    let fixedIterations: Int?
    let expectedAllocations: String
    private let body: (Int) throws -> Sample

    /// An operation whose `body` runs, and times itself, on the calling thread.
    init(
        _ id: String, _ subject: Subject, _ name: String, unit: String = "op", fixedIterations: Int? = nil,
        allocations: String, body: @escaping (_ iterations: Int) throws -> Sample
    ) {
        self.id = id
        self.subject = subject
        self.name = name
        self.unit = unit
        self.fixedIterations = fixedIterations
        expectedAllocations = allocations
        self.body = body
    }

    func run(iterations: Int) throws -> Sample { try body(iterations) }

    /// A SwiftNIO operation whose `body` runs, and times itself, in one job on `loop`'s thread.
    static func onLoop(
        _ loop: any EventLoop, _ id: String, _ name: String, unit: String = "op", fixedIterations: Int? = nil,
        allocations: String, body: @escaping @Sendable (_ iterations: Int) throws -> Sample
    ) -> TaskOperation {
        TaskOperation(
            id, .nio, name, unit: unit, fixedIterations: fixedIterations, allocations: allocations
        ) { iterations in try loop.submit { try body(iterations) }.wait() }
    }

    /// An operation whose `body` runs, and times itself, in a detached Swift task (`runAsync`).
    static func inSwiftTask(
        _ id: String, _ subject: Subject, _ name: String, allocations: String,
        body: @escaping @Sendable (_ iterations: Int) async throws -> Sample
    ) -> TaskOperation {
        TaskOperation(id, subject, name, allocations: allocations) { iterations in
            try runAsync { try await body(iterations) }
        }
    }
}
