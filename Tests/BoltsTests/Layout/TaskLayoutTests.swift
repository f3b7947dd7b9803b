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

    /// Whether `task`'s header, as the property, is where `_TaskRef` finds it, and its core
    /// is the header's storage, 16-byte aligned.
    private static func headerIsAtTheOffset<T>(_ task: Task<T>) -> Bool {
        let ref = task._ref
        let atProperty = withUnsafeMutablePointer(to: &task._header) { $0 == ref.header }
        let storage = withUnsafeMutablePointer(to: &task._header.storage) { OpaquePointer($0) }
        return atProperty && ref.core == storage && Int(bitPattern: UnsafeRawPointer(ref.core)) % 16 == 0
    }

    @Test func theCoreIsTheHeadersFirstField() {
        #expect(MemoryLayout<_TaskHeader>.offset(of: \.storage) == 0)
        #expect(MemoryLayout<bolts_task_storage_t>.size == Int(BOLTS_TASK_SIZE))
        #expect(MemoryLayout<bolts_task_storage_t>.alignment == 16)
        #expect(_taskHeaderOffset % 16 == 0)
    }

    /// A completed task's core is complete with its outcome from the start; a pending one's
    /// zeroed storage is pending.
    @Test func coresInTheirTasksStartInTheirStates() {
        let tasks = [Task(1), Task<Int>(error: Failure()), Task<Int>.cancelledTask(), TaskCompletionSource<Int>().task]
        withExtendedLifetime(tasks) {
            #expect(tasks.map { bolts_task_state($0._core) } == [BOLTS_SUCCESS, BOLTS_ERROR, BOLTS_CANCELLED, BOLTS_PENDING])
            #expect(tasks.map { bolts_task_settled($0._core) } == [true, true, true, false])
        }
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
