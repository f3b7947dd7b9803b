import Foundation

/// A decoded `data:` URL (RFC 2397): `data:[<media type>][;base64],<data>`.
///
/// The resolver reads these without any network access, so that a page can be resolved from memory (as the Bolts
/// test suites did). The body is percent-decoded, then, for `;base64`, decoded with the forgiving base64 rules of
/// the web (ASCII whitespace ignored, padding optional).
struct DataURL: Sendable {
    /// The media type with its parameters, such as `text/html;charset=utf-8` (empty when none was given).
    var contentType: String
    /// The decoded bytes.
    var body: Data

    /// Decodes `url`, or returns nil when it is not a well-formed data URL.
    init?(_ url: URL) {
        let text = url.absoluteString
        guard text.lowercased().hasPrefix("data:"), let comma = text.firstIndex(of: ",") else { return nil }
        var header = String(text[text.index(text.startIndex, offsetBy: 5)..<comma])
            .trimmingCharacters(in: .whitespaces)
        let payload = Self.percentDecodedBytes(text[text.index(after: comma)...])
        var isBase64 = false
        if let semicolon = header.lastIndex(of: ";"),
            header[header.index(after: semicolon)...].trimmingCharacters(in: .whitespaces).lowercased() == "base64"
        {
            isBase64 = true
            header = String(header[..<semicolon])
        }
        contentType = AppLinkQuery.percentDecoded(header)
        if isBase64 {
            guard let decoded = Self.forgivingBase64(payload) else { return nil }
            body = decoded
        } else {
            body = Data(payload)
        }
    }

    /// Decodes `%XX` escapes to bytes, leaving malformed escapes as they are.
    static func percentDecodedBytes(_ text: Substring) -> [UInt8] {
        let utf8 = Array(text.utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = 0
        while index < utf8.count {
            if utf8[index] == UInt8(ascii: "%"), index + 2 < utf8.count,
                let high = hexValue(utf8[index + 1]), let low = hexValue(utf8[index + 2])
            {
                bytes.append(high << 4 | low)
                index += 3
            } else {
                bytes.append(utf8[index])
                index += 1
            }
        }
        return bytes
    }

    /// The WHATWG "forgiving-base64 decode": whitespace removed, up to two trailing `=` optional.
    static func forgivingBase64(_ bytes: [UInt8]) -> Data? {
        var characters = bytes.filter { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0C || $0 == 0x0D) }
        if characters.count % 4 == 0, characters.last == UInt8(ascii: "=") {
            characters.removeLast()
            if characters.last == UInt8(ascii: "=") { characters.removeLast() }
        }
        guard characters.count % 4 != 1 else { return nil }
        while characters.count % 4 != 0 {
            characters.append(UInt8(ascii: "="))
        }
        return Data(base64Encoded: Data(characters))
    }
}
