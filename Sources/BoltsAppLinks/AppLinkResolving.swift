import Bolts
import Foundation

/// Something that turns a web URL into an ``AppLink``: the HTML resolver, a cache in front of it, or a resolver
/// of your own (for example one that reads a database of links).
public protocol AppLinkResolving: Sendable {
    /// Resolves `url` for a device of kind `platform`. The task faults when the link cannot be resolved; a URL
    /// that simply has no App Link metadata succeeds with no targets.
    func appLink(from url: URL, platform: AppLinkPlatform) -> Task<AppLink>
}

extension AppLinkResolving {
    /// Resolves `url` for ``AppLinkPlatform/default`` (the generic iOS groups).
    public func appLink(from url: URL) -> Task<AppLink> {
        appLink(from: url, platform: .default)
    }
}
