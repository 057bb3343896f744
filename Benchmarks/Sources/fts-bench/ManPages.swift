import BenchSupport
import Foundation

/// The real-text corpus: paragraphs of the English man pages installed on the machine, as plain
/// lowercase words.
///
/// The pages are the `*.gz` files directly in the section folders `/usr/share/man/man*` (the
/// translations in `/usr/share/man/<language>/` are left out), regular files only (a symbolic
/// link names a page already read, or one outside the folder), in the byte order of their paths.
/// They are decompressed by one `gzip -dc` for all of them. Each page is rendered to text by a
/// small roff reader (`RoffReader`), which is cheap and deterministic, not groff: requests are
/// dropped except the text of the macros that carry it, escapes are dropped or read as a space.
/// The text is cut into paragraphs (blank lines, `.PP`, `.SH`, `.TP`, … and mdoc's `.Pp`, `.Sh`,
/// `.It`, …), and each paragraph is normalised (`normalise`): its ASCII letters and digits are
/// kept, lowercased, every other character separates words, words over 64 bytes are dropped (Cellar
/// neither indexes nor searches them, FTS5 would count them), and the words are joined by single
/// spaces. A paragraph of at least `minWords` such words is a document. So the documents keep the
/// pages' real vocabulary, their paragraphs' real lengths and which words occur together, but not
/// their punctuation, case or non-ASCII letters; and both engines' tokenizers and the workload's
/// reference index split them into exactly the same words.
enum ManPages {
    static let root = "/usr/share/man"
    static let minWords = 8
    /// The longest word kept, in bytes: Cellar's longest token.
    static let maxWordBytes = 64
    /// Part of the cache's name: change it whenever the rendering changes, so that an old cache is
    /// never read.
    static let renderVersion = 1

    struct Rendered {
        /// Pages read (regular `.gz` files).
        var pages: Int
        /// Every document of every page, in page order then paragraph order.
        var documents: [String]
    }

    /// Every document, from the cache in `cacheFolder` when one matches the installed pages (their
    /// paths, sizes and modification times, and `renderVersion`), else rendered and cached there.
    static func load(cacheFolder: String) throws -> Rendered {
        let pages = try pagePaths()
        guard !pages.isEmpty else { throw BenchError("no man pages in \(root)/man*/ (install man-db and manpages)") }
        var hash = Fnv1a()
        hash.add("fts-bench man pages, rendering \(renderVersion)\n")
        for path in pages {
            var st = stat()
            guard stat(path, &st) == 0 else { throw BenchError("cannot stat \(path)") }
            hash.add("\(path) \(st.st_size) \(st.st_mtim.tv_sec)\n")
        }
        let cache = cacheFolder + "/fts-bench-man-" + String(hash.value, radix: 16) + ".txt"
        if let data = FileManager.default.contents(atPath: cache) {
            let lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            if let first = lines.first, let count = Int(String(decoding: first, as: UTF8.self)), lines.count == count + 2, lines.last!.isEmpty {
                log("fts-bench: the man pages' documents read from the cache \(cache)")
                return Rendered(pages: pages.count, documents: lines[1...count].map { String(decoding: $0, as: UTF8.self) })
            }
        }
        let start = now()
        let texts = try decompress(pages, scratch: cacheFolder)
        var reader = RoffReader()
        for text in texts { reader.read(page: text) }
        log(String(format: "fts-bench: %d man pages rendered in %.1f s (%.1f MB of roff), %d documents; cached in %@",
                   pages.count, now() - start, Double(texts.reduce(0) { $0 + $1.count }) / 1e6, reader.documents.count, cache))
        var out = "\(reader.documents.count)\n"
        for document in reader.documents { out += document + "\n" }
        let temporary = cache + ".part"
        if FileManager.default.createFile(atPath: temporary, contents: Data(out.utf8)) { _ = rename(temporary, cache) }
        return Rendered(pages: pages.count, documents: reader.documents)
    }

    /// The regular `.gz` files directly in `root`'s `man*` folders, in byte order.
    static func pagePaths() throws -> [String] {
        let fm = FileManager.default
        var paths: [String] = []
        for section in try fm.contentsOfDirectory(atPath: root) where section.hasPrefix("man") {
            let folder = root + "/" + section
            guard let names = try? fm.contentsOfDirectory(atPath: folder) else { continue }
            for name in names where name.hasSuffix(".gz") {
                var st = stat()
                let path = folder + "/" + name
                if lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG { paths.append(path) }
            }
        }
        return paths.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// Each page's roff, decompressed by one `gzip -dc` reading all of them: a small gzip member
    /// holding `separator` goes before each page, and the output is cut at the separators.
    static func decompress(_ paths: [String], scratch: String) throws -> [ArraySlice<UInt8>] {
        let folder = try makeTemporaryFolder(in: scratch, prefix: "fts-bench-man")
        defer { removeTree(folder) }
        let input = folder + "/pages.gz", output = folder + "/pages"
        var stream = Data()
        let mark = gzipStored(separator)
        for path in paths {
            guard let page = FileManager.default.contents(atPath: path) else { throw BenchError("cannot read \(path)") }
            stream.append(contentsOf: mark)
            stream.append(page)
        }
        guard FileManager.default.createFile(atPath: input, contents: stream),
              FileManager.default.createFile(atPath: output, contents: nil),
              let stdin = FileHandle(forReadingAtPath: input), let stdout = FileHandle(forWritingAtPath: output)
        else { throw BenchError("cannot write in \(folder)") }
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        gzip.arguments = ["gzip", "-dc"]
        gzip.standardInput = stdin
        gzip.standardOutput = stdout
        try gzip.run()
        gzip.waitUntilExit()
        try stdin.close()
        try stdout.close()
        guard gzip.terminationStatus == 0, let data = FileManager.default.contents(atPath: output) else {
            throw BenchError("gzip -dc of the man pages failed (exit \(gzip.terminationStatus))")
        }
        let bytes = [UInt8](data)
        var pages: [ArraySlice<UInt8>] = []
        var from = -1, i = 0
        let first = separator[0]
        while i + separator.count <= bytes.count {
            if bytes[i] == first && bytes[i..<(i + separator.count)].elementsEqual(separator) {
                if from >= 0 { pages.append(bytes[from..<i]) }
                i += separator.count
                from = i
            } else {
                i += 1
            }
        }
        if from >= 0 { pages.append(bytes[from...]) }
        try check("man pages: one text per page after gzip -dc", pages.count == paths.count, "\(pages.count) texts, \(paths.count) pages")
        return pages
    }

    /// What goes between two pages in gzip's output: control characters that no page holds.
    static let separator: [UInt8] = [0x01, 0x02] + Array("fts-bench page".utf8) + [0x02, 0x01]

    /// `bytes` as a gzip member of one stored (uncompressed) deflate block.
    static func gzipStored(_ bytes: [UInt8]) -> [UInt8] {
        precondition(bytes.count < 0xFFFF)
        var member: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF]  // magic, deflate, no flags, no time, unknown OS
        let length = UInt16(bytes.count)
        member += [1, UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)]  // final, stored
        member += bytes
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        crc = ~crc
        for value in [crc, UInt32(bytes.count)] {
            member += [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF), UInt8((value >> 16) & 0xFF), UInt8(value >> 24)]
        }
        return member
    }

    /// `text`'s ASCII letters (lowercased) and digits as words joined by single spaces, words over
    /// `maxWordBytes` dropped; every other byte separates words. Returns the words' count.
    static func normalise(_ text: [UInt8], into out: inout [UInt8]) -> Int {
        func isWordByte(_ c: UInt8) -> Bool { (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A) || (c >= 0x30 && c <= 0x39) }
        out.removeAll(keepingCapacity: true)
        var words = 0, i = 0
        while i < text.count {
            while i < text.count && !isWordByte(text[i]) { i += 1 }
            let start = i
            while i < text.count && isWordByte(text[i]) { i += 1 }
            if i == start || i - start > maxWordBytes { continue }
            if words > 0 { out.append(0x20) }
            for c in text[start..<i] { out.append(c >= 0x41 && c <= 0x5A ? c + 0x20 : c) }
            words += 1
        }
        return words
    }
}

/// FNV-1a, 64 bits: the cache's name.
struct Fnv1a {
    var value: UInt64 = 0xCBF2_9CE4_8422_2325
    mutating func add(_ text: String) {
        for byte in text.utf8 { value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
    }
}

/// Renders roff (man and mdoc macros) to paragraphs of text, cheaply: not groff, but every word
/// it keeps is one of the page's.
///
/// - A line starting with `.` or `'` is a request or a macro. The text of the macros that carry
///   it is kept: `.SH`, `.SS` (each its own paragraph), `.B`, `.I`, `.BR`, `.BI`, `.IB`, `.IR`,
///   `.RB`, `.RI`, `.SM`, `.SB`, `.OP`, `.SY`, `.IP`'s tag (its first argument), and mdoc's
///   (a name of an upper-case letter and one or two lower-case ones: `.Nm`, `.Fl`, `.Ar`, …,
///   their arguments without the names of other mdoc macros); every other request is dropped,
///   and so are macro definitions (`.de` … `..`, `.ig` … `..`) and tables, equations and
///   pictures (`.TS` … `.TE`, `.EQ` … `.EN`, `.PS` … `.PE`).
/// - Paragraphs end at a blank line, at `.PP`, `.P`, `.LP`, `.TP`, `.IP`, `.HP`, `.sp`, `.SH`,
///   `.SS`, mdoc's `.Pp`, `.Lp`, `.Sh`, `.Ss`, `.It`, `.Bl`, `.El`, `.Bd`, `.Ed`, and at the end of
///   the page.
/// - Escapes: `\-` is `-`; font and size changes (`\f?`, `\f(xx`, `\f[…]`, `\s±n`), registers and
///   arguments (`\n`, `\$`, …), zero-width escapes (`\&`, `\%`, `\|`, `\^`, `\c`, …) and
///   escapes with a delimited argument (`\w'…'`, `\h'…'`, …) are dropped; special characters and
///   strings (`\(xx`, `\[…]`, `\*x`, `\*(xx`, `\*[…]`), `\e`, `\ `, `\~` and `\0` read as a space;
///   `\"` and `\#` start a comment.
struct RoffReader {
    private(set) var documents: [String] = []
    private var paragraph: [UInt8] = []
    private var normalised: [UInt8] = []
    /// Inside a block that is skipped: the macro name (or `..`) that ends it.
    private var skipUntil: [UInt8]?

    private static func names(_ list: String) -> Set<[UInt8]> { Set(list.split(separator: " ").map { Array($0.utf8) }) }
    private static let breaks = names("PP P LP TP IP HP sp Pp Lp It Bl El Bd Ed")
    private static let headings = names("SH SS Sh Ss")
    private static let textMacros = names("B I BR BI IB IR RB RI SM SB OP SY")
    private static let mdocDropped = names("Dd Dt Os Bl El Bd Ed Bk Ek Bf Ef Rs Re Db Ns Pp Lp It Ud Bt Sm")
    private static let mdocCallable = names(
        "Ac Ad An Ao Ap Aq Ar At Bc Bo Bq Brc Bro Brq Bsx Bx Cd Cm Dc Do Dq Dv Dx Ec Em En Eo Er Es Ev Fa Fc Fl Fn Fo Fr Ft Fx "
            + "Ic In Lb Li Lk Ms Mt Nm No Ns Nx Oc Oo Op Ox Pa Pc Pf Po Pq Qc Ql Qo Qq Sc So Sq St Sx Sy Ta Tn Ux Va Vt Xc Xo Xr")
    private static let blocks: [[UInt8]: [UInt8]] = [
        Array("de".utf8): Array("..".utf8), Array("de1".utf8): Array("..".utf8), Array("am".utf8): Array("..".utf8),
        Array("ig".utf8): Array("..".utf8), Array("TS".utf8): Array("TE".utf8), Array("EQ".utf8): Array("EN".utf8),
        Array("PS".utf8): Array("PE".utf8),
    ]

    mutating func read(page: ArraySlice<UInt8>) {
        skipUntil = nil
        var lineStart = page.startIndex
        while lineStart < page.endIndex {
            let lineEnd = page[lineStart...].firstIndex(of: 0x0A) ?? page.endIndex
            line(page[lineStart..<lineEnd])
            lineStart = lineEnd + 1
        }
        endParagraph()
    }

    private mutating func line(_ line: ArraySlice<UInt8>) {
        let control = line.first == UInt8(ascii: ".") || line.first == UInt8(ascii: "'")
        if let end = skipUntil {
            if control && (end == Array("..".utf8) ? line.starts(with: end) : Self.name(of: line).name.elementsEqual(end)) {
                skipUntil = nil
            }
            return
        }
        if !control {
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { endParagraph() } else { text(line) }
            return
        }
        let (nameSlice, rest) = Self.name(of: line)
        let name = Array(nameSlice)
        if let end = Self.blocks[name] {
            skipUntil = end
        } else if Self.headings.contains(name) {
            endParagraph()
            arguments(rest, mdoc: name[1] >= 0x61, firstOnly: false)
            endParagraph()
        } else if Self.breaks.contains(name) {
            endParagraph()
            if name == Array("IP".utf8) { arguments(rest, mdoc: false, firstOnly: true) }
            if name == Array("It".utf8) { arguments(rest, mdoc: true, firstOnly: false) }
        } else if Self.textMacros.contains(name) {
            arguments(rest, mdoc: false, firstOnly: false)
        } else if (2...3).contains(name.count) && name[0] >= 0x41 && name[0] <= 0x5A && name.dropFirst().allSatisfy({ $0 >= 0x61 && $0 <= 0x7A })
                    && !Self.mdocDropped.contains(name) {
            arguments(rest, mdoc: true, firstOnly: false)
        }
    }

    /// A control line's macro name (after the control character and blanks, up to a blank or a
    /// backslash) and what follows it.
    private static func name(of line: ArraySlice<UInt8>) -> (name: ArraySlice<UInt8>, rest: ArraySlice<UInt8>) {
        var i = line.index(after: line.startIndex)
        while i < line.endIndex && (line[i] == 0x20 || line[i] == 0x09) { i += 1 }
        var j = i
        while j < line.endIndex && line[j] != 0x20 && line[j] != 0x09 && line[j] != UInt8(ascii: "\\") { j += 1 }
        return (line[i..<j], line[j...])
    }

    /// A macro's arguments as text: split at blanks outside double quotes (`""` inside quotes is a
    /// quote), up to a comment; only the first with `firstOnly`; mdoc's macro names dropped.
    private mutating func arguments(_ rest: ArraySlice<UInt8>, mdoc: Bool, firstOnly: Bool) {
        var i = rest.startIndex
        while i < rest.endIndex {
            while i < rest.endIndex && (rest[i] == 0x20 || rest[i] == 0x09) { i += 1 }
            if i == rest.endIndex { break }
            var argument: [UInt8] = []
            /// Copies the character at `i` (an escape with the character it escapes) into the
            /// argument and moves past it; false at a comment (`\"`), which ends the line.
            func copyCharacter(_ i: inout ArraySlice<UInt8>.Index) -> Bool {
                if rest[i] == UInt8(ascii: "\\") && i + 1 < rest.endIndex {
                    if rest[i + 1] == UInt8(ascii: "\"") { i = rest.endIndex; return false }
                    argument.append(rest[i])
                    i += 1
                }
                argument.append(rest[i])
                i += 1
                return true
            }
            if rest[i] == UInt8(ascii: "\"") {
                i += 1
                while i < rest.endIndex {
                    if rest[i] == UInt8(ascii: "\"") {
                        if i + 1 < rest.endIndex && rest[i + 1] == UInt8(ascii: "\"") { argument.append(rest[i]); i += 2; continue }
                        i += 1
                        break
                    }
                    if !copyCharacter(&i) { break }
                }
            } else {
                while i < rest.endIndex && rest[i] != 0x20 && rest[i] != 0x09 {
                    if !copyCharacter(&i) { break }
                }
            }
            if !(mdoc && Self.mdocCallable.contains(argument)) { text(argument[...]) }
            if firstOnly { break }
        }
    }

    /// Appends a line of text to the paragraph, escapes read, then a space.
    private mutating func text(_ line: ArraySlice<UInt8>) {
        var i = line.startIndex
        let end = line.endIndex
        /// Skips a name after an escape: `(xx`, `[…]`, or one character.
        func skipName() {
            guard i < end else { return }
            if line[i] == UInt8(ascii: "(") {
                i = min(end, i + 3)
            } else if line[i] == UInt8(ascii: "[") {
                i = (line[i...].firstIndex(of: UInt8(ascii: "]")) ?? end - 1) + 1
            } else {
                i += 1
            }
        }
        while i < end {
            let c = line[i]
            i += 1
            guard c == UInt8(ascii: "\\") else { paragraph.append(c); continue }
            guard i < end else { break }  // a line continued on the next
            let e = line[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "#"):
                i = end
            case UInt8(ascii: "-"):
                paragraph.append(UInt8(ascii: "-"))
            case UInt8(ascii: "f"), UInt8(ascii: "F"), UInt8(ascii: "n"), UInt8(ascii: "g"), UInt8(ascii: "k"), UInt8(ascii: "m"),
                 UInt8(ascii: "M"), UInt8(ascii: "V"), UInt8(ascii: "Y"), UInt8(ascii: "$"):
                if e == UInt8(ascii: "n"), i < end, line[i] == UInt8(ascii: "+") || line[i] == UInt8(ascii: "-") { i += 1 }
                skipName()
            case UInt8(ascii: "("), UInt8(ascii: "["):
                i -= 1
                skipName()
                paragraph.append(0x20)
            case UInt8(ascii: "*"):
                skipName()
                paragraph.append(0x20)
            case UInt8(ascii: "s"):
                if i < end, line[i] == UInt8(ascii: "+") || line[i] == UInt8(ascii: "-") { i += 1 }
                if i < end, line[i] == UInt8(ascii: "(") || line[i] == UInt8(ascii: "[") {
                    skipName()
                } else if i < end, line[i] == UInt8(ascii: "'") {
                    i = (line[(i + 1)...].firstIndex(of: UInt8(ascii: "'")) ?? end - 1) + 1
                } else if i < end, line[i] >= 0x30 && line[i] <= 0x39 {
                    i += 1
                }
            case UInt8(ascii: "w"), UInt8(ascii: "h"), UInt8(ascii: "v"), UInt8(ascii: "l"), UInt8(ascii: "L"), UInt8(ascii: "o"),
                 UInt8(ascii: "X"), UInt8(ascii: "Z"), UInt8(ascii: "D"), UInt8(ascii: "b"), UInt8(ascii: "x"), UInt8(ascii: "N"),
                 UInt8(ascii: "C"), UInt8(ascii: "A"), UInt8(ascii: "B"), UInt8(ascii: "R"), UInt8(ascii: "S"), UInt8(ascii: "H"):
                // A delimited argument: up to the same delimiter again.
                if i < end {
                    let delimiter = line[i]
                    i = (line[(i + 1)...].firstIndex(of: delimiter) ?? end - 1) + 1
                }
                if e == UInt8(ascii: "C") || e == UInt8(ascii: "N") { paragraph.append(0x20) }
            case UInt8(ascii: "e"), UInt8(ascii: "\\"), UInt8(ascii: " "), UInt8(ascii: "~"), UInt8(ascii: "0"), UInt8(ascii: "'"),
                 UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "^"), UInt8(ascii: "t"):
                paragraph.append(0x20)
            case UInt8(ascii: "&"), UInt8(ascii: "%"), UInt8(ascii: ":"), UInt8(ascii: "/"), UInt8(ascii: ","), UInt8(ascii: ")"),
                 UInt8(ascii: "c"), UInt8(ascii: "d"), UInt8(ascii: "u"), UInt8(ascii: "p"), UInt8(ascii: "r"), UInt8(ascii: "a"),
                 UInt8(ascii: "z"), UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: "E"):
                break
            default:
                paragraph.append(e)
            }
        }
        paragraph.append(0x20)
    }

    private mutating func endParagraph() {
        if paragraph.isEmpty { return }
        if ManPages.normalise(paragraph, into: &normalised) >= ManPages.minWords {
            documents.append(String(decoding: normalised, as: UTF8.self))
        }
        paragraph.removeAll(keepingCapacity: true)
    }
}
