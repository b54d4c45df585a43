import Foundation

/// One night recorded as several files, read as one recording: a handheld recorder splits its
/// WAV at 2 or 4 GB (a few hours at 48 kHz), an app may split by the hour. Each part may be
/// preceded by silence, where the parts' own start times show a pause between them, so the
/// night's clock stays true; those stretches are the night's gaps.
public final class JoinedAudioSource: AudioSource {
    public struct Part {
        public var name: String
        public var source: any AudioSource
        /// Samples of silence before this part.
        public var silenceBefore: Int
        public init(name: String, source: any AudioSource, silenceBefore: Int = 0) {
            self.name = name; self.source = source; self.silenceBefore = max(0, silenceBefore)
        }
    }

    private let parts: [Part]
    private let notes: [String]
    private var current = 0
    private var silenceLeft: Int
    private var position = 0
    public private(set) var gaps: [RecordingGap] = []

    /// `notes` join the parts' own warnings (how the parts were put together, when that is in doubt).
    public init(parts: [Part], notes: [String] = []) {
        self.parts = parts
        self.notes = notes
        silenceLeft = parts.first?.silenceBefore ?? 0
    }

    /// Known when every part's duration is.
    public var expectedDuration: Double? {
        var total = 0.0
        for part in parts {
            guard let seconds = part.source.expectedDuration else { return nil }
            total += seconds + Double(part.silenceBefore) / Double(analysisSampleRate)
        }
        return total
    }

    /// The lowest of the parts' rates: one narrow-band part makes the night's talk and coughs
    /// less reliable.
    public var recordedSampleRate: Int? { parts.compactMap(\.source.recordedSampleRate).min() }

    public var warnings: [String] {
        notes + parts.flatMap { part in part.source.warnings.map { "\(part.name): \($0)" } }
    }

    public func read(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Int {
        var filled = 0
        while filled < buffer.count, current < parts.count {
            if silenceLeft > 0 {
                let n = min(silenceLeft, buffer.count - filled)
                if silenceLeft == parts[current].silenceBefore {
                    gaps.append(RecordingGap(start: Double(position) / Double(analysisSampleRate),
                                             duration: Double(silenceLeft) / Double(analysisSampleRate),
                                             reason: "no recording between the files before \(parts[current].name)"))
                }
                UnsafeMutableBufferPointer(rebasing: buffer[filled..<(filled + n)]).update(repeating: 0)
                silenceLeft -= n; filled += n; position += n
                continue
            }
            let n = try parts[current].source.read(into: UnsafeMutableBufferPointer(rebasing: buffer[filled...]))
            if n == 0 {
                current += 1
                silenceLeft = current < parts.count ? parts[current].silenceBefore : 0
                continue
            }
            filled += n; position += n
        }
        return filled
    }
}
