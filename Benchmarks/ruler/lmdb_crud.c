/* The check of crud's LMDB ruler: steps a, b, c, d, e and e3 of docs/crud-workload.md on LMDB from C, with
 * the object bytes of Sources/crud/FlatNote.swift, to compare with `crud --engines lmdb` (Swift
 * driving the same LMDB calls) on the same machine. If the two agree, the Swift driver adds
 * nothing and crud's "lmdb now/then" measures the machine, not the driver.
 *
 *   cc -O2 -o /tmp/lmdb_crud Benchmarks/ruler/lmdb_crud.c -llmdb && /tmp/lmdb_crud 100000 /tmp/folder
 *
 * The folder must exist and be empty (on disk, not tmpfs). Prints `lmdb-c<TAB>step<TAB>n<TAB>ops/s`.
 */
#include <lmdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void check(int rc, const char *what) {
    if (rc != 0) { fprintf(stderr, "%s: %s\n", what, mdb_strerror(rc)); exit(1); }
}

static uint64_t be64(uint64_t v) { return __builtin_bswap64(v); }

static const char *lorem = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.";

/* The strings, built before any timer. */
static char (*titles)[21];
static char (*texts)[101];

static size_t pad4(size_t n) { return (n + 3) & ~(size_t)3; }

/* FlatNote.swift's layout: root uoffset, 16-byte vtable, table at 20, strings at 64. */
static size_t build(uint8_t *b, uint64_t id, const char *title, const char *text, int64_t created, int64_t modified, uint64_t author) {
    static const uint16_t offsets[6] = {4, 36, 40, 12, 20, 28};
    uint32_t u32; uint16_t u16; int32_t s32; uint64_t u64;
    u32 = 20; memcpy(b, &u32, 4);
    u16 = 16; memcpy(b + 4, &u16, 2);
    u16 = 44; memcpy(b + 6, &u16, 2);
    memcpy(b + 8, offsets, 12);
    s32 = 16; memcpy(b + 20, &s32, 4);
    memcpy(b + 24, &id, 8);
    u64 = (uint64_t)created; memcpy(b + 32, &u64, 8);
    u64 = (uint64_t)modified; memcpy(b + 40, &u64, 8);
    memcpy(b + 48, &author, 8);
    size_t at = 64;
    const char *strings[2] = {title, text};
    size_t lengths[2] = {20, 100};
    for (int s = 0; s < 2; s++) {
        u32 = (uint32_t)(at - (56 + 4 * s)); memcpy(b + 56 + 4 * s, &u32, 4);
        u32 = (uint32_t)lengths[s]; memcpy(b + at, &u32, 4);
        memcpy(b + at + 4, strings[s], lengths[s]);
        size_t end = at + 4 + lengths[s], next = pad4(end + 1);
        memset(b + end, 0, next - end);
        at = next;
    }
    return at;
}

/* The generic table reader: a vtable lookup per field. */
static const uint8_t *field(const uint8_t *b, int slot) {
    uint32_t table; int32_t soff; uint16_t vsize, off;
    memcpy(&table, b, 4);
    memcpy(&soff, b + table, 4);
    const uint8_t *vt = b + table - soff;
    memcpy(&vsize, vt, 2);
    if (4 + 2 * slot + 2 > vsize) return NULL;
    memcpy(&off, vt + 4 + 2 * slot, 2);
    return off ? b + table + off : NULL;
}
static uint64_t read_u64(const uint8_t *b, int slot) { uint64_t v = 0; const uint8_t *f = field(b, slot); if (f) memcpy(&v, f, 8); return v; }
static uint32_t string_length(const uint8_t *b, int slot) {
    const uint8_t *f = field(b, slot); uint32_t o, n;
    if (!f) return 0;
    memcpy(&o, f, 4); memcpy(&n, f + o, 4);
    return n;
}

static MDB_env *env;
static MDB_dbi notes, idx;
static uint8_t buffer[512];

static void put(MDB_txn *txn, uint64_t i, int64_t modified) {
    uint64_t author = (i - 1) % 100 + 1;
    int64_t created = 1700000000000LL + 1000 * (int64_t)i;
    size_t length = build(buffer, i, titles[i - 1], texts[i - 1], created, modified, author);
    uint64_t k = be64(i);
    MDB_val key = {8, &k}, old, value = {length, buffer};
    int found = mdb_get(txn, notes, &key, &old);
    if (found != MDB_NOTFOUND) check(found, "mdb_get");
    check(mdb_put(txn, notes, &key, &value, 0), "mdb_put");
    if (found == 0) {
        uint64_t oldAuthor = read_u64(old.mv_data, 5);
        if (oldAuthor == author) return;
        uint64_t stale[2] = {be64(oldAuthor), be64(i)};
        MDB_val sk = {16, stale};
        check(mdb_del(txn, idx, &sk, NULL), "mdb_del");
    }
    uint64_t entry[2] = {be64(author), be64(i)};
    MDB_val ek = {16, entry}, empty = {0, NULL};
    check(mdb_put(txn, idx, &ek, &empty, 0), "mdb_put idx");
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: lmdb_crud N FOLDER\n"); return 2; }
    long n = atol(argv[1]);
    if (n < 100 || n > 999999999) { fprintf(stderr, "N must be in 100...999999999\n"); return 2; }
    titles = malloc(sizeof *titles * n);
    texts = malloc(sizeof *texts * n);
    for (long i = 1; i <= n; i++) {
        char title[40], body[40];
        snprintf(title, sizeof title, "Note title %09ld", i % 1000000000);
        memcpy(titles[i - 1], title, 21);
        snprintf(body, sizeof body, "Body %09ld ", i % 1000000000);
        memcpy(texts[i - 1], body, 15); memcpy(texts[i - 1] + 15, lorem, 85); texts[i - 1][100] = 0;
    }
    uint64_t *perm = malloc(sizeof *perm * (size_t)n), s = 42;
    for (long k = 0; k < n; k++) perm[k] = k + 1;
    for (long k = n - 1; k >= 1; k--) {
        s += 0x9E3779B97F4A7C15ULL; uint64_t z = s;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL; z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL; z ^= z >> 31;
        long j = z % (uint64_t)(k + 1); uint64_t t = perm[k]; perm[k] = perm[j]; perm[j] = t;
    }
    check(mdb_env_create(&env), "env_create");
    check(mdb_env_set_mapsize(env, 16UL << 30), "mapsize");
    check(mdb_env_set_maxdbs(env, 4), "maxdbs");
    check(mdb_env_open(env, argv[2], 0, 0644), "env_open");
    MDB_txn *txn;
    check(mdb_txn_begin(env, NULL, 0, &txn), "begin");
    check(mdb_dbi_open(txn, "notes", MDB_CREATE, &notes), "dbi");
    check(mdb_dbi_open(txn, "author_idx", MDB_CREATE, &idx), "dbi");
    check(mdb_txn_commit(txn), "commit");

    double t = now();
    check(mdb_txn_begin(env, NULL, 0, &txn), "begin");
    for (long i = 1; i <= n; i++) put(txn, i, 1700000000000LL + 1000 * i);
    check(mdb_txn_commit(txn), "commit");
    printf("lmdb-c\ta\t%ld\t%.1f\n", n, n / (now() - t));

    t = now();
    check(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), "begin");
    long titleBytes = 0;
    for (long k = 0; k < n; k++) {
        uint64_t key = be64(perm[k]); MDB_val mk = {8, &key}, mv;
        check(mdb_get(txn, notes, &mk, &mv), "get");
        titleBytes += string_length(mv.mv_data, 1);
    }
    mdb_txn_abort(txn);
    printf("lmdb-c\tb\t%ld\t%.1f\n", n, n / (now() - t));
    if (titleBytes != 20 * n) { fprintf(stderr, "b: title bytes %ld\n", titleBytes); return 1; }

    t = now();
    check(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), "begin");
    MDB_cursor *cursor; MDB_val mk, mv;
    check(mdb_cursor_open(txn, notes, &cursor), "cursor");
    int64_t sum = 0; long scanned = 0;
    for (int rc = mdb_cursor_get(cursor, &mk, &mv, MDB_FIRST); rc == 0; rc = mdb_cursor_get(cursor, &mk, &mv, MDB_NEXT)) {
        sum += (int64_t)read_u64(mv.mv_data, 3); scanned++;
    }
    mdb_cursor_close(cursor); mdb_txn_abort(txn);
    printf("lmdb-c\tc\t%ld\t%.1f\n", n, n / (now() - t));
    if (scanned != n || sum != n * 1700000000000LL + 1000 * n * (n + 1) / 2) { fprintf(stderr, "c: wrong\n"); return 1; }

    t = now();
    check(mdb_txn_begin(env, NULL, 0, &txn), "begin");
    for (long i = 1; i <= n; i++) put(txn, i, 1700000000000LL + 1000 * i + 60000);
    check(mdb_txn_commit(txn), "commit");
    printf("lmdb-c\td\t%ld\t%.1f\n", n, n / (now() - t));

    for (int mode = 0; mode < 2; mode++) {
        long total = 0;
        t = now();
        for (int q = 0; q < 100; q++) {
            check(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), "begin");
            check(mdb_cursor_open(txn, idx, &cursor), "cursor");
            uint64_t from[2] = {be64(42), 0};
            mk.mv_size = 16; mk.mv_data = from;
            long count = 0, capacity = 64; int64_t *ids = mode ? malloc(8 * capacity) : NULL;
            for (int rc = mdb_cursor_get(cursor, &mk, &mv, MDB_SET_RANGE); rc == 0; rc = mdb_cursor_get(cursor, &mk, &mv, MDB_NEXT)) {
                uint64_t a; memcpy(&a, mk.mv_data, 8);
                if (be64(a) != 42) break;
                if (mode) {
                    if (count == capacity) { capacity *= 2; ids = realloc(ids, 8 * capacity); }
                    uint64_t id; memcpy(&id, (uint8_t *)mk.mv_data + 8, 8); ids[count] = (int64_t)be64(id);
                }
                count++;
            }
            mdb_cursor_close(cursor); mdb_txn_abort(txn);
            total += count;
            free(ids);
        }
        printf("lmdb-c\t%s\t%ld\t%.1f\n", mode ? "e3" : "e", n, 100 / (now() - t));
        if (total != 100 * (n / 100)) { fprintf(stderr, "e: %ld hits\n", total); return 1; }
    }
    mdb_env_close(env);
    return 0;
}
