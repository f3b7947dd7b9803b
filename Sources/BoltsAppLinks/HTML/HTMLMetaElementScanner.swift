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
/// - in `<svg>` and `<math>` content, other elements are foreign (no text modes apply), `<![CDATA[…]]>` is a
///   section wherever the current node is an SVG or MathML element (integration points included), and `<meta>`
///   itself breaks out into HTML; integration points (`foreignObject`, `desc`, `title`, `mi`, `mo`, `mn`, `ms`,
///   `mtext`, `annotation-xml` with an HTML encoding) return start tags to HTML rules; an end tag that names an
///   HTML ancestor ends the foreign content;
/// - frameset documents: a `<frameset>` after the head, or in a body that holds nothing yet that rules it out
///   (text other than whitespace, an explicit `<body>`, `<img>`, `<table>`, `<input>` that is not hidden, and the
///   other start tags the HTML Standard lists), replaces the body, dropping the `<meta>` elements in it; in the
///   frameset, after it, and after the end of the document, `<meta>` start tags are ignored, and `<noframes>` is
///   raw text.
///
/// Known differences from a browser: `<select>`'s parsing and the table insertion modes are not modelled, and a
/// character reference that stands for whitespace counts as text in the body (so a `<frameset>` after it is
/// ignored here but not in a browser).
public enum HTMLMetaElementScanner {
    /// The `<meta>` elements of `html`, in document order.
    public static func metaElements(in html: String) -> [HTMLMetaElement] {
        var builder = HTMLMetaTreeBuilder(tokenizer: HTMLTokenizer(html))
        return builder.run()
    }

    /// The `<meta>` elements of `html` for the charset prescan: like ``metaElements(in:)``, but a `<frameset>`
    /// drops nothing (a browser's prescan reads the bytes before any tree exists).
    static func metaElementsForPrescan(in html: String) -> [HTMLMetaElement] {
        var builder = HTMLMetaTreeBuilder(tokenizer: HTMLTokenizer(html), modelsFramesets: false)
        return builder.run()
    }
}
