import Foundation
import Testing

@testable import BoltsAppLinks

/// The classifier alone: addresses are only values here, nothing connects to them.
@Suite("Egress policy: addresses, ranges and the default blocks")
struct EgressPolicyTests {
    typealias Category = AppLinkEgressPolicy.Category

    /// Each refused block at its first and last address, and the addresses just outside it. nil: allowed.
    static let ipv4Boundaries: [(String, Category?)] = [
        ("0.0.0.0", .unspecified), ("0.255.255.255", .unspecified), ("1.0.0.0", nil),
        ("9.255.255.255", nil), ("10.0.0.0", .privateNetwork), ("10.255.255.255", .privateNetwork), ("11.0.0.0", nil),
        ("100.63.255.255", nil), ("100.64.0.0", .sharedAddressSpace), ("100.127.255.255", .sharedAddressSpace),
        ("100.128.0.0", nil),
        ("126.255.255.255", nil), ("127.0.0.0", .loopback), ("127.0.0.1", .loopback), ("127.255.255.255", .loopback),
        ("128.0.0.0", nil),
        ("169.253.255.255", nil), ("169.254.0.0", .linkLocal), ("169.254.169.254", .linkLocal),
        ("169.254.255.255", .linkLocal), ("169.255.0.0", nil),
        ("172.15.255.255", nil), ("172.16.0.0", .privateNetwork), ("172.31.255.255", .privateNetwork),
        ("172.32.0.0", nil),
        ("191.255.255.255", nil), ("192.0.0.0", .reserved), ("192.0.0.255", .reserved), ("192.0.1.0", nil),
        ("192.0.1.255", nil), ("192.0.2.0", .documentation), ("192.0.2.255", .documentation), ("192.0.3.0", nil),
        ("192.88.98.255", nil), ("192.88.99.0", .reserved), ("192.88.99.255", .reserved), ("192.88.100.0", nil),
        ("192.167.255.255", nil), ("192.168.0.0", .privateNetwork), ("192.168.255.255", .privateNetwork),
        ("192.169.0.0", nil),
        ("198.17.255.255", nil), ("198.18.0.0", .benchmarking), ("198.19.255.255", .benchmarking), ("198.20.0.0", nil),
        ("198.51.99.255", nil), ("198.51.100.0", .documentation), ("198.51.100.255", .documentation),
        ("198.51.101.0", nil),
        ("203.0.112.255", nil), ("203.0.113.0", .documentation), ("203.0.113.255", .documentation),
        ("203.0.114.0", nil),
        ("223.255.255.255", nil), ("224.0.0.0", .multicast), ("239.255.255.255", .multicast),
        ("240.0.0.0", .reserved), ("255.255.255.254", .reserved), ("255.255.255.255", .broadcast),
        ("8.8.8.8", nil), ("93.184.215.14", nil),
    ]

    static let ipv6Boundaries: [(String, Category?)] = [
        ("::", .unspecified), ("::1", .loopback), ("::2", .reserved), ("::ffff:ffff", .reserved),
        ("::1:0:0", .reserved),
        // IPv4-mapped: judged as the IPv4 address.
        ("::ffff:127.0.0.1", .loopback), ("::ffff:7f00:1", .loopback), ("::ffff:10.1.2.3", .privateNetwork),
        ("::ffff:169.254.169.254", .linkLocal), ("::ffff:0.0.0.0", .unspecified), ("::ffff:8.8.8.8", nil),
        // NAT64 well-known prefix: judged by the embedded address.
        ("64:ff9b::7f00:1", .loopback), ("64:ff9b::a9fe:a9fe", .linkLocal), ("64:ff9b::ffff:ffff", .broadcast),
        ("64:ff9b::c0a8:1", .privateNetwork), ("64:ff9b::808:808", nil), ("64:ff9b::1:808:808", .reserved),
        // Local-use NAT64 prefix.
        ("64:ff9b:1::", .privateNetwork), ("64:ff9b:1:ffff:ffff:ffff:ffff:ffff", .privateNetwork),
        ("64:ff9b:2::", .reserved),
        // Global unicast starts at 2000::/3.
        ("1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", .reserved), ("2000::", nil),
        // Teredo: server in bits 32-63, client inverted in the last 32 bits.
        ("2001:0:808:808::f7f7:f7f7", nil), ("2001:0:808:808::80ff:fffe", .loopback),
        ("2001:0:a00:1::f7f7:f7f7", .privateNetwork), ("2001::", .unspecified),
        // The rest of 2001::/23, with benchmarking inside it.
        ("2001:1::", .reserved), ("2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", .reserved), ("2001:200::", nil),
        ("2001:2::", .benchmarking), ("2001:2:0:ffff:ffff:ffff:ffff:ffff", .benchmarking), ("2001:3::", .reserved),
        ("2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", nil), ("2001:db8::", .documentation),
        ("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", .documentation), ("2001:db9::", nil),
        // 6to4: judged by the IPv4 address in bits 16-47.
        ("2002:808:808::1", nil), ("2002:7f00:1::", .loopback), ("2002:a9fe:a9fe::1", .linkLocal),
        ("2002:c0a8:101::", .privateNetwork), ("2002:e000:1::", .multicast),
        ("3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", nil), ("3fff::", .documentation),
        ("3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", .documentation), ("3fff:1000::", nil),
        ("5f00::", .reserved), ("2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff", .broadcast),
        ("3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", nil), ("4000::", .reserved),
        ("fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", .reserved), ("fc00::", .privateNetwork),
        ("fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", .privateNetwork), ("fe00::", .reserved),
        ("fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", .reserved), ("fe80::", .linkLocal), ("fe80::1%eth0", .linkLocal),
        ("febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", .linkLocal), ("fec0::", .privateNetwork),
        ("feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", .privateNetwork), ("ff00::", .multicast), ("ff02::1", .multicast),
        ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", .multicast),
        ("2606:4700:4700::1111", nil), ("2a00:1450:4001:80b::200e", nil),
    ]

    @Test(arguments: ipv4Boundaries + ipv6Boundaries)
    func defaultPolicyClassifiesTheBlockBoundaries(text: String, expected: Category?) throws {
        let address = try #require(AppLinkIPAddress(text), "\(text) should parse")
        let refusal = AppLinkEgressPolicy.default.refusal(for: address)
        #expect(refusal?.category == expected, "\(text): \(String(describing: refusal))")
        #expect(AppLinkEgressPolicy.default.allows(address) == (expected == nil))
        #expect(AppLinkEgressPolicy.allowAll.allows(address))
        if let refusal {
            #expect(refusal.address == address)
            #expect(refusal.range.contains(address.mappedIPv4 ?? address) || refusal.translation != nil)
        }
    }

    @Test func refusalsNameTheBlockAndTheTranslation() throws {
        let direct = try #require(AppLinkEgressPolicy.default.refusal(for: AppLinkIPAddress("169.254.169.254")!))
        #expect(direct.range == "169.254.0.0/16")
        #expect(direct.translation == nil)
        #expect(direct.description == "169.254.169.254 (link-local, 169.254.0.0/16)")
        let nat64 = try #require(AppLinkEgressPolicy.default.refusal(for: AppLinkIPAddress("64:ff9b::7f00:1")!))
        #expect(nat64.range == "127.0.0.0/8")
        #expect(nat64.translation == "64:ff9b::/96")
        #expect(nat64.description == "64:ff9b::7f00:1 (loopback, 127.0.0.0/8 through 64:ff9b::/96)")
        let block = AppLinkEgressPolicy.specialPurposeBlock(containing: AppLinkIPAddress("fd12::1")!)
        #expect(block?.range == "fc00::/7")
        #expect(block?.category == .privateNetwork)
        #expect(AppLinkEgressPolicy.specialPurposeBlock(containing: AppLinkIPAddress("1.1.1.1")!) == nil)
    }

    @Test func allowedRangesAreExceptionsToTheDefault() {
        let policy = AppLinkEgressPolicy.default.allowing(["127.0.0.0/8", "fd00::/8"])
        #expect(policy.allows(AppLinkIPAddress("127.0.0.1")!))
        #expect(policy.allows(AppLinkIPAddress("127.255.0.9")!))
        #expect(policy.allows(AppLinkIPAddress("::ffff:127.0.0.1")!), "an IPv4 range covers its mapped form")
        #expect(policy.allows(AppLinkIPAddress("64:ff9b::7f00:1")!), "an embedded address that is allowed")
        #expect(policy.allows(AppLinkIPAddress("fd00::5")!))
        #expect(!policy.allows(AppLinkIPAddress("::1")!), "IPv6 loopback is another block")
        #expect(!policy.allows(AppLinkIPAddress("10.0.0.1")!))
        #expect(!policy.allows(AppLinkIPAddress("fc00::5")!))
        #expect(!policy.allows(AppLinkIPAddress("169.254.169.254")!))
        let single = AppLinkEgressPolicy(allowedRanges: ["10.1.2.3"])
        #expect(single.allows(AppLinkIPAddress("10.1.2.3")!))
        #expect(!single.allows(AppLinkIPAddress("10.1.2.4")!))
    }

    @Test(arguments: [
        ("127.0.0.1", "127.0.0.1"), ("0.0.0.0", "0.0.0.0"), ("255.255.255.255", "255.255.255.255"),
        ("::", "::"), ("::1", "::1"), ("[::1]", "::1"), ("2001:DB8:0:0:0:0:0:1", "2001:db8::1"),
        ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"), ("2001:0:0:1:0:0:0:1", "2001:0:0:1::1"),
        ("1:0:2:3:4:5:6:7", "1:0:2:3:4:5:6:7"), ("::ffff:1.2.3.4", "::ffff:1.2.3.4"), ("::1.2.3.4", "::102:304"),
        ("fe80::1%eth0", "fe80::1"), ("1:2:3:4:5:6:7::", "1:2:3:4:5:6:7:0"), ("::2:3:4:5:6:7:8", "0:2:3:4:5:6:7:8"),
    ])
    func addressesParseToCanonicalText(text: String, canonical: String) throws {
        let address = try #require(AppLinkIPAddress(text))
        #expect(address.description == canonical)
        #expect(AppLinkIPAddress(address.description) == address)
        #expect(AppLinkIPAddress(bytes: address.bytes) == address)
    }

    @Test(arguments: [
        "", "127.1", "0x7f.0.0.1", "0177.0.0.1", "127.0.0.01", "2130706433", "256.0.0.1", "1.2.3.4.5", "1.2.3.",
        "+1.2.3.4", " 1.2.3.4", "１.2.3.4", "localhost", "example.com", ":", ":::", "1::2::3", "1:2:3:4:5:6:7:8:9",
        "12345::", "g::", "1:2:3:4:5:6:7:8::", "::1.2.3", "::1.2.3.4:5", "fe80::1%", "[::1", "1:2:3:4:5:6:7",
    ])
    func nonLiteralsAreNotAddresses(text: String) {
        #expect(AppLinkIPAddress(text) == nil)
    }

    @Test func rangesParseAndContain() throws {
        let range = try AppLinkIPRange(String("172.16.0.0/12"))
        #expect(range.contains(AppLinkIPAddress("172.31.255.255")!))
        #expect(!range.contains(AppLinkIPAddress("172.32.0.0")!))
        #expect(!range.contains(AppLinkIPAddress("::ffff:172.16.0.1")!), "families never mix in a range")
        let literal: AppLinkIPRange = "10.1.2.3"
        #expect(literal.prefixLength == 32)
        #expect(AppLinkIPRange("::/0").contains(AppLinkIPAddress("ffff::1")!))
        #expect(AppLinkIPRange("0.0.0.0/0").contains(AppLinkIPAddress("255.1.2.3")!))
        #expect(AppLinkIPRange(AppLinkIPAddress("10.9.8.7")!, prefixLength: 8).description == "10.0.0.0/8")
        #expect(AppLinkIPRange(AppLinkIPAddress("2001:db8::77")!, prefixLength: 33).description == "2001:db8::/33")
    }

    @Test(arguments: [
        ("10.0.0.0/33", "the prefix length must be a number from 0 to 32"),
        ("::/129", "the prefix length must be a number from 0 to 128"),
        ("10.0.0.0/", "the prefix length must be a number from 0 to 32"),
        ("10.0.0.0/-1", "the prefix length must be a number from 0 to 32"),
        ("10.0.0.1/8", "bits are set past the prefix (the block starts at 10.0.0.0)"),
        ("localhost/8", "\"localhost\" is not an IPv4 or IPv6 address"),
    ])
    func badRangesThrowAClearError(text: String, reason: String) {
        #expect(throws: AppLinkIPRange.InvalidRangeError(text: text, reason: reason)) { try AppLinkIPRange(text) }
        let error = AppLinkIPRange.InvalidRangeError(text: text, reason: reason)
        #expect(error.description == "Invalid IP range \"\(text)\": \(reason)")
    }
}
