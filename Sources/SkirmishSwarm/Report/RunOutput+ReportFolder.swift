import Foundation

extension RunOutput {
    /// Where `skirmish report` writes `report.html`: `out` when given, else the folder of the summary file (resolved
    /// against the working directory); `.` for an empty `--out`.
    package static func reportFolder(summaryPath: String, out: String?) -> String {
        let folder = out ?? URL(fileURLWithPath: summaryPath).deletingLastPathComponent().path
        return folder.isEmpty ? "." : folder
    }
}
