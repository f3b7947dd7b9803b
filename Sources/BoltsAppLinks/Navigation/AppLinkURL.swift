import Foundation

/// An inbound URL, read as an App Link: its query, the `al_applink_data` payload, the target URL, the extras and
/// the referer.
///
/// The payload is accepted only when `al_applink_data` is a JSON object whose `version` is absent or the string
/// `"1.0"`; otherwise the URL is read as a plain URL. Inside an accepted payload each field is read on its own:
/// a `target_url` that is not a string or not a URL leaves ``targetURL`` equal to ``inputURL``, `extras` that is
/// not an object gives no ``appLinkExtras``, and a `referer_app_link` without both `url` and `app_name` gives no
/// referer. Nothing in the input can make parsing fail.
///
/// Creating one posts `al_link_parse` when a payload was accepted, and also `al_nav_in` for
/// ``init(inboundURL:sourceApplication:)``.
public struct AppLinkURL: Sendable, Hashable {
    /// The URL as given.
    public let inputURL: URL
    /// The decoded query parameters of ``inputURL``.
    public let inputQueryParameters: [String: String]
    /// The payload's `target_url` when it is a valid URL; otherwise ``inputURL``.
    public let targetURL: URL
    /// The decoded query parameters of ``targetURL``.
    public let targetQueryParameters: [String: String]
    /// The whole accepted payload, unmodified (a defaulted version is not inserted), or nil.
    public let appLinkData: [String: AppLinkJSON]?
    /// The payload's `extras` when it is an object, or nil.
    public let appLinkExtras: [String: AppLinkJSON]?
    /// The app that sent the user here, when the payload names it with both a URL and a name.
    public let referer: AppLinkReferer?

    /// The referer as a link to navigate back to, or nil. Its ``AppLink/isBackToReferrer`` is true.
    public var appLinkReferer: AppLink? {
        referer?.appLink
    }

    /// Parses `url` and posts `al_link_parse` when it carries an accepted payload.
    public init(url: URL) {
        self.init(url: url, context: .plain)
    }

    /// Parses a URL the app was opened with and, when it carries an accepted payload, posts `al_link_parse` and
    /// `al_nav_in`; `sourceApplication` (the opening app, when known) goes into both events.
    public init(inboundURL: URL, sourceApplication: String?) {
        self.init(url: inboundURL, context: .inbound(sourceApplication: sourceApplication))
    }

    /// How a URL came to be parsed; it decides which events are posted and their flags.
    enum ParseContext: Sendable {
        case plain
        case inbound(sourceApplication: String?)
        case renderBackToRefererBar
        /// Parsing only, no events (used by navigation planning).
        case silent
    }

    init(url: URL, context: ParseContext) {
        inputURL = url
        inputQueryParameters = AppLinkQuery.parameters(of: url)
        guard let data = Self.acceptedPayload(in: inputQueryParameters) else {
            targetURL = url
            targetQueryParameters = inputQueryParameters
            appLinkData = nil
            appLinkExtras = nil
            referer = nil
            return
        }
        appLinkData = data
        appLinkExtras = data["extras"]?.objectValue
        targetURL = data["target_url"]?.stringValue.flatMap(Self.absoluteURL(from:)) ?? url
        targetQueryParameters = AppLinkQuery.parameters(of: targetURL)
        referer = AppLinkReferer(refererAppLink: data["referer_app_link"])
        postEvents(for: context)
    }

    /// The payload in `parameters`, when it is a JSON object with `version` absent or `"1.0"`.
    static func acceptedPayload(in parameters: [String: String]) -> [String: AppLinkJSON]? {
        guard let text = parameters[AppLinkQuery.appLinkDataParameterName],
            let object = AppLinkJSON(parsing: text)?.objectValue
        else { return nil }
        if let version = object["version"], version != .string(AppLinkNavigation.protocolVersion) {
            return nil
        }
        return object
    }

    /// An absolute URL from payload text, or nil when the text is not one.
    static func absoluteURL(from text: String) -> URL? {
        guard let url = URL(string: text), let scheme = url.scheme, !scheme.isEmpty else { return nil }
        return url
    }

    private func postEvents(for context: ParseContext) {
        var args: [String: String] = [:]
        args["version"] = appLinkData?["version"]?.stringValue ?? AppLinkNavigation.protocolVersion
        args["refererURL"] = referer?.url.absoluteString
        args["refererAppName"] = referer?.name
        args["targetURL"] = targetURL.absoluteString
        args["inputURL"] = inputURL.absoluteString
        args["inputURLScheme"] = inputURL.scheme
        switch context {
        case .silent:
            return
        case .plain:
            args["forRenderBackToReferrerBar"] = "0"
            args["forOpenUrl"] = "0"
            AppLinkMeasurementEvent.post(name: AppLinkMeasurementEvent.linkParse, args: args)
        case .renderBackToRefererBar:
            args["forRenderBackToReferrerBar"] = "1"
            args["forOpenUrl"] = "0"
            AppLinkMeasurementEvent.post(name: AppLinkMeasurementEvent.linkParse, args: args)
        case .inbound(let sourceApplication):
            args["sourceApplication"] = sourceApplication
            args["forRenderBackToReferrerBar"] = "0"
            args["forOpenUrl"] = "1"
            AppLinkMeasurementEvent.post(name: AppLinkMeasurementEvent.linkParse, args: args)
            AppLinkMeasurementEvent.post(name: AppLinkMeasurementEvent.navigateIn, args: args)
        }
    }
}
