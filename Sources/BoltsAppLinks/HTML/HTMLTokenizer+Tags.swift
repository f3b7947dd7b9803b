/// One attribute of an HTML element, after the tokenizer's processing (lowercased name, decoded value).
public struct HTMLAttribute: Sendable, Hashable {
    /// The attribute name, ASCII-lowercased.
    public var name: String
    /// The attribute value with character references decoded; `""` for an attribute written without a value.
    public var value: String

    /// Creates an attribute.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

extension HTMLTokenizer {
    /// Reads a tag whose name starts at `position` (just after `<` or `</`), following the tag-name and attribute
    /// states of the HTML standard. Returns nil when the input ends inside the tag (a browser drops such a tag).
    mutating func readTag(isEndTag: Bool) -> HTMLTag? {
        var tag = HTMLTag(name: "", isEndTag: isEndTag, attributes: [], isSelfClosing: false)
        var name = String.UnicodeScalarView()
        while position < input.count {
            let scalar = input[position]
            if scalar.isHTMLWhitespace || scalar == "/" || scalar == ">" { break }
            name.append(scalar == "\0" ? "\u{FFFD}" : scalar.asciiLowercased)
            position += 1
        }
        tag.name = String(name)
        var seenNames = Set<String>()
        while position < input.count {
            let scalar = input[position]
            if scalar.isHTMLWhitespace {
                position += 1
            } else if scalar == ">" {
                position += 1
                return tag
            } else if scalar == "/" {
                position += 1
                if position < input.count, input[position] == ">" {
                    position += 1
                    tag.isSelfClosing = true
                    return tag
                }
            } else {
                guard let attribute = readAttribute() else { return nil }
                if seenNames.insert(attribute.name).inserted {
                    tag.attributes.append(attribute)
                }
            }
        }
        return nil
    }

    /// Reads one attribute starting at a character that begins its name (a leading `=` belongs to the name).
    /// Returns nil when the input ends before the attribute's tag does.
    private mutating func readAttribute() -> HTMLAttribute? {
        var name = String.UnicodeScalarView()
        name.append(input[position].asciiLowercased)
        position += 1
        while position < input.count {
            let scalar = input[position]
            if scalar.isHTMLWhitespace || scalar == "/" || scalar == ">" || scalar == "=" { break }
            name.append(scalar == "\0" ? "\u{FFFD}" : scalar.asciiLowercased)
            position += 1
        }
        let attributeName = String(name)
        // After the attribute name: whitespace may separate it from `=`.
        var lookahead = position
        while lookahead < input.count, input[lookahead].isHTMLWhitespace {
            lookahead += 1
        }
        guard lookahead < input.count else { return nil }
        guard input[lookahead] == "=" else {
            return HTMLAttribute(name: attributeName, value: "")
        }
        position = lookahead + 1
        while position < input.count, input[position].isHTMLWhitespace {
            position += 1
        }
        guard position < input.count else { return nil }
        switch input[position] {
        case "\"", "'":
            let quote = input[position]
            position += 1
            guard let value = readAttributeValue(until: { $0 == quote }) else { return nil }
            position += 1  // the closing quote
            return HTMLAttribute(name: attributeName, value: value)
        case ">":
            return HTMLAttribute(name: attributeName, value: "")
        default:
            guard let value = readAttributeValue(until: { $0.isHTMLWhitespace || $0 == ">" }) else { return nil }
            return HTMLAttribute(name: attributeName, value: value)
        }
    }

    /// Reads a value up to (not including) the first character that `isEnd`, decoding character references and
    /// replacing NUL with U+FFFD. Returns nil when the input ends first.
    private mutating func readAttributeValue(until isEnd: (Unicode.Scalar) -> Bool) -> String? {
        var value = ""
        while position < input.count {
            let scalar = input[position]
            if isEnd(scalar) { return value }
            switch scalar {
            case "&":
                let reference = HTMLCharacterReferences.decode(in: input, at: position)
                value += reference.text
                position = reference.next
            case "\0":
                value.unicodeScalars.append("\u{FFFD}")
                position += 1
            default:
                value.unicodeScalars.append(scalar)
                position += 1
            }
        }
        return nil
    }
}
