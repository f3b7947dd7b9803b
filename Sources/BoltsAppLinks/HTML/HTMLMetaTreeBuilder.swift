/// The parts of the HTML Standard's tree construction that decide which `<meta>` start tags become elements of the
/// document, driven by ``HTMLTokenizer``'s tags.
///
/// It keeps a reduced state: a coarse insertion mode (head, body, the three frameset modes), the frameset-ok flag,
/// and a stack of open elements that is exact for foreign content (SVG, MathML, integration points) and
/// approximate for HTML (void elements are not pushed, `<p>`, `<li>`, `<dd>`, `<dt>` close as the body's start tag
/// rules say, an end tag pops to the nearest element of its name in scope; the adoption agency and table modes are
/// not modelled). The approximation matters only for where foreign content ends.
struct HTMLMetaTreeBuilder {
    /// The insertion modes that matter for `<meta>`.
    enum Mode {
        /// "initial" through "after head": a `<meta>` goes to the head.
        case beforeBody
        /// "in body" (and "after body", which returns to it on any start tag).
        case inBody
        /// "in frameset": `<meta>` is ignored.
        case inFrameset
        /// "after frameset" and "after after frameset": `<meta>` is ignored.
        case afterFrameset
    }

    enum Namespace { case html, svg, math }

    struct Element {
        var name: String
        var namespace: Namespace
        /// An HTML integration point (SVG `foreignObject`, `desc`, `title`; MathML `annotation-xml` with an HTML
        /// encoding) or a MathML text integration point (`mi`, `mo`, `mn`, `ms`, `mtext`).
        var isIntegrationPoint: Bool

        var isMathMLTextIntegrationPoint: Bool {
            namespace == .math && isIntegrationPoint && name != "annotation-xml"
        }

        /// The foreign elements that bound an element scope (HTML's are in `scopeBoundaries`).
        var isForeignScopeBoundary: Bool {
            switch namespace {
            case .html: return false
            case .svg: return ["foreignobject", "desc", "title"].contains(name)
            case .math: return ["mi", "mo", "mn", "ms", "mtext", "annotation-xml"].contains(name)
            }
        }
    }

    var tokenizer: HTMLTokenizer
    /// False for the charset prescan, which reads every `<meta>` of the first bytes whatever a `<frameset>` does.
    let modelsFramesets: Bool
    var mode = Mode.beforeBody
    var framesetOK = true
    var open: [Element] = []
    /// How many `<frameset>` elements are open.
    var framesetDepth = 0
    /// Index in `result` of the first `<meta>` inside the body: a `<frameset>` that replaces the body drops them.
    var firstBodyMeta = 0
    var result: [HTMLMetaElement] = []

    init(tokenizer: HTMLTokenizer, modelsFramesets: Bool = true) {
        self.tokenizer = tokenizer
        self.modelsFramesets = modelsFramesets
    }

    static let voidElements: Set<String> = [
        "area", "base", "basefont", "bgsound", "br", "col", "embed", "frame", "hr", "image", "img", "input",
        "keygen", "link", "meta", "param", "source", "track", "wbr",
    ]
    /// Start tags the head's modes keep; any other start tag opens the body.
    static let headElements: Set<String> = [
        "html", "head", "base", "basefont", "bgsound", "link", "meta", "title", "noscript", "noframes", "style",
        "script", "template",
    ]
    /// Start tags in the body that set frameset-ok to "not ok" (`input` only when it is not hidden).
    static let framesetSpoilers: Set<String> = [
        "pre", "listing", "li", "dd", "dt", "button", "applet", "marquee", "object", "table", "area", "br",
        "embed", "img", "image", "keygen", "wbr", "hr", "textarea", "xmp", "iframe", "select", "body",
    ]
    /// Start tags that close an open `<p>` first.
    static let closesParagraph: Set<String> = [
        "address", "article", "aside", "blockquote", "center", "details", "dialog", "dir", "div", "dl", "fieldset",
        "figcaption", "figure", "footer", "header", "hgroup", "main", "menu", "nav", "ol", "p", "search", "section",
        "summary", "ul", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "listing", "form", "plaintext", "table", "hr",
        "xmp", "li", "dd", "dt",
    ]
    /// The HTML elements of the "special" category that can be open (void ones never are).
    static let specialElements: Set<String> = [
        "address", "applet", "article", "aside", "blockquote", "body", "button", "caption", "center", "colgroup",
        "dd", "details", "dir", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2",
        "h3", "h4", "h5", "h6", "head", "header", "hgroup", "html", "li", "listing", "main", "marquee", "menu",
        "nav", "object", "ol", "p", "pre", "search", "section", "select", "summary", "table", "tbody", "td",
        "template", "tfoot", "th", "thead", "tr", "ul",
    ]
    static let scopeBoundaries: Set<String> = [
        "applet", "caption", "html", "table", "td", "th", "marquee", "object", "template",
    ]
    static let rawTextElements: Set<String> = ["style", "xmp", "iframe", "noembed", "noframes", "noscript"]
    static let breakoutElements: Set<String> = [
        "b", "big", "blockquote", "body", "br", "center", "code", "dd", "div", "dl", "dt", "em", "embed", "h1",
        "h2", "h3", "h4", "h5", "h6", "head", "hr", "i", "img", "li", "listing", "menu", "meta", "nobr", "ol",
        "p", "pre", "ruby", "s", "small", "span", "strong", "strike", "sub", "sup", "table", "tt", "u", "ul",
        "var",
    ]

    var current: Element? { open.last }
    var insideTemplate: Bool { open.contains { $0.namespace == .html && $0.name == "template" } }

    mutating func run() -> [HTMLMetaElement] {
        while let tag = tokenizer.nextTag() {
            if tokenizer.sawText {
                tokenizer.sawText = false
                text()
            }
            if tag.isEndTag {
                endTag(tag)
            } else {
                startTag(tag)
            }
            // CDATA sections exist where the adjusted current node is an SVG or MathML element, integration
            // points included.
            tokenizer.allowsCDATA = current.map { $0.namespace != .html } ?? false
        }
        return result
    }

    // MARK: - Dispatch

    /// Characters other than whitespace: they open the body (from the head's modes) and rule out a frameset.
    private mutating func text() {
        switch mode {
        case .beforeBody:
            if !insideTemplate { enterBody() }
            framesetOK = false
        case .inBody:
            framesetOK = false
        case .inFrameset, .afterFrameset:
            break
        }
    }

    private mutating func startTag(_ tag: HTMLTag) {
        switch mode {
        case .inFrameset, .afterFrameset:
            framesetStartTag(tag)
            return
        case .beforeBody, .inBody:
            break
        }
        if let current, current.namespace != .html, !startTagIsHTML(tag, at: current) {
            if isBreakout(tag) {
                popToHTMLContext()
            } else {
                push(tag, namespace: current.namespace)
                return
            }
        }
        htmlStartTag(tag)
    }

    /// Whether a start tag at the foreign element `node` follows the HTML rules (the tree dispatcher's
    /// integration-point exceptions).
    private func startTagIsHTML(_ tag: HTMLTag, at node: Element) -> Bool {
        if node.isMathMLTextIntegrationPoint { return tag.name != "mglyph" && tag.name != "malignmark" }
        if node.namespace == .math, node.name == "annotation-xml", tag.name == "svg" { return true }
        return node.isIntegrationPoint
    }

    private mutating func endTag(_ tag: HTMLTag) {
        switch mode {
        case .inFrameset:
            if tag.name == "frameset", framesetDepth > 0 {
                framesetDepth -= 1
                if framesetDepth == 0 { mode = .afterFrameset }
            }
            return
        case .afterFrameset:
            return
        case .beforeBody:
            if ["body", "html", "br"].contains(tag.name), !insideTemplate {
                enterBody()
            } else if open.isEmpty {
                return
            }
        case .inBody:
            break
        }
        if let current, current.namespace != .html {
            foreignEndTag(tag)
        } else {
            htmlEndTag(tag)
        }
    }

    // MARK: - HTML content

    private mutating func htmlStartTag(_ tag: HTMLTag) {
        let name = tag.name
        if mode == .beforeBody, !insideTemplate {
            switch name {
            case "frameset":
                if modelsFramesets { startFrameset() }
                return
            case "body":
                enterBody()
                framesetOK = false
                return
            case let name where Self.headElements.contains(name):
                break
            default:
                enterBody()
            }
        }
        if mode == .inBody {
            if name == "frameset" {
                if modelsFramesets, framesetOK, !insideTemplate {
                    result.removeSubrange(min(firstBodyMeta, result.count)...)
                    open.removeAll()
                    startFrameset()
                }
                return
            }
            if Self.framesetSpoilers.contains(name) || (name == "input" && !isHiddenInput(tag)) {
                framesetOK = false
            }
            closeImpliedElements(before: name)
        }
        switch name {
        case "svg":
            push(tag, namespace: .svg)
        case "math":
            push(tag, namespace: .math)
        case "meta":
            if !insideTemplate { result.append(HTMLMetaElement(attributes: tag.attributes)) }
        case "template":
            open.append(Element(name: name, namespace: .html, isIntegrationPoint: false))
        case "script":
            tokenizer.switchTo(.scriptData, endingWith: name)
        case "title", "textarea":
            tokenizer.switchTo(.rcdata, endingWith: name)
        case "plaintext":
            tokenizer.switchTo(.plaintext, endingWith: name)
        case let name where Self.rawTextElements.contains(name):
            tokenizer.switchTo(.rawText, endingWith: name)
        case "html", "head", "body", "frameset":
            break
        case let name where Self.voidElements.contains(name):
            break
        default:
            if mode == .inBody || insideTemplate {
                open.append(Element(name: name, namespace: .html, isIntegrationPoint: false))
            }
        }
    }

    /// An end tag by the body's rules: pops to the nearest HTML element of its name in scope, if any.
    private mutating func htmlEndTag(_ tag: HTMLTag) {
        if tag.name == "br" {
            framesetOK = false
            return
        }
        var index = open.count - 1
        while index >= 0 {
            let node = open[index]
            if node.namespace == .html, node.name == tag.name {
                open.removeSubrange(index...)
                return
            }
            if isScopeBoundary(node) { return }
            index -= 1
        }
    }

    /// What the body does before some start tags: close a `<p>` in button scope, and an open `<li>`, `<dd>` or
    /// `<dt>` for a new one.
    private mutating func closeImpliedElements(before name: String) {
        if Self.closesParagraph.contains(name) { closeParagraphInButtonScope() }
        switch name {
        case "li": closeListItem(named: ["li"])
        case "dd", "dt": closeListItem(named: ["dd", "dt"])
        default: break
        }
    }

    private mutating func closeParagraphInButtonScope() {
        var index = open.count - 1
        while index >= 0 {
            let node = open[index]
            if node.namespace == .html, node.name == "p" {
                open.removeSubrange(index...)
                return
            }
            if isScopeBoundary(node) || (node.namespace == .html && node.name == "button") { return }
            index -= 1
        }
    }

    /// The body's loop for `<li>`, `<dd>`, `<dt>`: closes the nearest open one, unless a special element other
    /// than `address`, `div` or `p` comes first.
    private mutating func closeListItem(named names: Set<String>) {
        var index = open.count - 1
        while index >= 0 {
            let node = open[index]
            if node.namespace == .html, names.contains(node.name) {
                open.removeSubrange(index...)
                return
            }
            if node.namespace == .html
                ? Self.specialElements.contains(node.name) && !["address", "div", "p"].contains(node.name)
                : node.isForeignScopeBoundary
            {
                return
            }
            index -= 1
        }
    }

    private func isScopeBoundary(_ node: Element) -> Bool {
        node.namespace == .html ? Self.scopeBoundaries.contains(node.name) : node.isForeignScopeBoundary
    }

    private func isHiddenInput(_ tag: HTMLTag) -> Bool {
        tag.name == "input" && tag.attribute("type")?.lowercased() == "hidden"
    }

    // MARK: - Frameset documents

    private mutating func startFrameset() {
        mode = .inFrameset
        framesetDepth = 1
    }

    /// "In frameset", "after frameset" and "after after frameset": only `<frameset>`, `<frame>` and `<noframes>`
    /// mean anything; every other start tag, `<meta>` included, is dropped.
    private mutating func framesetStartTag(_ tag: HTMLTag) {
        switch tag.name {
        case "frameset" where mode == .inFrameset:
            framesetDepth += 1
        case "noframes":
            tokenizer.switchTo(.rawText, endingWith: "noframes")
        default:
            break
        }
    }

    // MARK: - Foreign content

    private func isBreakout(_ tag: HTMLTag) -> Bool {
        if Self.breakoutElements.contains(tag.name) { return true }
        if tag.name == "font" {
            return tag.attributes.contains { ["color", "face", "size"].contains($0.name) }
        }
        return false
    }

    private mutating func push(_ tag: HTMLTag, namespace: Namespace) {
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
        case .html:
            isIntegrationPoint = false
        }
        open.append(Element(name: tag.name, namespace: namespace, isIntegrationPoint: isIntegrationPoint))
    }

    /// Pops foreign elements until the current node is an HTML element or an integration point.
    private mutating func popToHTMLContext() {
        while let current, current.namespace != .html, !current.isIntegrationPoint {
            open.removeLast()
        }
    }

    /// An end tag while the current node is foreign: `</br>` and `</p>` break out; any other closes the nearest
    /// foreign element of its name, unless an HTML element comes first, whose rules then apply.
    private mutating func foreignEndTag(_ tag: HTMLTag) {
        if tag.name == "br" || tag.name == "p" {
            popToHTMLContext()
            htmlEndTag(tag)
            return
        }
        var index = open.count - 1
        while index >= 0 {
            let node = open[index]
            if node.namespace == .html {
                htmlEndTag(tag)
                return
            }
            if node.name == tag.name {
                open.removeSubrange(index...)
                return
            }
            index -= 1
        }
    }

    // MARK: - Modes

    private mutating func enterBody() {
        guard mode == .beforeBody else { return }
        mode = .inBody
        firstBodyMeta = result.count
    }
}
