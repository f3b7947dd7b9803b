extension AppLinkJSON {
    /// The deepest nesting of arrays and objects the parser accepts; deeper text is rejected, never a crash.
    public static let maximumNestingDepth = 256

    /// Parses JSON text (RFC 8259), or returns nil when the text is not exactly one valid JSON value.
    ///
    /// Accepts `\/` and every other standard escape. A lone UTF-16 surrogate escape becomes U+FFFD. A repeated
    /// object key keeps its last value. Nesting deeper than ``maximumNestingDepth`` makes the text invalid.
    public init?(parsing text: String) {
        var parser = JSONParser(bytes: Array(text.utf8))
        guard let value = parser.parseDocument() else { return nil }
        self = value
    }
}

/// A recursive-descent JSON parser over UTF-8 bytes. Every path checks bounds, so any input is safe.
private struct JSONParser {
    let bytes: [UInt8]
    var position = 0
    var depth = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    mutating func parseDocument() -> AppLinkJSON? {
        skipWhitespace()
        guard let value = parseValue() else { return nil }
        skipWhitespace()
        return position == bytes.count ? value : nil
    }

    private var current: UInt8? {
        position < bytes.count ? bytes[position] : nil
    }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
            position += 1
        }
    }

    private mutating func consume(_ literal: String) -> Bool {
        let utf8 = Array(literal.utf8)
        guard position + utf8.count <= bytes.count, Array(bytes[position..<position + utf8.count]) == utf8 else {
            return false
        }
        position += utf8.count
        return true
    }

    private mutating func parseValue() -> AppLinkJSON? {
        guard let byte = current else { return nil }
        switch byte {
        case UInt8(ascii: "{"): return parseObject()
        case UInt8(ascii: "["): return parseArray()
        case UInt8(ascii: "\""): return parseString().map(AppLinkJSON.string)
        case UInt8(ascii: "t"): return consume("true") ? .bool(true) : nil
        case UInt8(ascii: "f"): return consume("false") ? .bool(false) : nil
        case UInt8(ascii: "n"): return consume("null") ? .null : nil
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return parseNumber()
        default: return nil
        }
    }

    private mutating func enterContainer() -> Bool {
        depth += 1
        position += 1
        return depth <= AppLinkJSON.maximumNestingDepth
    }

    private mutating func parseObject() -> AppLinkJSON? {
        guard enterContainer() else { return nil }
        defer { depth -= 1 }
        var members: [String: AppLinkJSON] = [:]
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            position += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\""), let key = parseString() else { return nil }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { return nil }
            position += 1
            skipWhitespace()
            guard let value = parseValue() else { return nil }
            members[key] = value
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"):
                position += 1
                return .object(members)
            default: return nil
            }
        }
    }

    private mutating func parseArray() -> AppLinkJSON? {
        guard enterContainer() else { return nil }
        defer { depth -= 1 }
        var elements: [AppLinkJSON] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            position += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            guard let value = parseValue() else { return nil }
            elements.append(value)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"):
                position += 1
                return .array(elements)
            default: return nil
            }
        }
    }

    private mutating func parseNumber() -> AppLinkJSON? {
        let start = position
        var isIntegral = true
        if current == UInt8(ascii: "-") { position += 1 }
        if current == UInt8(ascii: "0") {
            position += 1
        } else {
            guard digits() > 0 else { return nil }
        }
        if current == UInt8(ascii: ".") {
            isIntegral = false
            position += 1
            guard digits() > 0 else { return nil }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            isIntegral = false
            position += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { position += 1 }
            guard digits() > 0 else { return nil }
        }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        if isIntegral, let value = Int(text) {
            return .int(value)
        }
        return Double(text).map(AppLinkJSON.double)
    }

    private mutating func digits() -> Int {
        var count = 0
        while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
            position += 1
            count += 1
        }
        return count
    }

    /// Parses a string starting at its opening quote. Raw control characters and bad escapes make it invalid.
    private mutating func parseString() -> String? {
        position += 1
        var buffer: [UInt8] = []
        while let byte = current {
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: buffer, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard let escaped = parseEscape() else { return nil }
                buffer.append(contentsOf: Array(String(escaped).utf8))
            case 0x00..<0x20:
                return nil
            default:
                buffer.append(byte)
            }
        }
        return nil
    }

    private mutating func parseEscape() -> Unicode.Scalar? {
        guard let byte = current else { return nil }
        position += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            guard let unit = hexQuad() else { return nil }
            if (0xD800...0xDBFF).contains(unit) {
                let saved = position
                if consume("\\u"), let low = hexQuad(), (0xDC00...0xDFFF).contains(low) {
                    let value = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                    return Unicode.Scalar(value) ?? "\u{FFFD}"
                }
                position = saved
                return "\u{FFFD}"
            }
            return Unicode.Scalar(UInt32(unit)) ?? "\u{FFFD}"
        default:
            return nil
        }
    }

    private mutating func hexQuad() -> UInt16? {
        guard position + 4 <= bytes.count else { return nil }
        var value: UInt16 = 0
        for offset in 0..<4 {
            guard let digit = hexValue(bytes[position + offset]) else { return nil }
            value = value << 4 | UInt16(digit)
        }
        position += 4
        return value
    }
}

/// The value of an ASCII hexadecimal digit, or nil.
func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
    default: return nil
    }
}
