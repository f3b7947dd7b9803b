extension HTMLTokenizer {
    /// The states of the standard's script-data tokenizer that decide where a `<script>` element's text ends.
    private enum ScriptState {
        case data
        case escaped
        case escapedDash
        case escapedDashDash
        case doubleEscaped
        case doubleEscapedDash
        case doubleEscapedDashDash
    }

    /// The index of the `<` of the `</script` that ends the script text started at `start`, or the end of input.
    ///
    /// Follows the script data states: `<!--` escapes the text, and inside an escape a `<script` opens a double
    /// escape in which `</script>` does not end the element (only the escape), exactly as browsers read
    /// `<script><!-- document.write("<script></script>") --></script>`.
    func endOfScriptData(from start: Int) -> Int {
        var state = ScriptState.data
        var index = start
        while index < input.count {
            let scalar = input[index]
            switch state {
            case .data:
                if scalar == "<" {
                    if isAppropriateEndTag(at: index) { return index }
                    if matches("<!--", at: index) {
                        state = .escapedDashDash
                        index += 4
                        continue
                    }
                }
            case .escaped, .escapedDash, .escapedDashDash:
                if scalar == "-" {
                    state = state == .escaped ? .escapedDash : .escapedDashDash
                } else if scalar == "<" {
                    if isAppropriateEndTag(at: index) { return index }
                    if let after = scriptTagName(at: index + 1) {
                        state = .doubleEscaped
                        index = after + 1
                        continue
                    }
                    state = .escaped
                } else if scalar == ">", state == .escapedDashDash {
                    state = .data
                } else {
                    state = .escaped
                }
            case .doubleEscaped, .doubleEscapedDash, .doubleEscapedDashDash:
                if scalar == "-" {
                    state = state == .doubleEscaped ? .doubleEscapedDash : .doubleEscapedDashDash
                } else if scalar == "<" {
                    state = .doubleEscaped
                    if matches("/", at: index + 1), let after = scriptTagName(at: index + 2) {
                        state = .escaped
                        index = after + 1
                        continue
                    }
                } else if scalar == ">", state == .doubleEscapedDashDash {
                    state = .data
                } else {
                    state = .doubleEscaped
                }
            }
            index += 1
        }
        return input.count
    }

    /// When the letters at `index` spell `script` (any case) followed by whitespace, `/` or `>`, the index of that
    /// delimiter; otherwise nil.
    private func scriptTagName(at index: Int) -> Int? {
        var cursor = index
        var letters = String.UnicodeScalarView()
        while cursor < input.count, input[cursor].isASCIIAlpha {
            letters.append(input[cursor].asciiLowercased)
            cursor += 1
        }
        guard cursor < input.count, String(letters) == "script" else { return nil }
        let delimiter = input[cursor]
        return delimiter.isHTMLWhitespace || delimiter == "/" || delimiter == ">" ? cursor : nil
    }
}
