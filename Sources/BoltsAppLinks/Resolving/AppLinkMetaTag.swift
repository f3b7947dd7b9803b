import Foundation

/// One `<meta property="al:…" content="…">` tag, the unit of App Link metadata.
public struct AppLinkMetaTag: Sendable, Hashable {
    /// The `property` attribute, such as `al:ios:url`.
    public var property: String
    /// The `content` attribute, or nil when the tag has none (an empty attribute is `""`).
    public var content: String?

    /// Creates a tag.
    public init(property: String, content: String?) {
        self.property = property
        self.content = content
    }

    /// The App Link tags of an HTML document, as a browser would list them: every `<meta>` element anywhere in
    /// the document, in document order, whose `property` attribute starts with `al:` (case-sensitive); `name`
    /// attributes are not read.
    public static func tags(inHTML html: String) -> [AppLinkMetaTag] {
        HTMLMetaElementScanner.metaElements(in: html).compactMap { element in
            guard let property = element[attribute: "property"], property.hasPrefix("al:") else { return nil }
            return AppLinkMetaTag(property: property, content: element[attribute: "content"])
        }
    }
}

extension AppLink {
    /// Builds the link a page's tags describe, for one platform.
    ///
    /// Tags become a tree as Bolts built it: a property is split on `:`; each component but the last descends
    /// into the most recent group of that name (creating one if needed), and the last component always appends a
    /// new group, so a bare `al:ios` starts a new target group. Each of the platform's groups, in its
    /// ``AppLinkPlatform/tagKeys`` order, gives as many targets as its longest field list, fields paired by index.
    ///
    /// The web URL is `sourceURL` unless the first `al:web` group says otherwise: a first `should_fallback` of
    /// `no`, `false` or `0` (any case) removes it, else a first `url` with content replaces it. Relative URLs are
    /// resolved against `baseURL` (the page's final URL after redirects), which defaults to `sourceURL`.
    public init(
        metaTags: [AppLinkMetaTag],
        sourceURL: URL,
        baseURL: URL? = nil,
        platform: AppLinkPlatform = .default
    ) {
        let base = baseURL ?? sourceURL
        let root = MetaTagNode()
        for tag in metaTags {
            root.insert(tag)
        }
        var targets: [AppLinkTarget] = []
        for key in platform.tagKeys {
            for group in root.children[key] ?? [] {
                targets += group.targets(fields: platform.targetFieldKeys, base: base)
            }
        }
        var webURL: URL? = sourceURL
        let web = root.children["web"]?.first
        if let fallback = web?.firstValue(of: "should_fallback"),
            ["no", "false", "0"].contains(fallback.lowercased())
        {
            webURL = nil
        } else if let text = web?.firstValue(of: "url") {
            webURL = Self.resolve(text, against: base)
        }
        self.init(sourceURL: sourceURL, targets: targets, webURL: webURL)
    }

    /// Resolves URL text from a tag against the page's URL, as a browser resolves a link; nil when it cannot.
    static func resolve(_ text: String, against base: URL) -> URL? {
        let trimmed = text.trimmingCharacters(in: CharacterSet(charactersIn: " \t\n\u{0C}\r"))
        if trimmed.isEmpty { return base }
        if let absolute = URL(string: trimmed), let scheme = absolute.scheme, !scheme.isEmpty {
            return absolute
        }
        return URL(string: trimmed, relativeTo: base)?.absoluteURL
    }
}

/// A node of the tag tree: child groups by key, and the content of the tag that created it.
private final class MetaTagNode {
    var children: [String: [MetaTagNode]] = [:]
    var value: String?

    func insert(_ tag: AppLinkMetaTag) {
        let components = tag.property.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard components.first == "al" else { return }
        var node = self
        for index in components.indices.dropFirst() {
            let key = components[index]
            var list = node.children[key] ?? []
            let child: MetaTagNode
            if let last = list.last, index != components.count - 1 {
                child = last
            } else {
                child = MetaTagNode()
                list.append(child)
                node.children[key] = list
            }
            node = child
        }
        if let content = tag.content {
            node.value = content
        }
    }

    /// The content of the first `key` child, when it has content.
    func firstValue(of key: String) -> String? {
        children[key]?.first?.value
    }

    func targets(fields: [String], base: URL) -> [AppLinkTarget] {
        let count = fields.map { children[$0]?.count ?? 0 }.max() ?? 0
        return (0..<count).map { index in
            func value(_ key: String) -> String? {
                guard let list = children[key], index < list.count else { return nil }
                return list[index].value
            }
            return AppLinkTarget(
                url: value("url").flatMap { AppLink.resolve($0, against: base) },
                appStoreId: value("app_store_id"),
                appName: value("app_name"),
                package: value("package"),
                className: value("class"),
                appId: value("app_id")
            )
        }
    }
}
