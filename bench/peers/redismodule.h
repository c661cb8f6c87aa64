// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Stands in for Redis's redismodule.h when scripts/peers-bench.sh compiles
// RedisBloom's src/cuckoo.c as a plain C library, outside Redis: the
// allocator macros cuckoo.c expects (RedisBloom's cf.c defines them on
// Redis's allocator before it includes cuckoo.c) on the C library's, and the
// two types and one function that RedisBloom's config.h names. Nothing here
// is called: the harness uses the filter functions only.
#ifndef ROCKSDB_CUCKOO_BENCH_PEERS_REDISMODULE_H_
#define ROCKSDB_CUCKOO_BENCH_PEERS_REDISMODULE_H_

#include <stddef.h>
#include <stdlib.h>

#define CUCKOO_MALLOC malloc
#define CUCKOO_CALLOC calloc
#define CUCKOO_TRYCALLOC calloc
#define CUCKOO_REALLOC realloc
#define CUCKOO_FREE free

typedef struct RedisModuleString RedisModuleString;
typedef struct RedisModuleCtx RedisModuleCtx;
const char* RedisModule_StringPtrLen(const RedisModuleString* str, size_t* len);

#endif  // ROCKSDB_CUCKOO_BENCH_PEERS_REDISMODULE_H_
