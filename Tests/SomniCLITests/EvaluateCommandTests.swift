import Foundation
import SomniCore
import Testing

/// `somni evaluate --errors`: where a night's score was lost, as text and as JSON.
@Suite struct EvaluateCommandTests {
    @Test func errorsListWhatWasMissedFoundLateAndFalse() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let reference = dir.appendingPathComponent("reference.csv")
        let found = dir.appendingPathComponent("found.csv")
        // Two snoring episodes (snores 5 s apart): the first found from its third snore on, 10 s
        // late; the second not at all. A cough found where there was none.
        try "start,end,class\n100,101,snoring\n105,106,snoring\n110,111,snoring\n115,116,snoring\n300,301,snoring\n305,306,snoring\n"
            .write(to: reference, atomically: true, encoding: .utf8)
        try "start,end,class\n110,111,snoring\n115,116,snoring\n500,500.3,cough\n"
            .write(to: found, atomically: true, encoding: .utf8)

        let text = try CLI.run(["evaluate", "--reference", reference.path, found.path, "--duration", "3600", "--errors"])
        #expect(text.status == 0, "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("snoring") && $0.contains("onset") && $0.hasSuffix("found 110.0–116.0 (onset +10.0 s)") },
                "\(text.stdout)")
        #expect(lines.contains { $0.hasPrefix("snoring") && $0.contains("missed") && $0.contains("300.0–306.0 s") }, "\(text.stdout)")
        #expect(lines.contains { $0.hasPrefix("cough") && $0.contains("false") && $0.contains("500.0–500.3 s") }, "\(text.stdout)")

        let json = try CLI.run(["evaluate", "--reference", reference.path, found.path, "--duration", "3600", "--errors", "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let report = try JSONDecoder().decode(EvaluationReport.self, from: Data(json.stdout.utf8))
        let errors = try #require(report.errors)
        #expect(errors.map(\.kind) == [.onset, .missed, .falseEvent], "\(errors)")
        #expect(errors.first?.onsetError == 10)

        // Without the flag the report says nothing of errors.
        let plain = try CLI.run(["evaluate", "--reference", reference.path, found.path, "--duration", "3600", "--json"])
        #expect(try JSONDecoder().decode(EvaluationReport.self, from: Data(plain.stdout.utf8)).errors == nil)
    }
}
