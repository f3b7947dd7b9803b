import Foundation
import Testing

@testable import BoltsAppLinks

@Suite("Payload JSON")
struct AppLinkJSONTests {
    @Test func parsesEveryKindOfValue() {
        let text =
            #" { "s": "a\"b\\c\/d\n\u00e9\ud83d\ude00", "i": -42, "d": 2.5e3, "big": 12345678901234567890, "#
            + #""t": true, "f": false, "n": null, "a": [1, [], {}], "o": {"x": {"y": []}} } "#
        #expect(
            AppLinkJSON(parsing: text) == [
                "s": "a\"b\\c/d\né😀", "i": -42, "d": 2500.0, "big": .double(1.2345678901234567e19), "t": true,
                "f": false,
                "n": .null, "a": [1, [], [:]], "o": ["x": ["y": []]],
            ])
    }

    @Test(arguments: [
        "", " ", "{", "}", "[1,]", "{\"a\":1,}", "{a:1}", "'x'", "01", "1.", ".5", "-", "1e", "+1", "tru", "nul",
        "\"\u{01}\"", "\"\\x\"", "\"\\u12\"", "[1] [2]", "{\"a\" 1}", "NaN", "Infinity", "\"unterminated",
    ])
    func rejectsInvalidText(text: String) {
        #expect(AppLinkJSON(parsing: text) == nil)
    }

    @Test func nestingIsBounded() {
        let ok =
            String(repeating: "[", count: AppLinkJSON.maximumNestingDepth)
            + String(repeating: "]", count: AppLinkJSON.maximumNestingDepth)
        let deep = "[" + ok + "]"
        #expect(AppLinkJSON(parsing: ok) != nil)
        #expect(AppLinkJSON(parsing: deep) == nil)
    }

    @Test func serializationIsCompactSortedAndRoundTrips() {
        let value: AppLinkJSON = [
            "b": [1, 2.5, "x/y", .null, true], "a": "quote\" back\\ ctrl\u{01} tab\t é", "c": [:], "d": 1.0,
        ]
        let text = value.serialized()
        #expect(text == #"{"a":"quote\" back\\ ctrl\u0001 tab\t é","b":[1,2.5,"x/y",null,true],"c":{},"d":1.0}"#)
        #expect(AppLinkJSON(parsing: text) == value)
        #expect(AppLinkJSON.double(.nan).serialized() == "null")
    }

    @Test func accessorsReturnNilForOtherKinds() {
        let value: AppLinkJSON = ["s": "x", "n": 3, "l": [true]]
        #expect(value["s"]?.stringValue == "x")
        #expect(value["n"]?.intValue == 3)
        #expect(value["n"]?.doubleValue == 3)
        #expect(value["n"]?.stringValue == nil)
        #expect(value["l"]?[0]?.boolValue == true)
        #expect(value["l"]?[1] == nil)
        #expect(value["missing"] == nil)
        #expect(value.arrayValue == nil)
        #expect(AppLinkJSON.null.isNull)
    }

    @Test func agreesWithFoundationOnValidDocuments() throws {
        let samples = [#"{"a":[1,2,{"b":"c"}],"d":"\u00fc\/"}"#, #"[true,false,null,"x",-0.5]"#, #"{"k":"v&w=x+y"}"#]
        for sample in samples {
            let ours = try #require(AppLinkJSON(parsing: sample))
            let foundation = try JSONSerialization.jsonObject(
                with: Data(ours.serialized().utf8), options: [.fragmentsAllowed])
            let again = try JSONSerialization.data(
                withJSONObject: foundation, options: [.sortedKeys, .fragmentsAllowed])
            #expect(AppLinkJSON(parsing: String(decoding: again, as: UTF8.self)) == ours)
        }
    }
}
