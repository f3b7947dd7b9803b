/// Character references (`&amp;`, `&#38;`, `&#x26;`) as the HTML tokenizer decodes them in attribute values.
enum HTMLCharacterReferences {
    /// Every named reference, keyed by its name without `;`.
    static let named: [String: String] = {
        var table: [String: String] = [:]
        table.reserveCapacity(2_200)
        for entry in htmlNamedCharacterReferenceTable.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            guard let colon = entry.firstIndex(of: ":") else { continue }
            var value = ""
            for hex in entry[entry.index(after: colon)...].split(separator: ",") {
                if let code = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(code) {
                    value.unicodeScalars.append(scalar)
                }
            }
            table[String(entry[..<colon])] = value
        }
        return table
    }()

    /// The names that also match without a trailing `;` (for example `amp`, `copy`, `not`).
    static let legacy: Set<String> = Set(
        htmlLegacyCharacterReferenceNames.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
    )

    /// The longest name in the table, semicolon included.
    static let longestName = 32

    /// The longest name that works without a semicolon (`frac12`, `middot`, …).
    static let longestLegacyName = 6

    /// Windows-1252 meanings of numeric references in 0x80...0x9F, as the standard maps them.
    static let c1Replacements: [UInt32: UInt32] = [
        0x80: 0x20AC, 0x82: 0x201A, 0x83: 0x0192, 0x84: 0x201E, 0x85: 0x2026, 0x86: 0x2020, 0x87: 0x2021,
        0x88: 0x02C6, 0x89: 0x2030, 0x8A: 0x0160, 0x8B: 0x2039, 0x8C: 0x0152, 0x8E: 0x017D, 0x91: 0x2018,
        0x92: 0x2019, 0x93: 0x201C, 0x94: 0x201D, 0x95: 0x2022, 0x96: 0x2013, 0x97: 0x2014, 0x98: 0x02DC,
        0x99: 0x2122, 0x9A: 0x0161, 0x9B: 0x203A, 0x9C: 0x0153, 0x9E: 0x017E, 0x9F: 0x0178,
    ]

    /// Decodes the reference whose `&` is at `start` inside an attribute value.
    ///
    /// Returns the text to append and the index just past what was consumed. When the text is not a reference
    /// (or is a legacy name directly followed by `=` or an alphanumeric, which the standard leaves alone inside
    /// attributes) the `&` alone is returned, and scanning resumes after it.
    static func decode(in input: [Unicode.Scalar], at start: Int) -> (text: String, next: Int) {
        let afterAmpersand = start + 1
        guard afterAmpersand < input.count else { return ("&", afterAmpersand) }
        if input[afterAmpersand] == "#" {
            return decodeNumeric(in: input, at: start)
        }
        return decodeNamed(in: input, at: start)
    }

    private static func decodeNamed(in input: [Unicode.Scalar], at start: Int) -> (text: String, next: Int) {
        var end = start + 1
        while end < input.count, end - start <= longestName, input[end].isASCIIAlphanumeric {
            end += 1
        }
        let run = String(String.UnicodeScalarView(input[(start + 1)..<end]))
        guard !run.isEmpty else { return ("&", start + 1) }
        if end < input.count, input[end] == ";", let value = named[run] {
            return (value, end + 1)
        }
        // No exact `name;`: the longest legacy name that prefixes the run, if any.
        var length = min(run.unicodeScalars.count, longestLegacyName)
        while length > 0 {
            let candidate = String(String.UnicodeScalarView(input[(start + 1)..<(start + 1 + length)]))
            if legacy.contains(candidate), let value = named[candidate] {
                let next = start + 1 + length
                if next < input.count, input[next] == "=" || input[next].isASCIIAlphanumeric {
                    return ("&", start + 1)
                }
                return (value, next)
            }
            length -= 1
        }
        return ("&", start + 1)
    }

    private static func decodeNumeric(in input: [Unicode.Scalar], at start: Int) -> (text: String, next: Int) {
        var index = start + 2
        var radix: UInt32 = 10
        if index < input.count, input[index] == "x" || input[index] == "X" {
            radix = 16
            index += 1
        }
        var value: UInt32 = 0
        var digitCount = 0
        while index < input.count, let digit = digitValue(input[index], radix: radix) {
            // Saturate above the Unicode range so that long runs of digits cannot overflow.
            value = min(value &* radix &+ digit, 0x11_0000)
            digitCount += 1
            index += 1
        }
        guard digitCount > 0 else { return ("&", start + 1) }
        if index < input.count, input[index] == ";" { index += 1 }
        return (String(Character(scalar(forNumericReference: value))), index)
    }

    /// The character a numeric reference stands for, after the standard's replacements.
    static func scalar(forNumericReference value: UInt32) -> Unicode.Scalar {
        if value == 0 || value > 0x10FFFF || (0xD800...0xDFFF).contains(value) { return "\u{FFFD}" }
        if let replacement = c1Replacements[value], let scalar = Unicode.Scalar(replacement) { return scalar }
        return Unicode.Scalar(value) ?? "\u{FFFD}"
    }

    private static func digitValue(_ scalar: Unicode.Scalar, radix: UInt32) -> UInt32? {
        guard scalar.isASCII, let value = hexValue(UInt8(scalar.value)) else { return nil }
        return UInt32(value) < radix ? UInt32(value) : nil
    }
}

extension Unicode.Scalar {
    /// ASCII letters and digits.
    var isASCIIAlphanumeric: Bool {
        isASCIIAlpha || ("0"..."9").contains(self)
    }

    /// ASCII letters.
    var isASCIIAlpha: Bool {
        ("a"..."z").contains(self) || ("A"..."Z").contains(self)
    }

    /// The HTML tokenizer's whitespace: tab, line feed, form feed, space (carriage returns are normalised away).
    var isHTMLWhitespace: Bool {
        self == " " || self == "\t" || self == "\n" || self == "\u{0C}" || self == "\r"
    }

    /// The ASCII lowercase form; other characters are returned unchanged.
    var asciiLowercased: Unicode.Scalar {
        ("A"..."Z").contains(self) ? Unicode.Scalar(value + 32)! : self
    }
}
