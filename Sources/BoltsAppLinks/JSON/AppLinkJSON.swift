/// A JSON value, as carried by the `al_applink_data` payload of an App Link.
///
/// The payload travels between apps as JSON text, so its model is JSON itself: objects, arrays, strings,
/// numbers, booleans and null. Integers that fit in `Int` keep their exact value; other numbers are `Double`.
/// Literals build values directly:
///
/// ```swift
/// let extras: [String: AppLinkJSON] = ["campaign": "spring", "count": 3, "vip": true]
/// ```
public enum AppLinkJSON: Sendable, Hashable {
    /// JSON `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number written without a fraction or exponent that fits in `Int`.
    case int(Int)
    /// Any other number.
    case double(Double)
    /// A string.
    case string(String)
    /// An ordered list of values.
    case array([AppLinkJSON])
    /// A map from keys to values (key order is not significant).
    case object([String: AppLinkJSON])
}

extension AppLinkJSON {
    /// The string, when this value is a string; otherwise nil.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The dictionary, when this value is an object; otherwise nil.
    public var objectValue: [String: AppLinkJSON]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The elements, when this value is an array; otherwise nil.
    public var arrayValue: [AppLinkJSON]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The boolean, when this value is a boolean; otherwise nil.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The number as a `Double`, when this value is a number; otherwise nil.
    public var doubleValue: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    /// The number as an `Int`, when this value is an integer or a double with an exact integral value.
    public var intValue: Int? {
        switch self {
        case .int(let value): return value
        case .double(let value): return Int(exactly: value)
        default: return nil
        }
    }

    /// True for `.null`.
    public var isNull: Bool {
        self == .null
    }

    /// The member named `key` when this value is an object; nil otherwise or when the member is absent.
    public subscript(key: String) -> AppLinkJSON? {
        objectValue?[key]
    }

    /// The element at `index` when this value is an array and the index is in range; nil otherwise.
    public subscript(index: Int) -> AppLinkJSON? {
        guard let elements = arrayValue, elements.indices.contains(index) else { return nil }
        return elements[index]
    }
}

extension AppLinkJSON: ExpressibleByBooleanLiteral {
    /// Creates `.bool`.
    public init(booleanLiteral value: Bool) {
        self = .bool(value)
    }
}

extension AppLinkJSON: ExpressibleByIntegerLiteral {
    /// Creates `.int`.
    public init(integerLiteral value: Int) {
        self = .int(value)
    }
}

extension AppLinkJSON: ExpressibleByFloatLiteral {
    /// Creates `.double`.
    public init(floatLiteral value: Double) {
        self = .double(value)
    }
}

extension AppLinkJSON: ExpressibleByStringLiteral {
    /// Creates `.string`.
    public init(stringLiteral value: String) {
        self = .string(value)
    }
}

extension AppLinkJSON: ExpressibleByArrayLiteral {
    /// Creates `.array`.
    public init(arrayLiteral elements: AppLinkJSON...) {
        self = .array(elements)
    }
}

extension AppLinkJSON: ExpressibleByDictionaryLiteral {
    /// Creates `.object`; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, AppLinkJSON)...) {
        var object: [String: AppLinkJSON] = [:]
        for (key, value) in elements {
            object[key] = value
        }
        self = .object(object)
    }
}

extension AppLinkJSON: CustomStringConvertible {
    /// The compact JSON text of the value, with object keys sorted.
    public var description: String {
        serialized()
    }
}
