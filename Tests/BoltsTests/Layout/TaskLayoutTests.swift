import CBoltsRuntime
import Testing

@testable import Bolts

/// Code that does not know a task's value type (the C core's callbacks, `whenAll`'s join,
/// the tuple `whenAll`) reads the task's header at `_taskHeaderOffset` (`_TaskRef`). These
/// check that the header is there for value types of every kind and size, and that what
/// one side writes the other reads.
@Suite struct TaskLayoutTests {
    private struct Large: Sendable, Equatable {
        var words: (Int, Int, Int, Int, Int, Int, Int, Int, Int, Int) = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
        static func == (a: Large, b: Large) -> Bool { a.words.0 == b.words.0 && a.words.9 == b.words.9 }
    }

    private final class Reference: Sendable {}

    private struct Failure: Error {}

    /// Whether `task`'s header, as the property, is where `_TaskRef` finds it, and holds
    /// the same core.
    private static func headerIsAtTheOffset<T>(_ task: Task<T>) -> Bool {
        let ref = task._ref
        let atProperty = withUnsafeMutablePointer(to: &task._header) { $0 == ref.header }
        return atProperty && ref.core == task._header.core
    }

    @Test func theHeaderIsAtTheSameOffsetForEveryValueType() {
        #expect(Self.headerIsAtTheOffset(Task(1)))
        #expect(Self.headerIsAtTheOffset(Task(UInt8(1))))
        #expect(Self.headerIsAtTheOffset(Task(())))
        #expect(Self.headerIsAtTheOffset(Task("a string")))
        #expect(Self.headerIsAtTheOffset(Task(Large())))
        #expect(Self.headerIsAtTheOffset(Task(Reference())))
        #expect(Self.headerIsAtTheOffset(Task<Int?>(nil)))
        #expect(Self.headerIsAtTheOffset(Task<Never>.cancelledTask()))
        #expect(Self.headerIsAtTheOffset(Task<Task<Int>>(Task(1))))
        #expect(Self.headerIsAtTheOffset(TaskCompletionSource<[String: Int]>().task))
    }

    @Test func whatTheRefWritesThePropertyReadsAndBack() {
        let source = TaskCompletionSource<Large>()
        let task = source.task
        #expect(task._ref.header.pointee.parkedStep == nil)
        task._ref.header.pointee.parkedStep = _FollowStep<Int>.self
        #expect(task._header.parkedStep == _FollowStep<Int>.self)
        task._header.parkedStep = nil
        #expect(task._ref.header.pointee.parkedStep == nil)
        #expect(task._ref.header.pointee.line == task._header.line)
        #expect(_isPOD(_TaskHeader.self))
    }

    /// The erased paths end to end: a continuation (own job callback), `whenAll`'s join
    /// and the tuple `whenAll` over tasks of different sizes, pending then completed.
    @Test func erasedPathsSeeTheRightTasks() async throws {
        let small = TaskCompletionSource<UInt8>()
        let large = TaskCompletionSource<Large>()
        let text = TaskCompletionSource<String>()
        let tuple = Task.whenAll(small.task, large.task, text.task)
        let all = Task.whenAllResult([large.task, large.task])
        let next = large.task.continueOnSuccessWith(.immediate) { $0.words.9 }
        small.set(result: 7)
        large.set(result: Large())
        text.set(error: Failure())
        #expect(try await next.value == 10)
        #expect(try await all.value == [Large(), Large()])
        #expect(tuple.error is Failure)
    }
}
