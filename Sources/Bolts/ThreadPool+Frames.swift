import CBoltsRuntime

/// The frames of a thread captured by the C core (`bolts_capture_thread`), named.
///
/// Names come from the loaded objects' symbol tables, Swift names demangled. The pool's
/// own frames (its worker loop, its job trampolines, the thread's start) are left out, and
/// so are addresses without a name past the last named frame (the thread's start in a
/// stripped C library), so a stack reads from the blocking call outwards to the job's entry. The *user frame* is
/// the innermost one that is neither the pool's nor in the C library or the Swift runtime:
/// the function of the job that made the blocking call.
struct CapturedFrames {
    /// Every named frame, innermost first, the pool's own left out.
    var stack: [String] = []
    /// The innermost frame of the job's own code, if one was found.
    var userFrame: String?
    /// The system call the thread sleeps in, if it does.
    var systemCall: String?

    init(_ capture: bolts_thread_capture_t) {
        systemCall = Self.systemCallName(capture.system_call)
        let count = Int(min(capture.frame_count, UInt32(BOLTS_CAPTURE_MAX_FRAMES)))
        let addresses = withUnsafeBytes(of: capture.frames) { raw in
            Array(raw.bindMemory(to: UInt.self).prefix(count))
        }
        var unnamed: [String] = []  // kept only if a named frame follows
        for address in addresses {
            guard let frame = Self.name(address) else {
                unnamed.append("0x" + String(address, radix: 16))
                continue
            }
            if frame.isPools { continue }
            stack += unnamed
            unnamed = []
            stack.append(frame.name)
            if userFrame == nil && !frame.isRuntime { userFrame = frame.name }
        }
    }

    /// The name of a system call number, "syscall N" for one the table does not know, nil
    /// when the thread was not in one.
    static func systemCallName(_ number: Int64) -> String? {
        guard number >= 0 else { return nil }
        if let name = bolts_system_call_name(number) { return String(cString: name) }
        return "syscall \(number)"
    }

    private struct Frame {
        var name: String
        var isPools: Bool
        var isRuntime: Bool
    }

    /// The C core's and the thread start's symbols that a stack leaves out.
    /// (Those on a worker's path into a job, and those whose return addresses a worker's
    /// stack keeps from earlier calls: a scan finds them too.)
    private static let poolSymbols: Set<String> = [
        "worker_main", "run_job", "note_delay", "job_invoke", "run_level", "tramp_pop", "run_on_worker", "take",
        "wake_slot", "wake_one", "notify", "any_work", "job_totals", "submit", "dispatch_stack", "task_push",
        "start_thread", "clone", "clone3", "__clone", "__clone3",
    ]

    /// The Swift front end's job trampolines.
    private static let poolSwiftNames = ["Bolts.ThreadPool._", "Bolts._PoolJobRecord", "Bolts._ExecutorJobPayload"]

    /// A sanitizer's interceptors, linked into the program itself under TSan or ASan.
    private static let sanitizerPrefixes = ["__interceptor_", "___interceptor_", "__tsan", "__asan", "__sanitizer", "__ubsan"]

    /// Objects whose frames are not the job's own code.
    private static let runtimeImages = [
        "libc.so", "libc-", "libpthread", "libswiftCore", "libswift_Concurrency", "libdispatch", "libFoundation",
        "libswiftDispatch", "libstdc++", "ld-linux",
    ]

    /// The NUL-terminated string in `buffer`.
    private static func string(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func name(_ address: UInt) -> Frame? {
        var buffer = [CChar](repeating: 0, count: 512)
        var offset: UInt = 0
        var image: UnsafePointer<CChar>? = nil
        guard bolts_symbolize(address, &buffer, buffer.count, &offset, &image) else { return nil }
        let mangled = Self.string(buffer)
        var demangled = [CChar](repeating: 0, count: 2048)
        let name = bolts_demangle(mangled, &demangled, demangled.count) ? Self.string(demangled) : mangled
        let imagePath = image.map { String(cString: $0) } ?? ""
        let imageName = imagePath.split(separator: "/").last.map(String.init) ?? ""
        let isPools = mangled.hasPrefix("bolts_") || poolSymbols.contains(mangled)
            || poolSwiftNames.contains { name.contains($0) } || name.hasPrefix("thunk for ")
            || name.hasPrefix("reabstraction thunk") || name.hasPrefix("partial apply for thunk")
        let isRuntime = runtimeImages.contains { imageName.hasPrefix($0) } || name.hasPrefix("swift_")
            || sanitizerPrefixes.contains { name.hasPrefix($0) }
            || name.hasPrefix("swift::") || name.hasPrefix("Bolts.") || name.contains(" in Bolts.")
        return Frame(name: name, isPools: isPools, isRuntime: isRuntime)
    }
}

extension String {
    /// The string a C `char[16]` field holds.
    init<T>(fixedCString field: T) {
        self = withUnsafeBytes(of: field) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}
