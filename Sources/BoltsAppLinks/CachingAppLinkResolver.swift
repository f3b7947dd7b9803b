import Bolts
import Foundation

/// A resolver that remembers what another resolver found.
///
/// - **One fetch per URL at a time**: concurrent resolutions of the same URL and platform share one task, so the
///   wrapped resolver runs once however many callers ask while it works.
/// - **TTL**: a link is served for ``timeToLive`` seconds after it was resolved, then resolved again.
/// - **Bounded**: at most ``maximumEntries`` links are kept; the least recently used goes first.
/// - **Failures are not kept**: a faulted or cancelled resolution is forgotten as soon as it ends, so the next
///   caller tries again (its waiting callers still see the failure).
public final class CachingAppLinkResolver: AppLinkResolving {
    /// The resolver that does the work.
    public let resolver: any AppLinkResolving
    /// The most links kept.
    public let maximumEntries: Int
    /// Seconds a resolved link stays fresh.
    public let timeToLive: Double

    private let clock: @Sendable () -> Double
    private let cache: Locked<LRUTable>

    /// Wraps `resolver`. `clock` returns seconds on a monotonic scale; tests pass their own to control time.
    public init(
        wrapping resolver: any AppLinkResolving,
        maximumEntries: Int = 1024,
        timeToLive: Double = 300,
        clock: (@Sendable () -> Double)? = nil
    ) {
        precondition(maximumEntries > 0, "CachingAppLinkResolver needs room for at least one entry")
        self.resolver = resolver
        self.maximumEntries = maximumEntries
        self.timeToLive = timeToLive
        self.clock = clock ?? { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
        self.cache = Locked(LRUTable())
    }

    /// The cached or shared task for `url` and `platform`, starting a resolution when there is none.
    public func appLink(from url: URL, platform: AppLinkPlatform) -> Task<AppLink> {
        let key = CacheKey(url: url.absoluteString, platform: platform)
        let now = clock()
        let (task, source) = cache.withLock { table -> (Task<AppLink>, TaskCompletionSource<AppLink>?) in
            if let entry = table.touch(key) {
                if entry.task.completed == false { return (entry.task, nil) }
                if let expiry = entry.expiresAt, expiry > now, entry.task.result != nil { return (entry.task, nil) }
                table.remove(key)
            }
            let source = TaskCompletionSource<AppLink>()
            table.insert(key, CacheEntry(task: source.task, expiresAt: nil), limit: maximumEntries)
            return (source.task, source)
        }
        guard let source else { return task }
        let resolved = resolver.appLink(from: url, platform: platform)
        resolved.continueWith { [cache, clock, timeToLive] finished in
            cache.withLock { table in
                guard table.entry(key)?.task === source.task else { return }
                if finished.result != nil {
                    table.setExpiry(key, clock() + timeToLive)
                } else {
                    table.remove(key)
                }
            }
            if let value = finished.result {
                source.set(result: value)
            } else if let error = finished.error {
                source.set(error: error)
            } else {
                source.cancel()
            }
        }
        return task
    }

    /// Forgets the links cached for `url` (every platform).
    public func removeCachedLinks(for url: URL) {
        cache.withLock { table in
            for platform in AppLinkPlatform.allCases {
                table.remove(CacheKey(url: url.absoluteString, platform: platform))
            }
        }
    }

    /// Forgets every cached link. Resolutions in flight still complete for their callers.
    public func removeAllCachedLinks() {
        cache.withLock { $0 = LRUTable() }
    }

    /// How many links (resolved or in flight) are held.
    public var count: Int {
        cache.withLock { $0.count }
    }
}

private struct CacheKey: Hashable {
    var url: String
    var platform: AppLinkPlatform
}

private struct CacheEntry {
    var task: Task<AppLink>
    /// Set when the link resolved; nil while in flight.
    var expiresAt: Double?
}

/// A table with least-recently-used eviction: a dictionary of nodes linked in use order, O(1) per operation.
private struct LRUTable {
    private struct Node {
        var entry: CacheEntry
        var newer: CacheKey?
        var older: CacheKey?
    }

    private var nodes: [CacheKey: Node] = [:]
    private var newest: CacheKey?
    private var oldest: CacheKey?

    var count: Int { nodes.count }

    func entry(_ key: CacheKey) -> CacheEntry? {
        nodes[key]?.entry
    }

    /// The entry for `key`, marked as most recently used.
    mutating func touch(_ key: CacheKey) -> CacheEntry? {
        guard let node = nodes[key] else { return nil }
        unlink(key)
        link(key, node.entry)
        return node.entry
    }

    mutating func insert(_ key: CacheKey, _ entry: CacheEntry, limit: Int) {
        if nodes[key] != nil { unlink(key) }
        link(key, entry)
        while nodes.count > limit, let victim = oldest {
            unlink(victim)
        }
    }

    mutating func setExpiry(_ key: CacheKey, _ expiry: Double) {
        nodes[key]?.entry.expiresAt = expiry
    }

    mutating func remove(_ key: CacheKey) {
        if nodes[key] != nil { unlink(key) }
    }

    private mutating func link(_ key: CacheKey, _ entry: CacheEntry) {
        nodes[key] = Node(entry: entry, newer: nil, older: newest)
        if let newest { nodes[newest]?.newer = key }
        newest = key
        if oldest == nil { oldest = key }
    }

    private mutating func unlink(_ key: CacheKey) {
        guard let node = nodes.removeValue(forKey: key) else { return }
        if let newer = node.newer { nodes[newer]?.older = node.older } else { newest = node.older }
        if let older = node.older { nodes[older]?.newer = node.newer } else { oldest = node.newer }
    }
}
