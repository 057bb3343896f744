import Foundation

/// Building HTML text: every value from the store or the request goes through `escape` (text and
/// attribute values alike), every URL part through `percentEncode`.
enum HTML {
    /// `text` with `&`, `<`, `>`, `"` and `'` as character references: safe in text and in quoted
    /// attribute values.
    static func escape(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            case "\u{0}": result += "\u{FFFD}"
            default: result.unicodeScalars.append(character)
            }
        }
        return result
    }

    /// `text` percent-encoded but for the unreserved characters (RFC 3986): safe as a path
    /// component and as a query name or value.
    static func percentEncode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    /// A path with a query from `parameters` (nil values left out), each part percent-encoded.
    static func url(_ path: String, _ parameters: [(String, String?)] = []) -> String {
        let query = parameters.compactMap { name, value in value.map { percentEncode(name) + "=" + percentEncode($0) } }
        return query.isEmpty ? path : path + "?" + query.joined(separator: "&")
    }

    /// The parameters of a URL query (`a=1&b=x+y`) as a form submits them: `+` is a space, the
    /// rest percent-decoded. Nil when a part is not valid percent-encoded UTF-8. A name given
    /// twice keeps its first value.
    static func queryParameters(_ query: String?) -> [String: String]? {
        var parameters: [String: String] = [:]
        for part in (query ?? "").split(separator: "&", omittingEmptySubsequences: true) {
            let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ piece: Substring) -> String? { piece.replacingOccurrences(of: "+", with: " ").removingPercentEncoding }
            guard let name = decode(pieces[0]), let value = pieces.count > 1 ? decode(pieces[1]) : "" else { return nil }
            if parameters[name] == nil { parameters[name] = value }
        }
        return parameters
    }

    /// The value of the first parameter `name` of a URL query, decoded; nil when there is none or
    /// it does not decode. Other parameters may be malformed (the page reports those).
    static func queryParameter(_ name: String, in query: String?) -> String? {
        for part in (query ?? "").split(separator: "&") {
            let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pieces[0] == name[...] else { continue }
            return pieces.count > 1 ? pieces[1].replacingOccurrences(of: "+", with: " ").removingPercentEncoding : ""
        }
        return nil
    }

    /// The whole document: the title, the navigation, then `body`.
    static func document(title: String, store: String, body: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <title>\(escape(title)) · cellar browse</title>
        <style>\(style)</style>
        </head>
        <body>
        <header><nav><a href="/" id="nav-entities">Entities</a> <a href="/model" id="nav-model">Model</a> <a href="/health" id="nav-health">Health</a></nav>
        <p class="store">\(escape(store)) · read-only</p></header>
        <main>
        <h1>\(escape(title))</h1>
        \(body)
        </main>
        </body>
        </html>

        """
    }

    /// The page's only styling (inline; the pages run no script at all).
    static let style = """
        body{font:14px/1.45 -apple-system,system-ui,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d1d1f;background:#fafafa}\
        header{background:#2b2d42;color:#eee;padding:8px 20px;display:flex;gap:24px;align-items:baseline}\
        header a{color:#fff;margin-right:16px;text-decoration:none;font-weight:600}header .store{margin:0;color:#bbb;font-size:12px}\
        main{padding:8px 20px 40px}h1{font-size:20px;margin:12px 0}\
        table{border-collapse:collapse;background:#fff;margin:8px 0}th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}\
        th{background:#eef0f4}th a{color:#1d1d1f}td.num{text-align:right;font-variant-numeric:tabular-nums}\
        pre{background:#fff;border:1px solid #ddd;padding:8px;overflow:auto;max-height:70vh}\
        .error{background:#fde8e8;border:1px solid #e0a0a0;color:#8a1f1f;padding:8px 12px;margin:8px 0;white-space:pre-wrap}\
        .note{color:#555;font-size:13px}.pager a{margin-right:12px}form input[type=text]{width:36em;font-family:monospace}\
        .null{color:#999}.muted{color:#777}
        """
}
