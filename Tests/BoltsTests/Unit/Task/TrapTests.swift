import Testing

@testable import Bolts

@Suite struct TrapTests {
    @Test func secondSetTraps() async {
        await #expect(processExitsWith: .failure) {
            let tcs = TaskCompletionSource<Int>()
            tcs.set(result: 1)
            tcs.set(result: 2)
        }
    }

    @Test func setErrorAfterCancelTraps() async {
        await #expect(processExitsWith: .failure) {
            let tcs = TaskCompletionSource<Int>()
            tcs.cancel()
            tcs.set(error: TestError())
        }
    }

    @Test func cancelAfterSetTraps() async {
        await #expect(processExitsWith: .failure) {
            let tcs = TaskCompletionSource<Int>()
            tcs.set(result: 1)
            tcs.cancel()
        }
    }

    @Test func negativeDelayTraps() async {
        await #expect(processExitsWith: .failure) {
            _ = Task<Void>.withDelay(-1)
        }
    }

    @Test func negativeTimeoutTraps() async {
        await #expect(processExitsWith: .failure) {
            _ = TaskCompletionSource<Int>().task.timeout(after: -1)
        }
    }
}
