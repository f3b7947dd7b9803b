import NIOCore

// SwiftNIO's futures and promises, the reference peer for the task operations. Each
// scenario submits one job to its event loop and times inside it, on the loop's own
// thread, which is how SwiftNIO code runs (and where SwiftNIO skips its cross-thread
// paths). Closures capture nothing unless the name says otherwise.

/// `map` on a future that has already succeeded.
///
/// Expected allocations per op: the new promise's future and the callback's context
/// (RUNTIME-NOTES measured 3).
final class NIOMapOnSucceeded: Scenario {
    let name = "SwiftNIO map on a succeeded future, on its event loop (closure captures nothing)"
    let subject = Subject.nio
    let expectedAllocations = "~3: future, callback contexts"
    private let loop: any EventLoop

    init(loop: any EventLoop) { self.loop = loop }

    func run(iterations: Int) throws -> Sample {
        let loop = loop
        return try loop.submit {
            let succeeded = loop.makeSucceededFuture(1)
            return measure(iterations: iterations) {
                for _ in 0..<iterations {
                    consume(succeeded.map { $0 &+ 1 })
                }
            }
        }.wait()
    }
}

/// `flatMap` on a succeeded future, the closure returning a new succeeded future (it has to
/// capture the loop to make one).
///
/// Expected allocations per op: the new future, the returned future, callback contexts.
final class NIOFlatMapOnSucceeded: Scenario {
    let name =
        "SwiftNIO flatMap on a succeeded future, returning a new succeeded future, on its loop (captures the loop)"
    let subject = Subject.nio
    let expectedAllocations = "~4: two futures, callback contexts"
    private let loop: any EventLoop

    init(loop: any EventLoop) { self.loop = loop }

    func run(iterations: Int) throws -> Sample {
        let loop = loop
        return try loop.submit {
            let succeeded = loop.makeSucceededFuture(1)
            return measure(iterations: iterations) {
                for _ in 0..<iterations {
                    consume(succeeded.flatMap { loop.makeSucceededFuture($0 &+ 1) })
                }
            }
        }.wait()
    }
}

/// `makePromise` + `succeed`, with nobody waiting.
///
/// Expected allocations per op: the future (the promise is a struct): 1.
final class NIOPromiseCreateAndSucceed: Scenario {
    let name = "SwiftNIO makePromise + succeed, nobody waiting, on its event loop"
    let subject = Subject.nio
    let expectedAllocations = "1: future"
    private let loop: any EventLoop

    init(loop: any EventLoop) { self.loop = loop }

    func run(iterations: Int) throws -> Sample {
        let loop = loop
        return try loop.submit {
            measure(iterations: iterations) {
                for i in 0..<iterations {
                    let promise = loop.makePromise(of: Int.self)
                    promise.succeed(i)
                    consume(promise.futureResult)
                }
            }
        }.wait()
    }
}

/// `makePromise`, `continuations` `map`s on its pending future, then `succeed`, which runs
/// them. One op is the whole sequence.
///
/// Expected allocations per op: the promise's future, then per `map` a future and contexts.
final class NIOPromiseWithWaitersThenSucceed: Scenario {
    let name: String
    let subject = Subject.nio
    let expectedAllocations: String
    private let loop: any EventLoop
    private let continuations: Int

    init(loop: any EventLoop, continuations: Int) {
        self.loop = loop
        self.continuations = continuations
        name = "SwiftNIO makePromise + \(continuations) waiting map + succeed, on its event loop"
        expectedAllocations = "1 + ~2-3 per map"
    }

    func run(iterations: Int) throws -> Sample {
        let loop = loop
        let continuations = continuations
        return try loop.submit {
            measure(iterations: iterations) {
                for i in 0..<iterations {
                    let promise = loop.makePromise(of: Int.self)
                    for _ in 0..<continuations {
                        consume(promise.futureResult.map { $0 &+ 1 })
                    }
                    promise.succeed(i)
                }
            }
        }.wait()
    }
}

/// A chain of `links` `map`s on a pending future, then `succeed`, which runs the chain.
/// One op is one link.
///
/// Expected allocations per link: its future and callback contexts.
final class NIOPendingChainThenSucceed: Scenario {
    let name: String
    let subject = Subject.nio
    let unit = "link"
    let expectedAllocations = "~2-3 per link: future, callback contexts"
    let fixedIterations: Int?
    private let loop: any EventLoop

    init(loop: any EventLoop, links: Int) {
        self.loop = loop
        fixedIterations = links
        name = "SwiftNIO chain of \(links.formatted) pending map links, then succeed, on its event loop (per link)"
    }

    func run(iterations: Int) throws -> Sample {
        let loop = loop
        let (sample, last) = try loop.submit {
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
            return (sample, result)
        }.wait()
        guard last == iterations else { throw BenchmarkError.wrongResult("chain ended with \(last)") }
        return sample
    }
}

/// `andAllSucceed` (no values) or `whenAllSucceed` (collects the values) over `inputs`
/// pending promises, all succeeded on the loop. One op is one input.
///
/// Expected allocations per input: the promise's future and the aggregate's callback (~2-3).
final class NIOAllSucceed: Scenario {
    enum Form {
        case andAllSucceed
        case whenAllSucceed
    }

    let name: String
    let subject = Subject.nio
    let unit = "input"
    let expectedAllocations = "~2-3: future, aggregate callback"
    let fixedIterations: Int?
    private let loop: any EventLoop
    private let form: Form

    init(loop: any EventLoop, inputs: Int, form: Form) {
        self.loop = loop
        self.form = form
        fixedIterations = inputs
        switch form {
        case .andAllSucceed:
            name = "SwiftNIO andAllSucceed over \(inputs.formatted) promises, succeeded on its event loop (per input)"
        case .whenAllSucceed:
            name = "SwiftNIO whenAllSucceed over \(inputs.formatted) promises, succeeded on its event loop (per input)"
        }
    }

    func run(iterations: Int) throws -> Sample {
        let loop = loop
        let form = form
        let (sample, done) = try loop.submit {
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
            return (sample, done)
        }.wait()
        guard done else { throw BenchmarkError.wrongResult("the aggregate did not succeed on the loop") }
        return sample
    }
}
