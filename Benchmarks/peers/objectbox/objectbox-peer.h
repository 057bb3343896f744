/* What the ObjectBox peers (crud-objectbox.c, vector-objectbox.c) share: ObjectBox's C API as they
 * use it, and their helpers. The library ships without a header: the types, constants and functions
 * used are declared here, by hand, from ObjectBox's public C API. Define PEER_NAME (the program's
 * name, for its messages) before including this file. */
#ifndef OBJECTBOX_PEER_H
#define OBJECTBOX_PEER_H

#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

/* ---- ObjectBox C API: the part the peers use ------------------------------------------------ */

typedef int obx_err;
typedef uint32_t obx_schema_id;
typedef uint64_t obx_uid;
typedef uint64_t obx_id;
typedef int obx_qb_cond;

typedef struct OBX_model OBX_model;
typedef struct OBX_store_options OBX_store_options;
typedef struct OBX_store OBX_store;
typedef struct OBX_txn OBX_txn;
typedef struct OBX_cursor OBX_cursor;
typedef struct OBX_box OBX_box;
typedef struct OBX_query_builder OBX_query_builder;
typedef struct OBX_query OBX_query;

typedef struct { const void *data; size_t size; } OBX_bytes;
typedef struct { OBX_bytes *bytes; size_t count; } OBX_bytes_array;
typedef struct { obx_id *ids; size_t count; } OBX_id_array;
typedef struct { obx_id id; double score; } OBX_id_score;
typedef struct { OBX_id_score *ids_scores; size_t count; } OBX_id_score_array;

typedef bool obx_data_visitor(const void *data, size_t size, void *user_data);

enum { OBX_SUCCESS = 0, OBX_NOT_FOUND = 404 };
enum { TYPE_LONG = 6, TYPE_STRING = 9, TYPE_DATE = 10, TYPE_FLOAT_VECTOR = 28 };
enum { FLAG_ID = 1, FLAG_INDEXED = 8, FLAG_UNSIGNED = 8192 };
enum { DISTANCE_COSINE = 2 };

const char *obx_version_string(void);
obx_err obx_last_error_code(void);
const char *obx_last_error_message(void);

OBX_model *obx_model(void);
obx_err obx_model_error_code(OBX_model *model);
const char *obx_model_error_message(OBX_model *model);
obx_err obx_model_entity(OBX_model *model, const char *name, obx_schema_id entity_id, obx_uid entity_uid);
obx_err obx_model_property(OBX_model *model, const char *name, int type, obx_schema_id property_id, obx_uid property_uid);
obx_err obx_model_property_flags(OBX_model *model, uint32_t flags);
obx_err obx_model_property_index_id(OBX_model *model, obx_schema_id index_id, obx_uid index_uid);
obx_err obx_model_property_index_hnsw_dimensions(OBX_model *model, size_t value);
obx_err obx_model_property_index_hnsw_distance_type(OBX_model *model, int value);
obx_err obx_model_entity_last_property_id(OBX_model *model, obx_schema_id property_id, obx_uid property_uid);
void obx_model_last_entity_id(OBX_model *model, obx_schema_id entity_id, obx_uid entity_uid);
void obx_model_last_index_id(OBX_model *model, obx_schema_id index_id, obx_uid index_uid);

OBX_store_options *obx_opt(void);
obx_err obx_opt_directory(OBX_store_options *opt, const char *dir);
void obx_opt_max_db_size_in_kb(OBX_store_options *opt, uint64_t size_in_kb);
obx_err obx_opt_model(OBX_store_options *opt, OBX_model *model);
OBX_store *obx_store_open(OBX_store_options *opt);
obx_err obx_store_close(OBX_store *store);

OBX_txn *obx_txn_write(OBX_store *store);
OBX_txn *obx_txn_read(OBX_store *store);
obx_err obx_txn_success(OBX_txn *txn);
obx_err obx_txn_close(OBX_txn *txn);

OBX_cursor *obx_cursor(OBX_txn *txn, obx_schema_id entity_id);
obx_err obx_cursor_close(OBX_cursor *cursor);
obx_err obx_cursor_first(OBX_cursor *cursor, const void **data, size_t *size);
obx_err obx_cursor_next(OBX_cursor *cursor, const void **data, size_t *size);

OBX_box *obx_box(OBX_store *store, obx_schema_id entity_id);
obx_err obx_box_get(OBX_box *box, obx_id id, const void **data, size_t *size);
obx_id obx_box_put_object(OBX_box *box, void *data, size_t size);
obx_err obx_box_put(OBX_box *box, obx_id id, const void *data, size_t size);
obx_err obx_box_remove_all(OBX_box *box, uint64_t *out_count);
obx_err obx_box_count(OBX_box *box, uint64_t limit, uint64_t *out_count);

OBX_query_builder *obx_query_builder(OBX_store *store, obx_schema_id entity_id);
obx_qb_cond obx_qb_equals_int(OBX_query_builder *builder, obx_schema_id property_id, int64_t value);
obx_qb_cond obx_qb_nearest_neighbors_f32(OBX_query_builder *builder, obx_schema_id vector_property_id,
                                         const float *query_vector, size_t max_result_count);
obx_err obx_qb_close(OBX_query_builder *builder);
OBX_query *obx_query(OBX_query_builder *builder);
obx_err obx_query_close(OBX_query *query);
obx_err obx_query_limit(OBX_query *query, size_t limit);
obx_err obx_query_param_vector_float32(OBX_query *query, obx_schema_id entity_id, obx_schema_id property_id,
                                       const float *value, size_t element_count);
obx_err obx_query_count(OBX_query *query, uint64_t *out_count);
obx_err obx_query_visit(OBX_query *query, obx_data_visitor *visitor, void *user_data);
OBX_bytes_array *obx_query_find(OBX_query *query);
OBX_id_array *obx_query_find_ids(OBX_query *query);
OBX_id_score_array *obx_query_find_ids_with_scores(OBX_query *query);
void obx_bytes_array_free(OBX_bytes_array *array);
void obx_id_array_free(OBX_id_array *array);
void obx_id_score_array_free(OBX_id_score_array *array);

/* ---- helpers ----------------------------------------------------------------------------------- */

static inline double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A failed ObjectBox call: reported with the library's last error, exit 1. */
static inline void die(const char *what) {
    fprintf(stderr, PEER_NAME ": %s failed: %d %s\n", what, obx_last_error_code(), obx_last_error_message());
    exit(1);
}
static inline void ok(obx_err rc, const char *what) { if (rc != OBX_SUCCESS) die(what); }
static inline void *must(void *p, const char *what) { if (!p) die(what); return p; }

/* A failed check of the workload: reported, exit 1. */
static inline void check(bool passed, const char *step, const char *what, long long value) {
    if (passed) return;
    fprintf(stderr, PEER_NAME ": check failed: objectbox %s: %s (%lld)\n", step, what, value);
    exit(1);
}

static inline void put16(uint8_t *b, size_t at, uint16_t v) { memcpy(b + at, &v, 2); }
static inline void put32(uint8_t *b, size_t at, uint32_t v) { memcpy(b + at, &v, 4); }
static inline void put64(uint8_t *b, size_t at, uint64_t v) { memcpy(b + at, &v, 8); }

static inline int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
    (void)st; (void)type; (void)ftw;
    return remove(path);
}
static inline void remove_tree(const char *path) { nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

static long long folder_total;
static inline int add_file(const char *path, const struct stat *st, int type, struct FTW *ftw) {
    (void)path; (void)ftw;
    if (type == FTW_F && S_ISREG(st->st_mode)) folder_total += st->st_size;
    return 0;
}

/* Bytes of the regular files in a folder and its subfolders (st_size). */
static inline long long folder_bytes(const char *folder) {
    folder_total = 0;
    nftw(folder, add_file, 16, FTW_PHYS);
    return folder_total;
}

static inline int compare_doubles(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Opens a store of `model` in `dir`: a 16 GiB maximum size, every other option ObjectBox's default. */
static inline OBX_store *open_with_model(OBX_model *model, const char *dir) {
    if (obx_model_error_code(model)) {
        fprintf(stderr, PEER_NAME ": model: %s\n", obx_model_error_message(model));
        exit(1);
    }
    OBX_store_options *opt = must(obx_opt(), "obx_opt");
    ok(obx_opt_directory(opt, dir), "obx_opt_directory");
    obx_opt_max_db_size_in_kb(opt, 16ULL << 20);  /* 16 GiB */
    ok(obx_opt_model(opt, model), "obx_opt_model");
    return must(obx_store_open(opt), "obx_store_open");
}

/* Makes the folder `parent` when missing; exit 1 when it cannot, or when it is in memory (tmpfs,
 * ramfs): the databases must be on a real disk. */
static inline void make_disk_folder(const char *parent) {
    if (mkdir(parent, 0755) != 0 && errno != EEXIST) { perror(parent); exit(1); }
    struct statfs fs;
    if (statfs(parent, &fs) != 0) { perror(parent); exit(1); }
    if (fs.f_type == 0x01021994 /* tmpfs */ || fs.f_type == 0x858458f6 /* ramfs */) {
        fprintf(stderr, PEER_NAME ": --dir %s is in memory (tmpfs); the databases must be on a real disk\n", parent);
        exit(1);
    }
}

#endif
