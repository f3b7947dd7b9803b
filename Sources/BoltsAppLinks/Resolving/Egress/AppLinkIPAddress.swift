/// An IPv4 or IPv6 address, as the egress policy sees it.
///
/// Parsing is strict: IPv4 in dotted-quad form with four decimal parts and no leading zeros (`127.0.0.1`, not
/// `127.1`, `0x7f.0.0.1` or `0177.0.0.1`), IPv6 in RFC 4291 text form (with `::` compression, an optional trailing
/// dotted quad and an optional `%zone`, which is ignored), with or without the brackets of a URL. Anything else is
/// not an address literal; the resolver then hands the text to its ``AppLinkHostResolving`` resolver, whose system
/// form (`getaddrinfo`) reads the shorthand IPv4 forms the way the HTTP client would.
public struct AppLinkIPAddress: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The two address families.
    public enum Family: Sendable, Hashable {
        /// A 32-bit IPv4 address.
        case ipv4
        /// A 128-bit IPv6 address.
        case ipv6
    }

    /// The family of the address.
    public let family: Family
    /// The upper 64 bits of an IPv6 address; 0 for IPv4.
    let high: UInt64
    /// The lower 64 bits of an IPv6 address, or the IPv4 address in the lower 32 bits.
    let low: UInt64

    /// An IPv4 address from its 32-bit value (`0x7f00_0001` is `127.0.0.1`).
    public init(ipv4 value: UInt32) {
        family = .ipv4
        high = 0
        low = UInt64(value)
    }

    /// An IPv6 address from its 128 bits, split into two 64-bit halves (most significant first).
    public init(ipv6High high: UInt64, low: UInt64) {
        family = .ipv6
        self.high = high
        self.low = low
    }

    /// An address from its bytes in network order: 4 bytes for IPv4, 16 for IPv6; nil for any other count.
    public init?(bytes: some Collection<UInt8>) {
        let bytes = Array(bytes)
        switch bytes.count {
        case 4:
            self.init(ipv4: bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        case 16:
            let high = bytes[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let low = bytes[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            self.init(ipv6High: high, low: low)
        default:
            return nil
        }
    }

    /// Parses an address literal (see the type's documentation for the accepted forms); nil when `text` is not one.
    public init?(_ text: some StringProtocol) {
        var text = Substring(text)
        if text.hasPrefix("["), text.hasSuffix("]") {
            text = text.dropFirst().dropLast()
        }
        if let value = Self.parseIPv4(text) {
            self.init(ipv4: value)
        } else if let (high, low) = Self.parseIPv6(text) {
            self.init(ipv6High: high, low: low)
        } else {
            return nil
        }
    }

    /// The address in network byte order: 4 bytes for IPv4, 16 for IPv6.
    public var bytes: [UInt8] {
        switch family {
        case .ipv4:
            return (0..<4).map { UInt8(truncatingIfNeeded: low >> (24 - 8 * $0)) }
        case .ipv6:
            return (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) }
                + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
        }
    }

    /// The IPv4 value of an IPv4 address; nil for IPv6.
    public var ipv4Value: UInt32? {
        family == .ipv4 ? UInt32(truncatingIfNeeded: low) : nil
    }

    /// For an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, which a dual-stack socket sends to `a.b.c.d`), that IPv4
    /// address; nil otherwise.
    public var mappedIPv4: AppLinkIPAddress? {
        guard family == .ipv6, high == 0, low >> 32 == 0xffff else { return nil }
        return AppLinkIPAddress(ipv4: UInt32(truncatingIfNeeded: low))
    }

    /// Canonical text: dotted quad for IPv4, RFC 5952 for IPv6 (lowercase, longest run of two or more zero groups
    /// compressed to `::`, the first such run on a tie; IPv4-mapped addresses end in a dotted quad).
    public var description: String {
        if let value = ipv4Value {
            return Self.dottedQuad(value)
        }
        if let mapped = mappedIPv4 {
            return "::ffff:" + mapped.description
        }
        let groups = (0..<8).map { index -> UInt16 in
            let half = index < 4 ? high : low
            return UInt16(truncatingIfNeeded: half >> (48 - 16 * UInt64(index % 4)))
        }
        var bestStart = -1
        var bestLength = 1
        var index = 0
        while index < 8 {
            guard groups[index] == 0 else {
                index += 1
                continue
            }
            var end = index
            while end < 8, groups[end] == 0 { end += 1 }
            if end - index > bestLength {
                bestStart = index
                bestLength = end - index
            }
            index = end
        }
        let hex = groups.map { String($0, radix: 16) }
        guard bestStart >= 0 else { return hex.joined(separator: ":") }
        let head = hex[..<bestStart].joined(separator: ":")
        let tail = hex[(bestStart + bestLength)...].joined(separator: ":")
        return head + "::" + tail
    }

    /// Orders IPv4 before IPv6, then by numeric value.
    public static func < (lhs: AppLinkIPAddress, rhs: AppLinkIPAddress) -> Bool {
        if lhs.family != rhs.family { return lhs.family == .ipv4 }
        return (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }

    static func dottedQuad(_ value: UInt32) -> String {
        (0..<4).map { String((value >> (24 - 8 * UInt32($0))) & 0xff) }.joined(separator: ".")
    }

    /// Four decimal parts 0–255, no sign, no leading zero (a leading zero means octal to `inet_aton`).
    static func parseIPv4(_ text: Substring) -> UInt32? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var value: UInt32 = 0
        for part in parts {
            guard !part.isEmpty, part.count <= 3, part.allSatisfy({ $0.isASCII && $0.isNumber }),
                part.count == 1 || part.first != "0", let byte = UInt32(part), byte <= 255
            else { return nil }
            value = value << 8 | byte
        }
        return value
    }

    /// RFC 4291 section 2.2 text forms; a `%zone` suffix is accepted and dropped.
    static func parseIPv6(_ text: Substring) -> (UInt64, UInt64)? {
        var text = text
        if let percent = text.firstIndex(of: "%") {
            guard text.index(after: percent) < text.endIndex else { return nil }
            text = text[..<percent]
        }
        guard text.contains(":") else { return nil }
        var groups: [UInt16] = []
        var compressedAt: Int?
        let halves = splitAtDoubleColon(text)
        guard halves.count <= 2 else { return nil }
        for (halfIndex, half) in halves.enumerated() {
            if halfIndex == 1 { compressedAt = groups.count }
            guard !half.isEmpty else { continue }
            let pieces = half.split(separator: ":", omittingEmptySubsequences: false)
            for (pieceIndex, piece) in pieces.enumerated() {
                let isLast = halfIndex == halves.count - 1 && pieceIndex == pieces.count - 1
                if isLast, piece.contains(".") {
                    guard let value = parseIPv4(piece) else { return nil }
                    groups.append(UInt16(value >> 16))
                    groups.append(UInt16(value & 0xffff))
                    continue
                }
                guard (1...4).contains(piece.count), piece.allSatisfy(\.isHexDigit),
                    let group = UInt16(piece, radix: 16)
                else { return nil }
                groups.append(group)
            }
        }
        if let compressedAt {
            guard groups.count <= 7 else { return nil }
            groups.insert(contentsOf: repeatElement(0, count: 8 - groups.count), at: compressedAt)
        }
        guard groups.count == 8 else { return nil }
        let high = groups[0..<4].reduce(UInt64(0)) { $0 << 16 | UInt64($1) }
        let low = groups[4..<8].reduce(UInt64(0)) { $0 << 16 | UInt64($1) }
        return (high, low)
    }

    /// `text` cut at each `::` (three or more parts means the text is not an address).
    private static func splitAtDoubleColon(_ text: Substring) -> [Substring] {
        var parts: [Substring] = []
        var start = text.startIndex
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(after: index)
            if text[index] == ":", next < text.endIndex, text[next] == ":" {
                parts.append(text[start..<index])
                start = text.index(after: next)
                index = start
            } else {
                index = next
            }
        }
        parts.append(text[start...])
        return parts
    }
}
