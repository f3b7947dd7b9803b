import BoltsTestSupport
import CBoltsRuntime
import Dispatch
import Foundation
import Testing

/// The function a captured thread sleeps in: its name must show among the captured frames.
/// It does work after the sleep (it times it), so that the sleep is a call and not a tail
/// jump whose return address would not be on the stack. Returns the seconds slept.
@inline(never)
func sleepInsideCaptureTarget() -> Double {
    let start = DispatchTime.now()
    usleep(300_000)
    return secondsElapsed(since: start)
}

/// The function a captured thread reads a pipe in. The read is a call, not a tail jump: it
/// writes into this frame's `byte`. Returns what `read` returned.
@inline(never)
func readInsideCaptureTarget(_ fd: Int32) -> Int {
    var byte: UInt8 = 0
    return read(fd, &byte, 1)
}

/// A thread started for a capture, as it told the test: its kernel thread id and the bounds
/// of the stack mapping it runs on.
private struct CaptureTargetThread: Sendable {
    let tid: Int32
    let stackLow: UInt
    let stackHigh: UInt
}

/// The calling thread's kernel id: the last component of `/proc/thread-self`'s target
/// ("<pid>/task/<tid>"; Swift sees neither `gettid` nor the variadic `syscall`).
private func currentKernelThreadID() -> Int32? {
    guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self") else {
        return nil
    }
    return target.split(separator: "/").last.flatMap { Int32($0) }
}

/// The bounds of the mapping in `/proc/self/maps` that holds `address` (for a local
/// variable: the calling thread's stack, `pthread_getattr_np` being out of Swift's reach).
private func mappingHolding(_ address: UInt) -> (low: UInt, high: UInt)? {
    guard let maps = try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8) else { return nil }
    for line in maps.split(separator: "\n") {
        guard let range = line.split(separator: " ").first else { continue }
        let bounds = range.split(separator: "-").compactMap { UInt($0, radix: 16) }
        if bounds.count == 2, bounds[0] <= address, address < bounds[1] { return (bounds[0], bounds[1]) }
    }
    return nil
}

/// Starts `body` on a new thread and returns, once that thread has told its id and stack,
/// what it told and a semaphore it signals when `body` has returned.
private func startCaptureTarget(_ body: @escaping @Sendable () -> Void) -> (CaptureTargetThread?, DispatchSemaphore) {
    let told = LockedValue<CaptureTargetThread?>(nil)
    let ready = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        var local = 0
        let address = withUnsafeMutablePointer(to: &local) { UInt(bitPattern: $0) }
        if let tid = currentKernelThreadID() {
            let stack = mappingHolding(address) ?? (0, 0)
            told.withLock { $0 = CaptureTargetThread(tid: tid, stackLow: stack.low, stackHigh: stack.high) }
        }
        ready.signal()
        body()
        done.signal()
    }
    thread.start()
    ready.wait()
    return (told.withLock { $0 }, done)
}

/// Captures `thread` until the kernel reports it in one of the system calls `names`, or two
/// seconds have passed (the thread may not have entered the call yet); returns the last
/// capture and what `bolts_capture_thread` returned for it.
private func captureUntilInCall(_ thread: CaptureTargetThread, inOneOf names: Set<String>) -> (
    bolts_thread_capture_t, Bool
) {
    var capture = bolts_thread_capture_t()
    var found = false
    let start = DispatchTime.now()
    repeat {
        found = bolts_capture_thread(thread.tid, thread.stackLow, thread.stackHigh, &capture)
        if let name = systemCallName(capture.system_call), names.contains(name) { break }
        usleep(10_000)
    } while secondsElapsed(since: start) < 2
    return (capture, found)
}

/// `bolts_system_call_name` as a Swift string.
private func systemCallName(_ number: Int64) -> String? {
    bolts_system_call_name(number).map { String(cString: $0) }
}

/// The frames of `capture`, each symbolized and, when it is a Swift symbol, demangled ("?"
/// for an address no symbol covers).
private func symbolizedFrames(_ capture: bolts_thread_capture_t) -> [String] {
    var frames = capture.frames
    let addresses = withUnsafeBytes(of: &frames) {
        Array($0.bindMemory(to: UInt.self).prefix(Int(capture.frame_count)))
    }
    return addresses.map { address in
        guard let (mangled, _, _) = symbolize(address) else { return "?" }
        return demangle(mangled) ?? mangled
    }
}

/// `bolts_symbolize` in Swift: the symbol's name, the offset into it and the object's path.
private func symbolize(_ address: UInt) -> (name: String, offset: UInt, image: String)? {
    var name = [CChar](repeating: 0, count: 1024)
    var offset: UInt = 0
    var image: UnsafePointer<CChar>?
    let found = name.withUnsafeMutableBufferPointer { buffer in
        bolts_symbolize(address, buffer.baseAddress!, buffer.count, &offset, &image)
    }
    guard found else { return nil }
    let text = name.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    return (text, offset, image.map { String(cString: $0) } ?? "")
}

/// `bolts_demangle` in Swift.
private func demangle(_ mangled: String) -> String? {
    var out = [CChar](repeating: 0, count: 1024)
    let found = out.withUnsafeMutableBufferPointer { buffer in
        bolts_demangle(mangled, buffer.baseAddress!, buffer.count)
    }
    return found ? out.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } : nil
}

@Suite("Thread capture (bolts_diagnostics.h)")
struct ThreadCaptureTests {
    @Test func sleepingThreadIsCapturedInItsSleepWithItsCallerAndWithoutASignal() throws {
        let slept = LockedValue<Double>(0)
        let (started, done) = startCaptureTarget { slept.withLock { $0 = sleepInsideCaptureTarget() } }
        let thread = try #require(started)
        usleep(50_000)
        let (capture, found) = captureUntilInCall(thread, inOneOf: ["clock_nanosleep", "nanosleep"])
        done.wait()

        #expect(found)
        let name = systemCallName(capture.system_call)
        #expect(name == "clock_nanosleep" || name == "nanosleep", "system call \(capture.system_call)")
        #if arch(x86_64)
            #expect(capture.system_call == 230 || capture.system_call == 35)
        #elseif arch(arm64)
            #expect(capture.system_call == 115 || capture.system_call == 101)
        #endif
        let frames = symbolizedFrames(capture)
        #expect(frames.contains { $0.contains("sleepInsideCaptureTarget") }, "frames: \(frames)")
        // The capture sent no signal: a signal would have cut the sleep short (EINTR).
        #expect(slept.withLock { $0 } >= 0.3)
    }

    @Test func threadBlockedInReadIsCapturedInReadWithItsCaller() throws {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        let readEnd = fds[0]
        let result = LockedValue<Int>(-2)
        let (started, done) = startCaptureTarget { result.withLock { $0 = readInsideCaptureTarget(readEnd) } }
        let thread = try #require(started)
        let (capture, found) = captureUntilInCall(thread, inOneOf: ["read"])
        var byte: UInt8 = 1
        #expect(write(fds[1], &byte, 1) == 1)
        done.wait()

        #expect(found)
        #expect(systemCallName(capture.system_call) == "read")
        let frames = symbolizedFrames(capture)
        #expect(frames.contains { $0.contains("readInsideCaptureTarget") }, "frames: \(frames)")
        #expect(result.withLock { $0 } == 1)
    }

    @Test func threadThatDoesNotExistIsUnreadable() {
        var capture = bolts_thread_capture_t()
        // Above any pid_max (at most 2^22): no such thread, ever.
        #expect(!bolts_capture_thread(Int32.max, 0, 0, &capture))
        #expect(capture.system_call == -3)
        #expect(capture.frame_count == 0)
    }

    @Test func systemCallNamesFollowTheArchitecture() {
        #if arch(x86_64)
            #expect(systemCallName(0) == "read")
            #expect(systemCallName(202) == "futex")
            #expect(systemCallName(232) == "epoll_wait")
        #elseif arch(arm64)
            #expect(systemCallName(63) == "read")
            #expect(systemCallName(98) == "futex")
            #expect(systemCallName(22) == "epoll_pwait")
        #endif
        #expect(systemCallName(100_000) == nil)
        #expect(systemCallName(-1) == nil)
    }

    @Test func symbolizeNamesACFunctionAndTheOffsetIntoIt() throws {
        let function: @convention(c) (UInt32, UnsafePointer<CChar>?) -> OpaquePointer? = bolts_pool_create
        let address = unsafeBitCast(function, to: UInt.self)
        let start = try #require(symbolize(address))
        #expect(start.name == "bolts_pool_create")
        #expect(start.offset == 0)
        #expect(!start.image.isEmpty)
        let inside = try #require(symbolize(address + 1))
        #expect(inside.name == "bolts_pool_create")
        #expect(inside.offset == 1)
        #expect(inside.image == start.image)
        #expect(symbolize(0) == nil)
    }

    @Test func demangleGivesSwiftNamesAndLeavesOthersAlone() {
        #expect(demangle("$sSi") == "Swift.Int")
        #expect(
            demangle("$s10BoltsTests24sleepInsideCaptureTargetSdyF")
                == "BoltsTests.sleepInsideCaptureTarget() -> Swift.Double")
        #expect(demangle("bolts_pool_create") == nil)
        #expect(demangle("$sthis is not a mangled name") == nil)

        var out: [CChar] = [65, 0]
        let found = out.withUnsafeMutableBufferPointer { bolts_demangle("main", $0.baseAddress!, $0.count) }
        #expect(!found)
        #expect(out == [65, 0])
    }

    @Test func demangledNameIsTruncatedToTheBuffer() {
        var out = [CChar](repeating: 1, count: 6)
        let found = out.withUnsafeMutableBufferPointer { bolts_demangle("$sSi", $0.baseAddress!, $0.count) }
        #expect(found)
        #expect(out == [83, 119, 105, 102, 116, 0])  // "Swift"
    }
}
