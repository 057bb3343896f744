import Foundation

/// st_size of `path`; 0 if it does not exist.
func fileBytes(_ path: String) -> Int {
    var st = stat()
    return stat(path, &st) == 0 ? Int(st.st_size) : 0
}
