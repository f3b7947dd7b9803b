// libFuzzer's entry point for the three targets, which Fuzz/run.sh builds into one binary (one
// compilation of the parsers instead of three): FUZZ_TARGET names the target a run feeds.
#if canImport(Glibc)
import Glibc
#endif

/// The target this process feeds, read once from FUZZ_TARGET.
private let target: @Sendable (UnsafePointer<UInt8>, Int) -> CInt = {
    switch getenv("FUZZ_TARGET").map({ String(cString: $0) }) {
    case "html": return fuzzHTML
    case "payload": return fuzzPayload
    case "egress": return fuzzEgress
    case let other:
        fatalError("FUZZ_TARGET must be html, payload or egress (got \(other ?? "nothing"))")
    }
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    target(data, size)
}
