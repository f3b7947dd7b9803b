/// A start or end tag, as the HTML tokenizer emits it.
struct HTMLTag {
    /// The tag name, ASCII-lowercased.
    var name: String
    /// True for `</name>`.
    var isEndTag: Bool
    /// The attributes in source order, names ASCII-lowercased, later duplicates of a name dropped.
    var attributes: [HTMLAttribute]
    /// True when the tag ended with `/>`.
    var isSelfClosing: Bool

    /// The value of the first attribute called `name`, or nil.
    func attribute(_ name: String) -> String? {
        attributes.first { $0.name == name }?.value
    }
}

/// The HTML5 tokenizer, reduced to what finding tags needs: it emits start and end tags, and skips text,
/// comments, doctypes, CDATA sections and bogus comments exactly where a browser's tokenizer would.
///
/// The caller (the tree-construction layer) switches it into a text mode after a start tag, as a browser does for
/// `<script>`, `<style>`, `<title>` and the like, and tells it when CDATA sections are allowed (foreign content).
struct HTMLTokenizer {
    /// How the text after a start tag is read until its matching end tag.
    enum TextMode {
        /// Ordinary markup.
        case data
        /// `<title>`, `<textarea>`: only the matching end tag ends the text.
        case rcdata
        /// `<style>`, `<xmp>`, `<iframe>`, `<noembed>`, `<noframes>`, `<noscript>`: the same, for raw text.
        case rawText
        /// `<script>`: raw text with the comment-like escape rules of script data.
        case scriptData
        /// `<plaintext>`: everything to the end of the input is text.
        case plaintext
    }

    let input: [Unicode.Scalar]
    var position = 0
    /// Whether `<![CDATA[` opens a CDATA section (true only when the current node is an SVG or MathML element).
    var allowsCDATA = false
    /// Set when text other than whitespace was read as characters (in the data state or a CDATA section); the
    /// tree builder reads and clears it, because such text in the body rules out a `<frameset>`. U+0000 does not
    /// count (the body ignores it); a character reference counts whatever it stands for.
    var sawText = false
    private var mode = TextMode.data
    private var textEndTagName = ""

    /// Prepares `text` the way the HTML input stream does: CR LF and lone CR become LF.
    init(_ text: String) {
        var scalars: [Unicode.Scalar] = []
        scalars.reserveCapacity(text.utf8.count)
        var previousWasCR = false
        for scalar in text.unicodeScalars {
            if scalar == "\r" {
                scalars.append("\n")
                previousWasCR = true
                continue
            }
            if scalar == "\n", previousWasCR {
                previousWasCR = false
                continue
            }
            previousWasCR = false
            scalars.append(scalar)
        }
        input = scalars
    }

    /// Reads the text after the start tag just emitted in `mode`, ending at `</tagName`.
    mutating func switchTo(_ mode: TextMode, endingWith tagName: String) {
        self.mode = mode
        textEndTagName = tagName
    }

    /// The next tag, or nil at the end of the input.
    mutating func nextTag() -> HTMLTag? {
        while position < input.count {
            switch mode {
            case .data:
                break
            case .plaintext:
                position = input.count
                return nil
            case .rcdata, .rawText:
                position = endOfText(from: position)
                mode = .data
            case .scriptData:
                position = endOfScriptData(from: position)
                mode = .data
            }
            guard let lessThan = firstIndex(of: "<", from: position) else {
                position = input.count
                return nil
            }
            if !sawText, containsText(from: position, to: lessThan) { sawText = true }
            position = lessThan + 1
            if let tag = tagOpen() {
                return tag
            }
        }
        return nil
    }

    // MARK: - Markup after `<`

    /// Handles the text after a `<`; returns a tag when one was completed.
    private mutating func tagOpen() -> HTMLTag? {
        guard position < input.count else { return nil }
        let scalar = input[position]
        if scalar.isASCIIAlpha {
            return readTag(isEndTag: false)
        }
        switch scalar {
        case "!":
            position += 1
            markupDeclaration()
        case "/":
            position += 1
            guard position < input.count else { return nil }
            if input[position].isASCIIAlpha {
                return readTag(isEndTag: true)
            }
            if input[position] == ">" {
                position += 1
            } else {
                skipPast(">")
            }
        case "?":
            skipPast(">")
        default:
            sawText = true  // A lone `<` is text.
        }
        return nil
    }

    /// After `<!`: a comment, a doctype, a CDATA section or a bogus comment.
    private mutating func markupDeclaration() {
        if matches("--", at: position) {
            position += 2
            skipComment()
        } else if matchesIgnoringCase("doctype", at: position) {
            skipPast(">")
        } else if allowsCDATA, matches("[CDATA[", at: position) {
            position += 7
            let start = position
            skipPast("]]>")
            if !sawText, containsText(from: start, to: max(start, position - 3)) { sawText = true }
        } else {
            skipPast(">")
        }
    }

    /// After `<!--`: ends at `-->` or `--!>`; `<!-->` and `<!--->` are complete (empty) comments.
    private mutating func skipComment() {
        if matches(">", at: position) {
            position += 1
            return
        }
        if matches("->", at: position) {
            position += 2
            return
        }
        var index = position
        while index < input.count {
            if input[index] == "-", matches("-->", at: index) {
                position = index + 3
                return
            }
            if input[index] == "-", matches("--!>", at: index) {
                position = index + 4
                return
            }
            index += 1
        }
        position = input.count
    }

    // MARK: - Text modes

    /// The index of the `<` that starts the appropriate end tag, or the end of the input.
    private func endOfText(from start: Int) -> Int {
        var index = start
        while let lessThan = firstIndex(of: "<", from: index) {
            if isAppropriateEndTag(at: lessThan) { return lessThan }
            index = lessThan + 1
        }
        return input.count
    }

    /// Whether `</name` followed by whitespace, `/` or `>` starts at `index`, `name` being the text's element.
    func isAppropriateEndTag(at index: Int) -> Bool {
        guard matches("</", at: index) else { return false }
        let nameStart = index + 2
        let nameEnd = nameStart + textEndTagName.unicodeScalars.count
        guard nameEnd < input.count, matchesIgnoringCase(textEndTagName, at: nameStart) else { return false }
        let after = input[nameEnd]
        return after.isHTMLWhitespace || after == "/" || after == ">"
    }

    // MARK: - Scanning helpers

    /// Whether `input[start..<end]` holds a character other than HTML whitespace and U+0000.
    private func containsText(from start: Int, to end: Int) -> Bool {
        var index = start
        while index < end {
            let scalar = input[index]
            if !scalar.isHTMLWhitespace, scalar != "\u{0}" { return true }
            index += 1
        }
        return false
    }

    func firstIndex(of scalar: Unicode.Scalar, from start: Int) -> Int? {
        var index = start
        while index < input.count {
            if input[index] == scalar { return index }
            index += 1
        }
        return nil
    }

    /// Moves past the next occurrence of `terminator`, or to the end of the input.
    private mutating func skipPast(_ terminator: String) {
        let first = terminator.unicodeScalars.first!
        var index = position
        while let candidate = firstIndex(of: first, from: index) {
            if matches(terminator, at: candidate) {
                position = candidate + terminator.unicodeScalars.count
                return
            }
            index = candidate + 1
        }
        position = input.count
    }

    func matches(_ literal: String, at index: Int) -> Bool {
        var cursor = index
        for scalar in literal.unicodeScalars {
            guard cursor < input.count, input[cursor] == scalar else { return false }
            cursor += 1
        }
        return true
    }

    /// ASCII case-insensitive match; `literal` must be lowercase.
    func matchesIgnoringCase(_ literal: String, at index: Int) -> Bool {
        var cursor = index
        for scalar in literal.unicodeScalars {
            guard cursor < input.count, input[cursor].asciiLowercased == scalar else { return false }
            cursor += 1
        }
        return true
    }
}
