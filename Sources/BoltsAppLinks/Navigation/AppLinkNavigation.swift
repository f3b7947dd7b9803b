import Foundation

/// How a navigation ended, or would end.
public enum AppLinkNavigationType: String, Sendable, Hashable {
    /// Nothing was opened. Its event string is `"fail"`.
    case failure = "fail"
    /// The web fallback was opened in a browser. Its event string is `"web"`.
    case browser = "web"
    /// An app target was opened. Its event string is `"app"`.
    case app = "app"
}

/// A navigation to an App Link: the payload to send, the URLs to try in order, and the act of opening them.
///
/// Outbound, each candidate URL carries `al_applink_data`: the caller's `appLinkData` with `user_agent` and
/// `version` added when absent, `target_url` set to the link's ``AppLink/sourceURL`` and `extras` set to the
/// navigation's extras. The JSON is percent-encoded (all but RFC 3986 unreserved characters) and inserted into the
/// query before any fragment, so a `target_url` with its own query survives.
///
/// ``navigate(using:)`` tries each target with a URL in order and then the web URL; the first URL the opener
/// opens decides the result, and `al_nav_out` (or `al_ref_back_out` for a referer link) is posted either way.
public struct AppLinkNavigation: Sendable, Hashable {
    /// The protocol version written to and accepted from payloads: `"1.0"`.
    public static let protocolVersion = "1.0"
    /// The `user_agent` written to payloads that do not carry one.
    public static let userAgent = "Bolts Swift 1.0.0"

    /// The link to navigate to.
    public let appLink: AppLink
    /// The extras sent in the payload's `extras` member.
    public let extras: [String: AppLinkJSON]
    /// The caller's payload, before the navigation adds its members.
    public let appLinkData: [String: AppLinkJSON]

    /// Creates a navigation; nothing happens until ``navigate(using:)``.
    public init(appLink: AppLink, extras: [String: AppLinkJSON] = [:], appLinkData: [String: AppLinkJSON] = [:]) {
        self.appLink = appLink
        self.extras = extras
        self.appLinkData = appLinkData
    }

    /// The payload sent with every candidate URL.
    public var payload: [String: AppLinkJSON] {
        var data = appLinkData
        if data["user_agent"] == nil { data["user_agent"] = .string(Self.userAgent) }
        if data["version"] == nil { data["version"] = .string(Self.protocolVersion) }
        data["target_url"] = .string(appLink.sourceURL.absoluteString)
        data["extras"] = .object(extras)
        return data
    }

    /// `url` with this navigation's payload added as `al_applink_data`, or nil if Foundation cannot parse the
    /// result.
    public func outboundURL(for url: URL) -> URL? {
        AppLinkQuery.url(
            url,
            appendingParameter: AppLinkQuery.appLinkDataParameterName,
            value: AppLinkJSON.object(payload).serialized()
        )
    }

    /// The URLs a navigation would try, in order, without opening anything or posting events.
    public var plan: AppLinkNavigationPlan {
        var steps: [AppLinkNavigationPlan.Step] = []
        for target in appLink.targets {
            guard let url = target.url, let outbound = outboundURL(for: url) else { continue }
            steps.append(.init(type: .app, target: target, url: outbound))
        }
        if let webURL = appLink.webURL, let outbound = outboundURL(for: webURL) {
            steps.append(.init(type: .browser, target: nil, url: outbound))
        }
        return AppLinkNavigationPlan(steps: steps)
    }

    /// Predicts the result of ``navigate(using:)`` with `opener.canOpen`, without side effects.
    ///
    /// An app target counts when the opener can open its URL; otherwise the web fallback counts when the opener
    /// can open it; otherwise the result is ``AppLinkNavigationType/failure``.
    public func navigationType(using opener: any AppLinkURLOpener) -> AppLinkNavigationType {
        for step in plan.steps {
            let probe = step.target?.url ?? step.url
            if opener.canOpen(probe) { return step.type }
        }
        return .failure
    }

    /// ``navigationType(using:)`` with ``defaultOpener``.
    public var navigationType: AppLinkNavigationType {
        navigationType(using: Self.defaultOpener)
    }

    /// Opens the first candidate the opener accepts and posts `al_nav_out` (or `al_ref_back_out`).
    ///
    /// Runs synchronously on the calling thread, and so do the opener and the event observers.
    @discardableResult
    public func navigate(using opener: any AppLinkURLOpener) -> AppLinkNavigationType {
        var opened: AppLinkNavigationPlan.Step?
        for step in plan.steps where opener.open(step.url) {
            opened = step
            break
        }
        let type = opened?.type ?? .failure
        postEvent(type: type, openedURL: opened?.url)
        return type
    }

    /// ``navigate(using:)`` with ``defaultOpener``.
    @discardableResult
    public func navigate() -> AppLinkNavigationType {
        navigate(using: Self.defaultOpener)
    }

    /// Navigates to `appLink` with no extras and no caller payload.
    @discardableResult
    public static func navigate(
        to appLink: AppLink,
        using opener: any AppLinkURLOpener = AppLinkNavigation.defaultOpener
    ) -> AppLinkNavigationType {
        AppLinkNavigation(appLink: appLink).navigate(using: opener)
    }

    /// Predicts, without side effects, how navigating to `appLink` with no extras would end.
    public static func navigationType(
        for appLink: AppLink,
        using opener: any AppLinkURLOpener = AppLinkNavigation.defaultOpener
    ) -> AppLinkNavigationType {
        AppLinkNavigation(appLink: appLink).navigationType(using: opener)
    }

    /// The payload an app passes as `appLinkData` so that the receiver can offer a way back to it:
    /// `{"referer_app_link": {"app_name": <name>, "url": <url>}}`.
    public static func callbackAppLinkData(forAppWithName name: String, url: URL) -> [String: AppLinkJSON] {
        AppLinkReferer.callbackAppLinkData(forAppWithName: name, url: url)
    }

    private func postEvent(type: AppLinkNavigationType, openedURL: URL?) {
        var args: [String: String] = [:]
        args["outputURL"] = openedURL?.absoluteString
        args["outputURLScheme"] = openedURL?.scheme
        args["sourceURL"] = appLink.sourceURL.absoluteString
        args["sourceHost"] = appLink.sourceURL.host
        args["sourceScheme"] = appLink.sourceURL.scheme
        args["success"] = type == .failure ? "0" : "1"
        args["type"] = type.rawValue
        let name =
            appLink.isBackToReferrer
            ? AppLinkMeasurementEvent.navigateBackToReferer : AppLinkMeasurementEvent.navigateOut
        AppLinkMeasurementEvent.post(name: name, args: args)
    }

    private static let defaultOpenerStorage = Locked<any AppLinkURLOpener>(XDGAppLinkURLOpener())

    /// The opener used when none is given: the desktop's URL-scheme handlers (``XDGAppLinkURLOpener``) unless
    /// replaced. A server should set a ``RecordingAppLinkURLOpener`` or its own opener.
    public static var defaultOpener: any AppLinkURLOpener {
        get { defaultOpenerStorage.current }
        set { defaultOpenerStorage.withLock { $0 = newValue } }
    }
}

/// The candidate URLs of a navigation, in the order they are tried.
public struct AppLinkNavigationPlan: Sendable, Hashable {
    /// One candidate: an app target or the web fallback, with the outbound URL that would be opened.
    public struct Step: Sendable, Hashable {
        /// ``AppLinkNavigationType/app`` for a target, ``AppLinkNavigationType/browser`` for the web fallback.
        public let type: AppLinkNavigationType
        /// The target, for app steps.
        public let target: AppLinkTarget?
        /// The URL to open, payload included.
        public let url: URL
    }

    /// App targets with a URL, in order, then the web fallback when there is one.
    public let steps: [Step]
}
