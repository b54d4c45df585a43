import CZlib
import Foundation

/// Headless Chromium, driven as a separate process. Every run gets a fresh profile, has the
/// network pointed at a dead proxy and unresolvable host names (so nothing can leave the machine
/// even if a page tried), and records a net log that `pageRequests` reads.
struct Chromium {
    /// The installed browser; scripts/install-deps.sh installs Debian's `chromium`.
    static let executable: String? = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    static let missingMessage = """
        ⚠️  CHROMIUM IS NOT INSTALLED: the report's browser tests did NOT run. \
        Run scripts/install-deps.sh (it installs Debian's chromium) and test again.
        """

    struct Output {
        var stdout: String
        var stderr: String
        /// Lines the page's console produced (Chromium logs them as "CONSOLE").
        var consoleLines: [String] { stderr.split(separator: "\n").filter { $0.contains(":CONSOLE") }.map(String.init) }
    }

    let scratch: URL

    init(scratch: URL) { self.scratch = scratch }

    /// Runs Chromium on a page with extra flags (--dump-dom, --screenshot=…); waits up to `timeout` s.
    func run(_ page: URL, _ flags: [String], darkMode: Bool = false, netLog: URL? = nil,
             timeout: TimeInterval = 90) throws -> Output {
        guard let executable = Chromium.executable else { throw BrowserError(Chromium.missingMessage) }
        let profile = scratch.appendingPathComponent("profile-\(UUID().uuidString)")
        var args = [
            "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
            "--user-data-dir=\(profile.path)", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--disable-default-apps", "--disable-extensions", "--mute-audio",
            "--proxy-server=http://127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND",
            "--enable-logging=stderr", "--v=0", "--virtual-time-budget=8000", "--hide-scrollbars",
        ]
        if darkMode { args += ["--force-dark-mode", "--blink-settings=preferredColorScheme=0"] }
        if let netLog { args += ["--log-net-log=\(netLog.path)", "--net-log-capture-mode=Default"] }
        args += flags + [page.absoluteString]

        let out = scratch.appendingPathComponent("out-\(UUID().uuidString).txt")
        let err = scratch.appendingPathComponent("err-\(UUID().uuidString).txt")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = args
        p.standardOutput = try FileHandle(forWritingTo: out)
        p.standardError = try FileHandle(forWritingTo: err)
        try p.run()
        let deadline = Date().addingTimeInterval(timeout)
        while p.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if p.isRunning {
            p.terminate()
            p.waitUntilExit()
            throw BrowserError("chromium did not finish within \(Int(timeout)) s")
        }
        try? FileManager.default.removeItem(at: profile)
        return Output(stdout: String(decoding: (try? Data(contentsOf: out)) ?? Data(), as: UTF8.self),
                      stderr: String(decoding: (try? Data(contentsOf: err)) ?? Data(), as: UTF8.self))
    }

    /// URLs the page itself asked for (the browser's own background traffic has no origin as
    /// initiator and is left out), from a net log written with --log-net-log.
    static func pageRequests(netLog: URL) throws -> [String] {
        let data = try Data(contentsOf: netLog)
        guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let events = root["events"] as? [[String: Any]] else { throw BrowserError("unreadable net log") }
        var urls: [String] = []
        for e in events {
            guard let params = e["params"] as? [String: Any], let url = params["url"] as? String,
                  let initiator = params["initiator"] as? String, initiator != "not an origin" else { continue }
            urls.append(url)
        }
        return urls
    }
}

struct BrowserError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// Count of non-overlapping occurrences.
func occurrences(of needle: String, in haystack: String) -> Int {
    haystack.components(separatedBy: needle).count - 1
}

/// The dumped DOM without its <script> elements, so counting marks does not count the script's own text.
func withoutScripts(_ dom: String) -> String {
    var out = ""
    var rest = Substring(dom)
    while let open = rest.range(of: "<script") {
        out += rest[..<open.lowerBound]
        guard let close = rest[open.upperBound...].range(of: "</script>") else { return out }
        rest = rest[close.upperBound...]
    }
    return out + rest
}

/// The value of an attribute on the dumped <html> element.
func rootAttribute(_ name: String, in dom: String) -> String? {
    guard let open = dom.range(of: "<html"), let close = dom[open.upperBound...].range(of: ">") else { return nil }
    let tag = dom[open.upperBound..<close.lowerBound]
    guard let r = tag.range(of: " \(name)=\"") else { return nil }
    let rest = tag[r.upperBound...]
    return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
}

/// An 8-bit RGB(A) PNG, as Chromium's screenshots are, decoded to RGBA pixels.
struct PNGImage {
    let width: Int
    let height: Int
    let rgba: [UInt8]

    init(_ data: Data) throws {
        let b = [UInt8](data)
        guard b.count > 8, b[0..<8].elementsEqual([137, 80, 78, 71, 13, 10, 26, 10]) else { throw BrowserError("not a PNG") }
        func u32(_ o: Int) -> Int { Int(b[o]) << 24 | Int(b[o + 1]) << 16 | Int(b[o + 2]) << 8 | Int(b[o + 3]) }
        var o = 8, w = 0, h = 0, colorType = 0, idat: [UInt8] = []
        while o + 8 <= b.count {
            let length = u32(o), type = String(decoding: b[(o + 4)..<(o + 8)], as: UTF8.self)
            guard o + 12 + length <= b.count else { throw BrowserError("truncated PNG") }
            let body = Array(b[(o + 8)..<(o + 8 + length)])
            if type == "IHDR" {
                w = u32(o + 8); h = u32(o + 12); colorType = Int(body[9])
                guard body[8] == 8, colorType == 2 || colorType == 6, body[12] == 0 else {
                    throw BrowserError("unsupported PNG: depth \(body[8]) colour type \(colorType)")
                }
            } else if type == "IDAT" {
                idat += body
            }
            o += 12 + length
        }
        let channels = colorType == 6 ? 4 : 3
        let stride = w * channels
        var raw = [UInt8](repeating: 0, count: h * (stride + 1))
        var rawLength = uLongf(raw.count)
        let rc = raw.withUnsafeMutableBufferPointer { out in
            idat.withUnsafeBufferPointer { uncompress(out.baseAddress, &rawLength, $0.baseAddress, uLong($0.count)) }
        }
        guard rc == Z_OK, Int(rawLength) == raw.count else { throw BrowserError("cannot inflate PNG (zlib \(rc))") }
        var pixels = [UInt8](repeating: 0, count: h * stride)
        for y in 0..<h {
            let filter = raw[y * (stride + 1)]
            for x in 0..<stride {
                let v = raw[y * (stride + 1) + 1 + x]
                let a = x >= channels ? Int(pixels[y * stride + x - channels]) : 0
                let up = y > 0 ? Int(pixels[(y - 1) * stride + x]) : 0
                let c = (x >= channels && y > 0) ? Int(pixels[(y - 1) * stride + x - channels]) : 0
                let predictor: Int
                switch filter {
                case 1: predictor = a
                case 2: predictor = up
                case 3: predictor = (a + up) / 2
                case 4:
                    let p = a + up - c, pa = abs(p - a), pb = abs(p - up), pc = abs(p - c)
                    predictor = (pa <= pb && pa <= pc) ? a : (pb <= pc ? up : c)
                default: predictor = 0
                }
                pixels[y * stride + x] = UInt8((Int(v) + predictor) & 0xff)
            }
        }
        width = w
        height = h
        if channels == 4 {
            rgba = pixels
        } else {
            var out = [UInt8](repeating: 255, count: w * h * 4)
            for i in 0..<(w * h) { out[4 * i] = pixels[3 * i]; out[4 * i + 1] = pixels[3 * i + 1]; out[4 * i + 2] = pixels[3 * i + 2] }
            rgba = out
        }
    }

    /// (r, g, b) of each pixel.
    func pixel(_ i: Int) -> (Int, Int, Int) { (Int(rgba[4 * i]), Int(rgba[4 * i + 1]), Int(rgba[4 * i + 2])) }

    /// The most common colour: the page background.
    var background: (Int, Int, Int) {
        var counts: [Int: Int] = [:]
        for i in stride(from: 0, to: width * height, by: 7) {
            let (r, g, b) = pixel(i)
            counts[r << 16 | g << 8 | b, default: 0] += 1
        }
        let key = counts.max { $0.value < $1.value }?.key ?? 0
        return (key >> 16 & 0xff, key >> 8 & 0xff, key & 0xff)
    }

    /// Share of pixels that differ from `colour` by more than `tolerance` in any channel.
    func share(differingFrom colour: (Int, Int, Int), tolerance: Int = 12) -> Double {
        var n = 0
        for i in 0..<(width * height) {
            let (r, g, b) = pixel(i)
            if abs(r - colour.0) > tolerance || abs(g - colour.1) > tolerance || abs(b - colour.2) > tolerance { n += 1 }
        }
        return Double(n) / Double(max(1, width * height))
    }

    /// Pixels within `tolerance` of `colour`.
    func count(near colour: (Int, Int, Int), tolerance: Int = 40) -> Int {
        var n = 0
        for i in 0..<(width * height) {
            let (r, g, b) = pixel(i)
            if abs(r - colour.0) <= tolerance && abs(g - colour.1) <= tolerance && abs(b - colour.2) <= tolerance { n += 1 }
        }
        return n
    }
}
