import Foundation

extension RunSummary {
    /// A `summary.json` that cannot be used: the text names the file, what is wrong and what to pass instead.
    package struct FileError: Error, Equatable, CustomStringConvertible {
        package var description: String
    }

    /// The summary at `path`; `role` names it in errors ("baseline", "summary").
    package static func load(path: String, role: String = "summary") throws(FileError) -> RunSummary {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw FileError(
                description: "cannot read the \(role) \(path): \(error.localizedDescription). Pass the summary.json "
                    + "from a results folder (skirmish-out/<run id>/summary.json by default).")
        }
        do {
            return try JSONDecoder().decode(RunSummary.self, from: data)
        } catch {
            throw FileError(
                description: "\(path) is not a Skirmish run summary (\(describe(error))). It must be the summary.json "
                    + "written by `skirmish swarm` or `skirmish soak`.")
        }
    }

    /// A decoding error as one short phrase that names the field.
    static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        switch error {
        case .keyNotFound(let key, let context):
            return "missing field \(codingPath(context.codingPath + [key]))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "unexpected value at \(codingPath(context.codingPath))"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "not valid JSON" : "bad value at \(codingPath(context.codingPath))"
        @unknown default:
            return "\(error)"
        }
    }

    private static func codingPath(_ keys: [any CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }
}
