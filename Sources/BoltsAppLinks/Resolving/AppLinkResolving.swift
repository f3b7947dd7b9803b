import Bolts
import Foundation

/// Something that turns a web URL into an ``AppLink``: the HTML resolver, a cache in front of it, or a resolver
/// of your own (for example one that reads a database of links).
public protocol AppLinkResolving: Sendable {
    /// Resolves `url` for a device of kind `platform`. The task faults when the link cannot be resolved; a URL
    /// that simply has no App Link metadata succeeds with no targets.
    func appLink(from url: URL, platform: AppLinkPlatform) -> Task<AppLink>

    /// Resolves `url` for `platform`; cancelling `cancellationToken` ends the task cancelled at once and should
    /// stop the work when nobody else waits for it. A conformer that implements only
    /// ``appLink(from:platform:)`` gets a default that ends the task cancelled at once and lets the work finish
    /// unobserved.
    func appLink(from url: URL, platform: AppLinkPlatform, cancellationToken: CancellationToken?) -> Task<AppLink>
}

extension AppLinkResolving {
    /// The default for resolvers that cannot stop their work: ``appLink(from:platform:)``, with a task that ends
    /// cancelled at once when the token is cancelled. A token that is already cancelled starts nothing.
    public func appLink(from url: URL, platform: AppLinkPlatform, cancellationToken: CancellationToken?)
        -> Task<AppLink>
    {
        guard let cancellationToken else { return appLink(from: url, platform: platform) }
        if cancellationToken.isCancellationRequested { return .cancelledTask() }
        return appLink(from: url, platform: platform).continueWithTask(.immediate, cancellationToken: cancellationToken)
        { $0 }
    }

    /// Resolves `url` for ``AppLinkPlatform/default`` (the generic iOS groups).
    public func appLink(from url: URL) -> Task<AppLink> {
        appLink(from: url, platform: .default)
    }
}
