import Bolts
import Foundation

extension AppLinkNavigation {
    private static let defaultResolverStorage = Locked<(any AppLinkResolving)?>(nil)

    /// The resolver used when none is given. Setting nil restores the built-in one, an ``HTMLAppLinkResolver``
    /// over the shared `URLSession` fetcher.
    public static var defaultResolver: any AppLinkResolving {
        get { defaultResolverStorage.current ?? HTMLAppLinkResolver() }
        set { defaultResolverStorage.withLock { $0 = newValue } }
    }

    /// Restores the built-in default resolver.
    public static func resetDefaultResolver() {
        defaultResolverStorage.withLock { $0 = nil }
    }

    /// Resolves `url` with `resolver` (or ``defaultResolver``) for `platform`.
    ///
    /// Cancelling `cancellationToken` ends the task cancelled at once and stops the resolution when nobody else
    /// waits for it (see ``AppLinkResolving/appLink(from:platform:cancellationToken:)``).
    public static func resolveAppLink(
        _ url: URL,
        resolver: (any AppLinkResolving)? = nil,
        platform: AppLinkPlatform = .default,
        cancellationToken: CancellationToken? = nil
    ) -> Task<AppLink> {
        (resolver ?? defaultResolver).appLink(from: url, platform: platform, cancellationToken: cancellationToken)
    }

    /// Resolves `url`, then navigates to the link with `opener` and posts `al_nav_out`.
    ///
    /// A resolution error faults the returned task with that error; otherwise the task succeeds with the
    /// navigation's result (which may be ``AppLinkNavigationType/failure``). The navigation runs on the thread
    /// that completes the resolution.
    ///
    /// Cancelling `cancellationToken` before the navigation starts ends the task cancelled at once, stops the
    /// resolution (when nobody else waits for it), and nothing is opened and no event is posted.
    public static func navigate(
        to url: URL,
        resolver: (any AppLinkResolving)? = nil,
        platform: AppLinkPlatform = .default,
        opener: (any AppLinkURLOpener)? = nil,
        cancellationToken: CancellationToken? = nil
    ) -> Task<AppLinkNavigationType> {
        let opener = opener ?? defaultOpener
        return resolveAppLink(url, resolver: resolver, platform: platform, cancellationToken: cancellationToken)
            .continueOnSuccessWith(cancellationToken: cancellationToken) { appLink in
                AppLinkNavigation(appLink: appLink).navigate(using: opener)
            }
    }
}
