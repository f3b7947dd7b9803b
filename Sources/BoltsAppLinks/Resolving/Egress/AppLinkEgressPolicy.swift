/// Which addresses a resolver may connect to: the guard against server-side request forgery.
///
/// A server that resolves URLs its users supply must not let them reach what only the server can reach: its own
/// loopback services, the private network, a cloud metadata endpoint on `169.254.169.254`. ``default`` refuses
/// every special-purpose block of the IANA IPv4 and IPv6 registries that is not globally reachable:
///
/// | category | IPv4 | IPv6 |
/// | --- | --- | --- |
/// | ``Category/unspecified`` | `0.0.0.0/8` | `::/128` |
/// | ``Category/loopback`` | `127.0.0.0/8` | `::1/128` |
/// | ``Category/privateNetwork`` | `10.0.0.0/8`, `172.16.0.0/12`, `192.168.0.0/16` | `fc00::/7`, `fec0::/10` (old site-local), `64:ff9b:1::/48` (local NAT64) |
/// | ``Category/sharedAddressSpace`` | `100.64.0.0/10` (carrier-grade NAT) | |
/// | ``Category/linkLocal`` | `169.254.0.0/16` | `fe80::/10` |
/// | ``Category/documentation`` | `192.0.2.0/24`, `198.51.100.0/24`, `203.0.113.0/24` | `2001:db8::/32`, `3fff::/20` |
/// | ``Category/benchmarking`` | `198.18.0.0/15` | `2001:2::/48` |
/// | ``Category/multicast`` | `224.0.0.0/4` | `ff00::/8` |
/// | ``Category/broadcast`` | `255.255.255.255/32` | |
/// | ``Category/reserved`` | `192.0.0.0/24`, `192.88.99.0/24`, `240.0.0.0/4` | `::/96` (IPv4-compatible), `2001::/23` (but Teredo), and everything outside `2000::/3` (`100::/64`, `5f00::/16`…) |
///
/// Addresses that carry an IPv4 address are judged by it: an IPv4-mapped address (`::ffff:0:0/96`) is its IPv4
/// address in every respect (also for ``allowedRanges``); a NAT64 address (`64:ff9b::/96`), a 6to4 address
/// (`2002::/16`) and a Teredo address (`2001::/32`, server and client) are refused when an IPv4 address they embed
/// is refused.
///
/// ``allowedRanges`` lists exceptions (an intranet, a test server on loopback); ``allowAll`` turns the check off.
///
/// The resolver applies the policy to every connection it makes, the first request and each redirect, against
/// every address the host name resolves to (a name with one refused address is refused).
public struct AppLinkEgressPolicy: Sendable, Hashable {
    /// Why a block of addresses is refused by default.
    public enum Category: String, Sendable, Hashable, CaseIterable {
        /// "This network" / the unspecified address.
        case unspecified
        /// The host itself.
        case loopback
        /// RFC 1918 and unique-local networks (and other blocks only a local network can route).
        case privateNetwork = "private network"
        /// Carrier-grade NAT (RFC 6598).
        case sharedAddressSpace = "shared address space"
        /// Link-local addresses, where cloud metadata services live.
        case linkLocal = "link-local"
        /// Blocks reserved for documentation.
        case documentation
        /// Blocks reserved for benchmarking.
        case benchmarking
        /// Multicast groups.
        case multicast
        /// The limited broadcast address.
        case broadcast
        /// Other reserved or special-purpose blocks.
        case reserved
    }

    /// Why an address was refused.
    public struct Refusal: Sendable, Hashable, CustomStringConvertible {
        /// The address a connection would have gone to.
        public let address: AppLinkIPAddress
        /// The refused block that matched: for an address embedding IPv4, the IPv4 block of the embedded address.
        public let range: AppLinkIPRange
        /// What kind of block it is.
        public let category: Category
        /// The translation prefix when an embedded IPv4 address was refused (NAT64, 6to4, Teredo); nil otherwise.
        public let translation: AppLinkIPRange?

        /// For example `127.0.0.1 (loopback, 127.0.0.0/8)`.
        public var description: String {
            var text = "\(address) (\(category.rawValue), \(range)"
            if let translation { text += " through \(translation)" }
            return text + ")"
        }
    }

    /// Blocks allowed even though the default refuses them. An IPv4 block also allows the IPv4-mapped IPv6 form of
    /// its addresses.
    public var allowedRanges: [AppLinkIPRange]
    /// When true, every address is allowed and nothing is checked.
    public var allowsAllAddresses: Bool

    /// Creates a policy that refuses the blocks listed in the type's documentation except `allowedRanges`.
    public init(allowedRanges: [AppLinkIPRange] = [], allowsAllAddresses: Bool = false) {
        self.allowedRanges = allowedRanges
        self.allowsAllAddresses = allowsAllAddresses
    }

    /// Refuses every special-purpose block (see the table above). The resolver's default.
    public static let `default` = AppLinkEgressPolicy()

    /// Allows everything: no check at all. For tests and closed networks only.
    public static let allowAll = AppLinkEgressPolicy(allowsAllAddresses: true)

    /// This policy with `ranges` allowed as well.
    public func allowing(_ ranges: [AppLinkIPRange]) -> AppLinkEgressPolicy {
        var policy = self
        policy.allowedRanges += ranges
        return policy
    }

    /// Whether a connection to `address` is allowed.
    public func allows(_ address: AppLinkIPAddress) -> Bool {
        refusal(for: address) == nil
    }

    /// Why a connection to `address` is refused, or nil when it is allowed.
    public func refusal(for address: AppLinkIPAddress) -> Refusal? {
        if allowsAllAddresses { return nil }
        let target = address.mappedIPv4 ?? address
        if allowedRanges.contains(where: { $0.contains(target) }) { return nil }
        switch Self.classify(target) {
        case .global:
            return nil
        case .special(let range, let category):
            return Refusal(address: address, range: range, category: category, translation: nil)
        case .embedding(let translation, let embedded):
            for inner in embedded where !allowedRanges.contains(where: { $0.contains(inner) }) {
                if case .special(let range, let category) = Self.classify(inner) {
                    return Refusal(address: address, range: range, category: category, translation: translation)
                }
            }
            return nil
        }
    }

    /// The special-purpose block `address` lies in and its category, whatever the policy allows; nil for a
    /// globally reachable address. Addresses that embed IPv4 (other than IPv4-mapped ones, which are judged as
    /// IPv4) report their embedded address's block.
    public static func specialPurposeBlock(containing address: AppLinkIPAddress) -> (
        range: AppLinkIPRange, category: Category
    )? {
        AppLinkEgressPolicy().refusal(for: address).map { ($0.range, $0.category) }
    }

    enum Classification {
        case global
        case special(AppLinkIPRange, Category)
        /// A translation or tunnel prefix whose meaning depends on the IPv4 addresses it embeds.
        case embedding(AppLinkIPRange, [AppLinkIPAddress])
    }

    static func classify(_ address: AppLinkIPAddress) -> Classification {
        let table = address.family == .ipv4 ? ipv4Blocks : ipv6Blocks
        if let (range, category) = table.first(where: { $0.0.contains(address) }) {
            return .special(range, category)
        }
        guard address.family == .ipv6 else { return .global }
        let low32 = UInt32(truncatingIfNeeded: address.low)
        if nat64.contains(address) {
            return .embedding(nat64, [AppLinkIPAddress(ipv4: low32)])
        }
        if teredo.contains(address) {
            let server = AppLinkIPAddress(ipv4: UInt32(truncatingIfNeeded: address.high))
            let client = AppLinkIPAddress(ipv4: ~low32)
            return .embedding(teredo, [server, client])
        }
        if sixToFour.contains(address) {
            return .embedding(sixToFour, [AppLinkIPAddress(ipv4: UInt32(truncatingIfNeeded: address.high >> 16))])
        }
        if let (range, category) = ipv6LateBlocks.first(where: { $0.0.contains(address) }) {
            return .special(range, category)
        }
        return globalUnicast.contains(address) ? .global : .special(globalUnicastComplement(address), .reserved)
    }

    /// The refused IPv4 blocks; more specific blocks come before the blocks that contain them.
    static let ipv4Blocks: [(AppLinkIPRange, Category)] = [
        ("0.0.0.0/8", .unspecified),
        ("10.0.0.0/8", .privateNetwork),
        ("100.64.0.0/10", .sharedAddressSpace),
        ("127.0.0.0/8", .loopback),
        ("169.254.0.0/16", .linkLocal),
        ("172.16.0.0/12", .privateNetwork),
        ("192.0.0.0/24", .reserved),
        ("192.0.2.0/24", .documentation),
        ("192.88.99.0/24", .reserved),
        ("192.168.0.0/16", .privateNetwork),
        ("198.18.0.0/15", .benchmarking),
        ("198.51.100.0/24", .documentation),
        ("203.0.113.0/24", .documentation),
        ("224.0.0.0/4", .multicast),
        ("255.255.255.255/32", .broadcast),
        ("240.0.0.0/4", .reserved),
    ]

    /// The refused IPv6 blocks checked before the translation prefixes.
    static let ipv6Blocks: [(AppLinkIPRange, Category)] = [
        ("::/128", .unspecified),
        ("::1/128", .loopback),
        ("::/96", .reserved),
        ("64:ff9b:1::/48", .privateNetwork),
        ("2001:2::/48", .benchmarking),
        ("2001:db8::/32", .documentation),
        ("3fff::/20", .documentation),
        ("fc00::/7", .privateNetwork),
        ("fe80::/10", .linkLocal),
        ("fec0::/10", .privateNetwork),
        ("ff00::/8", .multicast),
    ]

    /// Refused IPv6 blocks that contain a translation prefix, checked after it.
    static let ipv6LateBlocks: [(AppLinkIPRange, Category)] = [
        ("2001::/23", .reserved)
    ]

    static let nat64: AppLinkIPRange = "64:ff9b::/96"
    static let teredo: AppLinkIPRange = "2001::/32"
    static let sixToFour: AppLinkIPRange = "2002::/16"
    static let globalUnicast: AppLinkIPRange = "2000::/3"

    /// The largest block outside `2000::/3` holding `address`, named as the reserved block it falls in.
    static func globalUnicastComplement(_ address: AppLinkIPAddress) -> AppLinkIPRange {
        // The IANA IPv6 address space registry splits what is not 2000::/3 into blocks of /3 to /9; naming the
        // /3 that holds the address is enough to say why it was refused.
        AppLinkIPRange(address, prefixLength: 3)
    }
}
