import Foundation

/// Nights are dated in the system's zone, the one `date` shows. Foundation reads TZ its own way:
/// ":Asia/Tokyo", ":/usr/share/zoneinfo/Asia/Tokyo" and ":/etc/localtime" (advised with
/// systemd, to spare a stat per call) read as UTC; a POSIX rule such as "JST-9" as UTC, and
/// "UTC-3" three hours behind where the C library puts it three ahead. Every night recorded or
/// analysed so was dated hours off, with no word. `TimeZone.current` keeps what it first finds,
/// so this runs before anything asks for it.
enum ProcessZone {
    /// Rewrites TZ into a zone name Foundation reads as the C library does; a warning when only
    /// the present offset could be kept (a POSIX rule, whose daylight-saving changes are lost).
    static func adoptTheSystemsZone() -> String? {
        guard let value = ProcessInfo.processInfo.environment["TZ"], !value.isEmpty else { return nil }
        var name = value.hasPrefix(":") ? String(value.dropFirst()) : value
        if name.hasPrefix("/") {
            let resolved = URL(fileURLWithPath: name).resolvingSymlinksInPath().path
            if let zoneinfo = resolved.range(of: "/zoneinfo/") {
                name = String(resolved[zoneinfo.upperBound...])
            } else if name == "/etc/localtime" {
                unsetenv("TZ")  // Foundation reads the system's zone from there itself
                return nil
            }
        }
        let offset = systemOffsetNow()
        if let zone = TimeZone(identifier: name), zone.secondsFromGMT() == offset {
            if name != value { setenv("TZ", name, 1) }
            return nil
        }
        let sign = offset < 0 ? "-" : "+", size = abs(offset)
        let fixed = String(format: "%@%02d%02d", sign, size / 3600, size % 3600 / 60)
        setenv("TZ", "GMT" + fixed, 1)
        return "TZ='\(value)' is not a time zone Somni can follow, so nights are dated at the system's present offset, "
            + "\(fixed.prefix(3)):\(fixed.suffix(2)), with no daylight-saving changes; set TZ to a zone's name, such as Europe/Berlin"
    }

    /// Seconds east of UTC now, as the C library reads TZ (what `date` shows).
    private static func systemOffsetNow() -> Int {
        var now = time(nil)
        var local = tm()
        guard localtime_r(&now, &local) != nil else { return 0 }
        return Int(local.tm_gmtoff)
    }
}
