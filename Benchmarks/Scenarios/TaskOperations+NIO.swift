import NIOCore

// SwiftNIO's futures and promises, the reference peer for the task operations. Each
// scenario submits one job to its event loop and times inside it, on the loop's own
// thread, which is how SwiftNIO code runs (and where SwiftNIO skips its cross-thread
// paths). Closures capture nothing unless the name says otherwise.
extension TaskOperation {
    /// `map` on a future that has already succeeded. Allocations: the new promise's future
    /// and the callback's context (RUNTIME-NOTES measured 3).
    static func nioMapOnSucceeded(_ loop: any EventLoop) -> TaskOperation {
        onLoop(
            loop, "NIOMapOnSucceeded",
            "SwiftNIO map on a succeeded future, on its event loop (closure captures nothing)",
            allocations: "~3: future, callback contexts"
        ) { iterations in
            let succeeded = loop.makeSucceededFuture(1)
            return measure(iterations: iterations) {
                for _ in 0..<iterations {
                    consume(succeeded.map { $0 &+ 1 })
                }
            }
        }
    }

    /// `flatMap` on a succeeded future, the closure returning a new succeeded future (it has
    /// to capture the loop to make one). Allocations: the new future, the returned future,
    /// callback contexts.
    static func nioFlatMapOnSucceeded(_ loop: any EventLoop) -> TaskOperation {
        onLoop(
            loop, "NIOFlatMapOnSucceeded",
            "SwiftNIO flatMap on a succeeded future, returning a new succeeded future, on its loop (captures the loop)",
            allocations: "~4: two futures, callback contexts"
        ) { iterations in
            let succeeded = loop.makeSucceededFuture(1)
            return measure(iterations: iterations) {
                for _ in 0..<iterations {
                    consume(succeeded.flatMap { loop.makeSucceededFuture($0 &+ 1) })
                }
            }
        }
    }

    /// `makePromise` + `succeed`, with nobody waiting. Allocations: the future (the promise
    /// is a struct): 1.
    static func nioPromiseCreateAndSucceed(_ loop: any EventLoop) -> TaskOperation {
        onLoop(
            loop, "NIOPromiseCreateAndSucceed", "SwiftNIO makePromise + succeed, nobody waiting, on its event loop",
            allocations: "1: future"
        ) { iterations in
            measure(iterations: iterations) {
                for i in 0..<iterations {
                    let promise = loop.makePromise(of: Int.self)
                    promise.succeed(i)
                    consume(promise.futureResult)
                }
            }
        }
    }

    /// `makePromise`, `continuations` `map`s on its pending future, then `succeed`, which runs
    /// them; one op is the whole sequence. Allocations: the promise's future, then per `map`
    /// a future and contexts.
    static func nioPromiseWithWaitersThenSucceed(_ loop: any EventLoop, continuations: Int) -> TaskOperation {
        onLoop(
            loop, "NIOPromiseWithWaitersThenSucceed",
            "SwiftNIO makePromise + \(continuations) waiting map + succeed, on its event loop",
            allocations: "1 + ~2-3 per map"
        ) { iterations in
            measure(iterations: iterations) {
                for i in 0..<iterations {
                    let promise = loop.makePromise(of: Int.self)
                    for _ in 0..<continuations {
                        consume(promise.futureResult.map { $0 &+ 1 })
                    }
                    promise.succeed(i)
                }
            }
        }
    }

    /// A chain of `links` `map`s on a pending future, then `succeed`, which runs the chain.
    /// One op is one link. Allocations per link: its future and callback contexts.
    static func nioPendingChainThenSucceed(_ loop: any EventLoop, links: Int) -> TaskOperation {
        onLoop(
            loop, "NIOPendingChainThenSucceed",
            "SwiftNIO chain of \(links.formatted) pending map links, then succeed, on its event loop (per link)",
            unit: "link", fixedIterations: links, allocations: "~2-3 per link: future, callback contexts"
        ) { iterations in
            var result = -1
            let sample = measure(iterations: iterations) {
                let promise = loop.makePromise(of: Int.self)
                var last = promise.futureResult
                for _ in 0..<iterations {
                    last = last.map { $0 &+ 1 }
                }
                promise.succeed(0)
                last.assumeIsolated().whenSuccess { result = $0 }
            }
            guard result == iterations else { throw BenchmarkError.wrongResult("chain ended with \(result)") }
            return sample
        }
    }

    /// The aggregate `nioAllSucceed` measures; the case names are SwiftNIO's, and its name's.
    enum AllSucceedForm {
        case andAllSucceed
        case whenAllSucceed
    }

    /// `andAllSucceed` (no values) or `whenAllSucceed` (collects the values) over `inputs`
    /// pending promises, all succeeded on the loop. One op is one input. Allocations per
    /// input: the promise's future and the aggregate's callback (~2-3).
    static func nioAllSucceed(_ loop: any EventLoop, inputs: Int, form: AllSucceedForm) -> TaskOperation {
        onLoop(
            loop, "NIOAllSucceed",
            "SwiftNIO \(form) over \(inputs.formatted) promises, succeeded on its event loop (per input)",
            unit: "input", fixedIterations: inputs, allocations: "~2-3: future, aggregate callback"
        ) { iterations in
            var done = false
            let sample = measure(iterations: iterations) {
                var promises: [EventLoopPromise<Int>] = []
                promises.reserveCapacity(iterations)
                var futures: [EventLoopFuture<Int>] = []
                futures.reserveCapacity(iterations)
                for _ in 0..<iterations {
                    let promise = loop.makePromise(of: Int.self)
                    promises.append(promise)
                    futures.append(promise.futureResult)
                }
                switch form {
                case .andAllSucceed:
                    let all = EventLoopFuture.andAllSucceed(futures, on: loop)
                    for promise in promises { promise.succeed(1) }
                    all.assumeIsolated().whenSuccess { done = true }
                case .whenAllSucceed:
                    let all = EventLoopFuture.whenAllSucceed(futures, on: loop)
                    for promise in promises { promise.succeed(1) }
                    all.assumeIsolated().whenSuccess { done = $0.count == iterations }
                }
            }
            guard done else { throw BenchmarkError.wrongResult("the aggregate did not succeed on the loop") }
            return sample
        }
    }
}
