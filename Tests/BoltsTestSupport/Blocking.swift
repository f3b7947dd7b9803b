import Bolts

/// A synchronous wait reached from async code (the library keeps its own waits out of async
/// contexts; code that blocks anyway goes through a function like this). Returns the task's
/// value, or nil if it did not succeed.
@discardableResult
package func blockUntilCompleted<T>(_ task: Task<T>) -> T? {
    task.waitUntilCompleted()
    return task.result
}
