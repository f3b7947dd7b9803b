extension AppLinkJSON {
    /// Compact JSON text for this value.
    ///
    /// Object keys are written in sorted order so that equal values give equal text. Strings escape `"`, `\`
    /// and control characters; `/` and non-ASCII characters are written as they are. Non-finite doubles, which
    /// JSON cannot express, are written as `null`.
    public func serialized() -> String {
        var output = ""
        write(into: &output)
        return output
    }

    private func write(into output: inout String) {
        switch self {
        case .null:
            output += "null"
        case .bool(let value):
            output += value ? "true" : "false"
        case .int(let value):
            output += String(value)
        case .double(let value):
            output += Self.text(for: value)
        case .string(let value):
            Self.writeString(value, into: &output)
        case .array(let elements):
            output += "["
            for (position, element) in elements.enumerated() {
                if position > 0 { output += "," }
                element.write(into: &output)
            }
            output += "]"
        case .object(let members):
            output += "{"
            for (position, key) in members.keys.sorted().enumerated() {
                if position > 0 { output += "," }
                Self.writeString(key, into: &output)
                output += ":"
                members[key]!.write(into: &output)
            }
            output += "}"
        }
    }

    private static func text(for value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 1e15 {
            // Integral doubles keep a fraction so that they read back as doubles, not integers.
            return String(Int(value)) + ".0"
        }
        return "\(value)"
    }

    private static func writeString(_ value: String, into output: inout String) {
        output += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\u{08}": output += "\\b"
            case "\u{0C}": output += "\\f"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        output += "\""
    }
}
