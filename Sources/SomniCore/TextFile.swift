import Foundation

/// A text file the user hands over (a reference CSV, a sidecar of marked events), read whole.
public enum TextFile {
    /// The file as UTF-8 text. A file that cannot be read is an I/O error; one that is not UTF-8
    /// text (a recording or a spreadsheet given by mistake) is the user's input, said as such.
    public static func read(_ url: URL, what: String) throws -> String {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw SomniError(.io, "cannot read \(what) \(url.path)", cause: error)
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw SomniError(.badInput, "\(url.path) is not text: \(what) must be a UTF-8 text file")
        }
        return text
    }
}
