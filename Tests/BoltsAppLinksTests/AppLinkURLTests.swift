import Foundation
import Testing

@testable import BoltsAppLinks

/// `base` with `al_applink_data` set to `json` (raw text, so that malformed payloads can be sent).
private func url(_ base: String, payload json: String) -> URL {
    let separator = base.contains("?") ? "&" : "?"
    return URL(string: base + separator + "al_applink_data=" + AppLinkQuery.percentEncoded(json))!
}

@Suite("Inbound AppLinkURL")
struct AppLinkURLTests {
    @Test func plainURLHasNoAppLinkData() {
        let input = URL(string: "http://www.example.com/path")!
        let parsed = AppLinkURL(url: input)
        #expect(parsed.inputURL == input)
        #expect(parsed.targetURL == input)
        #expect(parsed.inputQueryParameters.isEmpty)
        #expect(parsed.targetQueryParameters.isEmpty)
        #expect(parsed.appLinkData == nil)
        #expect(parsed.appLinkExtras == nil)
        #expect(parsed.referer == nil)
        #expect(parsed.appLinkReferer == nil)
    }

    @Test func queryParametersDecodeWithoutTurningPlusIntoSpace() {
        let parsed = AppLinkURL(
            url: URL(
                string: "http://example.com/p?foo&bar=baz&sp=a%20b&plus=1+2&eq=a=b&&dup=1&dup=2&%C3%A9=%E2%82%AC#frag=x"
            )!)
        #expect(
            parsed.inputQueryParameters == [
                "foo": "", "bar": "baz", "sp": "a b", "plus": "1+2", "eq": "a=b", "dup": "2", "é": "€",
            ])
        #expect(parsed.targetQueryParameters == parsed.inputQueryParameters)
    }

    @Test func malformedEscapesKeepTheRawText() {
        #expect(
            AppLinkQuery.parameters(ofQuery: "a=%zz&b%=1&c=%E2%82&d=%41") == [
                "a": "%zz", "b%": "1", "c": "%E2%82", "d": "A",
            ])
        #expect(AppLinkQuery.parameters(ofQuery: "") == [:])
        #expect(AppLinkQuery.parameters(of: URL(string: "http://example.com/?")!) == [:])
    }

    @Test func acceptedPayloadSetsTargetExtrasAndData() {
        let json =
            #"{"target_url":"http:\/\/www.example.com\/path?a=b&c=%20d","extras":{"foo":"bar","n":[1,2]},"#
            + #""user_agent":"Bolts iOS 1.0.0","version":"1.0","custom":true}"#
        let parsed = AppLinkURL(url: url("bolts://?foo=bar", payload: json))
        #expect(parsed.targetURL == URL(string: "http://www.example.com/path?a=b&c=%20d"))
        #expect(parsed.targetQueryParameters == ["a": "b", "c": " d"])
        #expect(parsed.inputQueryParameters["foo"] == "bar")
        #expect(parsed.appLinkExtras == ["foo": "bar", "n": [1, 2]])
        #expect(parsed.appLinkData?["user_agent"] == "Bolts iOS 1.0.0")
        #expect(parsed.appLinkData?["custom"] == true)
        #expect(parsed.appLinkData?.count == 5)
    }

    @Test func missingVersionIsAcceptedAndNotInserted() {
        let parsed = AppLinkURL(url: url("bolts://", payload: #"{"target_url":"http://example.com/t"}"#))
        #expect(parsed.targetURL == URL(string: "http://example.com/t"))
        #expect(parsed.appLinkData == ["target_url": "http://example.com/t"])
    }

    @Test(arguments: [
        #"{"version":"2.0","target_url":"http://x.com/"}"#, #"{"version":1,"target_url":"http://x.com/"}"#,
        #"{"version":"1","target_url":"http://x.com/"}"#, #"{"version":null,"target_url":"http://x.com/"}"#,
    ])
    func otherVersionsMakeThePayloadIgnored(json: String) {
        let input = url("bolts://", payload: json)
        let parsed = AppLinkURL(url: input)
        #expect(parsed.appLinkData == nil)
        #expect(parsed.targetURL == input)
    }

    @Test(arguments: ["not json", "[1,2]", "\"string\"", "42", "{\"a\":", "{}x", "", "{'a':1}"])
    func nonObjectOrInvalidJSONIsIgnored(json: String) {
        let input = url("bolts://host/path", payload: json)
        let parsed = AppLinkURL(url: input)
        #expect(parsed.appLinkData == nil)
        #expect(parsed.appLinkExtras == nil)
        #expect(parsed.targetURL == input)
    }

    @Test(arguments: [
        #"{"target_url":null}"#, #"{"target_url":12}"#, #"{"target_url":"not a url"}"#,
        #"{"target_url":{"a":1}}"#, #"{"target_url":""}"#,
    ])
    func unusableTargetURLFallsBackToTheInputURL(json: String) {
        let input = url("bolts://x", payload: json)
        let parsed = AppLinkURL(url: input)
        #expect(parsed.appLinkData != nil)
        #expect(parsed.targetURL == input)
        #expect(parsed.targetQueryParameters == parsed.inputQueryParameters)
    }

    @Test func fieldsAreReadIndependently() {
        let json = #"{"target_url":"http://example.com/ok","extras":"not an object","referer_app_link":[1]}"#
        let parsed = AppLinkURL(url: url("bolts://", payload: json))
        #expect(parsed.targetURL == URL(string: "http://example.com/ok"))
        #expect(parsed.appLinkExtras == nil)
        #expect(parsed.referer == nil)
        #expect(parsed.appLinkData?["extras"] == "not an object")
    }

    @Test func refererNeedsBothURLAndName() throws {
        let both = #"{"referer_app_link":{"url":"referer://back","app_name":"Referer App","app_store_id":"9"}}"#
        let parsed = AppLinkURL(url: url("bolts://", payload: both))
        #expect(parsed.referer == AppLinkReferer(name: "Referer App", url: URL(string: "referer://back")!))
        let appLink = try #require(parsed.appLinkReferer)
        #expect(appLink.isBackToReferrer == true)
        #expect(appLink.sourceURL == URL(string: "referer://back"))
        #expect(appLink.targets == [AppLinkTarget(url: URL(string: "referer://back"), appName: "Referer App")])
        #expect(appLink.webURL == nil)

        for json in [
            #"{"referer_app_link":{"url":"referer://back"}}"#, #"{"referer_app_link":{"app_name":"R"}}"#,
            #"{"referer_app_link":{"url":5,"app_name":"R"}}"#, #"{"referer_app_link":"referer://back"}"#,
        ] {
            #expect(AppLinkURL(url: url("bolts://", payload: json)).referer == nil, "payload \(json)")
        }
    }

    @Test func deeplyNestedOrHugePayloadsNeverCrash() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(AppLinkURL(url: url("bolts://", payload: "{\"a\":" + deep + "}")).appLinkData == nil)
        let wide = "{" + (0..<2000).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}"
        #expect(AppLinkURL(url: url("bolts://", payload: wide)).appLinkData?.count == 2000)
    }

    @Test func badUnicodeEscapesInsidePayloadStrings() {
        let json = #"{"target_url":"http://example.com/\ud800","extras":{"s":"\ud83d\ude00 \udc00"}}"#
        let parsed = AppLinkURL(url: url("bolts://", payload: json))
        #expect(parsed.appLinkExtras?["s"] == "😀 \u{FFFD}")
    }
}
