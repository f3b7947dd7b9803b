// libFuzzer target: the HTML side of App Links (charset decoding, tokenizer, meta extraction, tag algorithm).
// Built by Fuzz/run.sh, with the other targets and FuzzMain.swift, together with the Bolts-free sources of BoltsAppLinks; no input may crash it.
import Foundation

public func fuzzHTML(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(UnsafeBufferPointer(start: data, count: size))
    // The first byte picks a declared charset, so that every decoder sees arbitrary bytes.
    let labels = [
        nil, "utf-8", "windows-1252", "utf-16le", "utf-16be", "shift_jis", "euc-jp", "iso-2022-jp",
        "windows-1251", "iso-8859-2", "macintosh", "bogus",
    ]
    let label = size > 0 ? labels[Int(data[0]) % labels.count] : nil
    let decoded = HTMLTextDecoding.decode(bytes, contentType: label.map { "text/html; charset=\($0)" })
    let elements = HTMLMetaElementScanner.metaElements(in: decoded.text)
    for element in elements {
        // The tokenizer keeps only the first attribute of each name.
        if Set(element.attributes.map(\.name)).count != element.attributes.count {
            fatalError("duplicate attribute names survived: \(element.attributes)")
        }
    }
    let tags = AppLinkMetaTag.tags(inHTML: decoded.text)
    if tags.count > elements.count { fatalError("more App Link tags than meta elements") }
    let source = URL(string: "https://fuzz.example.com/dir/page")!
    for platform in AppLinkPlatform.allCases {
        let link = AppLink(metaTags: tags, sourceURL: source, platform: platform)
        _ = AppLinkNavigation(appLink: link, extras: ["k": "v"]).plan
    }
    _ = HTMLMetaElementScanner.metaElements(in: String(decoding: bytes, as: UTF8.self))
    return 0
}
