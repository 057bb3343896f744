/* crud-objectbox: the CRUD workload (docs/crud-workload.md) on ObjectBox 5.3.2's C core, run on this
 * machine, so that Cellar's `crud` can be set beside it in the same session (compare.sh) rather than
 * beside fixed anchors.
 *
 *   lib=$(Benchmarks/peers/objectbox/fetch.sh); dir=$(dirname "$lib")
 *   gcc -O2 -std=c11 -Wall -Werror -o crud-objectbox Benchmarks/peers/objectbox/crud-objectbox.c \
 *       -L"$dir" -lobjectbox -Wl,-rpath,"$dir"
 *   ./crud-objectbox [--n N] [--runs R] [--dir PARENT]
 *
 * Per run: a fresh database in a new folder under PARENT (default /var/tmp; tmpfs is refused), the
 * steps a b bget c d e e2 e2find e3 f g in one process, every check after the timers (a failed one
 * exits 1). Output on stdout, as `crud --format tsv` writes it: `objectbox<TAB>step<TAB>n<TAB>
 * ops_per_s<TAB>seconds` (the median of the runs' seconds), then `objectbox size_after_a n bytes 0`
 * and `objectbox size_after_d n bytes 0` (medians). Progress goes to stderr.
 *
 * The library ships without a header: what is used of its C API is declared in objectbox-peer.h.
 *
 * Setup, as the workload's peers section has it: entity `Note` (id 1) with properties 1…6 (id: Long,
 * ID; title, text: String; creationDate, modificationDate: Date; author: Long, INDEXED|UNSIGNED with
 * index id 1), a 16 GiB maximum database size, every commit durable (ObjectBox's default). An object
 * is the workload's 200-byte FlatBuffers table (the layout of Benchmarks/Sources/crud/FlatNote.swift),
 * built inside the timers from strings built before them; fields are read back through a generic
 * table reader (a vtable lookup per field).
 *
 * How each step is driven:
 *   a       one write transaction (obx_txn_write); per object: build the bytes with id 0 and
 *           obx_box_put_object, which hands out the id and writes it into the bytes
 *   b       one read transaction; obx_box_get per id in the workload's random order; the title's length
 *   bget    the same, every field read into a C struct (the two strings copied out of the stored
 *           bytes, as an app that keeps the object past the transaction must)
 *   c       one read transaction; obx_cursor_first/next; Σ creationDate, ids checked ascending
 *   d       one write transaction; every object rebuilt (modificationDate + 60 s) and obx_box_put
 *   e       obx_query_count of `author == 42` (built once, before the timer) 100 times; each call
 *           runs its own read transaction
 *   e2      obx_query_visit 100 times, each hit's title length read
 *   e2find  100 times: a read transaction, obx_query_find, every field of every hit read into an
 *           array of C structs, the result freed, the transaction closed
 *   e3      obx_query_find_ids 100 times; the 100 id arrays are checked (sorted first: the API leaves
 *           their order open; a note on stderr says if it was not ascending) and freed after the timer
 *   f       1,000 obx_box_put calls outside any explicit transaction (ids 1…1000, modificationDate +
 *           120 s): each one its own durable write transaction
 *   g       obx_box_remove_all (one write transaction)
 */
#define PEER_NAME "crud-objectbox"
#include "objectbox-peer.h"

/* ---- the workload ------------------------------------------------------------------------------ */

enum { QUERIES = 100, MAX_RUNS = 99 };
enum { ENTITY = 1, P_ID = 1, P_TITLE, P_TEXT, P_CREATED, P_MODIFIED, P_AUTHOR };
/* FlatBuffers slots: property id − 1. */
enum { S_ID = 0, S_TITLE, S_TEXT, S_CREATED, S_MODIFIED, S_AUTHOR };

static const int64_t BASE_MS = 1700000000000LL;
static const char *LOREM = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.";

static long n;
static char (*titles)[21];   /* object i at i − 1, NUL-terminated */
static char (*texts)[101];
static uint64_t *perm;       /* step b's order */

static int64_t created_ms(uint64_t i) { return BASE_MS + 1000 * (int64_t)i; }
static uint64_t author_of(uint64_t i) { return (i - 1) % 100 + 1; }
static long commits(void) { return n < 1000 ? n : 1000; }
static long hits(void) { return n >= 42 ? (n - 42) / 100 + 1 : 0; }


/* ---- the object's bytes ----------------------------------------------------------------------- */

/* The workload's table, as in Benchmarks/Sources/crud/FlatNote.swift: root uoffset (0..<4), vtable
 * (4..<20: size 16, table size 44, six field offsets), table at 20 (soffset to the vtable, then id,
 * creationDate, modificationDate, author as 8-byte scalars at 24…55, the strings' uoffsets at 56 and
 * 60), then the strings (u32 length, bytes, NUL, zero padding to 4). 200 bytes for 20 + 100. */

static size_t put_string(uint8_t *b, size_t at, const char *s, size_t length) {
    put32(b, at, (uint32_t)length);
    memcpy(b + at + 4, s, length);
    size_t end = at + 4 + length, next = (end + 1 + 3) & ~(size_t)3;
    memset(b + end, 0, next - end);
    return next;
}

static size_t build(uint8_t *b, uint64_t id, const char *title, size_t title_length, const char *text, size_t text_length,
                    int64_t created, int64_t modified, uint64_t author) {
    static const uint16_t offsets[6] = {4, 36, 40, 12, 20, 28};
    put32(b, 0, 20);
    put16(b, 4, 16);
    put16(b, 6, 44);
    for (int slot = 0; slot < 6; slot++) put16(b, 8 + 2 * (size_t)slot, offsets[slot]);
    put32(b, 20, 16);
    put64(b, 24, id);
    put64(b, 32, (uint64_t)created);
    put64(b, 40, (uint64_t)modified);
    put64(b, 48, author);
    size_t text_at = put_string(b, 64, title, title_length);
    put32(b, 56, 64 - 56);
    put32(b, 60, (uint32_t)(text_at - 60));
    return put_string(b, text_at, text, text_length);
}

/* Object i's bytes with this id and modificationDate, into b (at least 256 bytes). */
static size_t build_note(uint8_t *b, uint64_t i, uint64_t id, int64_t modified) {
    return build(b, id, titles[i - 1], 20, texts[i - 1], 100, created_ms(i), modified, author_of(i));
}

/* The generic reader: where a slot's field sits (NULL: absent or out of bounds). */
static uint32_t get32(const uint8_t *b, size_t at) { uint32_t v; memcpy(&v, b + at, 4); return v; }
static uint16_t get16(const uint8_t *b, size_t at) { uint16_t v; memcpy(&v, b + at, 2); return v; }

static inline const uint8_t *field(const uint8_t *b, size_t size, int slot, size_t width) {
    if (size < 4) return NULL;
    size_t table = get32(b, 0);
    if (table + 4 > size) return NULL;
    int32_t soffset;
    memcpy(&soffset, b + table, 4);
    int64_t vtable = (int64_t)table - soffset;
    if (vtable < 0 || (size_t)vtable + 4 > size) return NULL;
    size_t entry = 4 + 2 * (size_t)slot;
    if (entry + 2 > get16(b, (size_t)vtable) || (size_t)vtable + entry + 2 > size) return NULL;
    size_t offset = get16(b, (size_t)vtable + entry);
    if (offset == 0 || table + offset + width > size) return NULL;
    return b + table + offset;
}

static inline bool read_u64(const void *data, size_t size, int slot, uint64_t *out) {
    const uint8_t *f = field(data, size, slot, 8);
    if (!f) return false;
    memcpy(out, f, 8);
    return true;
}

/* A string field: its bytes and length (false: absent or out of bounds). */
static inline bool read_string(const void *data, size_t size, int slot, const char **out, uint32_t *length) {
    const uint8_t *b = data, *f = field(b, size, slot, 4);
    if (!f) return false;
    size_t at = (size_t)(f - b) + get32(f, 0);
    if (at + 4 > size) return false;
    uint32_t count = get32(b, at);
    if (at + 4 + count > size) return false;
    *out = (const char *)b + at + 4;
    *length = count;
    return true;
}

static inline uint32_t title_length(const void *data, size_t size) {
    const char *s;
    uint32_t length;
    return read_string(data, size, S_TITLE, &s, &length) ? length : 0;
}

/* An object as an app holds it: every field, the strings copied out of the stored bytes. */
typedef struct {
    uint64_t id, author;
    int64_t creation_date, modification_date;
    uint32_t title_length, text_length;
    char title[32];
    char text[128];
} Note;

/* Reads every field of a stored object into *note; false if one is missing or too long. */
static inline bool read_note(const void *data, size_t size, Note *note) {
    const char *title, *text;
    uint64_t created, modified;
    if (!read_u64(data, size, S_ID, &note->id) || !read_string(data, size, S_TITLE, &title, &note->title_length) ||
        !read_string(data, size, S_TEXT, &text, &note->text_length) || !read_u64(data, size, S_CREATED, &created) ||
        !read_u64(data, size, S_MODIFIED, &modified) || !read_u64(data, size, S_AUTHOR, &note->author) ||
        note->title_length >= sizeof note->title || note->text_length >= sizeof note->text) return false;
    memcpy(note->title, title, note->title_length);
    note->title[note->title_length] = 0;
    memcpy(note->text, text, note->text_length);
    note->text[note->text_length] = 0;
    note->creation_date = (int64_t)created;
    note->modification_date = (int64_t)modified;
    return true;
}

/* ---- one run ------------------------------------------------------------------------------------ */

enum { A, B, BGET, C, D, E, E2, E2FIND, E3, F, G, STEPS };
static const char *step_names[STEPS] = {"a", "b", "bget", "c", "d", "e", "e2", "e2find", "e3", "f", "g"};

typedef struct {
    double seconds[STEPS];
    long long size_after_a, size_after_d;
} Result;

static OBX_store *open_store(const char *dir) {
    OBX_model *model = must(obx_model(), "obx_model");
    static const obx_uid entity_uid = 0x4E6F7465A1B2C301ULL, index_uid = 0x4E6F7465A1B2C3F1ULL;
    static const struct { const char *name; int type; uint32_t flags; } properties[6] = {
        {"id", TYPE_LONG, FLAG_ID},           {"title", TYPE_STRING, 0},           {"text", TYPE_STRING, 0},
        {"creationDate", TYPE_DATE, 0},       {"modificationDate", TYPE_DATE, 0}, {"author", TYPE_LONG, FLAG_INDEXED | FLAG_UNSIGNED},
    };
    obx_model_entity(model, "Note", ENTITY, entity_uid);
    for (obx_schema_id p = 1; p <= 6; p++) {
        obx_model_property(model, properties[p - 1].name, properties[p - 1].type, p, entity_uid + 0x100 * p);
        if (properties[p - 1].flags) obx_model_property_flags(model, properties[p - 1].flags);
        if (p == P_AUTHOR) obx_model_property_index_id(model, 1, index_uid);
    }
    obx_model_entity_last_property_id(model, 6, entity_uid + 0x600);
    obx_model_last_entity_id(model, ENTITY, entity_uid);
    obx_model_last_index_id(model, 1, index_uid);
    return open_with_model(model, dir);
}

/* Every object read back in id order: ids 1…N and each modificationDate as expected. */
static void check_modification_dates(OBX_store *store, const char *step, bool after_f) {
    OBX_txn *txn = must(obx_txn_read(store), "obx_txn_read");
    OBX_cursor *cursor = must(obx_cursor(txn, ENTITY), "obx_cursor");
    const void *data;
    size_t size;
    long k = 0;
    obx_err rc;
    for (rc = obx_cursor_first(cursor, &data, &size); rc == OBX_SUCCESS; rc = obx_cursor_next(cursor, &data, &size)) {
        k++;
        uint64_t id = 0, modified = 0;
        read_u64(data, size, S_ID, &id);
        read_u64(data, size, S_MODIFIED, &modified);
        int64_t expected = created_ms((uint64_t)k) + (after_f && k <= commits() ? 120000 : 60000);
        check(id == (uint64_t)k, step, "ids 1...N in order", (long long)id);
        check((int64_t)modified == expected, step, "modificationDate as expected", (long long)modified);
    }
    check(rc == OBX_NOT_FOUND, step, "cursor ends with NOT_FOUND", rc);
    check(k == n, step, "N objects read back", k);
    obx_cursor_close(cursor);
    obx_txn_close(txn);
}

typedef struct { long hits, title_bytes; } Visit;

static bool visit_hit(const void *data, size_t size, void *user_data) {
    Visit *v = user_data;
    v->hits++;
    v->title_bytes += title_length(data, size);
    return true;
}

static int compare_ids(const void *x, const void *y) {
    obx_id a = *(const obx_id *)x, b = *(const obx_id *)y;
    return (a > b) - (a < b);
}

static Result run(const char *dir) {
    Result r = {{0}, 0, 0};
    OBX_store *store = open_store(dir);
    OBX_box *box = must(obx_box(store, ENTITY), "obx_box");
    uint8_t buffer[256] __attribute__((aligned(8)));
    const void *data;
    size_t size;
    double t;

    /* a: N new objects in one write transaction; the store hands out ids 1…N. */
    long wrong_ids = 0;
    t = now();
    OBX_txn *txn = must(obx_txn_write(store), "obx_txn_write");
    for (long i = 1; i <= n; i++) {
        size_t length = build_note(buffer, (uint64_t)i, 0, created_ms((uint64_t)i));
        obx_id id = obx_box_put_object(box, buffer, length);
        if (id == 0) die("obx_box_put_object");
        wrong_ids += id != (obx_id)i;
    }
    ok(obx_txn_success(txn), "obx_txn_success");
    r.seconds[A] = now() - t;
    check(wrong_ids == 0, "a", "ids handed out 1...N in order", wrong_ids);
    check(build_note(buffer, 1, 1, 0) == 200, "a", "the object is 200 bytes", (long long)build_note(buffer, 1, 1, 0));
    uint64_t count = 0;
    ok(obx_box_count(box, 0, &count), "obx_box_count");
    check(count == (uint64_t)n, "a", "box count == N", (long long)count);
    r.size_after_a = folder_bytes(dir);

    /* b: one read transaction, every object by id in the random order, the title's length. */
    long found = 0, title_bytes = 0;
    t = now();
    txn = must(obx_txn_read(store), "obx_txn_read");
    for (long k = 0; k < n; k++) {
        obx_err rc = obx_box_get(box, perm[k], &data, &size);
        if (rc == OBX_NOT_FOUND) continue;
        ok(rc, "obx_box_get");
        found++;
        title_bytes += title_length(data, size);
    }
    obx_txn_close(txn);
    r.seconds[B] = now() - t;
    check(found == n, "b", "every object found", found);
    check(title_bytes == 20 * n, "b", "sum of title lengths == 20 N", title_bytes);

    /* bget: the same, every field of every object read into a Note. */
    long unread = 0, mismatched = 0, text_bytes = 0;
    found = title_bytes = 0;
    Note note;
    t = now();
    txn = must(obx_txn_read(store), "obx_txn_read");
    for (long k = 0; k < n; k++) {
        obx_err rc = obx_box_get(box, perm[k], &data, &size);
        if (rc == OBX_NOT_FOUND) continue;
        ok(rc, "obx_box_get");
        if (!read_note(data, size, &note)) { unread++; continue; }
        found++;
        title_bytes += note.title_length;
        text_bytes += note.text_length;
        mismatched += note.id != perm[k] || note.author != author_of(perm[k]) || note.creation_date != created_ms(perm[k]) ||
                      note.modification_date != note.creation_date || note.title[19] != titles[perm[k] - 1][19];
    }
    obx_txn_close(txn);
    r.seconds[BGET] = now() - t;
    check(unread == 0, "bget", "every object's fields read", unread);
    check(found == n, "bget", "every object found", found);
    check(title_bytes == 20 * n, "bget", "sum of title lengths == 20 N", title_bytes);
    check(text_bytes == 100 * n, "bget", "sum of text lengths == 100 N", text_bytes);
    check(mismatched == 0, "bget", "every object's fields as put", mismatched);

    /* c: one read transaction, every object in id order, Σ creationDate. */
    long scanned = 0;
    bool ordered = true;
    uint64_t sum = 0;
    t = now();
    txn = must(obx_txn_read(store), "obx_txn_read");
    OBX_cursor *cursor = must(obx_cursor(txn, ENTITY), "obx_cursor");
    obx_err rc;
    for (rc = obx_cursor_first(cursor, &data, &size); rc == OBX_SUCCESS; rc = obx_cursor_next(cursor, &data, &size)) {
        uint64_t id = 0, created = 0;
        scanned++;
        read_u64(data, size, S_ID, &id);
        read_u64(data, size, S_CREATED, &created);
        if (id != (uint64_t)scanned) ordered = false;
        sum += created;
    }
    if (rc != OBX_NOT_FOUND) die("obx_cursor_next");
    obx_cursor_close(cursor);
    obx_txn_close(txn);
    r.seconds[C] = now() - t;
    uint64_t un = (uint64_t)n, triangle = un % 2 == 0 ? (un / 2) * (un + 1) : un * ((un + 1) / 2);
    uint64_t expected_sum = un * (uint64_t)BASE_MS + 1000 * triangle;
    check(scanned == n, "c", "scanned N objects", scanned);
    check(ordered, "c", "ids ascending 1...N", 0);
    check(sum == expected_sum, "c", "sum of creationDate == closed form", (long long)sum);

    /* d: one write transaction, every object rebuilt with modificationDate = creationDate + 60 s. */
    t = now();
    txn = must(obx_txn_write(store), "obx_txn_write");
    for (long i = 1; i <= n; i++) {
        size_t length = build_note(buffer, (uint64_t)i, (uint64_t)i, created_ms((uint64_t)i) + 60000);
        ok(obx_box_put(box, (obx_id)i, buffer, length), "obx_box_put");
    }
    ok(obx_txn_success(txn), "obx_txn_success");
    r.seconds[D] = now() - t;
    check_modification_dates(store, "d", false);
    r.size_after_d = folder_bytes(dir);

    /* The query, built once, outside the timers. */
    OBX_query_builder *qb = must(obx_query_builder(store, ENTITY), "obx_query_builder");
    obx_qb_equals_int(qb, P_AUTHOR, 42);
    OBX_query *query = must(obx_query(qb), "obx_query");
    obx_qb_close(qb);
    long expected_hits = hits();

    /* e: count, 100 times (each call its own read transaction). */
    uint64_t counts[QUERIES];
    t = now();
    for (int q = 0; q < QUERIES; q++) ok(obx_query_count(query, &counts[q]), "obx_query_count");
    r.seconds[E] = now() - t;
    for (int q = 0; q < QUERIES; q++) check(counts[q] == (uint64_t)expected_hits, "e", "count == N / 100", (long long)counts[q]);

    /* e2: visit every hit, its title's length, 100 times. */
    Visit visits[QUERIES];
    t = now();
    for (int q = 0; q < QUERIES; q++) {
        visits[q] = (Visit){0, 0};
        ok(obx_query_visit(query, visit_hit, &visits[q]), "obx_query_visit");
    }
    r.seconds[E2] = now() - t;
    for (int q = 0; q < QUERIES; q++) {
        check(visits[q].hits == expected_hits, "e2", "hits visited == N / 100", visits[q].hits);
        check(visits[q].title_bytes == 20 * expected_hits, "e2", "sum of title lengths == 20 hits", visits[q].title_bytes);
    }

    /* e2find: find every hit and read each into a Note, 100 times. */
    Visit finds[QUERIES];
    long wrong_author = 0, unread_hits = 0;
    t = now();
    for (int q = 0; q < QUERIES; q++) {
        txn = must(obx_txn_read(store), "obx_txn_read");
        OBX_bytes_array *found_objects = must(obx_query_find(query), "obx_query_find");
        Note *notes = malloc((found_objects->count ? found_objects->count : 1) * sizeof *notes);
        if (!notes) { perror("malloc"); exit(1); }
        finds[q] = (Visit){(long)found_objects->count, 0};
        for (size_t h = 0; h < found_objects->count; h++) {
            if (!read_note(found_objects->bytes[h].data, found_objects->bytes[h].size, &notes[h])) { unread_hits++; continue; }
            finds[q].title_bytes += notes[h].title_length;
            wrong_author += notes[h].author != 42;
        }
        free(notes);
        obx_bytes_array_free(found_objects);
        obx_txn_close(txn);
    }
    r.seconds[E2FIND] = now() - t;
    check(unread_hits == 0, "e2find", "every hit's fields read", unread_hits);
    check(wrong_author == 0, "e2find", "every hit has author 42", wrong_author);
    for (int q = 0; q < QUERIES; q++) {
        check(finds[q].hits == expected_hits, "e2find", "hits == N / 100", finds[q].hits);
        check(finds[q].title_bytes == 20 * expected_hits, "e2find", "sum of title lengths == 20 hits", finds[q].title_bytes);
    }

    /* e3: the hits' ids, 100 times; the arrays are checked and freed after the timer. */
    OBX_id_array *lists[QUERIES];
    t = now();
    for (int q = 0; q < QUERIES; q++) lists[q] = must(obx_query_find_ids(query), "obx_query_find_ids");
    r.seconds[E3] = now() - t;
    long unordered = 0;
    for (int q = 0; q < QUERIES; q++) {
        check(lists[q]->count == (size_t)expected_hits, "e3", "ids found == N / 100", (long long)lists[q]->count);
        for (size_t h = 0; h + 1 < lists[q]->count; h++) unordered += lists[q]->ids[h] > lists[q]->ids[h + 1];
        qsort(lists[q]->ids, lists[q]->count, sizeof(obx_id), compare_ids);
        for (size_t h = 0; h < lists[q]->count; h++) {
            check(lists[q]->ids[h] == 42 + 100 * h, "e3", "ids == 42, 142, 242, ...", (long long)lists[q]->ids[h]);
        }
        obx_id_array_free(lists[q]);
    }
    if (unordered) fprintf(stderr, "crud-objectbox: note: e3's ids came unordered (%ld inversions); checked as a set\n", unordered);

    /* f: 1,000 durable write transactions, each updating one object. */
    t = now();
    for (long i = 1; i <= commits(); i++) {
        size_t length = build_note(buffer, (uint64_t)i, (uint64_t)i, created_ms((uint64_t)i) + 120000);
        ok(obx_box_put(box, (obx_id)i, buffer, length), "obx_box_put");
    }
    r.seconds[F] = now() - t;
    check_modification_dates(store, "f", true);

    /* g: remove all in one write transaction. */
    uint64_t removed = 0;
    t = now();
    ok(obx_box_remove_all(box, &removed), "obx_box_remove_all");
    r.seconds[G] = now() - t;
    check(removed == (uint64_t)n, "g", "removed N", (long long)removed);
    ok(obx_box_count(box, 0, &count), "obx_box_count");
    check(count == 0, "g", "box empty", (long long)count);
    ok(obx_query_count(query, &count), "obx_query_count");
    check(count == 0, "g", "no hits for author == 42 left", (long long)count);

    obx_query_close(query);
    ok(obx_store_close(store), "obx_store_close");
    return r;
}

/* ---- main -------------------------------------------------------------------------------------- */

static double median(double *xs, int count) {
    qsort(xs, (size_t)count, sizeof *xs, compare_doubles);
    return count % 2 ? xs[count / 2] : (xs[count / 2 - 1] + xs[count / 2]) / 2;
}

static long ops(int step) {
    switch (step) {
    case E: case E2: case E2FIND: case E3: return QUERIES;
    case F: return commits();
    default: return n;
    }
}

static void usage(void) {
    fprintf(stderr, "usage: crud-objectbox [--n N] [--runs R] [--dir PARENT]\n"
                    "  --n     objects (default 100000)\n"
                    "  --runs  runs, each on a fresh database; medians are printed (default 1, at most %d)\n"
                    "  --dir   where each run's database folder is made (default /var/tmp; not tmpfs)\n", MAX_RUNS);
    exit(2);
}

int main(int argc, char **argv) {
    long runs = 1;
    const char *parent = "/var/tmp";
    n = 100000;
    for (int a = 1; a < argc; a++) {
        if (a + 1 < argc && strcmp(argv[a], "--n") == 0) n = atol(argv[++a]);
        else if (a + 1 < argc && strcmp(argv[a], "--runs") == 0) runs = atol(argv[++a]);
        else if (a + 1 < argc && strcmp(argv[a], "--dir") == 0) parent = argv[++a];
        else usage();
    }
    if (n < 1 || n > 999999999 || runs < 1 || runs > MAX_RUNS) usage();

    make_disk_folder(parent);

    /* The objects' strings and the random order, before any timer. */
    titles = malloc(sizeof *titles * (size_t)n);
    texts = malloc(sizeof *texts * (size_t)n);
    perm = malloc(sizeof *perm * (size_t)n);
    if (!titles || !texts || !perm) { perror("malloc"); return 1; }
    for (long i = 1; i <= n; i++) {
        char digits[9];  /* i in 9 digits, zero-padded (n ≤ 999,999,999) */
        for (long v = i, d = 8; d >= 0; d--, v /= 10) digits[d] = (char)('0' + v % 10);
        memcpy(titles[i - 1], "Note title ", 11);
        memcpy(titles[i - 1] + 11, digits, 9);
        titles[i - 1][20] = 0;
        memcpy(texts[i - 1], "Body ", 5);
        memcpy(texts[i - 1] + 5, digits, 9);
        texts[i - 1][14] = ' ';
        memcpy(texts[i - 1] + 15, LOREM, 85);
        texts[i - 1][100] = 0;
    }
    check(strlen(titles[0]) == 20 && strlen(texts[0]) == 100, "setup", "strings of 20 and 100 bytes", (long long)strlen(texts[0]));
    uint64_t s = 42;
    for (long k = 0; k < n; k++) perm[k] = (uint64_t)k + 1;
    for (long k = n - 1; k >= 1; k--) {
        s += 0x9E3779B97F4A7C15ULL;
        uint64_t z = s;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        z ^= z >> 31;
        uint64_t j = z % (uint64_t)(k + 1), swap = perm[k];
        perm[k] = perm[j];
        perm[j] = swap;
    }

    fprintf(stderr, "crud-objectbox: ObjectBox %s, N=%ld, runs=%ld, databases under %s\n", obx_version_string(), n, runs, parent);
    static Result results[MAX_RUNS];
    for (long k = 0; k < runs; k++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/crud-objectbox-XXXXXX", parent);
        if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
        results[k] = run(dir);
        remove_tree(dir);
        fprintf(stderr, "run %ld/%ld objectbox:", k + 1, runs);
        for (int step = 0; step < STEPS; step++) fprintf(stderr, " %s %.0f", step_names[step], (double)ops(step) / results[k].seconds[step]);
        fprintf(stderr, "\n");
    }

    double xs[MAX_RUNS];
    for (int step = 0; step < STEPS; step++) {
        for (long k = 0; k < runs; k++) xs[k] = results[k].seconds[step];
        double seconds = median(xs, (int)runs);
        printf("objectbox\t%s\t%ld\t%.1f\t%.6f\n", step_names[step], n, (double)ops(step) / seconds, seconds);
    }
    for (long k = 0; k < runs; k++) xs[k] = (double)results[k].size_after_a;
    printf("objectbox\tsize_after_a\t%ld\t%.0f\t0\n", n, median(xs, (int)runs));
    for (long k = 0; k < runs; k++) xs[k] = (double)results[k].size_after_d;
    printf("objectbox\tsize_after_d\t%ld\t%.0f\t0\n", n, median(xs, (int)runs));
    return 0;
}
