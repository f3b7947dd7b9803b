import Foundation

/// Query-string helpers shared by inbound parsing and outbound navigation.
///
/// Inbound, a query splits on `&` and each item at its first `=`; keys and values are percent-decoded, `+` stays
/// a `+` (it is not a space), an item without `=` has the value `""`, an empty item is skipped and a repeated key
/// keeps its last value. A key or value whose escapes are malformed, or decode to invalid UTF-8, keeps its raw
/// text. Outbound, values are percent-encoded so that only RFC 3986 unreserved characters stay as they are.
public enum AppLinkQuery {
    /// The name of the query parameter that carries the App Link payload.
    public static let appLinkDataParameterName = "al_applink_data"

    /// The decoded query parameters of `url` (an empty dictionary when it has no query or an empty one).
    public static func parameters(of url: URL) -> [String: String] {
        guard let query = rawQuery(of: url.absoluteString) else { return [:] }
        return parameters(ofQuery: query)
    }

    /// The decoded parameters of a raw query string (the text between `?` and `#`, without either).
    public static func parameters(ofQuery query: String) -> [String: String] {
        var parameters: [String: String] = [:]
        for item in query.split(separator: "&", omittingEmptySubsequences: true) {
            if let equals = item.firstIndex(of: "=") {
                let key = percentDecoded(item[..<equals])
                parameters[key] = percentDecoded(item[item.index(after: equals)...])
            } else {
                parameters[percentDecoded(item)] = ""
            }
        }
        return parameters
    }

    /// The raw query of a URL string: the text after the first `?` and before the first `#`, or nil when the
    /// string has no `?` before its fragment.
    static func rawQuery(of urlString: String) -> String? {
        let beforeFragment = urlString.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
        guard let question = beforeFragment.firstIndex(of: "?") else { return nil }
        return String(beforeFragment[beforeFragment.index(after: question)...])
    }

    /// Decodes every `%XX` escape in `text`. `+` is kept. Returns the text unchanged when an escape is malformed
    /// or the decoded bytes are not valid UTF-8.
    public static func percentDecoded<S: StringProtocol>(_ text: S) -> String {
        let utf8 = Array(text.utf8)
        guard utf8.contains(UInt8(ascii: "%")) else { return String(text) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = 0
        while index < utf8.count {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < utf8.count, let high = hexValue(utf8[index + 1]), let low = hexValue(utf8[index + 2])
                else { return String(text) }
                bytes.append(high << 4 | low)
                index += 3
            } else {
                bytes.append(byte)
                index += 1
            }
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else { return String(text) }
        return decoded
    }

    /// Percent-encodes `text` as UTF-8, leaving only RFC 3986 unreserved characters (`A–Z a–z 0–9 - . _ ~`).
    public static func percentEncoded(_ text: String) -> String {
        let hexDigits = Array("0123456789ABCDEF".utf8)
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) {
                output.append(byte)
            } else {
                output.append(UInt8(ascii: "%"))
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// `url` with `name=<percent-encoded value>` added to its query, before any `#fragment`.
    ///
    /// The separator is `?` when the URL has no query, nothing when its query is empty (`…?`), and `&` otherwise.
    /// Returns nil only when Foundation cannot parse the result.
    public static func url(_ url: URL, appendingParameter name: String, value: String) -> URL? {
        let string = url.absoluteString
        let parts = string.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
        var head = String(parts[0])
        let fragment = parts.count > 1 ? "#" + parts[1] : ""
        if let query = rawQuery(of: head) {
            if !query.isEmpty { head += "&" }
        } else {
            head += "?"
        }
        head += percentEncoded(name) + "=" + percentEncoded(value)
        return URL(string: head + fragment)
    }
}
