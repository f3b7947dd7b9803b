import Testing

@testable import BoltsAppLinks

/// The scanner against a real browser's DOM: the cases and their expected `meta` elements were generated once by
/// headless Chromium (see `Tests/BrowserExpectations/generate.py`), for frameset documents and foreign content.
@Suite("Meta elements as a browser's DOM holds them")
struct BrowserDOMTests {
    @Test(arguments: browserDOMCases)
    func scannerFindsTheMetaElementsTheBrowserKept(_ testCase: BrowserDOMCase) {
        let found = HTMLMetaElementScanner.metaElements(in: testCase.html).map {
            [$0[attribute: "property"], $0[attribute: "content"]]
        }
        #expect(found == testCase.metas, "\(testCase.name): \(testCase.html)")
    }

    @Test func theGeneratedCasesCoverEveryRuleTheyNameAndCanFail() {
        #expect(browserDOMCases.count >= 50)
        #expect(Set(browserDOMCases.map(\.name)).count == browserDOMCases.count)
        // Cases where the browser keeps no meta at all, and cases where it keeps some, so a scanner that finds
        // every tag (or none) fails.
        #expect(browserDOMCases.contains { $0.metas.isEmpty })
        #expect(browserDOMCases.contains { $0.metas.count >= 2 })
    }
}
