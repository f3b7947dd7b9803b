/// A `<meta>` element of an HTML document, with its attributes in source order.
public struct HTMLMetaElement: Sendable, Hashable {
    /// The element's attributes, names lowercased, first occurrence of each name only.
    public var attributes: [HTMLAttribute]

    /// Creates an element from its attributes.
    public init(attributes: [HTMLAttribute]) {
        self.attributes = attributes
    }

    /// The value of the attribute called `name` (lowercase), or nil when the element has none.
    public subscript(attribute name: String) -> String? {
        attributes.first { $0.name == name }?.value
    }
}

/// Finds the `<meta>` elements of an HTML document, the ones a browser's
/// `document.getElementsByTagName('meta')` would list, in document order.
///
/// It runs the HTML5 tokenizer and the parts of tree construction that decide whether a `<meta>` tag becomes an
/// element of the document:
/// - `<script>`, `<style>`, `<title>`, `<textarea>`, `<xmp>`, `<iframe>`, `<noembed>`, `<noframes>`,
///   `<noscript>` (scripting on, as in a browser) and `<plaintext>` contain text, not tags;
/// - tags inside `<template>` belong to the template's content, not the document;
/// - in `<svg>` and `<math>` content, other elements are foreign (no text modes apply) and `<![CDATA[…]]>` is a
///   section, while `<meta>` itself breaks out into HTML; integration points (`foreignObject`, `desc`, `title`,
///   `mi`, `mo`, `mn`, `ms`, `mtext`, `annotation-xml` with an HTML encoding) return to HTML rules.
///
/// Known differences from a browser: the quirks of `<frameset>` and `<select>` are not modelled, and an end tag in
/// foreign content that closes an HTML ancestor of the `<svg>` or `<math>` element leaves the foreign content
/// open here (it matters only for whether later `<style>`-like elements are read as text).
public enum HTMLMetaElementScanner {
    /// The `<meta>` elements of `html`, in document order.
    public static func metaElements(in html: String) -> [HTMLMetaElement] {
        var builder = MetaTreeBuilder(tokenizer: HTMLTokenizer(html))
        return builder.run()
    }
}

/// An open SVG or MathML element.
private struct ForeignElement {
    enum Namespace { case svg, math }
    var name: String
    var namespace: Namespace
    var isIntegrationPoint: Bool
}

private struct MetaTreeBuilder {
    var tokenizer: HTMLTokenizer
    var foreignStack: [ForeignElement] = []
    /// For each open `<template>`, the height of `foreignStack` when it opened.
    var templates: [Int] = []
    var result: [HTMLMetaElement] = []

    static let rawTextElements: Set<String> = ["style", "xmp", "iframe", "noembed", "noframes", "noscript"]
    static let breakoutElements: Set<String> = [
        "b", "big", "blockquote", "body", "br", "center", "code", "dd", "div", "dl", "dt", "em", "embed", "h1",
        "h2", "h3", "h4", "h5", "h6", "head", "hr", "i", "img", "li", "listing", "menu", "meta", "nobr", "ol",
        "p", "pre", "ruby", "s", "small", "span", "strong", "strike", "sub", "sup", "table", "tt", "u", "ul",
        "var",
    ]

    /// True when the current node is a foreign element that is not an integration point, so tokens follow the
    /// foreign-content rules.
    var inForeignContent: Bool {
        guard let current = foreignStack.last else { return false }
        return !current.isIntegrationPoint
    }

    mutating func run() -> [HTMLMetaElement] {
        tokenizer.allowsCDATA = false
        while let tag = tokenizer.nextTag() {
            if tag.isEndTag {
                endTag(tag)
            } else {
                startTag(tag)
            }
            tokenizer.allowsCDATA = !foreignStack.isEmpty && !foreignStack[foreignStack.count - 1].isIntegrationPoint
        }
        return result
    }

    private mutating func startTag(_ tag: HTMLTag) {
        if let current = foreignStack.last, current.namespace == .math {
            if current.name == "annotation-xml", tag.name == "svg" {
                pushForeign(tag, namespace: .svg)
                return
            }
            if current.isIntegrationPoint, current.name != "annotation-xml",
                tag.name == "mglyph" || tag.name == "malignmark"
            {
                pushForeign(tag, namespace: .math)
                return
            }
        }
        if inForeignContent {
            if isBreakout(tag) {
                popForeignToIntegrationPoint()
            } else {
                pushForeign(tag, namespace: foreignStack[foreignStack.count - 1].namespace)
                return
            }
        }
        htmlStartTag(tag)
    }

    private mutating func htmlStartTag(_ tag: HTMLTag) {
        switch tag.name {
        case "svg":
            pushForeign(tag, namespace: .svg)
        case "math":
            pushForeign(tag, namespace: .math)
        case "meta":
            if templates.isEmpty { result.append(HTMLMetaElement(attributes: tag.attributes)) }
        case "template":
            templates.append(foreignStack.count)
        case "script":
            tokenizer.switchTo(.scriptData, endingWith: tag.name)
        case "title", "textarea":
            tokenizer.switchTo(.rcdata, endingWith: tag.name)
        case "plaintext":
            tokenizer.switchTo(.plaintext, endingWith: tag.name)
        case let name where Self.rawTextElements.contains(name):
            tokenizer.switchTo(.rawText, endingWith: name)
        default:
            break
        }
    }

    private func isBreakout(_ tag: HTMLTag) -> Bool {
        if Self.breakoutElements.contains(tag.name) { return true }
        if tag.name == "font" {
            return tag.attributes.contains { ["color", "face", "size"].contains($0.name) }
        }
        return false
    }

    private mutating func pushForeign(_ tag: HTMLTag, namespace: ForeignElement.Namespace) {
        guard !tag.isSelfClosing else { return }
        let isIntegrationPoint: Bool
        switch namespace {
        case .svg:
            isIntegrationPoint = ["foreignobject", "desc", "title"].contains(tag.name)
        case .math:
            if tag.name == "annotation-xml" {
                let encoding = tag.attribute("encoding")?.lowercased()
                isIntegrationPoint = encoding == "text/html" || encoding == "application/xhtml+xml"
            } else {
                isIntegrationPoint = ["mi", "mo", "mn", "ms", "mtext"].contains(tag.name)
            }
        }
        foreignStack.append(
            ForeignElement(name: tag.name, namespace: namespace, isIntegrationPoint: isIntegrationPoint))
    }

    private mutating func popForeignToIntegrationPoint() {
        let floor = templates.last ?? 0
        while foreignStack.count > floor, !foreignStack[foreignStack.count - 1].isIntegrationPoint {
            foreignStack.removeLast()
        }
    }

    private mutating func endTag(_ tag: HTMLTag) {
        if !foreignStack.isEmpty {
            if inForeignContent, tag.name == "br" || tag.name == "p" {
                popForeignToIntegrationPoint()
            } else {
                let floor = templates.last ?? 0
                if let match = foreignStack[floor...].lastIndex(where: { $0.name == tag.name }) {
                    foreignStack.removeSubrange(match...)
                    return
                }
            }
        }
        if tag.name == "template", let height = templates.popLast() {
            foreignStack.removeSubrange(min(height, foreignStack.count)...)
        }
    }
}
