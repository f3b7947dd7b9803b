/// An error for tests to throw and compare.
struct TestError: Error, Equatable, CustomStringConvertible {
    let code: Int
    init(_ code: Int = 0) { self.code = code }
    var description: String { "TestError(\(code))" }
}
