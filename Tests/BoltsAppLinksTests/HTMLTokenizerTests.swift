import Testing

@testable import BoltsAppLinks

/// The `property` → `content` pairs of every `<meta>` element, as a browser's `getElementsByTagName('meta')`
/// would list them (a missing attribute shows as nil).
private func metas(_ html: String) -> [String?] {
    HTMLMetaElementScanner.metaElements(in: html).map { element in
        element[attribute: "property"].map { property in "\(property)=\(element[attribute: "content"] ?? "<nil>")" }
    }
}

@Suite("HTML tokenizer and meta extraction")
struct HTMLTokenizerTests {
    @Test func attributesQuotedSingleQuotedUnquotedAndAnyCase() {
        let html = """
            <META PROPERTY="al:ios:url" CONTENT="applinks://a">
            <meta property='al:ios:app_name' content='It"s'>
            <meta property=al:web:url content=http://example.com/x/>
            <MeTa pRoPeRtY = "al:a"   cOnTeNt =  'b' >
            """
        #expect(
            metas(html) == [
                "al:ios:url=applinks://a", "al:ios:app_name=It\"s", "al:web:url=http://example.com/x/", "al:a=b",
            ])
    }

    @Test func characterReferencesInAttributes() {
        let html = """
            <meta property="al:a" content="&amp;&lt;&gt;&quot;&apos;&nbsp;&eacute;&copy;&hellip;&euro;&rarr;">
            <meta property="al:b" content="&#65;&#x42;&#X43;&#0;&#x110000;&#xD800;&#128;&#x9F;&#99999999999999;">
            <meta property="al:c" content="a&b &amp c &ampx &amp=y &notit; &notin; &unknown; &#; &#x;">
            <meta property="al:d" content="?a=1&copy=2&lang=en&amp;ref=x">
            """
        #expect(
            metas(html) == [
                "al:a=&<>\"'\u{A0}é©…€→",
                "al:b=ABC\u{FFFD}\u{FFFD}\u{FFFD}€Ÿ\u{FFFD}",
                "al:c=a&b & c &ampx &amp=y &notit; ∉ &unknown; &#; &#x;",
                "al:d=?a=1&copy=2&lang=en&ref=x",
            ])
    }

    @Test func commentsHideTagsUntilTheyEnd() {
        let html = """
            <!-- <meta property="al:hidden" content="1"> -->
            <!--><meta property="al:a" content="after empty comment">
            <!---><meta property="al:b" content="after dash comment">
            <!-- a -- b --!><meta property="al:c" content="after bang end">
            <!----><meta property="al:d" content="x">
            <!-- <!-- nested --> <meta property="al:e" content="y">
            <? processing instruction <meta property="al:f"> ?>
            <!bogus <meta property="al:g"> comment> <meta property="al:h" content="z">
            </ bogus end tag <meta property="al:i"> ><meta property="al:j" content="w">
            <!DOCTYPE html PUBLIC "<meta property='al:k'>" >
            """
        #expect(
            metas(html) == [
                "al:a=after empty comment", "al:b=after dash comment", "al:c=after bang end", "al:d=x", "al:e=y",
                "al:h=z", "al:j=w",
            ])
    }

    @Test func rawTextElementsContainNoTags() {
        let html = """
            <title><meta property="al:no1"></title>
            <textarea><meta property="al:no2"></TEXTAREA>
            <style>/* <meta property="al:no3"> */</style >
            <script>document.write('<meta property="al:no4">')</script>
            <noscript><meta property="al:no5"></noscript>
            <xmp><meta property="al:no6"></xmp><iframe><meta property="al:no7"></iframe>
            <noembed><meta property="al:no8"></noembed><noframes><meta property="al:no9"></noframes>
            <meta property="al:yes" content="1">
            <title>a </titlex> <meta property="al:no10"> </title foo="bar>">
            <meta property="al:yes2" content="2">
            """
        #expect(metas(html) == ["al:yes=1", "al:yes2=2"])
    }

    @Test func scriptEscapesFollowTheScriptDataStates() {
        let html = """
            <script><!-- document.write("<script>x</script>"); <meta property="al:no1"> --></script>
            <meta property="al:a" content="1">
            <script><!-- x --> </script><meta property="al:b" content="2">
            <script>if (a<b) { c = "</scripty>"; }</script><meta property="al:c" content="3">
            <script><!--<script></script><meta property="al:no2"></script><meta property="al:d" content="4">
            <script>
            """
        #expect(metas(html) == ["al:a=1", "al:b=2", "al:c=3", "al:d=4"])
    }

    @Test func plaintextSwallowsTheRestOfTheDocument() {
        #expect(metas("<meta property='al:a' content='1'><plaintext></plaintext><meta property='al:b'>") == ["al:a=1"])
    }

    @Test func tagsAnywhereInTheDocumentCount() {
        let html = """
            <meta property="al:before-html" content="0"><html><body><div><p>
            <meta property="al:in-body" content="1"></p></div></body></html>
            <meta property="al:after-html" content="2">
            <table><tr><meta property="al:in-table" content="3"></tr></table>
            """
        #expect(metas(html) == ["al:before-html=0", "al:in-body=1", "al:after-html=2", "al:in-table=3"])
    }

    @Test func templateContentsAreNotPartOfTheDocument() {
        let html = """
            <template><meta property="al:no1"><template><meta property="al:no2"></template>
            <meta property="al:no3"></template><meta property="al:yes" content="1">
            """
        #expect(metas(html) == ["al:yes=1"])
    }

    @Test func foreignContentRules() {
        let html = """
            <svg><style><meta property="al:a" content="meta breaks out of svg"></style></svg>
            <svg><title>x</title><![CDATA[ <meta property="al:no1"> ]]></svg>
            <![CDATA[ <meta property="al:no-cdata-is-a-bogus-comment-in-html-ending-here"> ]]>
            <![CDATA[ <b> ]]><meta property="al:b" content="2">
            <math><mi><style><meta property="al:no2"></style></mi></math>
            <svg><foreignObject><textarea><meta property="al:no3"></textarea></foreignObject></svg>
            <svg/><style><meta property="al:no4"></style><meta property="al:c" content="3">
            """
        #expect(
            metas(html) == [
                "al:a=meta breaks out of svg", "al:b=2", "al:c=3",
            ])
    }

    @Test func duplicateAttributesKeepTheFirst() {
        let html = #"<meta property="al:a" property="al:b" content="1" content="2">"#
        #expect(metas(html) == ["al:a=1"])
    }

    @Test func malformedTagsBehaveAsInABrowser() {
        let html = """
            <meta/property="al:a"/content="slash separated"/>
            <meta property="al:b"content="no space">
            <meta property="al:c" content>
            <meta property="al:d" content=>
            <meta property = al:e content = "spaces around equals" >
            <meta property="al:f" content="line
            break">
            <meta property="al:g" content="a\u{0}b">
            <meta "property"="al:h" property="al:i" content="quote in name">
            < meta property="al:no1">
            <meta property="al:j" content="unterminated
            """
        #expect(
            metas(html) == [
                "al:a=slash separated", "al:b=no space", "al:c=", "al:d=", "al:e=spaces around equals",
                "al:f=line\nbreak", "al:g=a\u{FFFD}b", "al:i=quote in name",
            ])
    }

    @Test func unquotedValueEndsOnlyAtWhitespaceOrGreaterThan() {
        #expect(metas("<meta property=al:a content=a\"b'c<d=e`f/>") == ["al:a=a\"b'c<d=e`f/"])
    }

    @Test func carriageReturnsAreNormalised() {
        #expect(metas("<meta property=\"al:a\" content=\"x\r\ny\rz\">") == ["al:a=x\ny\nz"])
    }

    @Test func endTagsAndMetaWithoutPropertyAreNotAppLinkTags() {
        let html =
            #"</meta property="al:end"><meta name="al:ios:url" content="x"><meta property="og:title" content="t">"#
        let tags = AppLinkMetaTag.tags(inHTML: html)
        #expect(tags.isEmpty)
        #expect(HTMLMetaElementScanner.metaElements(in: html).count == 2)
    }

    @Test func appLinkPrefixIsCaseSensitiveAndContentMayBeAbsent() {
        let html =
            #"<meta property="AL:ios:url" content="x"><meta property="al:ios"><meta property="al:ios:url" content="">"#
        #expect(
            AppLinkMetaTag.tags(inHTML: html) == [
                AppLinkMetaTag(property: "al:ios", content: nil), AppLinkMetaTag(property: "al:ios:url", content: ""),
            ])
    }

    @Test func realWorldPageShape() {
        let html = """
            <!doctype html>
            <html lang="en" class="no-js">
            <head>
              <meta charset="utf-8">
              <meta http-equiv="X-UA-Compatible" content="IE=edge">
              <title>Example &mdash; Product</title>
              <script async src="https://example.com/a.js"></script>
              <script>
                window.dataLayer = window.dataLayer || [];
                var html = '<meta property="al:ios:url" content="fake://">';
                if (1 < 2 && "</div>") {}
              </script>
              <!--[if lt IE 9]><script src="html5shiv.js"></script><![endif]-->
              <meta property="og:title" content="Product">
              <meta property="al:ios:url" content="example://product/42?ref=web&amp;utm=1">
              <meta property="al:ios:app_store_id" content="123456789">
              <meta property="al:ios:app_name" content="Example &amp; Co">
              <meta property="al:android:url" content="example://product/42">
              <meta property="al:android:package" content="com.example.app">
              <meta property="al:android:app_name" content="Example">
              <style>.a > .b { content: "<meta property='al:web:url' content='x'>"; }</style>
              <meta property="al:web:url" content="https://example.com/product/42">
            </head>
            <body>
              <svg viewBox="0 0 10 10"><path d="M0 0L10 10"/><title>icon</title></svg>
              <noscript><img src="pixel.gif"></noscript>
            </body>
            </html>
            """
        let tags = AppLinkMetaTag.tags(inHTML: html)
        #expect(
            tags.map(\.property) == [
                "al:ios:url", "al:ios:app_store_id", "al:ios:app_name", "al:android:url", "al:android:package",
                "al:android:app_name", "al:web:url",
            ])
        #expect(tags[0].content == "example://product/42?ref=web&utm=1")
        #expect(tags[2].content == "Example & Co")
    }

    @Test func namedReferenceTableIsComplete() {
        #expect(HTMLCharacterReferences.named.count == 2125)
        #expect(HTMLCharacterReferences.legacy.count == 106)
        #expect(HTMLCharacterReferences.named["NotNestedGreaterGreater"] == "\u{2AA2}\u{338}")
        #expect(
            metas("<meta property='al:a' content='&CounterClockwiseContourIntegral;&fjlig;'>")
                == ["al:a=\u{2233}fj"])
    }
}
