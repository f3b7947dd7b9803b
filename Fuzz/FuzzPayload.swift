// libFuzzer target: the URL side of App Links (payload JSON, query parsing, inbound URLs, outbound round trip,
// data URLs). Built by Fuzz/run.sh, with the other targets and FuzzMain.swift, together with the Bolts-free sources of BoltsAppLinks; no input may crash it.
import Foundation

/// Whether a value holds a double that JSON cannot write back (it becomes null, so it cannot round-trip).
private func hasNonFinite(_ value: AppLinkJSON) -> Bool {
    switch value {
    case .double(let number): return !number.isFinite
    case .array(let elements): return elements.contains(where: hasNonFinite)
    case .object(let members): return members.values.contains(where: hasNonFinite)
    default: return false
    }
}

public func fuzzPayload(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)

    // JSON: whatever parses must serialize and parse back to the same value.
    if let value = AppLinkJSON(parsing: text), !hasNonFinite(value) {
        let again = AppLinkJSON(parsing: value.serialized())
        if again != value { fatalError("JSON round trip changed \(value) into \(String(describing: again))") }
        // Outbound then inbound gives the same extras.
        if let extras = value.objectValue {
            let link = AppLink(
                sourceURL: URL(string: "https://fuzz.example.com/a?b=c")!,
                targets: [AppLinkTarget(url: URL(string: "fuzz://x#frag"))], webURL: nil)
            var data = extras
            data["version"] = nil  // a caller-supplied version other than "1.0" would make the receiver ignore it
            let navigation = AppLinkNavigation(appLink: link, extras: extras, appLinkData: data)
            guard let outbound = navigation.plan.steps.first?.url else { fatalError("no outbound URL") }
            let inbound = AppLinkURL(url: outbound, context: .silent)
            if inbound.appLinkExtras != extras { fatalError("extras did not survive the round trip") }
            if inbound.appLinkData != navigation.payload { fatalError("payload did not survive the round trip") }
        }
    }

    // Query strings and percent-decoding.
    _ = AppLinkQuery.parameters(ofQuery: text)
    let encoded = AppLinkQuery.percentEncoded(text)
    if AppLinkQuery.percentDecoded(encoded) != text { fatalError("percent-encoding did not round-trip") }

    // The raw text as the payload of an inbound URL, and as a whole URL.
    if let url = URL(string: "bolts://host/path?x=1&al_applink_data=" + encoded) {
        let parsed = AppLinkURL(url: url, context: .silent)
        _ = parsed.referer?.returnText
    }
    if let url = URL(string: text) {
        _ = AppLinkURL(url: url, context: .silent)
        _ = DataURL(url)
    }
    _ = DataURL.forgivingBase64(Array(text.utf8))
    return 0
}
