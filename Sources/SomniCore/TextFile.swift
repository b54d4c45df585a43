import Foundation

/// A text file the user hands over (a reference CSV, a sidecar of marked events), read whole.
public enum TextFile {
    /// The file as UTF-8 text. A path that names nothing or a folder (a typo), or a file that is
    /// not UTF-8 text (a recording or a spreadsheet given by mistake), is the user's input, said as
    /// such, as `somni analyze` says of a missing recording; a file there that cannot be read is an
    /// I/O error.
    public static func read(_ url: URL, what: String) throws -> String {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else {
            throw SomniError(.badInput, "no such file: \(url.path) (\(what))")
        }
        guard !isFolder.boolValue else { throw SomniError(.badInput, "\(url.path) is a folder: \(what) must be a text file") }
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
