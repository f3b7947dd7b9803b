import Bolts
import BoltsAppLinksTestSupport
import Foundation
import Testing

@testable import BoltsAppLinks

@Suite("Tags to groups to targets")
struct MetaTagAlgorithmTests {
    let source = URL(string: "http://www.example.com/path")!

    func link(_ tags: [(String, String?)], platform: AppLinkPlatform = .ios, base: URL? = nil) -> AppLink {
        AppLink(
            metaTags: tags.map { AppLinkMetaTag(property: $0.0, content: $0.1) },
            sourceURL: source, baseURL: base, platform: platform)
    }

    @Test func singleTargetWithAllFields() {
        let result = link([
            ("al:ios:url", "bolts://"), ("al:ios:app_store_id", "12345"), ("al:ios:app_name", "Bolts"),
        ])
        #expect(result.targets == [AppLinkTarget(url: URL(string: "bolts://"), appStoreId: "12345", appName: "Bolts")])
        #expect(result.sourceURL == source)
        #expect(result.webURL == source)
        #expect(result.isBackToReferrer == false)
    }

    @Test func repeatedTagsInOneGroupPairByIndex() {
        let result = link([
            ("al:ios:url", "bolts://"), ("al:ios:app_name", "Bolts"),
            ("al:ios:url", "bolts2://"), ("al:ios:app_name", "Bolts2"),
        ])
        #expect(result.targets.map(\.url) == [URL(string: "bolts://"), URL(string: "bolts2://")])
        #expect(result.targets.map(\.appName) == ["Bolts", "Bolts2"])
    }

    @Test func bareTagStartsANewGroup() {
        let result = link([
            ("al:ios", nil), ("al:ios:url", "bolts://"), ("al:ios:app_name", "Bolts"),
            ("al:ios", nil), ("al:ios:url", "bolts2://"), ("al:ios:app_store_id", "222"),
            ("al:ios", nil), ("al:ios:app_name", "Only a name"),
        ])
        #expect(
            result.targets == [
                AppLinkTarget(url: URL(string: "bolts://"), appName: "Bolts"),
                AppLinkTarget(url: URL(string: "bolts2://"), appStoreId: "222"),
                AppLinkTarget(url: nil, appName: "Only a name"),
            ])
    }

    @Test func groupWithOnlyABareTagGivesNoTarget() {
        #expect(link([("al:ios", nil), ("al:ios", nil)]).targets.isEmpty)
        #expect(link([("al:ios:", "x")]).targets.isEmpty)
    }

    @Test func unequalListsArePaddedWithNil() {
        let result = link([
            ("al:ios:url", "a://"), ("al:ios:url", "b://"), ("al:ios:url", "c://"), ("al:ios:app_name", "A"),
            ("al:ios:app_store_id", "1"), ("al:ios:app_store_id", "2"),
        ])
        #expect(
            result.targets == [
                AppLinkTarget(url: URL(string: "a://"), appStoreId: "1", appName: "A"),
                AppLinkTarget(url: URL(string: "b://"), appStoreId: "2"),
                AppLinkTarget(url: URL(string: "c://")),
            ])
    }

    @Test func deviceSpecificGroupsComeBeforeGenericOnes() {
        let tags: [(String, String?)] = [
            ("al:ios:url", "ios://"), ("al:iphone:url", "iphone://"), ("al:ipad:url", "ipad://"),
            ("al:android:url", "android://"), ("al:android:package", "com.example"),
        ]
        #expect(link(tags, platform: .iphone).targets.map(\.url) == [URL(string: "iphone://"), URL(string: "ios://")])
        #expect(link(tags, platform: .ipad).targets.map(\.url) == [URL(string: "ipad://"), URL(string: "ios://")])
        #expect(link(tags, platform: .ios).targets.map(\.url) == [URL(string: "ios://")])
        #expect(
            link(tags, platform: .android).targets == [
                AppLinkTarget(url: URL(string: "android://"), package: "com.example")
            ])
        #expect(link(tags, platform: .windowsPhone).targets.isEmpty)
    }

    @Test func androidTargetsCountPackageAndClass() {
        let result = link(
            [
                ("al:android:package", "com.a"), ("al:android:class", "com.a.Main"), ("al:android:app_name", "A"),
                ("al:android", nil), ("al:android:package", "com.b"),
            ], platform: .android)
        #expect(
            result.targets == [
                AppLinkTarget(url: nil, appName: "A", package: "com.a", className: "com.a.Main"),
                AppLinkTarget(url: nil, package: "com.b"),
            ])
    }

    @Test func windowsPlatformsReadOnlyTheirOwnGroups() {
        let tags: [(String, String?)] = [
            ("al:windows_phone:url", "wp://"), ("al:windows_phone:app_id", "guid-1"),
            ("al:windows:url", "win://"), ("al:windows:app_name", "Win"),
            ("al:windows_universal:url", "uwp://"),
        ]
        #expect(
            link(tags, platform: .windowsPhone).targets == [AppLinkTarget(url: URL(string: "wp://"), appId: "guid-1")])
        #expect(link(tags, platform: .windows).targets == [AppLinkTarget(url: URL(string: "win://"), appName: "Win")])
        #expect(link(tags, platform: .windowsUniversal).targets.map(\.url) == [URL(string: "uwp://")])
    }

    @Test func webURLReplacesTheSourceURL() {
        let result = link([("al:ios:url", "bolts://"), ("al:web:url", "http://www.example.com/web")])
        #expect(result.webURL == URL(string: "http://www.example.com/web"))
    }

    @Test(arguments: ["0", "false", "fAlse", "No", "NO", "no"])
    func shouldFallbackFalseRemovesTheWebURL(value: String) {
        let result = link([("al:web:should_fallback", value), ("al:web:url", "http://www.example.com/web")])
        #expect(result.webURL == nil)
        #expect(result.targets.isEmpty)
    }

    @Test(arguments: ["1", "true", "yes", "", " false", "nope"])
    func otherShouldFallbackValuesKeepTheWebURL(value: String) {
        let result = link([("al:web:url", "http://www.example.com/web"), ("al:web:should_fallback", value)])
        #expect(result.webURL == URL(string: "http://www.example.com/web"))
    }

    @Test func onlyTheFirstWebGroupCounts() {
        let result = link([
            ("al:web:url", "http://first.example.com/"), ("al:web", nil), ("al:web:should_fallback", "false"),
            ("al:web:url", "http://second.example.com/"),
        ])
        #expect(result.webURL == URL(string: "http://first.example.com/"))
    }

    @Test func webURLWithoutContentIsIgnoredAndShouldFallbackWithoutContentIsAbsent() {
        #expect(link([("al:web:url", nil)]).webURL == source)
        #expect(link([("al:web:should_fallback", nil)]).webURL == source)
    }

    @Test func relativeURLsResolveAgainstTheFinalPage() {
        let base = URL(string: "https://final.example.com/dir/page.html")!
        let result = link([("al:ios:url", "other/x"), ("al:web:url", "/web")], base: base)
        #expect(result.webURL == URL(string: "https://final.example.com/web"))
        #expect(result.targets.first?.url == URL(string: "https://final.example.com/dir/other/x"))
        #expect(result.sourceURL == source)
    }

    @Test func tagsOutsideTheAlNamespaceAreIgnored() {
        let result = link([("og:ios:url", "x://"), ("al", "root"), ("alx:ios:url", "y://"), ("al:ios:url", "z://")])
        #expect(result.targets.map(\.url) == [URL(string: "z://")])
    }

    @Test func resolvingADataURLUsesTheSameAlgorithm() async throws {
        let html = page(withTags: [
            ("al:ios:url", "bolts://"), ("al:ios:app_name", "Bolts"), ("al:web:should_fallback", "false"),
        ])
        let url = dataURL(forHTML: html)
        let result = try await loopbackResolver().appLink(from: url, platform: .iphone).value
        #expect(result.targets == [AppLinkTarget(url: URL(string: "bolts://"), appName: "Bolts")])
        #expect(result.webURL == nil)
        #expect(result.sourceURL == url)
    }

    @Test func plainDataURLAndPercentEscapesDecode() async throws {
        let url = URL(
            string: "data:text/html,%3Cmeta%20property%3D%22al%3Aios%3Aurl%22%20content%3D%22a%3A%2F%2Fb%22%3E")!
        let result = try await loopbackResolver().appLink(from: url).value
        #expect(result.targets.map(\.url) == [URL(string: "a://b")])
        #expect(result.webURL == url)
    }

    @Test func malformedBase64DataURLFaults() async throws {
        let error = await resolutionError(
            of: loopbackResolver().appLink(from: URL(string: "data:text/html;base64,A")!))
        guard case .malformedDataURL = error else {
            Issue.record("expected a malformed data URL error, got \(String(describing: error))")
            return
        }
    }
}
