/// The kind of device a link is resolved for.
///
/// A server resolves on behalf of many clients, so the caller names the device instead of the library guessing
/// it. Each platform reads its own `al:<key>:…` tag groups; iPhone and iPad also read the generic `al:ios`
/// groups, after their own (device-specific targets first, generic ones kept as fallbacks).
public enum AppLinkPlatform: String, Sendable, Hashable, CaseIterable {
    /// An iPhone: `al:iphone` groups, then `al:ios` groups.
    case iphone
    /// An iPad: `al:ipad` groups, then `al:ios` groups.
    case ipad
    /// Any other iOS device: `al:ios` groups only.
    case ios
    /// Android: `al:android` groups.
    case android
    /// Windows Phone: `al:windows_phone` groups only.
    case windowsPhone = "windows_phone"
    /// Windows: `al:windows` groups only.
    case windows
    /// Windows Universal apps: `al:windows_universal` groups only.
    case windowsUniversal = "windows_universal"

    /// The platform used when the caller names none: `.ios`, which reads the generic iOS groups.
    public static let `default`: AppLinkPlatform = .ios

    /// The tag keys whose groups this platform reads, most specific first.
    public var tagKeys: [String] {
        switch self {
        case .iphone: return ["iphone", "ios"]
        case .ipad: return ["ipad", "ios"]
        default: return [rawValue]
        }
    }

    /// The sub-keys whose value lists make up targets in this platform's groups.
    ///
    /// A group gives as many targets as its longest list among these; shorter lists are padded with nil.
    var targetFieldKeys: [String] {
        switch self {
        case .iphone, .ipad, .ios: return ["url", "app_store_id", "app_name"]
        case .android: return ["url", "package", "class", "app_name"]
        case .windowsPhone, .windows, .windowsUniversal: return ["url", "app_id", "app_name"]
        }
    }
}
