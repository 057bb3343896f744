/// What an `Item` takes in ObjectBox's layout: one FlatBuffers table, laid out as `FlatNote` (the crud
/// target) lays out the CRUD workload's Note, with the map as a FlexBuffers value in a byte vector,
/// which is how ObjectBox stores a flex property (type Flex, 13). A lower bound: every padding that
/// depends on where the builder happens to place a vector is counted as 0 (see below).
///
/// | bytes | what |
/// |---|---|
/// | 4 | root uoffset → the table |
/// | 14 | vtable: u16 size, u16 table size, five u16 field offsets (id, title, tags, scores, attributes) |
/// | 2 | padding: the table's soffset is 4-byte aligned |
/// | 4 + 8 + 4 × 4 | the table: soffset to its vtable, id (u64), uoffsets of title, tags, scores, attributes |
/// | pad4(4 + n + 1) | title: u32 length, the bytes, NUL, padding to 4 |
/// | 4 + 4 × count | tags: a vector of uoffsets (u32 count, one u32 per string) |
/// | Σ pad4(4 + n + 1) | each tag as a string, as the title |
/// | 4 + 8 × count | scores: a vector of i64 (u32 count, the numbers); 0 to 4 bytes of alignment padding before it, counted as 0 |
/// | pad4(4 + f) | attributes: a `[ubyte]` vector (u32 length, f bytes of FlexBuffers, padding to 4) |
///
/// f, the FlexBuffers map, at the narrowest byte width (1: every offset and length in it is below
/// 256, checked), as `flexbuffers::Builder` writes a map of strings: each key its bytes and a NUL;
/// each value a string (a 1-byte length, the bytes, a NUL); the keys vector (1-byte count, one
/// 1-byte offset per key); the map (1-byte offset to the keys vector, 1-byte keys width, 1-byte
/// count, one 1-byte offset per value, one type byte per value); the root (1-byte offset, type
/// byte, width byte). The FlatBuffers builder's final alignment of the whole buffer to 8 is not counted either.
enum FlatItem {
    static let fixed = 4 + 14 + 2 + (4 + 8 + 4 * 4)

    static func padded4(_ n: Int) -> Int { (n + 3) & ~3 }
    static func string(_ bytes: Int) -> Int { padded4(4 + bytes + 1) }

    /// The FlexBuffers bytes of a map from strings to strings at byte width 1.
    static func flexMap(_ map: [String: String]) -> Int {
        var keys = 0, values = 0
        for (key, value) in map {
            keys += key.utf8.count + 1
            values += 1 + value.utf8.count + 1
        }
        let keysVector = 1 + map.count
        let mapVector = 3 + map.count + map.count
        let total = keys + values + keysVector + mapVector + 3
        precondition(total < 256, "the map needs a wider byte width than this estimate assumes")
        return total
    }

    static func size(_ item: Item) -> Int {
        fixed + string(item.title.utf8.count)
            + 4 + 4 * item.tags.count + item.tags.reduce(0) { $0 + string($1.utf8.count) }
            + 4 + 8 * item.scores.count
            + padded4(4 + flexMap(item.attributes))
    }
}
