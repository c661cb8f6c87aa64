/* SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only */
/* librocksdb_cuckoo_loader.so: makes the symbols of the librocksdbjni that
 * the JVM has loaded global, so that librocksdb_cuckoo_jni.so, loaded next,
 * binds to that copy of RocksDB.
 *
 * RocksJava loads librocksdbjni with dlopen(RTLD_LAZY), locally, from a
 * temporary copy with a random name (or from ROCKSDB_SHAREDLIB_DIR or
 * java.library.path). A library loaded later sees none of its symbols,
 * and the filter library's vtables need RocksDB's at load time. The loaded
 * objects are walked with dl_iterate_phdr; librocksdbjni is the one that
 * itself defines RocksJava's JNI entry point Java_org_rocksdb_RocksDB_version,
 * and dlopen(RTLD_NOLOAD | RTLD_GLOBAL) of that object promotes it without
 * loading anything.
 *
 * C, no RocksDB, no C++ runtime: it loads whatever rocksdbjni is in the
 * process, including one that NativeLoader then refuses. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <jni.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#define kMarker "Java_org_rocksdb_RocksDB_version"

struct names {
  char* items[512];
  int count;
};

/* Copies the loaded objects' names: the callback runs under the dynamic
 * loader's lock, where dlopen must not be called. */
static int CollectName(struct dl_phdr_info* info, size_t size, void* data) {
  struct names* names = (struct names*)data;
  (void)size;
  if (info->dlpi_name == NULL || info->dlpi_name[0] == '\0') return 0;
  if (names->count == (int)(sizeof(names->items) / sizeof(names->items[0]))) {
    return 1;
  }
  names->items[names->count] = strdup(info->dlpi_name);
  if (names->items[names->count] != NULL) ++names->count;
  return 0;
}

/* Whether the loaded object `name` itself defines the marker (dlsym on its
 * handle also searches its dependencies: dladdr names the definer). */
static int DefinesMarker(const char* name) {
  void* handle = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
  int own = 0;
  if (handle == NULL) return 0;
  void* symbol = dlsym(handle, kMarker);
  Dl_info info;
  if (symbol != NULL && dladdr(symbol, &info) != 0 && info.dli_fname != NULL) {
    own = strcmp(info.dli_fname, name) == 0;
  }
  dlclose(handle); /* the JVM holds its own reference */
  return own;
}

/* String NativeLoader.makeRocksDbJniGlobal(): the path of the librocksdbjni
 * made global, or null when no loaded object, or more than one, defines
 * the marker (then nothing was changed). */
JNIEXPORT jstring JNICALL
Java_io_github_rocksdbcuckoo_NativeLoader_makeRocksDbJniGlobal(JNIEnv* env,
                                                               jclass cls) {
  struct names names;
  const char* found = NULL;
  int matches = 0, i;
  jstring result = NULL;
  (void)cls;
  names.count = 0;
  dl_iterate_phdr(CollectName, &names);
  for (i = 0; i < names.count; ++i) {
    if (DefinesMarker(names.items[i])) {
      found = names.items[i];
      ++matches;
    }
  }
  if (matches == 1 && dlopen(found, RTLD_LAZY | RTLD_NOLOAD | RTLD_GLOBAL)) {
    result = (*env)->NewStringUTF(env, found);
  }
  for (i = 0; i < names.count; ++i) free(names.items[i]);
  return result;
}
