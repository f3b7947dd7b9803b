import Foundation

/// Turns the bytes of an HTML response into text, honouring the declared character encoding.
///
/// The encoding is, in order: a byte-order mark; the `charset` parameter of the `Content-Type` header; a
/// `<meta charset>` or `<meta http-equiv="Content-Type" content="…; charset=…">` within the first 1024 bytes;
/// otherwise UTF-8. Labels follow the WHATWG Encoding Standard (`latin1` and `us-ascii` mean windows-1252, a
/// UTF-16 label found in a `<meta>` means UTF-8). Unknown labels are skipped. UTF-8, UTF-16 and windows-1252 are
/// decoded here, with U+FFFD for invalid bytes; a few legacy encodings (Shift_JIS, EUC-JP, ISO-2022-JP,
/// windows-1250/1251/1253/1254, ISO-8859-2, Mac Roman) go through Foundation and fall back to UTF-8 when
/// Foundation rejects the bytes.
public enum HTMLTextDecoding {
    /// An encoding the decoder knows, named by its WHATWG name.
    public enum Encoding: String, Sendable, Hashable {
        /// UTF-8.
        case utf8 = "UTF-8"
        /// UTF-16, little-endian.
        case utf16LE = "UTF-16LE"
        /// UTF-16, big-endian.
        case utf16BE = "UTF-16BE"
        /// windows-1252 (also what `iso-8859-1`, `latin1` and `us-ascii` mean on the web).
        case windows1252 = "windows-1252"
        /// Shift_JIS (decoded through Foundation).
        case shiftJIS = "Shift_JIS"
        /// EUC-JP (decoded through Foundation).
        case eucJP = "EUC-JP"
        /// ISO-2022-JP (decoded through Foundation).
        case iso2022JP = "ISO-2022-JP"
        /// windows-1250, Central European (decoded through Foundation).
        case windows1250 = "windows-1250"
        /// windows-1251, Cyrillic (decoded through Foundation).
        case windows1251 = "windows-1251"
        /// windows-1253, Greek (decoded through Foundation).
        case windows1253 = "windows-1253"
        /// windows-1254, Turkish; also what `iso-8859-9` means on the web (decoded through Foundation).
        case windows1254 = "windows-1254"
        /// ISO-8859-2, Latin 2 (decoded through Foundation).
        case iso8859_2 = "ISO-8859-2"
        /// Mac Roman (decoded through Foundation).
        case macintosh = "macintosh"

        /// The encoding a label names (case-insensitive, surrounding whitespace ignored), or nil when unknown.
        public init?(label: String) {
            let key = label.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
            guard let encoding = Self.labels[key] else { return nil }
            self = encoding
        }

        private static let labels: [String: Encoding] = {
            var table: [String: Encoding] = [:]
            let groups: [(Encoding, [String])] = [
                (.utf8, ["utf-8", "utf8", "unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "x-unicode20utf8"]),
                (.utf16LE, ["utf-16le", "utf-16", "ucs-2", "unicode", "csunicode", "iso-10646-ucs-2", "unicodefeff"]),
                (.utf16BE, ["utf-16be", "unicodefffe"]),
                (
                    .windows1252,
                    [
                        "windows-1252", "cp1252", "x-cp1252", "iso-8859-1", "iso8859-1", "iso88591", "iso_8859-1",
                        "iso_8859-1:1987", "latin1", "l1", "ascii", "us-ascii", "ansi_x3.4-1968", "cp819", "ibm819",
                        "iso-ir-100", "csisolatin1",
                    ]
                ),
                (
                    .shiftJIS,
                    ["shift_jis", "shift-jis", "sjis", "ms_kanji", "csshiftjis", "windows-31j", "x-sjis", "ms932"]
                ),
                (.eucJP, ["euc-jp", "x-euc-jp", "cseucpkdfmtjapanese"]),
                (.iso2022JP, ["iso-2022-jp", "csiso2022jp"]),
                (.windows1250, ["windows-1250", "cp1250", "x-cp1250"]),
                (.windows1251, ["windows-1251", "cp1251", "x-cp1251"]),
                (.windows1253, ["windows-1253", "cp1253", "x-cp1253"]),
                (.windows1254, ["windows-1254", "cp1254", "x-cp1254", "iso-8859-9", "latin5", "l5"]),
                (.iso8859_2, ["iso-8859-2", "iso8859-2", "iso88592", "iso_8859-2", "latin2", "l2", "csisolatin2"]),
                (.macintosh, ["macintosh", "mac", "x-mac-roman", "csmacintosh"]),
            ]
            for (encoding, names) in groups {
                for name in names { table[name] = encoding }
            }
            return table
        }()
    }

    /// Decodes an HTML body; `contentType` is the response's `Content-Type` header, if any.
    public static func decode(_ body: Data, contentType: String?) -> (text: String, encoding: Encoding) {
        let bytes = [UInt8](body)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return (decode(bytes.dropFirst(3), as: .utf8), .utf8) }
        if bytes.starts(with: [0xFE, 0xFF]) { return (decode(bytes.dropFirst(2), as: .utf16BE), .utf16BE) }
        if bytes.starts(with: [0xFF, 0xFE]) { return (decode(bytes.dropFirst(2), as: .utf16LE), .utf16LE) }
        let encoding =
            contentType.flatMap(charsetLabel(inContentType:)).flatMap(Encoding.init(label:))
            ?? prescan(bytes.prefix(1024))
            ?? .utf8
        return (decode(bytes[...], as: encoding), encoding)
    }

    /// The `charset` parameter of a `Content-Type`-style value (`text/html; charset="utf-8"`), or nil.
    public static func charsetLabel(inContentType value: String) -> String? {
        for parameter in value.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "charset" else {
                continue
            }
            let label = pair[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(
                in: CharacterSet(charactersIn: "\"'"))
            return label.isEmpty ? nil : label
        }
        return nil
    }

    /// The encoding declared by a `<meta>` in the document's first bytes, read as if they were windows-1252.
    static func prescan(_ prefix: ArraySlice<UInt8>) -> Encoding? {
        let text = String(String.UnicodeScalarView(prefix.map { Unicode.Scalar($0) }))
        for element in HTMLMetaElementScanner.metaElementsForPrescan(in: text) {
            var label = element[attribute: "charset"]
            if label == nil, element[attribute: "http-equiv"]?.lowercased() == "content-type",
                let content = element[attribute: "content"]
            {
                label = charsetLabel(inContentType: content)
            }
            guard let label, let encoding = Encoding(label: label) else { continue }
            return encoding == .utf16LE || encoding == .utf16BE ? .utf8 : encoding
        }
        return nil
    }

    /// Decodes bytes in a known encoding; invalid input becomes U+FFFD (or, for Foundation's encodings, the
    /// whole body falls back to UTF-8).
    static func decode(_ bytes: ArraySlice<UInt8>, as encoding: Encoding) -> String {
        switch encoding {
        case .utf8:
            return String(decoding: bytes, as: UTF8.self)
        case .utf16LE, .utf16BE:
            var units: [UInt16] = []
            units.reserveCapacity(bytes.count / 2)
            var index = bytes.startIndex
            while index + 1 < bytes.endIndex {
                let first = UInt16(bytes[index])
                let second = UInt16(bytes[index + 1])
                units.append(encoding == .utf16LE ? first | second << 8 : first << 8 | second)
                index += 2
            }
            var text = String(decoding: units, as: UTF16.self)
            if bytes.count % 2 == 1 { text += "\u{FFFD}" }
            return text
        case .windows1252:
            var scalars = String.UnicodeScalarView()
            for byte in bytes {
                let mapped = HTMLCharacterReferences.c1Replacements[UInt32(byte)] ?? UInt32(byte)
                scalars.append(Unicode.Scalar(mapped) ?? "\u{FFFD}")
            }
            return String(scalars)
        default:
            let foundationEncoding: String.Encoding
            switch encoding {
            case .shiftJIS: foundationEncoding = .shiftJIS
            case .eucJP: foundationEncoding = .japaneseEUC
            case .iso2022JP: foundationEncoding = .iso2022JP
            case .windows1250: foundationEncoding = .windowsCP1250
            case .windows1251: foundationEncoding = .windowsCP1251
            case .windows1253: foundationEncoding = .windowsCP1253
            case .windows1254: foundationEncoding = .windowsCP1254
            case .iso8859_2: foundationEncoding = .isoLatin2
            default: foundationEncoding = .macOSRoman
            }
            return String(data: Data(bytes), encoding: foundationEncoding) ?? String(decoding: bytes, as: UTF8.self)
        }
    }
}
