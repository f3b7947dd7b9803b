#!/usr/bin/env python3
"""Regenerates Tests/BoltsAppLinksTests/BrowserDOMExpectations.swift from a real browser.

Each case below is an HTML document. The script loads every case in headless Chromium (inside an iframe's
`srcdoc`, so scripting is on as in a browser tab), reads `document.getElementsByTagName('meta')` of each, and writes
the documents with the `property` and `content` attributes the browser's DOM holds, in document order. The Swift
test then checks that HTMLMetaElementScanner finds the same elements.

Run it by hand after adding a case (the browser is not a dependency of the build or of CI):

    apt-get install -y chromium
    python3 Tests/BrowserExpectations/generate.py

Chromium runs in a network namespace of its own (`unshare -n`) when it can, so that it sends nothing anywhere; it
only ever loads a local file.
"""

import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# (name, document). `M(n)` is replaced by `<meta property="al:ios:url" content="n">`, to keep the cases readable.
# `<![CDATA[ a > M(n) ]]>` tells a CDATA section (the meta is text) from a bogus comment (which ends at `a >`, so
# the meta is a tag).
CASES = [
    # Frameset documents: in frameset, after frameset, after after frameset.
    ("framesetAfterHeadDropsMetasInsideIt",
     '<!DOCTYPE html><html><head>M(1)</head><frameset>M(2)<frame src="a.html">M(3)</frameset></html>'),
    ("nestedFramesetsDropEveryMeta",
     '<!DOCTYPE html><head>M(1)</head><frameset><frameset>M(2)</frameset>M(3)<frame></frameset>'),
    ("afterFramesetDropsMetas",
     '<!DOCTYPE html><head>M(1)</head><frameset><frame></frameset>M(2)<div>M(3)</div>'),
    ("afterAfterFramesetDropsMetas",
     '<!DOCTYPE html><head>M(1)</head><frameset></frameset></html>M(2)<html>M(3)'),
    ("noframesInFramesetIsRawText",
     '<!DOCTYPE html><frameset><noframes>M(1)</noframes>M(2)</frameset><noframes>M(3)</noframes>'),
    ("framesetAsTheFirstTagKeepsHeadMetasBeforeIt",
     '<!DOCTYPE html>M(1)\n  <frameset>M(2)</frameset>'),
    ("metaAfterHeadGoesToTheHeadBeforeAFrameset",
     '<!DOCTYPE html><head></head>M(1)<frameset>M(2)</frameset>'),
    ("framesetReplacesAnImpliedBodyAndItsMetas",
     '<!DOCTYPE html><head>M(1)</head><div>M(2)<span>M(3)</span></div><frameset>M(4)</frameset>'),
    ("framesetReplacesABodyHoldingOnlyForeignContent",
     '<!DOCTYPE html><svg></svg>M(1)<frameset>M(2)</frameset>'),
    ("textInTheBodyMakesAFramesetIgnored",
     '<!DOCTYPE html><p>hello</p>M(1)<frameset>M(2)</frameset>M(3)'),
    ("whitespaceInTheBodyKeepsTheFramesetPossible",
     '<!DOCTYPE html><div> \n\t</div>M(1)<frameset>M(2)</frameset>'),
    ("anExplicitBodyMakesAFramesetIgnored",
     '<!DOCTYPE html><head></head><body>M(1)<frameset>M(2)</frameset>M(3)'),
    ("anImageMakesAFramesetIgnored",
     '<!DOCTYPE html><img src="x.png">M(1)<frameset>M(2)</frameset>'),
    ("aTableMakesAFramesetIgnored",
     '<!DOCTYPE html><table></table>M(1)<frameset>M(2)</frameset>'),
    ("aHiddenInputKeepsTheFramesetPossible",
     '<!DOCTYPE html><input type="hidden">M(1)<frameset>M(2)</frameset>'),
    ("aVisibleInputMakesAFramesetIgnored",
     '<!DOCTYPE html><input type="text">M(1)<frameset>M(2)</frameset>'),
    ("aSecondFramesetInsideTheFirstIsKept",
     '<!DOCTYPE html><frameset><frameset></frameset></frameset>M(1)'),
    ("framesetAfterTheBodyEndsReplacesIt",
     '<!DOCTYPE html><div>M(1)</div></body></html><frameset>M(2)</frameset>'),
    ("templateContentsNeverCountEvenBeforeAFrameset",
     '<!DOCTYPE html><head><template>M(1)</template>M(2)</head><frameset>M(3)</frameset>'),
    ("characterReferenceTextMakesAFramesetIgnored",
     '<!DOCTYPE html><div>&amp;</div>M(1)<frameset>M(2)</frameset>'),
    ("commentsInTheBodyKeepTheFramesetPossible",
     '<!DOCTYPE html><div><!-- text -->M(1)</div><frameset>M(2)</frameset>'),
    ("scriptTextKeepsTheFramesetPossible",
     '<!DOCTYPE html><head></head><div><script>var x = 1;</script>M(1)</div><frameset>M(2)</frameset>'),
    ("aFramesetInsideSVGIsAForeignElement",
     '<!DOCTYPE html><svg><frameset>M(1)</frameset></svg>M(2)'),

    # Foreign content: CDATA sections.
    ("cdataInHTMLIsABogusComment",
     '<!DOCTYPE html><body><![CDATA[ a > M(1) ]]>M(2)'),
    ("cdataInSVGIsText",
     '<!DOCTYPE html><body><svg><![CDATA[ a > M(1) ]]></svg>M(2)'),
    ("cdataInMathIsText",
     '<!DOCTYPE html><body><math><![CDATA[ a > M(1) ]]></math>M(2)'),
    ("cdataInAMathTextIntegrationPointIsText",
     '<!DOCTYPE html><body><math><mi><![CDATA[ a > M(1) ]]></mi><ms><![CDATA[ b > M(2) ]]></ms></math>M(3)'),
    ("cdataDirectlyInForeignObjectIsText",
     '<!DOCTYPE html><body><svg><foreignObject><![CDATA[ a > M(1) ]]></foreignObject></svg>M(2)'),
    ("cdataInHTMLInsideForeignObjectIsABogusComment",
     '<!DOCTYPE html><body><svg><foreignObject><div><![CDATA[ a > M(1) ]]></div></foreignObject></svg>'),
    ("cdataInSVGTitleAndDescIsText",
     '<!DOCTYPE html><body><svg><title><![CDATA[ a > M(1) ]]></title><desc><![CDATA[ b > M(2) ]]></desc></svg>'),
    ("cdataInAnnotationXMLIsText",
     '<!DOCTYPE html><body><math><annotation-xml encoding="text/html"><![CDATA[ a > M(1) ]]>'
     '</annotation-xml></math>M(2)'),
    ("cdataAfterTheSVGElementClosedIsABogusComment",
     '<!DOCTYPE html><body><svg></svg><![CDATA[ a > M(1) ]]>'),
    ("cdataAfterABreakoutIsABogusComment",
     '<!DOCTYPE html><body><svg><p><![CDATA[ a > M(1) ]]>'),
    ("cdataHidingAnEndTagKeepsTheSVGOpen",
     '<!DOCTYPE html><body><svg><![CDATA[</svg>]]><style>M(1)</style></svg><style>M(2)</style>'),
    ("unterminatedCDATARunsToTheEnd",
     '<!DOCTYPE html><body><svg><![CDATA[ a > M(1)'),
    ("cdataInSVGInsideAnnotationXML",
     '<!DOCTYPE html><body><math><annotation-xml><svg><![CDATA[ a > M(1) ]]></svg></annotation-xml></math>M(2)'),

    # Foreign content: breakouts and integration points.
    ("metaBreaksOutOfSVGAndMath",
     '<!DOCTYPE html><body><svg><g>M(1)</g></svg><math><mrow>M(2)</mrow></math>'),
    ("styleInSVGIsForeignSoItsMetaIsATag",
     '<!DOCTYPE html><body><svg><style>M(1)</style></svg>'),
    ("afterABreakoutStyleIsRawTextAgain",
     '<!DOCTYPE html><body><svg>M(1)<style>M(2)</style></svg>'),
    ("fontWithAttributesBreaksOut",
     '<!DOCTYPE html><body><svg><font color="red"><style>M(1)</style></font></svg>'),
    ("fontWithoutAttributesStaysForeign",
     '<!DOCTYPE html><body><svg><font><style>M(1)</style></font></svg>'),
    ("styleInForeignObjectIsHTMLRawText",
     '<!DOCTYPE html><body><svg><foreignObject><style>M(1)</style>M(2)</foreignObject></svg>'),
    ("styleInAMathTextIntegrationPointIsHTMLRawText",
     '<!DOCTYPE html><body><math><mtext><style>M(1)</style></mtext></math>'),
    ("mglyphInAMathTextIntegrationPointStaysMathML",
     '<!DOCTYPE html><body><math><mi><mglyph><style>M(1)</style></mglyph></mi></math>'),
    ("annotationXMLWithoutAnHTMLEncodingIsForeign",
     '<!DOCTYPE html><body><math><annotation-xml><style>M(1)</style></annotation-xml></math>'),
    ("annotationXMLWithAnHTMLEncodingIsAnIntegrationPoint",
     '<!DOCTYPE html><body><math><annotation-xml encoding="TEXT/HTML"><style>M(1)</style></annotation-xml></math>'),
    ("anEndTagClosingAnHTMLAncestorEndsTheForeignContent",
     '<!DOCTYPE html><body><div><svg><g></div><style>M(1)</style>'),
    ("anUnmatchedEndTagInSVGIsIgnored",
     '<!DOCTYPE html><body><svg></span><style>M(1)</style></svg>'),
    ("pEndTagInSVGBreaksOut",
     '<!DOCTYPE html><body><svg></p><style>M(1)</style></svg>'),
    ("brEndTagInMathBreaksOut",
     '<!DOCTYPE html><body><math></br><style>M(1)</style></math>'),
    ("selfClosingSVGIsEmpty",
     '<!DOCTYPE html><body><svg/><style>M(1)</style>'),
    ("svgInATableIsFosterParentedAndItsMetaCounts",
     '<!DOCTYPE html><body><table><svg>M(1)<style>M(2)</style></svg></table>'),
    ("foreignContentInATemplateStaysInTheTemplate",
     '<!DOCTYPE html><body><template><svg><style>M(1)</style></svg></template>M(2)<style>M(3)</style>'),
    ("svgTitleIsNotRCDATA",
     '<!DOCTYPE html><body><svg><title><b>x</b></title><textarea>M(1)</textarea></svg>'),
    ("scriptInSVGIsForeign",
     '<!DOCTYPE html><body><svg><script>M(1)</script></svg>'),
]

TEMPLATE_META = '<meta property="al:ios:url" content="%s">'


def expand(document):
    return re.sub(r"M\((\d+)\)", lambda m: TEMPLATE_META % m.group(1), document)


def harness(cases):
    frames = "\n".join(
        '<iframe id="c%d" srcdoc="%s"></iframe>' % (index, html.escape(expand(doc), quote=True))
        for index, (_, doc) in enumerate(cases))
    return """<!DOCTYPE html><html><body>%s
<pre id="out"></pre>
<script>
window.addEventListener('load', function () {
  var results = [];
  for (var i = 0; i < %d; i++) {
    var d = document.getElementById('c' + i).contentDocument;
    results.push(Array.prototype.map.call(d.getElementsByTagName('meta'), function (m) {
      return [m.namespaceURI, m.getAttribute('property'), m.getAttribute('content')];
    }));
  }
  document.getElementById('out').textContent = JSON.stringify(results);
});
</script></body></html>""" % (frames, len(cases))


def run_browser(path):
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        sys.exit("chromium is not installed (apt-get install -y chromium)")
    command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", "file://" + path]
    if shutil.which("unshare") and subprocess.run(["unshare", "-n", "true"]).returncode == 0:
        command = ["unshare", "-n"] + command
    output = subprocess.run(command, capture_output=True, text=True, timeout=120).stdout
    match = re.search(r'<pre id="out">(.*?)</pre>', output, re.S)
    if match is None:
        sys.exit("the browser produced no result:\n" + output[:2000])
    version = subprocess.run([browser, "--version"], capture_output=True, text=True).stdout.strip()
    return json.loads(html.unescape(match.group(1))), version


def swift_string(text):
    return json.dumps(text, ensure_ascii=False)


def main():
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "harness.html")
        with open(path, "w") as handle:
            handle.write(harness(CASES))
        results, version = run_browser(path)
    lines = [
        "// Generated by Tests/BrowserExpectations/generate.py; do not edit by hand.",
        "// Browser: %s." % version,
        "// Each case: a document and the `property`/`content` of every element the browser's",
        "// `document.getElementsByTagName('meta')` returned for it, in document order.",
        "",
        "struct BrowserDOMCase: Sendable, CustomStringConvertible {",
        "    var name: String",
        "    var html: String",
        "    var metas: [[String?]]",
        "    var description: String { name }",
        "}",
        "",
        "let browserDOMCases: [BrowserDOMCase] = [",
    ]
    for (name, doc), metas in zip(CASES, results):
        for namespace, _, _ in metas:
            if namespace != "http://www.w3.org/1999/xhtml":
                sys.exit("%s: a meta element in %s; the scanner reports HTML elements only" % (name, namespace))
        pairs = [
            "[%s, %s]" % tuple("nil" if value is None else swift_string(value) for value in (prop, content))
            for _, prop, content in metas]
        text = expand(doc)
        pieces = [swift_string(text[start:start + 80]) for start in range(0, len(text), 80)] or ['""']
        lines.append("    BrowserDOMCase(")
        lines.append("        name: %s," % swift_string(name))
        lines.append("        html: " + "\n            + ".join(pieces) + ",")
        if len(pairs) > 1:
            lines.append("        metas: [")
            lines.extend("            %s," % pair for pair in pairs)
            lines.append("        ]")
        else:
            lines.append("        metas: [%s]" % "".join(pairs))
        lines.append("    ),")
    lines.append("]")
    target = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "BoltsAppLinksTests",
                          "BrowserDOMExpectations.swift")
    with open(target, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    print("wrote %d cases to %s" % (len(CASES), os.path.normpath(target)))


if __name__ == "__main__":
    main()
