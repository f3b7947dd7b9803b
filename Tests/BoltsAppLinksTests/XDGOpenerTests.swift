import Foundation
import Testing

@testable import BoltsAppLinks

/// A throwaway desktop: `XDG_DATA_HOME` holds a `.desktop` file registered for the `boltstest` scheme, whose
/// command appends each URL it is given to `ran.txt`.
private struct FakeDesktop {
    let root: URL
    let environment: [String: String]

    var record: URL { root.appendingPathComponent("ran.txt") }

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("bolts-xdg-\(UUID().uuidString)")
        let data = root.appendingPathComponent("data/applications")
        let config = root.appendingPathComponent("config")
        let empty = root.appendingPathComponent("empty")
        for directory in [data, config, empty] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        let handler = root.appendingPathComponent("handler.sh")
        try "#!/bin/sh\nprintf '%s\\n' \"$1\" >> '\(root.path)/ran.txt'\n".write(
            to: handler, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: handler.path)
        try "[Desktop Entry]\nType=Application\nName=Bolts Test Handler\nExec=\(handler.path) %u\n"
            .write(to: data.appendingPathComponent("boltstest-handler.desktop"), atomically: true, encoding: .utf8)
        try "[Default Applications]\nx-scheme-handler/boltstest=boltstest-handler.desktop\n"
            .write(to: config.appendingPathComponent("mimeapps.list"), atomically: true, encoding: .utf8)
        environment = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "HOME": root.path,
            "XDG_DATA_HOME": root.appendingPathComponent("data").path,
            "XDG_CONFIG_HOME": config.path,
            "XDG_DATA_DIRS": empty.path,
            "XDG_CONFIG_DIRS": empty.path,
            // xdg-open only consults scheme handlers when it believes a display is present.
            "DISPLAY": ":99",
        ]
    }

    func recordedURLs() -> [String] {
        guard let text = try? String(contentsOf: record, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").map(String.init)
    }

    func remove() {
        try? FileManager.default.removeItem(at: root)
    }
}

private let xdgAvailable = XDGAppLinkURLOpener().isAvailable

@Suite(
    "Linux xdg opener",
    .enabled(if: xdgAvailable, "xdg-mime/xdg-open not found on PATH: install xdg-utils (apt-get install -y xdg-utils)")
)
struct XDGOpenerTests {
    @Test func reportsTheRegisteredSchemeHandler() throws {
        let desktop = try FakeDesktop()
        defer { desktop.remove() }
        let opener = XDGAppLinkURLOpener(environment: desktop.environment)
        #expect(opener.handler(for: URL(string: "boltstest://anything")!) == "boltstest-handler.desktop")
        #expect(opener.canOpen(URL(string: "BoltsTest://upper")!))
        #expect(!opener.canOpen(URL(string: "nosuchscheme://x")!))
        #expect(desktop.recordedURLs().isEmpty)
    }

    @Test func opensWithTheHandlerAndPassesTheWholeURL() throws {
        let desktop = try FakeDesktop()
        defer { desktop.remove() }
        let opener = XDGAppLinkURLOpener(environment: desktop.environment)
        let url = URL(string: "boltstest://item/42?al_applink_data=%7B%22a%22%3A%22b%26c%22%7D&x=1")!
        #expect(opener.open(url))
        #expect(desktop.recordedURLs() == [url.absoluteString])
        #expect(!opener.open(URL(string: "nosuchscheme://x")!))
        #expect(desktop.recordedURLs().count == 1)
    }

    @Test func navigationThroughTheDesktopDeliversThePayload() throws {
        let desktop = try FakeDesktop()
        defer { desktop.remove() }
        let opener = XDGAppLinkURLOpener(environment: desktop.environment)
        let link = AppLink(
            sourceURL: URL(string: "https://example.com/item/42?ref=a&b=c")!,
            targets: [
                AppLinkTarget(url: URL(string: "nosuchscheme://x")),
                AppLinkTarget(url: URL(string: "boltstest://item/42")),
            ],
            webURL: nil)
        let navigation = AppLinkNavigation(appLink: link, extras: ["campaign": "spring & summer"])
        #expect(navigation.navigationType(using: opener) == .app)
        #expect(navigation.navigate(using: opener) == .app)
        let received = try #require(desktop.recordedURLs().first.flatMap(URL.init(string:)))
        let inbound = AppLinkURL(url: received)
        #expect(inbound.targetURL == link.sourceURL)
        #expect(inbound.appLinkExtras == ["campaign": "spring & summer"])
    }

    @Test func missingToolsMeanNothingOpens() {
        let opener = XDGAppLinkURLOpener(environment: ["PATH": "/nonexistent"])
        #expect(!opener.isAvailable)
        #expect(!opener.canOpen(URL(string: "http://example.com")!))
        #expect(!opener.open(URL(string: "http://example.com")!))
    }

    @Test func schemesWithShellCharactersAreRefused() {
        #expect(XDGAppLinkURLOpener.isPlainScheme("x-my.app+v2"))
        #expect(!XDGAppLinkURLOpener.isPlainScheme("a;b"))
        #expect(!XDGAppLinkURLOpener.isPlainScheme(""))
    }
}
