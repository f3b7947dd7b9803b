// libFuzzer target: the egress policy's address and range parsers and the classifier.
// Built by Fuzz/run.sh, with the other targets and FuzzMain.swift, together with the Bolts-free sources of BoltsAppLinks; no input may crash it, and every
// address must survive a round trip through its text.

/// One input, as text and as raw address bytes.
public func fuzzEgress(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let buffer = UnsafeBufferPointer(start: data, count: size)
    let text = String(decoding: buffer, as: UTF8.self)
    if let address = AppLinkIPAddress(text) {
        check(address)
    }
    if let range = try? AppLinkIPRange(text) {
        guard range.contains(range.network) else { fatalError("\(range) does not contain its own network") }
        guard (try? AppLinkIPRange(range.description)) == range else { fatalError("\(range) does not round-trip") }
    }
    // Raw bytes as an address: the formatter's text must parse back to the same address.
    if size >= 16, let address = AppLinkIPAddress(bytes: buffer.prefix(16)) {
        check(address)
    }
    if size >= 4, let address = AppLinkIPAddress(bytes: buffer.prefix(4)) {
        check(address)
    }
    return 0
}

private func check(_ address: AppLinkIPAddress) {
    guard AppLinkIPAddress(address.description) == address else {
        fatalError("\(address) does not round-trip through its text")
    }
    guard AppLinkIPAddress(bytes: address.bytes) == address else { fatalError("\(address) bytes do not round-trip") }
    let refusal = AppLinkEgressPolicy.default.refusal(for: address)
    if let mapped = address.mappedIPv4 {
        // A mapped address is its IPv4 address in every respect.
        guard AppLinkEgressPolicy.default.refusal(for: mapped)?.category == refusal?.category else {
            fatalError("\(address) and \(mapped) are judged differently")
        }
    }
    if let refusal {
        guard refusal.address == address else { fatalError("refusal names another address") }
        let exact = address.mappedIPv4 ?? address
        let allowed = AppLinkEgressPolicy.default.allowing([
            AppLinkIPRange(exact, prefixLength: exact.family == .ipv4 ? 32 : 128)
        ])
        guard allowed.allows(address) else { fatalError("allowing \(address) exactly does not allow it") }
    }
    guard AppLinkEgressPolicy.allowAll.allows(address) else { fatalError("allowAll refused \(address)") }
}
