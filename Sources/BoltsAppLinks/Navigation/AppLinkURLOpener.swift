import Foundation

/// Opens URLs on behalf of a navigation: the bridge to whatever can show a URL (a desktop, a phone, or nothing at
/// all on a server).
///
/// ``AppLinkNavigation`` calls ``open(_:)`` for each candidate in order and stops at the first that returns true;
/// its side-effect-free prediction (``AppLinkNavigation/navigationType(using:)``) calls ``canOpen(_:)`` instead.
/// Both may be called from any thread.
public protocol AppLinkURLOpener: Sendable {
    /// Whether something is registered to open `url`, without opening it.
    func canOpen(_ url: URL) -> Bool
    /// Opens `url` and returns whether it was opened.
    func open(_ url: URL) -> Bool
}

/// An opener that opens nothing and remembers what it was asked to open: for servers, which decide a navigation
/// and hand the chosen URL to a client, and for tests.
///
/// By default every URL "opens"; pass `canOpen` to decide per URL (for example by scheme). ``openedURLs`` lists
/// the URLs whose ``open(_:)`` succeeded, ``attemptedURLs`` every URL ``open(_:)`` was called with.
public final class RecordingAppLinkURLOpener: AppLinkURLOpener {
    private let decide: @Sendable (URL) -> Bool
    private let log = Locked<(attempted: [URL], opened: [URL])>(([], []))

    /// Creates an opener that answers with `canOpen` (every URL opens when it is omitted).
    public init(canOpen: @escaping @Sendable (URL) -> Bool = { _ in true }) {
        self.decide = canOpen
    }

    /// Creates an opener that opens exactly the URLs whose scheme is in `schemes` (compared case-insensitively).
    public convenience init(openableSchemes schemes: Set<String>) {
        let lowered = Set(schemes.map { $0.lowercased() })
        self.init(canOpen: { url in url.scheme.map { lowered.contains($0.lowercased()) } ?? false })
    }

    /// Whether `url` would open. Records nothing.
    public func canOpen(_ url: URL) -> Bool {
        decide(url)
    }

    /// Records the attempt and returns whether `url` opens.
    public func open(_ url: URL) -> Bool {
        let opened = decide(url)
        log.withLock { log in
            log.attempted.append(url)
            if opened { log.opened.append(url) }
        }
        return opened
    }

    /// Every URL ``open(_:)`` was called with, in call order.
    public var attemptedURLs: [URL] {
        log.current.attempted
    }

    /// The URLs that were opened, in call order.
    public var openedURLs: [URL] {
        log.current.opened
    }

    /// The most recently opened URL, or nil.
    public var lastOpenedURL: URL? {
        openedURLs.last
    }
}
