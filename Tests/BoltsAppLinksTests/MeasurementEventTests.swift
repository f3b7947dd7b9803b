import BoltsAppLinksTestSupport
import Foundation
import Testing

@testable import BoltsAppLinks

@Suite("Measurement events")
struct MeasurementEventTests {
    func inboundURL(marker: String) -> URL {
        let json =
            #"{"target_url":"http://example.com/\#(marker)?q=1","version":"1.0","#
            + #""referer_app_link":{"url":"ref://\#(marker)","app_name":"Referer"}}"#
        return URL(string: "bolts://\(marker)/in?al_applink_data=" + AppLinkQuery.percentEncoded(json))!
    }

    @Test func inboundURLPostsLinkParseAndNavigateInWithEveryField() {
        let marker = uniqueMarker()
        let url = inboundURL(marker: marker)
        let posted = events(mentioning: marker) {
            _ = AppLinkURL(inboundURL: url, sourceApplication: "com.example.source")
        }
        let expected: [String: String] = [
            "version": "1.0",
            "refererURL": "ref://\(marker)",
            "refererAppName": "Referer",
            "sourceApplication": "com.example.source",
            "targetURL": "http://example.com/\(marker)?q=1",
            "inputURL": url.absoluteString,
            "inputURLScheme": "bolts",
            "forRenderBackToReferrerBar": "0",
            "forOpenUrl": "1",
        ]
        #expect(
            posted == [
                AppLinkMeasurementEvent(name: "al_link_parse", args: expected),
                AppLinkMeasurementEvent(name: "al_nav_in", args: expected),
            ])
    }

    @Test func plainParseAndRefererBarParsePostOnlyLinkParse() {
        let marker = uniqueMarker()
        let url = inboundURL(marker: marker)
        let posted = events(mentioning: marker) {
            _ = AppLinkURL(url: url)
            _ = AppLinkReferer(inboundURL: url)
        }
        #expect(posted.map(\.name) == ["al_link_parse", "al_link_parse"])
        #expect(posted.map { $0.args["forOpenUrl"] } == ["0", "0"])
        #expect(posted.map { $0.args["forRenderBackToReferrerBar"] } == ["0", "1"])
        #expect(posted.allSatisfy { $0.args["sourceApplication"] == nil })
    }

    @Test func ignoredPayloadsPostNothing() {
        let marker = uniqueMarker()
        let posted = events(mentioning: marker) {
            _ = AppLinkURL(inboundURL: URL(string: "bolts://\(marker)")!, sourceApplication: "x")
            _ = AppLinkURL(url: URL(string: "bolts://\(marker)?al_applink_data=%5B%5D")!)
            _ = AppLinkURL(url: URL(string: "bolts://\(marker)?al_applink_data=%7B%22version%22%3A%222%22%7D")!)
        }
        #expect(posted.isEmpty)
    }

    @Test(
        arguments: [
            (["app"], AppLinkNavigationType.app), (["http"], .browser), ([], .failure),
        ] as [([String], AppLinkNavigationType)])
    func navigationPostsNavigateOutWithEveryField(openable: [String], expected: AppLinkNavigationType) throws {
        let marker = uniqueMarker()
        let source = URL(string: "https://\(marker).example.com/page")!
        let link = AppLink(
            sourceURL: source, targets: [AppLinkTarget(url: URL(string: "app://x"))],
            webURL: URL(string: "http://web.example.com/")!)
        let opener = RecordingAppLinkURLOpener(openableSchemes: Set(openable))
        var result: AppLinkNavigationType?
        let posted = events(mentioning: marker) {
            result = AppLinkNavigation(appLink: link).navigate(using: opener)
        }
        #expect(result == expected)
        let event = try #require(posted.first)
        #expect(posted.count == 1)
        #expect(event.name == "al_nav_out")
        var args: [String: String] = [
            "sourceURL": source.absoluteString, "sourceHost": "\(marker).example.com", "sourceScheme": "https",
            "success": expected == .failure ? "0" : "1",
            "type": ["app": "app", "web": "web", "fail": "fail"][expected.rawValue]!,
        ]
        if let opened = opener.lastOpenedURL {
            args["outputURL"] = opened.absoluteString
            args["outputURLScheme"] = opened.scheme
        }
        #expect(event.args == args)
    }

    @Test func navigatingBackToTheRefererPostsRefBackOut() throws {
        let marker = uniqueMarker()
        let referer = try #require(AppLinkURL(url: inboundURL(marker: marker)).referer)
        #expect(referer.returnText == "Touch to return to Referer")
        let opener = RecordingAppLinkURLOpener()
        var result: AppLinkNavigationType?
        let posted = events(mentioning: marker) {
            result = referer.navigateBack(using: opener)
        }
        #expect(result == .app)
        #expect(posted.map(\.name) == ["al_ref_back_out"])
        #expect(posted.first?.args["type"] == "app")
        #expect(posted.first?.args["sourceURL"] == "ref://\(marker)")
        let opened = try #require(opener.lastOpenedURL)
        #expect(opened.absoluteString.hasPrefix("ref://\(marker)?al_applink_data="))
        #expect(AppLinkURL(url: opened).appLinkData?["target_url"] == .string("ref://\(marker)"))
    }

    @Test func notificationCenterCarriesTheOriginalKeys() throws {
        let marker = uniqueMarker()
        let received = Locked<[(name: String?, args: [String: String]?, keys: Set<String>)]>([])
        let token = NotificationCenter.default.addObserver(
            forName: Notification.Name("com.parse.bolts.measurement_event"), object: nil, queue: nil
        ) { notification in
            let args = notification.userInfo?["event_args"] as? [String: String]
            guard args?["k"] == marker else { return }
            let name = notification.userInfo?["event_name"] as? String
            let keys = Set(notification.userInfo?.keys.compactMap { $0.base as? String } ?? [])
            received.withLock { $0.append((name, args, keys)) }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        AppLinkMeasurementEvent.post(name: "custom_event", args: ["k": marker, "other": "v"])
        AppLinkMeasurementEvent.post(name: "", args: ["k": marker])
        let notifications = received.current
        #expect(notifications.count == 1)
        let first = try #require(notifications.first)
        #expect(first.keys == ["event_name", "event_args"])
        #expect(first.name == "custom_event")
        #expect(first.args == ["k": marker, "other": "v"])
    }

    @Test func cancelledObservationStopsDelivery() {
        let marker = uniqueMarker()
        let count = Locked(0)
        let observation = AppLinkMeasurementEvent.addObserver { event in
            if event.args["k"] == marker { count.withLock { $0 += 1 } }
        }
        AppLinkMeasurementEvent.post(name: "e", args: ["k": marker])
        observation.cancel()
        observation.cancel()
        AppLinkMeasurementEvent.post(name: "e", args: ["k": marker])
        #expect(count.current == 1)
    }

    @Test func droppedObservationStopsDelivery() {
        let marker = uniqueMarker()
        let count = Locked(0)
        do {
            let observation = AppLinkMeasurementEvent.addObserver { event in
                if event.args["k"] == marker { count.withLock { $0 += 1 } }
            }
            AppLinkMeasurementEvent.post(name: "e", args: ["k": marker])
            withExtendedLifetime(observation) {}
        }
        AppLinkMeasurementEvent.post(name: "e", args: ["k": marker])
        #expect(count.current == 1)
    }
}
