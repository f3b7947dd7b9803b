import Bolts
import BoltsAppLinksTestSupport
import Foundation
import Testing

@testable import BoltsAppLinks

@Suite("Response charsets")
struct CharsetTests {

    @Test func contentTypeCharsetIsHonoured() async throws {
        var bytes = Array("<meta property=\"al:ios:app_name\" content=\"Caf".utf8)
        bytes += [0xE9, 0x20, 0x80]  // é and € in windows-1252
        bytes += Array("\"><meta property=\"al:ios:url\" content=\"app://x\">".utf8)
        let server = try TestHTTPServer { [bytes] _ in .bytes(bytes, contentType: "text/html; charset=ISO-8859-1") }
        defer { server.stop() }
        let link = try await loopbackResolver().appLink(from: server.url("/latin1")).value
        #expect(link.targets.first?.appName == "Café €")
    }

    @Test func metaCharsetIsUsedWhenTheHeaderHasNone() async throws {
        var bytes = Array(
            "<html><head><meta charset=\"windows-1251\"><meta property=\"al:ios:app_name\" content=\"".utf8)
        bytes += [0xCF, 0xF0, 0xE8, 0xE2, 0xE5, 0xF2]  // "Привет" in windows-1251
        bytes += Array("\"></head></html>".utf8)
        let server = try TestHTTPServer { [bytes] _ in .bytes(bytes, contentType: "text/html") }
        defer { server.stop() }
        let resolver = loopbackResolver()
        let page = try await resolver.page(from: server.url("/cyrillic")).value
        #expect(page.encoding == .windows1251)
        #expect(page.metaTags.first?.content == "Привет")
    }

    @Test func httpEquivContentTypeIsRead() {
        var bytes = Array("<meta http-equiv='Content-Type' content='text/html; charset=shift_jis'>".utf8)
        bytes += Array("<meta property='al:ios:app_name' content='".utf8)
        bytes += [0x83, 0x65, 0x83, 0x58, 0x83, 0x67]  // テスト
        bytes += Array("'>".utf8)
        let decoded = HTMLTextDecoding.decode(Data(bytes), contentType: nil)
        #expect(decoded.encoding == .shiftJIS)
        #expect(AppLinkMetaTag.tags(inHTML: decoded.text).first?.content == "テスト")
    }

    @Test func headerCharsetWinsOverMetaCharset() {
        let bytes = Array("<meta charset='windows-1251'><meta property='al:a' content='\u{00E9}'>".utf8)
        let decoded = HTMLTextDecoding.decode(Data(bytes), contentType: "text/html;charset=\"utf-8\"")
        #expect(decoded.encoding == .utf8)
        #expect(decoded.text.contains("é"))
    }

    @Test func byteOrderMarkWinsOverEverything() {
        var bytes: [UInt8] = [0xFF, 0xFE]
        for unit in "<meta property='al:a' content='ü'>".utf16 {
            bytes += [UInt8(unit & 0xFF), UInt8(unit >> 8)]
        }
        let decoded = HTMLTextDecoding.decode(Data(bytes), contentType: "text/html; charset=iso-8859-1")
        #expect(decoded.encoding == .utf16LE)
        #expect(AppLinkMetaTag.tags(inHTML: decoded.text) == [AppLinkMetaTag(property: "al:a", content: "ü")])
    }

    @Test func wrongCharsetDoesNotCrashAndInvalidBytesBecomeReplacementCharacters() async throws {
        // Declared UTF-8 but sent as windows-1252: the é byte is invalid UTF-8.
        var bytes = Array("<meta property=\"al:ios:app_name\" content=\"Caf".utf8)
        bytes += [0xE9]
        bytes += Array("\"><meta property=\"al:ios:url\" content=\"app://x\">".utf8)
        let server = try TestHTTPServer { [bytes] _ in .bytes(bytes, contentType: "text/html; charset=utf-8") }
        defer { server.stop() }
        let link = try await loopbackResolver().appLink(from: server.url("/wrong")).value
        #expect(link.targets.first?.appName == "Caf\u{FFFD}")
        #expect(link.targets.first?.url == URL(string: "app://x"))
    }

    @Test func unknownCharsetLabelFallsBackToMetaThenUTF8() {
        let text = "<meta property='al:a' content='ß'>"
        let decoded = HTMLTextDecoding.decode(Data(text.utf8), contentType: "text/html; charset=x-no-such-thing")
        #expect(decoded.encoding == .utf8)
        #expect(decoded.text == text)
    }

    @Test func thePrescanReadsACharsetInsideAFramesetThatTheDocumentDrops() {
        // A browser's prescan reads bytes before any tree exists; the frameset drops the element from the DOM only.
        let bytes = Array("<frameset><meta charset=\"windows-1252\"><meta property='al:a' content='Caf".utf8) + [0xE9]
        let decoded = HTMLTextDecoding.decode(Data(bytes + Array("'></frameset>".utf8)), contentType: nil)
        #expect(decoded.encoding == .windows1252)
        #expect(decoded.text.contains("Café"))
        #expect(HTMLMetaElementScanner.metaElements(in: decoded.text).isEmpty)
    }

    @Test func metaDeclaringUTF16MeansUTF8() {
        let text = "<meta charset=utf-16><meta property='al:a' content='ß'>"
        let decoded = HTMLTextDecoding.decode(Data(text.utf8), contentType: nil)
        #expect(decoded.encoding == .utf8)
        #expect(decoded.text == text)
    }

    @Test(
        arguments: [
            ("text/html; charset=UTF-8", "UTF-8"), ("text/html;charset='latin1'", "latin1"),
            ("text/html; foo=bar; Charset = koi8-r", "koi8-r"), ("text/html", nil),
        ] as [(String, String?)])
    func charsetParameterIsFound(contentType: String, expected: String?) {
        #expect(HTMLTextDecoding.charsetLabel(inContentType: contentType) == expected)
    }
}
