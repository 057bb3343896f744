/* vector-objectbox: nearest-neighbour search through ObjectBox 5.3.2's HNSW index (its C core), on
 * the same vectors as Cellar's `vector-bench --vectors DIR`, run on this machine so that the two can
 * be set side by side in one session.
 *
 *   lib=$(Benchmarks/peers/objectbox/fetch.sh); dir=$(dirname "$lib")
 *   gcc -O2 -std=c11 -Wall -Werror -o vector-objectbox Benchmarks/peers/objectbox/vector-objectbox.c \
 *       -L"$dir" -lobjectbox -Wl,-rpath,"$dir" -lm
 *   ./vector-objectbox --vectors DIR [--runs R] [--widths 10,16,…] [--dir PARENT]
 *
 * DIR holds base.fvecs and queries.fvecs (per vector: int32 dimension d, then d float32; unit
 * length), as Benchmarks/scripts/embed-man-pages.py writes them; d must be 384. Base vector k
 * (0-based) becomes the object with id k + 1.
 *
 * Setup: entity `Doc` (id 1) with properties id (Long, ID) and embedding (FloatVector, INDEXED) with
 * an HNSW index of 384 dimensions and cosine distance, every other HNSW parameter left at
 * ObjectBox's default (neighborsPerNode 30, indexingSearchCount 100), as Cellar's Doc384 has it; a
 * 16 GiB maximum database size; commits durable (ObjectBox's default).
 *
 * Per run, a fresh database in a new folder under PARENT (default /var/tmp; tmpfs is refused):
 *   insert  the N objects (FlatBuffers tables built inside the timer from the vectors) put in one
 *           write transaction with obx_box_put_object; the HNSW graph is built as they go in
 *   query   one query built before the timer from obx_qb_nearest_neighbors_f32(…, maxResultCount
 *           10); per query vector obx_query_param_vector_float32, then obx_query_find_ids_with_scores
 *           (each call its own read transaction); queries/s over the Q queries, latencies p50/p99
 *   widths  per W of --widths (default 10,16,24,32,40,48,56,64,100,150,200,300): a query with
 *           maxResultCount W and obx_query_limit 10 (the header's advice for using maxResultCount as
 *           the search's ef); queries/s and recall@10, the recall/speed curve
 *   size    the database folder's files after the insert
 * Exact answers: the 10 largest dot products per query over the N vectors (unit length: the
 * smallest cosine distances; ties to the smaller id), computed before any run. recall@10 is the
 * mean over the queries of |found ∩ exact| / 10. Checks (a failed one exits 1): ids 1...N handed
 * out in order, the box holds N objects, every query returns 10 distinct ids in 1...N with scores
 * ascending.
 *
 * Output on stdout, as `vector-bench --format tsv` writes it (medians over the runs):
 * `objectbox insert-d384 n ops_per_s seconds`, `objectbox query-d384 …`, `objectbox query-d384-wW …`,
 * and `label step n value 0` lines: `recall_at_10 d384`, `p50_us d384`, `p99_us d384`,
 * `file_mb_insert d384` (MB = 10^6 bytes), `recall_at_10 d384-wW`. Progress goes to stderr.
 *
 * The library ships without a header: what is used of its C API is declared in objectbox-peer.h.
 */
#define PEER_NAME "vector-objectbox"
#include "objectbox-peer.h"

/* ---- the data ----------------------------------------------------------------------------------- */

enum { K = 10, D = 384, MAX_RUNS = 99, MAX_WIDTHS = 64 };
enum { ENTITY = 1, P_ID = 1, P_EMBEDDING = 2 };

static long n, q;
static float *base, *queries;   /* flat: vector i at i·D */
static obx_id *exact;           /* per query, K ids */

/* An fvecs file's vectors, flat; every one must have D dimensions. */
static float *read_fvecs(const char *path, long *count) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(1); }
    fseek(f, 0, SEEK_END);
    long bytes = ftell(f);
    fseek(f, 0, SEEK_SET);
    long record = 4 + 4 * D;
    if (bytes <= 0 || bytes % record != 0) {
        fprintf(stderr, "vector-objectbox: %s: %ld bytes, not a whole number of %d-dimensional vectors\n", path, bytes, D);
        exit(1);
    }
    *count = bytes / record;
    float *out = malloc(sizeof(float) * D * (size_t)*count);
    if (!out) { perror("malloc"); exit(1); }
    for (long i = 0; i < *count; i++) {
        int32_t d;
        if (fread(&d, 4, 1, f) != 1 || d != D || fread(out + i * D, sizeof(float), D, f) != D) {
            fprintf(stderr, "vector-objectbox: %s: vector %ld is not %d-dimensional\n", path, i, D);
            exit(1);
        }
    }
    fclose(f);
    return out;
}

static float dot(const float *a, const float *b) {
    float s = 0;
    for (int j = 0; j < D; j++) s += a[j] * b[j];
    return s;
}

/* The exact K nearest base vectors (ids, 1-based) to query qi: largest dot products, ties to the smaller id. */
static void exact_nearest(long qi, obx_id *out) {
    float best_dot[K + 1];
    obx_id best_id[K + 1];
    int count = 0;
    const float *v = queries + qi * D;
    for (long i = 0; i < n; i++) {
        float s = dot(v, base + i * D);
        if (count == K && s <= best_dot[K - 1]) continue;
        int at = count;
        while (at > 0 && best_dot[at - 1] < s) {
            best_dot[at] = best_dot[at - 1];
            best_id[at] = best_id[at - 1];
            at--;
        }
        best_dot[at] = s;
        best_id[at] = (obx_id)i + 1;
        if (count < K) count++;
    }
    memcpy(out, best_id, sizeof(obx_id) * K);
}

/* ---- the object's bytes ----------------------------------------------------------------------- */

/* A FlatBuffers table: root uoffset (0..<4), vtable (4..<12: size 8, table size 16, the field
 * offsets 4 and 12), table at 12 (soffset to the vtable, padding, id as 8 bytes at 16, the vector's
 * uoffset at 24), the vector at 28 (u32 count, then the floats from 32). 32 + 4·D bytes. */

static size_t build(uint8_t *b, const float *vector) {
    put32(b, 0, 12);
    put16(b, 4, 8);
    put16(b, 6, 16);
    put16(b, 8, 4);
    put16(b, 10, 12);
    put32(b, 12, 12 - 4);
    put32(b, 16, 0);
    put32(b, 20, 0);
    put32(b, 24, 28 - 24);
    put32(b, 28, D);
    memcpy(b + 32, vector, sizeof(float) * D);
    return 32 + 4 * D;
}

/* ---- one run ------------------------------------------------------------------------------------ */

static int widths[MAX_WIDTHS] = {10, 16, 24, 32, 40, 48, 56, 64, 100, 150, 200, 300};
static int width_count = 12;

typedef struct {
    double insert, query, p50, p99, recall;
    double width_seconds[MAX_WIDTHS], width_recall[MAX_WIDTHS];
    double file_insert;  /* bytes */
} Result;

static OBX_store *open_store(const char *dir) {
    OBX_model *model = must(obx_model(), "obx_model");
    static const obx_uid entity_uid = 0x446F63A1B2C3D401ULL, index_uid = 0x446F63A1B2C3D4F1ULL;
    obx_model_entity(model, "Doc", ENTITY, entity_uid);
    obx_model_property(model, "id", TYPE_LONG, P_ID, entity_uid + 0x100);
    obx_model_property_flags(model, FLAG_ID);
    obx_model_property(model, "embedding", TYPE_FLOAT_VECTOR, P_EMBEDDING, entity_uid + 0x200);
    obx_model_property_flags(model, FLAG_INDEXED);
    obx_model_property_index_hnsw_dimensions(model, D);
    obx_model_property_index_hnsw_distance_type(model, DISTANCE_COSINE);
    obx_model_property_index_id(model, 1, index_uid);
    obx_model_entity_last_property_id(model, P_EMBEDDING, entity_uid + 0x200);
    obx_model_last_entity_id(model, ENTITY, entity_uid);
    obx_model_last_index_id(model, 1, index_uid);
    return open_with_model(model, dir);
}

static double percentile(double *xs, long count, double p) {
    qsort(xs, (size_t)count, sizeof *xs, compare_doubles);
    long at = (long)(p * (double)count + 0.999999999) - 1;
    return xs[at < 0 ? 0 : at >= count ? count - 1 : at];
}

/* Checks the answers (K distinct ids in 1...n, scores ascending) and returns their mean recall@10. */
static double score(OBX_id_score_array **answers, const char *step) {
    double total = 0;
    for (long i = 0; i < q; i++) {
        OBX_id_score_array *a = answers[i];
        check(a->count == K, step, "10 results per query", (long long)a->count);
        int hits = 0;
        for (size_t j = 0; j < a->count; j++) {
            obx_id id = a->ids_scores[j].id;
            check(id >= 1 && id <= (obx_id)n, step, "ids in 1...N", (long long)id);
            check(j == 0 || a->ids_scores[j - 1].score <= a->ids_scores[j].score, step, "scores ascending", (long long)j);
            for (size_t m = 0; m < j; m++) check(a->ids_scores[m].id != id, step, "distinct ids", (long long)id);
            for (int m = 0; m < K; m++) hits += exact[i * K + m] == id;
        }
        total += (double)hits / K;
        obx_id_score_array_free(a);
    }
    return total / (double)q;
}

static OBX_query *nearest_query(OBX_store *store, size_t max_result_count) {
    OBX_query_builder *qb = must(obx_query_builder(store, ENTITY), "obx_query_builder");
    obx_qb_nearest_neighbors_f32(qb, P_EMBEDDING, queries, max_result_count);
    OBX_query *query = must(obx_query(qb), "obx_query");
    ok(obx_qb_close(qb), "obx_qb_close");
    if (max_result_count > K) ok(obx_query_limit(query, K), "obx_query_limit");
    return query;
}

static Result run(const char *dir) {
    Result r;
    memset(&r, 0, sizeof r);
    OBX_store *store = open_store(dir);
    OBX_box *box = must(obx_box(store, ENTITY), "obx_box");
    uint8_t *buffer = aligned_alloc(8, 32 + 4 * D);
    OBX_id_score_array **answers = malloc(sizeof *answers * (size_t)q);
    double *latencies = malloc(sizeof *latencies * (size_t)q);
    if (!buffer || !answers || !latencies) { perror("malloc"); exit(1); }

    /* insert: N objects in one write transaction; the store hands out ids 1…N. */
    long wrong_ids = 0;
    double t = now();
    OBX_txn *txn = must(obx_txn_write(store), "obx_txn_write");
    for (long i = 0; i < n; i++) {
        size_t length = build(buffer, base + i * D);
        obx_id id = obx_box_put_object(box, buffer, length);
        if (id == 0) die("obx_box_put_object");
        wrong_ids += id != (obx_id)i + 1;
    }
    ok(obx_txn_success(txn), "obx_txn_success");
    r.insert = now() - t;
    check(wrong_ids == 0, "insert", "ids handed out 1...N in order", wrong_ids);
    uint64_t count = 0;
    ok(obx_box_count(box, 0, &count), "obx_box_count");
    check(count == (uint64_t)n, "insert", "box count == N", (long long)count);
    r.file_insert = (double)folder_bytes(dir);

    /* query: maxResultCount 10, one query object, the vector set per query. */
    OBX_query *query = nearest_query(store, K);
    t = now();
    for (long i = 0; i < q; i++) {
        double t0 = now();
        ok(obx_query_param_vector_float32(query, ENTITY, P_EMBEDDING, queries + i * D, D), "obx_query_param_vector_float32");
        answers[i] = must(obx_query_find_ids_with_scores(query), "obx_query_find_ids_with_scores");
        latencies[i] = now() - t0;
    }
    r.query = now() - t;
    obx_query_close(query);
    r.recall = score(answers, "query");
    r.p50 = percentile(latencies, q, 0.5);
    r.p99 = percentile(latencies, q, 0.99);

    /* widths: maxResultCount W as the search's ef, the results limited to 10. */
    for (int w = 0; w < width_count; w++) {
        query = nearest_query(store, (size_t)widths[w]);
        t = now();
        for (long i = 0; i < q; i++) {
            ok(obx_query_param_vector_float32(query, ENTITY, P_EMBEDDING, queries + i * D, D), "obx_query_param_vector_float32");
            answers[i] = must(obx_query_find_ids_with_scores(query), "obx_query_find_ids_with_scores");
        }
        r.width_seconds[w] = now() - t;
        obx_query_close(query);
        char step[32];
        snprintf(step, sizeof step, "width %d", widths[w]);
        r.width_recall[w] = score(answers, step);
    }
    ok(obx_store_close(store), "obx_store_close");
    free(buffer);
    free(answers);
    free(latencies);
    return r;
}

static double median(double *xs, int count) {
    qsort(xs, (size_t)count, sizeof *xs, compare_doubles);
    return count % 2 ? xs[count / 2] : (xs[count / 2 - 1] + xs[count / 2]) / 2;
}

static Result results[MAX_RUNS];
static long runs = 1;

/* The median over the runs of the double at this byte offset in a Result. */
static double median_at(size_t offset) {
    double xs[MAX_RUNS];
    for (long k = 0; k < runs; k++) memcpy(&xs[k], (const char *)&results[k] + offset, sizeof(double));
    return median(xs, (int)runs);
}

static void usage(void) {
    fprintf(stderr, "usage: vector-objectbox --vectors DIR [--runs R] [--widths W,…] [--dir PARENT]\n"
                    "  --vectors  a folder with base.fvecs and queries.fvecs (%d dimensions)\n"
                    "  --runs     runs, each on a fresh database; medians are printed (default 1, at most %d)\n"
                    "  --widths   maxResultCount values for the recall/speed curve (default 10,16,24,32,40,48,56,64,100,150,200,300)\n"
                    "  --dir      where each run's database folder is made (default /var/tmp; not tmpfs)\n", D, MAX_RUNS);
    exit(2);
}

int main(int argc, char **argv) {
    const char *parent = "/var/tmp", *vectors = NULL;
    for (int a = 1; a < argc; a++) {
        if (a + 1 < argc && strcmp(argv[a], "--vectors") == 0) vectors = argv[++a];
        else if (a + 1 < argc && strcmp(argv[a], "--runs") == 0) runs = atol(argv[++a]);
        else if (a + 1 < argc && strcmp(argv[a], "--dir") == 0) parent = argv[++a];
        else if (a + 1 < argc && strcmp(argv[a], "--widths") == 0) {
            width_count = 0;
            for (char *s = strtok(argv[++a], ","); s; s = strtok(NULL, ",")) {
                if (width_count == MAX_WIDTHS || atoi(s) < K) usage();
                widths[width_count++] = atoi(s);
            }
            if (width_count == 0) usage();
        } else usage();
    }
    if (!vectors || runs < 1 || runs > MAX_RUNS) usage();

    make_disk_folder(parent);

    char path[4096];
    snprintf(path, sizeof path, "%s/base.fvecs", vectors);
    base = read_fvecs(path, &n);
    snprintf(path, sizeof path, "%s/queries.fvecs", vectors);
    queries = read_fvecs(path, &q);
    check(n >= K, "setup", "at least 10 base vectors", n);
    exact = malloc(sizeof *exact * K * (size_t)q);
    if (!exact) { perror("malloc"); return 1; }
    double t = now();
    for (long i = 0; i < q; i++) exact_nearest(i, exact + i * K);
    fprintf(stderr, "vector-objectbox: ObjectBox %s, N=%ld, %ld queries, d=%d, k=%d, runs=%ld, exact answers in %.1f s, databases under %s\n",
            obx_version_string(), n, q, D, K, runs, now() - t, parent);

    for (long k = 0; k < runs; k++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/vector-objectbox-XXXXXX", parent);
        if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
        results[k] = run(dir);
        remove_tree(dir);
        Result *r = &results[k];
        fprintf(stderr, "run %ld/%ld objectbox: insert %.0f/s, query %.0f/s (recall@10 %.4f), file %.1f MB\n", k + 1, runs,
                (double)n / r->insert, (double)q / r->query, r->recall, r->file_insert / 1e6);
        for (int w = 0; w < width_count; w++)
            fprintf(stderr, "    width %d: %.0f q/s, recall@10 %.4f\n", widths[w], (double)q / r->width_seconds[w], r->width_recall[w]);
    }

    double insert = median_at(offsetof(Result, insert)), query = median_at(offsetof(Result, query));
    printf("objectbox\tinsert-d%d\t%ld\t%.1f\t%.6f\n", D, n, (double)n / insert, insert);
    printf("objectbox\tquery-d%d\t%ld\t%.1f\t%.6f\n", D, n, (double)q / query, query);
    printf("recall_at_10\td%d\t%ld\t%.3f\t0\n", D, n, median_at(offsetof(Result, recall)));
    printf("p50_us\td%d\t%ld\t%.3f\t0\n", D, n, median_at(offsetof(Result, p50)) * 1e6);
    printf("p99_us\td%d\t%ld\t%.3f\t0\n", D, n, median_at(offsetof(Result, p99)) * 1e6);
    printf("file_mb_insert\td%d\t%ld\t%.3f\t0\n", D, n, median_at(offsetof(Result, file_insert)) / 1e6);
    for (int w = 0; w < width_count; w++) {
        double seconds = median_at(offsetof(Result, width_seconds) + sizeof(double) * (size_t)w);
        printf("objectbox\tquery-d%d-w%d\t%ld\t%.1f\t%.6f\n", D, widths[w], n, (double)q / seconds, seconds);
        printf("recall_at_10\td%d-w%d\t%ld\t%.3f\t0\n", D, widths[w], n,
               median_at(offsetof(Result, width_recall) + sizeof(double) * (size_t)w));
    }
    return 0;
}
