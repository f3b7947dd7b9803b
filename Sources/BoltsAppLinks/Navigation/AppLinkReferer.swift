import Foundation

/// The app that sent the user here, read from an inbound payload's `referer_app_link`, so that the app can offer
/// a way back ("Touch to return to <name>").
///
/// A referer exists only when the payload was accepted and `referer_app_link` is an object holding both a `url`
/// (a valid absolute URL) and an `app_name` string.
public struct AppLinkReferer: Sendable, Hashable {
    /// The referer app's name, as it should be shown to the user.
    public let name: String
    /// The URL that takes the user back to the referer.
    public let url: URL

    /// Creates a referer from its name and URL.
    public init(name: String, url: URL) {
        self.name = name
        self.url = url
    }

    /// Reads the referer of an inbound URL, as a return-to-referer bar would, or returns nil when it has none.
    ///
    /// When the URL carries an accepted payload, this posts `al_link_parse` with `forRenderBackToReferrerBar`
    /// set to `"1"`.
    public init?(inboundURL: URL) {
        guard let referer = AppLinkURL(url: inboundURL, context: .renderBackToRefererBar).referer else { return nil }
        self = referer
    }

    /// Reads `referer_app_link` from a payload; nil unless it is an object with a `url` and an `app_name`.
    init?(refererAppLink: AppLinkJSON?) {
        guard let object = refererAppLink?.objectValue,
            let urlText = object["url"]?.stringValue,
            let url = AppLinkURL.absoluteURL(from: urlText),
            let name = object["app_name"]?.stringValue
        else { return nil }
        self.init(name: name, url: url)
    }

    /// The text a return-to-referer bar shows: `Touch to return to <name>`.
    public var returnText: String {
        "Touch to return to \(name)"
    }

    /// The link that navigates back: source and only target are the referer URL, named after the referer, with no
    /// web fallback. Navigating it posts `al_ref_back_out`.
    public var appLink: AppLink {
        AppLink(
            sourceURL: url,
            targets: [AppLinkTarget(url: url, appName: name)],
            webURL: nil,
            isBackToReferrer: true
        )
    }

    /// Navigates back to the referer with `opener` and posts `al_ref_back_out`.
    ///
    /// The opened URL carries a payload whose `target_url` is the referer URL.
    @discardableResult
    public func navigateBack(using opener: any AppLinkURLOpener) -> AppLinkNavigationType {
        AppLinkNavigation(appLink: appLink).navigate(using: opener)
    }

    /// Builds the `referer_app_link` payload an app adds to an outbound navigation so that the receiver can
    /// offer a way back: `{"referer_app_link": {"app_name": <name>, "url": <url>}}`.
    public static func callbackAppLinkData(forAppWithName name: String, url: URL) -> [String: AppLinkJSON] {
        ["referer_app_link": ["app_name": .string(name), "url": .string(url.absoluteString)]]
    }
}
