import Bolts
import Foundation

let source = TaskCompletionSource<Data>()
let size = source.task
    .continueOnSuccessWith(.pool(.shared)) { data in data.count }          // on a pool worker
    .continueWith { task in task.result.map { "\($0) bytes" } ?? "failed" }  // inline
let cts = CancellationTokenSource()
let slow = Task<Void>.withDelay(.seconds(60), cancellationToken: cts.token).timeout(after: .seconds(30))
source.set(result: Data(count: 3))
cts.cancel()                  // `slow` is cancelled at once
print(try await size.value)   // "3 bytes"
