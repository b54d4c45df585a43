import Foundation
import Testing
@testable import SomniCore

@Suite struct SomniErrorTests {
    @Test func aFailedWriteSaysWhyTheSystemRefusedIt() throws {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("somni-no-such-folder-\(UUID().uuidString)/envelope.bin")
        var thrown: (any Error)?
        do { try Data([1, 2, 3]).write(to: url) } catch { thrown = error }
        let cause = try #require(thrown)
        let error = SomniError(.io, "cannot write \(url.path)", cause: cause)
        #expect(error.description == "cannot write \(url.path): no such file or directory")
        // However Foundation wraps it, and through a SomniError that carried it.
        let full = SomniError(.io, "cannot write x", cause: POSIXError(.ENOSPC))
        #expect(full.description == "cannot write x: no space left on device")
        let wrapped = NSError(domain: NSCocoaErrorDomain, code: 640,
                              userInfo: [NSUnderlyingErrorKey: NSError(domain: NSPOSIXErrorDomain, code: Int(EFBIG))])
        #expect(SomniError(.io, "cannot write y", cause: wrapped).description == "cannot write y: file too large")
        #expect(SomniError(.io, "cannot save", cause: full).description == "cannot save: no space left on device")
        // Out of space: a full disk or quota, or a file that may grow no larger; not a missing folder.
        #expect(full.isOutOfSpace && SomniError(.io, "y", cause: wrapped).isOutOfSpace)
        #expect(SomniError(.io, "z", cause: POSIXError(.EDQUOT)).isOutOfSpace)
        #expect(!error.isOutOfSpace && !SomniError(.io, "w").isOutOfSpace)
    }

    @Test func anErrorWithoutASystemReasonIsItsMessageAlone() {
        struct Other: Error {}
        #expect(SomniError(.badInput, "not audio", cause: Other()).description == "not audio")
        #expect(SomniError(.badInput, "not audio").description == "not audio")
    }
}
