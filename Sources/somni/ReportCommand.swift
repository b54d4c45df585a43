import Foundation
import SomniCore
import SomniReport
import SomniStore

struct ReportCommand: Command {
    static let name = "report"
    static let summary = "Write the morning report: a self-contained HTML page for one night or all"
    static let help = """
    Usage: somni report [NIGHT|FOLDER|--all [--from DATE] [--to DATE] [--details N]] [-o FILE] [--clips copy|embed|link] [--store DIR]

    Writes one HTML page that opens in any browser and loads nothing from any network: summary
    numbers, events per hour, the night timeline, the 10-second ribbon, and every event with a
    player and a waveform you can drag (each class can be hidden, and the list put most severe
    first). With --all, trends across nights come first. Without NIGHT,
    the latest night. FOLDER is a night folder outside the store (from 'somni analyze --out').

      --all            trends and the list of every night in the store, and the latest nights in full
    \(NightRange.help(column: 19))
      --details N      with --all: how many of the latest nights to show in full (default 7)
      -o FILE          the page to write (default: somni-report.html; -: standard output,
                       its clips embedded)
      --clips HOW      copy: clips copied into FILE's name + "_clips/" beside the page, linked
                       relatively (default; move the page and that folder together)
                       embed: clips inside the page as data: URIs (one larger file that works anywhere)
                       link: relative links to the clips where they are now (nothing copied; the
                       page breaks if it or the store moves); used automatically when the page is
                       written inside the store or the night folder
    \(StoreOptions.help(column: 19))
    """

    var options: StoreOptions
    var key: String?
    var all: Bool
    var output: String
    var clips: String
    /// `-o -`: the page to standard output, its clips inside it.
    var toStandardOutput: Bool { output == "-" }
    var details: Int
    var detailsGiven: Bool
    var range: NightRange

    init(_ a: inout Arguments) throws {
        options = try StoreOptions(&a, command: Self.name, acceptsJSON: false)
        all = a.flag("--all")
        output = try a.fileOption("-o") ?? "somni-report.html"
        clips = try a.option("--clips") ?? (output == "-" ? "embed" : "copy")
        let givenDetails = try a.option("--details", as: Int.self)
        (details, detailsGiven) = (givenDetails ?? 7, givenDetails != nil)
        range = try NightRange(&a)
        key = a.positional()
    }

    func validate() throws {
        if all && key != nil { throw UsageError("give a NIGHT or --all, not both") }
        if range.isGiven, !all { throw UsageError("--from and --to go with --all") }
        if detailsGiven, !all { throw UsageError("--details goes with --all: one night's page shows it in full") }
        guard details >= 0 else { throw UsageError("--details must be 0 or more, not \(details)") }
        guard ["copy", "embed", "link"].contains(clips) else {
            throw UsageError("--clips must be copy, embed or link, not '\(clips)'")
        }
        if toStandardOutput, clips != "embed" {
            throw UsageError("-o - writes the page to standard output, where only --clips embed can give it its clips")
        }
        // A device or a pipe has no folder beside it for the clips (-o /dev/stdout made /dev/stdout_clips).
        if !toStandardOutput, OutputFile.isDevice(URL(fileURLWithPath: output)), clips != "embed" {
            throw UsageError("-o \(output) is not a plain file: a page written into it can have its clips only with --clips embed")
        }
    }

    /// Which of two nights is the earlier for "the latest": by start, an undated night the
    /// oldest, then by when each was added.
    static func isEarlier(_ a: NightRecord, _ b: NightRecord) -> Bool {
        (a.start ?? .distantPast, a.addedAt, a.id) < (b.start ?? .distantPast, b.addedAt, b.id)
    }

    func run() throws {
        // Through a link, the page lands at its target, and its clips go beside it there (beside
        // the link, the page's players found nothing).
        // A device by name (/dev/stdout) is written into as the shell set it up (`>> page.html`
        // appends): not followed to the file behind it, which was replaced.
        let given = URL(fileURLWithPath: output)
        let page = toStandardOutput || OutputFile.isDevice(given) ? given.standardizedFileURL : OutputFile.followingLinks(given)
        if !toStandardOutput { try options.refuseOverwritingTheStore(page) }
        let pageDirectory = page.deletingLastPathComponent()
        // Said before any night is read, whatever --clips: copying clips made a missing folder,
        // so -o new/r.html worked for a night with clips and failed for one without.
        if !toStandardOutput, !OutputFile.isDevice(given) {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: page.path, isDirectory: &isFolder), isFolder.boolValue {
                throw SomniError(.io, "cannot write \(page.path): it is a folder; give -o a file's name, such as \(page.path)/report.html")
            }
            guard FileManager.default.fileExists(atPath: pageDirectory.path, isDirectory: &isFolder), isFolder.boolValue else {
                throw SomniError(.io, "cannot write \(page.path): there is no folder \(pageDirectory.path)")
            }
        }
        var sources: [(id: String, folder: URL)] = []
        var storeDirectory: URL?
        var trends: [TrendNight]?
        var leftOut: [String] = []  // with --all, the nights that could not be given in full
        var openedStore: NightStore?
        if let key, FileManager.default.fileExists(atPath: URL(fileURLWithPath: key).appendingPathComponent(Session.fileName).path) {
            let folder = URL(fileURLWithPath: key, isDirectory: true).standardizedFileURL
            sources = [(folder.lastPathComponent, folder)]
        } else {
            let store = try options.open()
            openedStore = store
            storeDirectory = store.directory.standardizedFileURL
            let records: [NightRecord]
            if all {
                let every = range.filter(try store.nights())
                trends = every.map { TrendNight(record: $0) }
                // The latest in full, as a report of no NIGHT takes the latest: an undated night
                // counts as the oldest (the store lists it last, as its time is not known).
                // Shown in the store's order, as the trends and the nights table list them.
                let latest = Set(every.sorted(by: Self.isEarlier).suffix(details).map(\.id))
                records = every.filter { latest.contains($0.id) }
            } else if let key {
                do { records = [try store.night(matching: key)] } catch {
                    // A folder meant as a night folder is named as one, not looked for as an id.
                    var isFolder: ObjCBool = false
                    guard FileManager.default.fileExists(atPath: key, isDirectory: &isFolder), isFolder.boolValue else { throw error }
                    throw SomniError(.badInput, "\(key) is not a night folder: it has no \(Session.fileName) "
                                     + "(and no night in the store has that id)")
                }
            } else {
                guard let latest = try store.nights().max(by: Self.isEarlier) else {
                    throw SomniError(.badInput, "the store \(store.directory.path) has no nights yet")
                }
                records = [latest]
            }
            guard !records.isEmpty || !(trends ?? []).isEmpty else {
                if range.isGiven {
                    throw SomniError(.badInput, "no dated night \(range.span) in \(store.directory.path); "
                                     + "'somni nights' lists them")
                }
                throw SomniError(.badInput, "the store \(store.directory.path) has no nights yet")
            }
            // With --all, a night whose folder is lost is left out of the nights in full with a
            // word (its numbers stay in the trends, from the store), not the whole page with it.
            sources = try records.compactMap { record in
                do { return (record.id, try store.existingFolder(of: record)) } catch is NightStore.NightGone where all {
                    return nil  // deleted by another somni since the nights were listed
                } catch where all {
                    printError("somni report: warning: night \(record.id) is left out: \(error)")
                    leftOut.append(record.id)
                    return nil
                }
            }
        }

        let linking: ClipLinking
        let insideNights = ([storeDirectory].compactMap { $0 } + sources.map(\.folder)).contains {
            pageDirectory.path == $0.path || pageDirectory.path.hasPrefix($0.path + "/")
        }
        let clipsFolder = pageDirectory.appendingPathComponent(page.deletingPathExtension().lastPathComponent + "_clips")
        switch clips {
        case "embed": linking = .embedded
        case "link": linking = .relative(reportDirectory: pageDirectory)
        default:
            linking = insideNights ? .relative(reportDirectory: pageDirectory)
                : .copied(into: clipsFolder, reportDirectory: pageDirectory)
        }
        // A report that fails (a full disk) leaves no clips folder it made behind without its page.
        // Anything there, a link that leads nowhere too, is the user's and stays.
        let clipsFolderWasThere = (try? FileManager.default.attributesOfItem(atPath: clipsFolder.path)) != nil
        // What is there before anything is copied is never marked as the report's, so never tidied.
        let clipsBefore = CopiedClips.existing(in: clipsFolder)
        // The page by its real path: another folder's page of the same name (through a linked
        // clips folder) is another page.
        let pageIdentity = pageDirectory.resolvingSymlinksInPath().appendingPathComponent(page.lastPathComponent).path
        // Ctrl-C (a TERM, a HUP) on the way leaves no more than a failure does.
        let madeHere: [URL] = if case .copied = linking, !clipsFolderWasThere { [clipsFolder] } else { [] }
        if !toStandardOutput { RemovedOnInterrupt.shared.watch(folders: madeHere) }
        defer { if !toStandardOutput { RemovedOnInterrupt.shared.end() } }
        let nights: [ReportNight]
        do {
            // With --all, a night whose folder cannot be read (a damaged session.json) is left
            // out as a lost one is, not the whole page with it.
            let readable = try sources.compactMap { source -> (id: String, folder: URL, session: Session)? in
                do { return (source.id, source.folder, try ReportNight.session(in: source.folder)) } catch where all {
                    printError("somni report: warning: night \(source.id) is left out: \(error)")
                    leftOut.append(source.id)
                    return nil
                }
            }
            // A night deleted by another somni while its clips were copied is left out, as one
            // deleted before would have been: the whole page failed on its clip.
            nights = try readable.compactMap { night in
                do { return try ReportNight.load(id: night.id, folder: night.folder, session: night.session, clips: linking) } catch {
                    // With --all, a night whose clips are not its own files is left out as a damaged one is.
                    if all, let refused = error as? SomniError, refused.code == .badInput {
                        printError("somni report: warning: night \(night.id) is left out: \(refused)")
                        leftOut.append(night.id)
                        return nil
                    }
                    guard all, let store = openedStore, (try? store.isStored(id: night.id)) == false else { throw error }
                    // Its clips copied so far go with it.
                    if case .copied(let into, _) = linking { try? FileManager.default.removeItem(at: into.appendingPathComponent(night.id)) }
                    return nil
                }
            }
            for n in nights where !n.missingClips.isEmpty {
                printError("somni report: warning: night \(n.id) is missing \(n.missingClips.count) clip(s), e.g. \(n.missingClips[0])")
            }
            for n in nights { if let problem = n.envelopeProblem { printError("somni report: warning: night \(n.id): \(problem)") } }
            if case .copied(let into, _) = linking {
                CopiedClips.mark(nights, page: pageIdentity, existingBefore: clipsBefore, in: into)
            }
            let html = NightReport.html(nights: nights, trends: trends)
            if toStandardOutput {
                print(html, terminator: "")
                StandardStreams.flushOutput()
            } else {
                do { try writeOutputFile(Data(html.utf8), to: page) } catch {
                    throw SomniError(.io, "cannot write \(page.path)", cause: error)
                }
                // The page written again no longer plays a deleted night's clips: they go too.
                if case .copied(let into, _) = linking { CopiedClips.prune(into, page: pageIdentity, keeping: nights) }
            }
        } catch {
            if case .copied = linking, !clipsFolderWasThere { try? FileManager.default.removeItem(at: clipsFolder) }
            throw error
        }
        let what = trends.map { "trends over \($0.count) night\($0.count == 1 ? "" : "s"), \(nights.count) in full" }
            ?? "\(nights.count) night\(nights.count == 1 ? "" : "s")"
        // A page cut short on standard output is said once, by the end of main, with exit 74.
        guard StandardStreams.outputFailure == nil else { return }
        if toStandardOutput { printError("Wrote the page to standard output (\(what))") } else { print("Wrote \(page.path) (\(what))") }
        // The page is written, and the exit says it is not whole: a cron job reading only the
        // status took it for every night.
        if !leftOut.isEmpty {
            // 65 whatever the nights' trouble, as export: 74 is a page that could not be written.
            throw SomniError(.badInput, "\(leftOut.count) night\(leftOut.count == 1 ? "" : "s") "
                             + "left out of the page in full (named above); the rest is written")
        }
    }
}
