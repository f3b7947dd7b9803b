import Foundation

/// One app that can show a link: where to send the user and how to identify the app.
///
/// Which fields are set depends on the platform the link was resolved for: iOS targets carry `appStoreId`,
/// Android targets `package` and `className`, Windows targets `appId`. Any of them, the URL included, may be nil
/// when the page did not say (or said something unparsable).
public struct AppLinkTarget: Sendable, Hashable {
    /// The URL that opens the app (usually a custom scheme), or nil.
    public var url: URL?
    /// The App Store identifier (`al:ios:app_store_id` and its iPhone and iPad forms).
    public var appStoreId: String?
    /// The app's display name.
    public var appName: String?
    /// The Android package name (`al:android:package`).
    public var package: String?
    /// The Android activity class name (`al:android:class`).
    public var className: String?
    /// The Windows app identifier (`al:windows_phone:app_id` and the other Windows forms).
    public var appId: String?

    /// Creates a target.
    public init(
        url: URL?,
        appStoreId: String? = nil,
        appName: String? = nil,
        package: String? = nil,
        className: String? = nil,
        appId: String? = nil
    ) {
        self.url = url
        self.appStoreId = appStoreId
        self.appName = appName
        self.package = package
        self.className = className
        self.appId = appId
    }
}

/// What a web URL resolves to: the apps that can show it, in the order to try them, and the web fallback.
public struct AppLink: Sendable, Hashable {
    /// The URL that was resolved (not the web URL and not a redirect target). It becomes the payload's
    /// `target_url` when navigating.
    public var sourceURL: URL
    /// The app targets, most preferred first.
    public var targets: [AppLinkTarget]
    /// Where to send the user when no app opens, or nil when the page forbids a web fallback.
    public var webURL: URL?
    /// True for the link built from an inbound URL's referer; navigating it posts `al_ref_back_out` instead of
    /// `al_nav_out`.
    public var isBackToReferrer: Bool

    /// Creates a link.
    public init(sourceURL: URL, targets: [AppLinkTarget] = [], webURL: URL?, isBackToReferrer: Bool = false) {
        self.sourceURL = sourceURL
        self.targets = targets
        self.webURL = webURL
        self.isBackToReferrer = isBackToReferrer
    }
}
