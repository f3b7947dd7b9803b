import Bolts
import BoltsAppLinksTestSupport
import Foundation
import Testing

@testable import BoltsAppLinks

@Suite("Outbound navigation")
struct NavigationTests {
    let source = URL(string: "http://www.example.com/path?x=1&y=2")!
    let web = URL(string: "http://www.example.com/web")!

    func appLink(targets: [String?], web: URL?) -> AppLink {
        AppLink(
            sourceURL: source, targets: targets.map { AppLinkTarget(url: $0.flatMap(URL.init(string:))) }, webURL: web)
    }

    @Test func firstOpenableTargetWins() throws {
        let opener = RecordingAppLinkURLOpener(openableSchemes: ["second", "third"])
        let link = appLink(targets: ["first://a", nil, "second://b", "third://c"], web: web)
        let result = AppLinkNavigation(appLink: link).navigate(using: opener)
        #expect(result == .app)
        #expect(opener.attemptedURLs.map(\.scheme) == ["first", "second"])
        let opened = try #require(opener.lastOpenedURL)
        #expect(opened.absoluteString.hasPrefix("second://b?al_applink_data="))
    }

    @Test func noAppFallsBackToTheBrowserWithThePayload() throws {
        let opener = RecordingAppLinkURLOpener(openableSchemes: ["http"])
        let result = AppLinkNavigation(appLink: appLink(targets: ["app://x"], web: web)).navigate(using: opener)
        #expect(result == .browser)
        let opened = try #require(opener.lastOpenedURL)
        let parsed = AppLinkURL(url: opened)
        #expect(parsed.appLinkData?["target_url"] == .string(source.absoluteString))
        #expect(opened.host == "www.example.com")
        #expect(opened.path == "/web")
    }

    @Test func nothingOpenableIsAFailure() {
        let opener = RecordingAppLinkURLOpener(canOpen: { _ in false })
        #expect(AppLinkNavigation(appLink: appLink(targets: ["app://x"], web: web)).navigate(using: opener) == .failure)
        #expect(AppLinkNavigation(appLink: appLink(targets: [], web: nil)).navigate(using: opener) == .failure)
        #expect(opener.attemptedURLs.count == 2)
        #expect(opener.openedURLs.isEmpty)
    }

    @Test func noWebURLAndNoAppIsAFailureWithoutTryingTheBrowser() {
        let opener = RecordingAppLinkURLOpener()
        #expect(AppLinkNavigation(appLink: appLink(targets: [nil], web: nil)).navigate(using: opener) == .failure)
        #expect(opener.attemptedURLs.isEmpty)
    }

    @Test func payloadKeepsCallerUserAgentAndVersionButOverwritesTargetAndExtras() {
        let navigation = AppLinkNavigation(
            appLink: appLink(targets: ["app://x"], web: nil),
            extras: ["a": "b"],
            appLinkData: [
                "user_agent": "Mine 2", "version": "1.0", "target_url": "http://evil/", "extras": ["z": 1],
                "foo": "bar",
            ]
        )
        #expect(
            navigation.payload == [
                "user_agent": "Mine 2", "version": "1.0", "target_url": .string(source.absoluteString),
                "extras": ["a": "b"],
                "foo": "bar",
            ])
        let defaults = AppLinkNavigation(appLink: appLink(targets: [], web: nil)).payload
        #expect(
            defaults == [
                "user_agent": .string(AppLinkNavigation.userAgent), "version": "1.0",
                "target_url": .string(source.absoluteString), "extras": [:],
            ])
        #expect(defaults["referer_app_link"] == nil)
    }

    @Test func payloadRoundTripsThroughTheOutboundURL() throws {
        let extras: [String: AppLinkJSON] = [
            "query": "a=1&b=2+3 #frag?", "unicode": "é€😀", "nested": ["list": [1, 2.5, true, .null, "x"]],
            "slash": "a/b\\c\"",
        ]
        let data: [String: AppLinkJSON] = AppLinkReferer.callbackAppLinkData(
            forAppWithName: "Referer & Co", url: URL(string: "referer://back?x=1&y=2")!)
        let navigation = AppLinkNavigation(
            appLink: appLink(targets: ["app://host/p?z=9#section"], web: nil), extras: extras, appLinkData: data)
        let outbound = try #require(navigation.plan.steps.first?.url)
        #expect(outbound.absoluteString.hasSuffix("#section"))
        #expect(outbound.fragment == "section")
        let inbound = AppLinkURL(url: outbound)
        #expect(inbound.appLinkData == navigation.payload)
        #expect(inbound.appLinkExtras == extras)
        #expect(inbound.targetURL == source)
        #expect(inbound.targetQueryParameters == ["x": "1", "y": "2"])
        #expect(inbound.inputQueryParameters["z"] == "9")
        #expect(inbound.referer == AppLinkReferer(name: "Referer & Co", url: URL(string: "referer://back?x=1&y=2")!))
    }

    @Test func encodedPayloadUsesOnlyUnreservedCharacters() throws {
        let navigation = AppLinkNavigation(
            appLink: appLink(targets: ["app://x"], web: nil), extras: ["k": "&=+/?:@!$'()*,;"])
        let outbound = try #require(navigation.plan.steps.first?.url).absoluteString
        let encoded = try #require(outbound.components(separatedBy: "al_applink_data=").last)
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%")
        #expect(encoded.unicodeScalars.allSatisfy { allowed.contains($0) })
    }

    @Test(arguments: [
        ("bolts://", "bolts://?al_applink_data="),
        ("http://www.example.com?", "http://www.example.com?al_applink_data="),
        ("http://e.com/p?a=1", "http://e.com/p?a=1&al_applink_data="), ("app://x#f", "app://x?al_applink_data="),
    ])
    func parameterGoesIntoTheQuery(target: String, expectedPrefix: String) throws {
        let navigation = AppLinkNavigation(appLink: appLink(targets: [target], web: nil))
        let outbound = try #require(navigation.plan.steps.first?.url).absoluteString
        #expect(outbound.hasPrefix(expectedPrefix))
    }

    @Test func planAndNavigationTypeHaveNoSideEffects() {
        let opener = RecordingAppLinkURLOpener(openableSchemes: ["b", "http"])
        let navigation = AppLinkNavigation(appLink: appLink(targets: ["a://1", "b://2"], web: web))
        #expect(navigation.plan.steps.map(\.type) == [.app, .app, .browser])
        #expect(navigation.plan.steps.map(\.target?.url?.scheme) == ["a", "b", nil])
        #expect(navigation.navigationType(using: opener) == .app)
        #expect(navigation.navigationType(using: RecordingAppLinkURLOpener(openableSchemes: ["http"])) == .browser)
        #expect(navigation.navigationType(using: RecordingAppLinkURLOpener(openableSchemes: [])) == .failure)
        #expect(opener.attemptedURLs.isEmpty)
    }

    @Test func navigateToURLResolvesThenNavigates() async throws {
        let html = page(withTags: [("al:ios:url", "first://x"), ("al:iphone:url", "phone://y")])
        let url = dataURL(forHTML: html)
        let opener = RecordingAppLinkURLOpener(openableSchemes: ["phone", "first"])
        let type = try await AppLinkNavigation.navigate(
            to: url, resolver: loopbackResolver(), platform: .iphone, opener: opener
        ).value
        #expect(type == .app)
        #expect(opener.openedURLs.map(\.scheme) == ["phone"])
        let data = AppLinkURL(url: try #require(opener.lastOpenedURL)).appLinkData
        #expect(data?["target_url"] == .string(url.absoluteString))
    }

    @Test func navigateToURLPropagatesResolverErrors() async throws {
        let opener = RecordingAppLinkURLOpener()
        let task = AppLinkNavigation.navigate(
            to: URL(string: "gopher://x")!, resolver: loopbackResolver(), opener: opener)
        let error = await resolutionError(of: task)
        guard case .unsupportedScheme = error else {
            Issue.record("expected unsupported scheme, got \(String(describing: error))")
            return
        }
        #expect(opener.attemptedURLs.isEmpty)
    }
}

/// A resolver that answers every URL with the same link, and counts calls.
final class FixedResolver: AppLinkResolving {
    let link: @Sendable (URL, AppLinkPlatform) -> AppLink
    private let calls = Locked(0)

    init(_ link: @escaping @Sendable (URL, AppLinkPlatform) -> AppLink) {
        self.link = link
    }

    var callCount: Int { calls.current }

    func appLink(from url: URL, platform: AppLinkPlatform) -> Task<AppLink> {
        calls.withLock { $0 += 1 }
        return Task(link(url, platform))
    }
}

@Suite("Default resolver and opener", .serialized)
struct DefaultResolverTests {
    @Test func defaultResolverCanBeSwappedAndRestored() async throws {
        #expect(AppLinkNavigation.defaultResolver is HTMLAppLinkResolver)
        let fixed = FixedResolver { url, _ in
            AppLink(sourceURL: url, targets: [AppLinkTarget(url: URL(string: "fixed://"))], webURL: nil)
        }
        AppLinkNavigation.defaultResolver = fixed
        defer { AppLinkNavigation.resetDefaultResolver() }
        let opener = RecordingAppLinkURLOpener()
        let type = try await AppLinkNavigation.navigate(to: URL(string: "http://unused.example.com/")!, opener: opener)
            .value
        #expect(type == .app)
        #expect(fixed.callCount == 1)
        #expect(opener.lastOpenedURL?.scheme == "fixed")
        AppLinkNavigation.resetDefaultResolver()
        #expect(AppLinkNavigation.defaultResolver is HTMLAppLinkResolver)
    }

    @Test func defaultOpenerCanBeReplacedByARecordingOne() {
        let previous = AppLinkNavigation.defaultOpener
        #expect(previous is XDGAppLinkURLOpener)
        let recording = RecordingAppLinkURLOpener()
        AppLinkNavigation.defaultOpener = recording
        defer { AppLinkNavigation.defaultOpener = previous }
        let link = AppLink(
            sourceURL: URL(string: "http://e.com/")!, targets: [AppLinkTarget(url: URL(string: "x://"))], webURL: nil)
        #expect(AppLinkNavigation(appLink: link).navigate() == .app)
        #expect(AppLinkNavigation(appLink: link).navigationType == .app)
        #expect(recording.openedURLs.count == 1)
    }
}
