import Foundation

/// Opens URLs with the Linux desktop's URL-scheme handlers (freedesktop.org `xdg-utils`).
///
/// ``canOpen(_:)`` asks `xdg-mime query default x-scheme-handler/<scheme>` and answers true when a handler is
/// named. ``open(_:)`` checks the same and then runs `xdg-open <url>`: exit status 0 means opened, and a handler
/// still running after ``launchTimeout`` seconds also counts as opened (some handlers stay in the foreground).
/// Without `xdg-mime` and `xdg-open` on the `PATH` nothing can be opened. Each call starts processes and blocks
/// the calling thread until they finish.
public struct XDGAppLinkURLOpener: AppLinkURLOpener {
    /// The environment the tools run with, or nil for this process's environment at the time of the call.
    public var environment: [String: String]?
    /// How long ``open(_:)`` waits for `xdg-open` before it counts the URL as opened.
    public var launchTimeout: Double

    /// Creates an opener; pass `environment` to point the tools at other `XDG_*` directories.
    public init(environment: [String: String]? = nil, launchTimeout: Double = 10) {
        self.environment = environment
        self.launchTimeout = launchTimeout
    }

    /// Whether `xdg-mime` and `xdg-open` can be found on the `PATH` of ``environment``.
    public var isAvailable: Bool {
        executable(named: "xdg-mime") != nil && executable(named: "xdg-open") != nil
    }

    /// The desktop file of the handler registered for `url`'s scheme (for example `myapp.desktop`), or nil.
    public func handler(for url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased(), Self.isPlainScheme(scheme),
            let xdgMime = executable(named: "xdg-mime")
        else { return nil }
        let output = run(xdgMime, ["query", "default", "x-scheme-handler/\(scheme)"], captureOutput: true)
        guard let output, output.status == 0 else { return nil }
        let name = output.text.trimmingCharacters(in: .whitespacesAndNewlines)
        return name.isEmpty ? nil : name
    }

    /// Whether a handler is registered for `url`'s scheme.
    public func canOpen(_ url: URL) -> Bool {
        handler(for: url) != nil
    }

    /// Opens `url` with `xdg-open` when a handler is registered for its scheme.
    public func open(_ url: URL) -> Bool {
        guard canOpen(url), let xdgOpen = executable(named: "xdg-open") else { return false }
        guard let result = run(xdgOpen, [url.absoluteString], captureOutput: false) else { return false }
        return result.status == 0
    }

    /// Schemes are letters, digits, `+`, `-` and `.`; anything else is refused before a process sees it.
    static func isPlainScheme(_ scheme: String) -> Bool {
        !scheme.isEmpty
            && scheme.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "+-.".unicodeScalars.contains(scalar))
            }
    }

    private var effectiveEnvironment: [String: String] {
        environment ?? ProcessInfo.processInfo.environment
    }

    func executable(named name: String) -> String? {
        let path = effectiveEnvironment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") where !directory.isEmpty {
            let candidate = directory + "/" + name
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Runs a tool; returns its exit status (0 when it outlives `launchTimeout` without output capture) and its
    /// standard output, or nil when it could not start.
    private func run(_ path: String, _ arguments: [String], captureOutput: Bool) -> (status: Int32, text: String)? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = effectiveEnvironment
        process.standardInput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let finished = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in finished.signal() }
        let pipe = Pipe()
        process.standardOutput = captureOutput ? pipe : FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return nil
        }
        var text = ""
        if captureOutput {
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            text = String(decoding: data, as: UTF8.self)
        }
        if finished.wait(timeout: .now() + max(0, launchTimeout)) == .timedOut {
            // Still running: a handler that stays in the foreground has been launched.
            return captureOutput ? nil : (0, text)
        }
        return (process.terminationStatus, text)
    }
}
