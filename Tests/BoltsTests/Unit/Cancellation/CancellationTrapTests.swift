import Testing

@testable import Bolts

/// Programming errors that must trap with a clear message, not misbehave.
@Suite struct CancellationTrapTests {
    private static func expectMessage(_ result: ExitTest.Result?, _ message: String) {
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains(message), "stderr was: \(stderr)")
    }

    @Test func cancelAfterDisposeTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let source = CancellationTokenSource()
            source.dispose()
            source.cancel()
        }
        Self.expectMessage(result, "CancellationTokenSource.cancel() used after dispose()")
    }

    @Test func cancelAfterDelayAfterDisposeTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let source = CancellationTokenSource()
            source.dispose()
            source.cancel(after: 1)
        }
        Self.expectMessage(result, "CancellationTokenSource.cancel(after:) used after dispose()")
    }

    @Test func tokenAfterDisposeTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let source = CancellationTokenSource()
            source.dispose()
            _ = source.token
        }
        Self.expectMessage(result, "CancellationTokenSource.token used after dispose()")
    }

    @Test func isCancellationRequestedAfterDisposeTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let source = CancellationTokenSource()
            source.cancel()
            source.dispose()
            _ = source.isCancellationRequested
        }
        Self.expectMessage(result, "CancellationTokenSource.isCancellationRequested used after dispose()")
    }

    @Test func negativeCancelAfterTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            CancellationTokenSource().cancel(after: -1)
        }
        Self.expectMessage(result, "cancel(after:) needs a delay >= 0")
    }

    @Test func notANumberCancelAfterTraps() async {
        await #expect(processExitsWith: .failure) {
            CancellationTokenSource().cancel(after: .nan)
        }
    }
}
