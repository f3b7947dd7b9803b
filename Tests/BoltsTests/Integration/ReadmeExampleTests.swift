import BoltsTestSupport
import Foundation
import Testing

@testable import Bolts

/// The README's Swift blocks compile as a reader would copy them, and the ones that need no
/// network run.
///
/// How: each block fenced as ```swift is a whole program, kept verbatim as one file under
/// Tests/ReadmeExamples/<Target>/ (`main.swift`, or another name for an `@main` block), and
/// each of those folders is an executable target that `swift test` builds (the test targets
/// that run them depend on them). This suite checks that the README's blocks and those files
/// are the same text, one to one, so a block that changes without its program, or whose
/// program stops compiling, fails. Chosen over compiling the blocks in a scratch package: that
/// would resolve and build the dependencies a second time, minutes for each run, while these
/// programs cost a few small targets of the same build. A block fenced as
/// ```swift manifest-excerpt is part of a `Package.swift`, which no target can compile; its
/// products are checked against this package's instead. A block with any other info string
/// fails the check, so that no Swift block goes unchecked.
///
/// Who runs which program: `readmeExampleRunsAndPrintsItsResult` below runs the first
/// example; GlobalExecutorTests runs the global-executor install; BoltsServerTests runs the
/// server's `ChecksumServer` (its top-level code with a free port instead of 8080); the App
/// Links example resolves a URL on the internet and is only compiled.
@Suite struct ReadmeExampleTests {
    @Test func readmeSwiftBlocksAreTheExamplePrograms() throws {
        let root = try #require(packageRoot())
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let blocks = swiftBlocks(of: readme)
        #expect(!blocks.isEmpty)

        let examples = root.appendingPathComponent("Tests/ReadmeExamples")
        var programs: [String: String] = [:]  // relative path: text
        let files = try #require(FileManager.default.enumerator(at: examples, includingPropertiesForKeys: nil))
        for case let file as URL in files where file.pathExtension == "swift" {
            let path = String(file.standardizedFileURL.path.dropFirst(examples.standardizedFileURL.path.count + 1))
            programs[path] = try String(contentsOf: file, encoding: .utf8)
        }
        #expect(!programs.isEmpty, "no programs under \(examples.path)")

        var matched: Set<String> = []
        for block in blocks {
            switch block.info {
            case "swift":
                let paths = programs.filter { $0.value == block.text }.keys.sorted()
                #expect(
                    paths.count == 1,
                    "README.md's Swift block at line \(block.line) is not one file of Tests/ReadmeExamples, verbatim (matches: \(paths))"
                )
                matched.formUnion(paths)
            case "swift manifest-excerpt":
                let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
                let products = block.text.matches(of: /\.product\(name: "(\w+)", package: "Bolts"\)/).map { String($0.1) }
                #expect(!products.isEmpty, "README.md's manifest excerpt at line \(block.line) names no product")
                for product in products {
                    #expect(
                        manifest.contains(".library(name: \"\(product)\""),
                        "README.md's manifest excerpt at line \(block.line) names \(product), not a product of Package.swift"
                    )
                }
            default:
                Issue.record("README.md's block at line \(block.line) is fenced as ```\(block.info), which nothing checks")
            }
        }
        for path in programs.keys.sorted() where !matched.contains(path) {
            Issue.record("Tests/ReadmeExamples/\(path) is no longer a README block: update or remove it")
        }
    }

    /// The first example runs to its end and prints what its last comment says.
    @Test func readmeExampleRunsAndPrintsItsResult() throws {
        let program = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("ReadmeExample")
        let process = Process()
        process.executableURL = program
        // Under AddressSanitizer (CI's stage), LeakSanitizer would report the weak-reference
        // side table of `slow`, a live global at exit: the object's reference-count word holds
        // the table's address shifted, which the scan does not read as a pointer. Leaks are
        // the lifetime tests' and the soak's to find, not this run's.
        var environment = ProcessInfo.processInfo.environment
        environment["ASAN_OPTIONS"] = [environment["ASAN_OPTIONS"], "detect_leaks=0"].compactMap { $0 }
            .joined(separator: ":")
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(String(decoding: output, as: UTF8.self) == "3 bytes\n")
    }

    /// The first example's comments hold: `slow` is cancelled at once, the chain gives "3 bytes".
    /// (The statements are the README's; the checks replace its `print`.)
    @Test func readmeExampleCommentsHold() async throws {
        let source = TaskCompletionSource<Data>()
        let size = source.task
            .continueOnSuccessWith(.pool(.shared)) { data in data.count }  // on a pool worker
            .continueWith { task in task.result.map { "\($0) bytes" } ?? "failed" }  // inline
        let cts = CancellationTokenSource()
        let slow = Task<Void>.withDelay(.seconds(60), cancellationToken: cts.token).timeout(after: .seconds(30))
        source.set(result: Data(count: 3))
        cts.cancel()  // `slow` is cancelled at once
        #expect(slow.isCancelled)
        #expect(try await size.value == "3 bytes")
    }

    @Test func poolExecutorRunsContinuationsOnAWorker() {
        let pool = ThreadPool(threadCount: 2, name: "readme")
        let caller = currentThreadID()
        let tcs = TaskCompletionSource<Int>()
        let next = tcs.task.continueWith(.pool(pool)) { task -> Bool in currentThreadID() != caller }
        tcs.set(result: 1)
        next.waitUntilCompleted()
        #expect(next.result == true)
        #expect(Executor.pool(pool).description == "ThreadPool Executor: readme")
        pool.shutdown()
    }
}

/// A fenced block of README.md whose info string starts with "swift": its info string, its
/// text (dedented by its fence's indentation, each line ending in a newline) and the line of
/// its opening fence.
private struct FencedBlock {
    var info: String
    var text: String
    var line: Int
}

/// The blocks of `markdown` fenced with ``` and an info string starting with "swift",
/// indented fences (inside list items) included.
private func swiftBlocks(of markdown: String) -> [FencedBlock] {
    let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false)
    var blocks: [FencedBlock] = []
    var index = 0
    while index < lines.count {
        let line = lines[index]
        let indent = line.prefix { $0 == " " }.count
        let fence = line.dropFirst(indent)
        index += 1
        guard fence.hasPrefix("```swift") else { continue }
        var block = FencedBlock(info: String(fence.dropFirst(3)), text: "", line: index)
        while index < lines.count, lines[index].trimmingCharacters(in: .whitespaces) != "```" {
            block.text += lines[index].dropFirst(min(indent, lines[index].prefix { $0 == " " }.count)) + "\n"
            index += 1
        }
        index += 1
        blocks.append(block)
    }
    return blocks
}

/// The package's root: the nearest folder above this file that holds Package.swift.
private func packageRoot() -> URL? {
    var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    while folder.path != "/" {
        if FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path) { return folder }
        folder.deleteLastPathComponent()
    }
    return nil
}
