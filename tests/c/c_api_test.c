/* SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only */
/* The policy from C, through RocksDB's C API as the language bindings use
 * it: rocksdb_cuckoo_register_default, then an options string naming
 * cuckoofilter:10, a DB written and read, and the filter shown in effect
 * (the filter tickers, the filter blocks' size, the OPTIONS file). Also the
 * trap the README warns of: an options string naming a policy RocksDB cannot
 * load is accepted without an error, and the DB runs without a filter.
 * Compiled as C.
 *
 * usage: c_api_test PATH_PREFIX   (the DBs go to PATH_PREFIX-*) */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocksdb/c.h"
#include "rocksdb_cuckoo.h"

enum { kKeys = 20000 };

static int failures = 0;

#define CHECK(condition, ...)                      \
  do {                                             \
    if (!(condition)) {                            \
      fprintf(stderr, "c_api_test: FAILED: ");     \
      fprintf(stderr, __VA_ARGS__);                \
      fprintf(stderr, " (line %d)\n", __LINE__);   \
      ++failures;                                  \
    }                                              \
  } while (0)

/* The COUNT of ticker NAME in a statistics string, or -1. */
static long Ticker(const char* statistics, const char* name) {
  const char* at = strstr(statistics, name);
  if (at == NULL) return -1;
  at = strstr(at, "COUNT : ");
  return at == NULL ? -1 : strtol(at + strlen("COUNT : "), NULL, 10);
}

/* The number after "NAME=" in a table properties string, or -1. */
static long Property(const char* properties, const char* name) {
  const char* at = strstr(properties, name);
  if (at == NULL) return -1;
  at = strchr(at, '=');
  return at == NULL ? -1 : strtol(at + 1, NULL, 10);
}

/* 1 when an OPTIONS file of the DB at PATH has a line containing TEXT. */
static int OptionsFileHas(const char* path, const char* text) {
  int found = 0;
  DIR* dir = opendir(path);
  if (dir == NULL) return 0;
  struct dirent* entry;
  while ((entry = readdir(dir)) != NULL) {
    if (strncmp(entry->d_name, "OPTIONS-", 8) != 0) continue;
    char file_name[4096];
    snprintf(file_name, sizeof(file_name), "%s/%s", path, entry->d_name);
    FILE* file = fopen(file_name, "r");
    if (file == NULL) continue;
    char line[1024];
    while (fgets(line, sizeof(line), file) != NULL) {
      if (strstr(line, text) != NULL) found = 1;
    }
    fclose(file);
  }
  closedir(dir);
  return found;
}

struct Outcome {
  long filter_useful;    /* absent lookups the filter answered */
  long filter_bytes;     /* filter blocks of the written files */
  int names_cuckoo;      /* the OPTIONS file names cuckoofilter */
  int names_no_policy;   /* the OPTIONS file says filter_policy=nullptr */
};

/* Opens a DB at PATH with OPTIONS_STRING, writes kKeys keys into one file,
 * reads each (all must be found) and as many absent keys. */
static struct Outcome RunDb(const char* path, const char* options_string) {
  struct Outcome outcome = {-1, -1, 0, 0};
  char* error = NULL;
  rocksdb_options_t* base = rocksdb_options_create();
  rocksdb_options_t* options = rocksdb_options_create();
  rocksdb_get_options_from_string(base, options_string, options, &error);
  CHECK(error == NULL, "options string '%s' rejected: %s", options_string,
        error);
  free(error);
  error = NULL;
  rocksdb_options_set_create_if_missing(options, 1);
  rocksdb_options_enable_statistics(options);
  rocksdb_destroy_db(options, path, &error);
  free(error);
  error = NULL;
  rocksdb_t* db = rocksdb_open(options, path, &error);
  CHECK(db != NULL, "open %s: %s", path, error);
  if (db == NULL) return outcome;

  rocksdb_writeoptions_t* write = rocksdb_writeoptions_create();
  rocksdb_readoptions_t* read = rocksdb_readoptions_create();
  char key[32];
  for (int i = 0; i < kKeys; ++i) {
    snprintf(key, sizeof(key), "key%08d", i);
    rocksdb_put(db, write, key, strlen(key), "v", 1, &error);
    CHECK(error == NULL, "put: %s", error);
  }
  rocksdb_flushoptions_t* flush = rocksdb_flushoptions_create();
  rocksdb_flush(db, flush, &error);
  CHECK(error == NULL, "flush: %s", error);
  int lost = 0;
  for (int i = 0; i < kKeys; ++i) {
    size_t length = 0;
    snprintf(key, sizeof(key), "key%08d", i);
    char* value = rocksdb_get(db, read, key, strlen(key), &length, &error);
    lost += value == NULL;
    free(value);
    snprintf(key, sizeof(key), "key%08dx", i);
    value = rocksdb_get(db, read, key, strlen(key), &length, &error);
    CHECK(value == NULL, "absent key %s found", key);
    free(value);
  }
  CHECK(lost == 0, "%d of %d keys lost", lost, kKeys);

  char* statistics = rocksdb_options_statistics_get_string(options);
  outcome.filter_useful = Ticker(statistics, "rocksdb.bloom.filter.useful ");
  free(statistics);
  char* properties =
      rocksdb_property_value(db, "rocksdb.aggregated-table-properties");
  CHECK(properties != NULL, "no aggregated table properties");
  if (properties != NULL) {
    outcome.filter_bytes = Property(properties, "filter block size");
    free(properties);
  }
  outcome.names_cuckoo = OptionsFileHas(path, "cuckoofilter");
  outcome.names_no_policy = OptionsFileHas(path, "filter_policy=nullptr");

  rocksdb_flushoptions_destroy(flush);
  rocksdb_readoptions_destroy(read);
  rocksdb_writeoptions_destroy(write);
  rocksdb_close(db);
  rocksdb_destroy_db(options, path, &error);
  free(error);
  rocksdb_options_destroy(options);
  rocksdb_options_destroy(base);
  return outcome;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: c_api_test PATH_PREFIX\n");
    return 2;
  }
  char path[4096];

  CHECK(rocksdb_cuckoo_register_default() == 0, "registration failed");
  CHECK(rocksdb_cuckoo_register_default() == 0, "second registration failed");

  snprintf(path, sizeof(path), "%s-cuckoo", argv[1]);
  const struct Outcome cuckoo = RunDb(
      path, "block_based_table_factory={filter_policy=cuckoofilter:10}");
  CHECK(cuckoo.filter_useful > kKeys * 98 / 100,
        "the filter answered %ld of %d absent lookups", cuckoo.filter_useful,
        kKeys);
  /* About 10 bits per key, and not nothing. */
  CHECK(cuckoo.filter_bytes > kKeys && cuckoo.filter_bytes < kKeys * 2,
        "filter blocks of %ld bytes for %d keys", cuckoo.filter_bytes, kKeys);
  CHECK(cuckoo.names_cuckoo, "the OPTIONS file does not name cuckoofilter");

  /* The trap: accepted, and no filter. */
  snprintf(path, sizeof(path), "%s-misspelled", argv[1]);
  const struct Outcome misspelled = RunDb(
      path, "block_based_table_factory={filter_policy=cuckofilter:10}");
  CHECK(misspelled.filter_useful == 0,
        "a misspelled policy filtered %ld lookups", misspelled.filter_useful);
  CHECK(misspelled.filter_bytes == 0,
        "a misspelled policy wrote %ld filter bytes", misspelled.filter_bytes);
  CHECK(misspelled.names_no_policy,
        "the OPTIONS file does not say filter_policy=nullptr");

  printf("c_api_test: cuckoofilter:10 answered %ld of %d absent lookups with "
         "%ld filter bytes; a misspelled policy ran without a filter\n",
         cuckoo.filter_useful, kKeys, cuckoo.filter_bytes);
  return failures == 0 ? 0 : 1;
}
