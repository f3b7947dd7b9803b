// Makes a copy of a saved benchmark baseline in which every row's subject did e^shift times
// better against its peer than it really did (each round's log ratio plus `shift`), so that
// comparing a new run with the copy must report regressions. Used by
// .ci/benchmark-baseline.sh to check that `--check` fails a pipeline.
//
//     swift .ci/shift-baseline.swift IN.json OUT.json SHIFT
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 4, let shift = Double(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: shift-baseline.swift IN.json OUT.json SHIFT\n".utf8))
    exit(64)
}
let data = try Data(contentsOf: URL(fileURLWithPath: arguments[1]))
guard var report = try JSONSerialization.jsonObject(with: data) as? [String: Any],
    let verdicts = report["verdicts"] as? [[String: Any]]
else {
    FileHandle.standardError.write(Data("\(arguments[1]) has no verdicts array\n".utf8))
    exit(1)
}
report["verdicts"] = verdicts.map { row -> [String: Any] in
    var row = row
    if let logs = row["logRatios"] as? [Double] { row["logRatios"] = logs.map { $0 + shift } }
    return row
}
try JSONSerialization.data(withJSONObject: report).write(to: URL(fileURLWithPath: arguments[2]))
