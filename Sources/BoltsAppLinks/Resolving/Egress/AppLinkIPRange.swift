/// A block of addresses in CIDR form: `10.0.0.0/8`, `fe80::/10`, or a single address (`127.0.0.1` is
/// `127.0.0.1/32`).
///
/// Create one with ``init(_:)`` (which throws ``InvalidRangeError`` for bad text) or, in code, with a string
/// literal (a bad literal is a programming error and traps with the same message).
public struct AppLinkIPRange: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// Why a text is not a range.
    public struct InvalidRangeError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The text that was given.
        public let text: String
        /// What is wrong with it.
        public let reason: String

        /// "Invalid IP range "<text>": <reason>".
        public var description: String {
            "Invalid IP range \"\(text)\": \(reason)"
        }
    }

    /// The first address of the block (host bits are zero).
    public let network: AppLinkIPAddress
    /// How many leading bits are fixed: 0–32 for IPv4, 0–128 for IPv6.
    public let prefixLength: Int

    /// The block of `prefixLength` leading bits of `address`; host bits of `address` are cleared.
    ///
    /// - Precondition: `prefixLength` is within 0–32 for IPv4, 0–128 for IPv6.
    public init(_ address: AppLinkIPAddress, prefixLength: Int) {
        let width = address.family == .ipv4 ? 32 : 128
        precondition(
            (0...width).contains(prefixLength), "AppLinkIPRange: prefix length \(prefixLength) outside 0...\(width)")
        self.prefixLength = prefixLength
        let (highMask, lowMask) = Self.masks(prefixLength: prefixLength, family: address.family)
        switch address.family {
        case .ipv4:
            network = AppLinkIPAddress(ipv4: UInt32(truncatingIfNeeded: address.low & lowMask))
        case .ipv6:
            network = AppLinkIPAddress(ipv6High: address.high & highMask, low: address.low & lowMask)
        }
    }

    /// Parses `address/prefix` or a bare address. The address must be a strict literal (see ``AppLinkIPAddress``)
    /// and have no bits set past the prefix (`10.0.0.1/8` is refused, as it is most likely a typo).
    public init(_ text: String) throws(InvalidRangeError) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = AppLinkIPAddress(parts[0]) else {
            throw InvalidRangeError(text: text, reason: "\"\(parts[0])\" is not an IPv4 or IPv6 address")
        }
        let width = address.family == .ipv4 ? 32 : 128
        var prefixLength = width
        if parts.count == 2 {
            guard let parsed = Int(parts[1]), parts[1].allSatisfy(\.isASCII), (0...width).contains(parsed) else {
                throw InvalidRangeError(text: text, reason: "the prefix length must be a number from 0 to \(width)")
            }
            prefixLength = parsed
        }
        let range = AppLinkIPRange(address, prefixLength: prefixLength)
        guard range.network == address else {
            throw InvalidRangeError(
                text: text, reason: "bits are set past the prefix (the block starts at \(range.network))")
        }
        self = range
    }

    /// A range from a literal in code; traps with ``InvalidRangeError``'s message when the literal is not a range.
    public init(stringLiteral value: String) {
        do {
            try self.init(value)
        } catch {
            preconditionFailure(error.description)
        }
    }

    /// Whether `address` lies in this block. Addresses of the other family are never inside.
    public func contains(_ address: AppLinkIPAddress) -> Bool {
        guard address.family == network.family else { return false }
        let (highMask, lowMask) = Self.masks(prefixLength: prefixLength, family: network.family)
        return address.high & highMask == network.high && address.low & lowMask == network.low
    }

    /// `network/prefixLength`, for example `169.254.0.0/16`.
    public var description: String {
        "\(network)/\(prefixLength)"
    }

    private static func masks(prefixLength: Int, family: AppLinkIPAddress.Family) -> (UInt64, UInt64) {
        func mask(_ bits: Int) -> UInt64 {
            bits <= 0 ? 0 : bits >= 64 ? .max : ~(UInt64.max >> UInt64(bits))
        }
        switch family {
        case .ipv4:
            return (0, mask(prefixLength) >> 32)
        case .ipv6:
            return (mask(prefixLength), mask(prefixLength - 64))
        }
    }
}
