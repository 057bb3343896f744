import Foundation

/// About 5,000 English words (some with accents: `café`, `Düsseldorf`), one per line in the
/// resource `words.txt`, for full-text tests and benchmarks. `scripts/make-word-list.sh` derives
/// the file from Debian's wamerican word list; it is committed, so reading it needs nothing
/// installed.
public enum WordList {
    /// The words, in the file's order (alphabetical, capitalized words first).
    public static let words: [String] = {
        guard let url = Bundle.module.url(forResource: "words", withExtension: "txt"),
              let text = try? String(contentsOf: url, encoding: .utf8)
        else { fatalError("the resource words.txt of CellarTestSupport is missing") }
        return text.split(separator: "\n").map(String.init)
    }()
}
