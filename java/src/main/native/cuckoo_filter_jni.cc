// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// librocksdb_cuckoo_jni.so: the JNI side of io.github.rocksdbcuckoo. It holds
// the plugin's sources and no RocksDB: every RocksDB symbol resolves, at
// load (-z now), against the librocksdbjni that NativeLoader has made
// global. It is therefore compiled as that jar's RocksDB was
// (java/CMakeLists.txt): against the source tree of the same release, with
// -fno-rtti (no dynamic_cast or typeid here: a typeinfo reference to a
// RocksDB class would not resolve), and with the jar's std::string ABI,
// since strings cross into RocksDB.
//
// No exception may cross into the JVM: every entry point catches all and
// turns it into a Java exception.
#include <jni.h>

#include <cstdio>
#include <exception>
#include <memory>
#include <new>
#include <string>

#include "cuckoo_filter_policy.h"
#include "rocksdb/convenience.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/options.h"
#include "rocksdb/table.h"
#include "rocksdb_cuckoo.h"

namespace {

// What an org.rocksdb.Filter's handle points to: rocksjni/table.cc copies it
// into BlockBasedTableOptions::filter_policy, and Filter.close() deletes it.
using FilterHandle = std::shared_ptr<ROCKSDB_NAMESPACE::FilterPolicy>;

// Throws a new `class_name` unless an exception is pending. Allocates
// nothing on the C++ heap, so that a handler of std::bad_alloc can call it.
void ThrowJava(JNIEnv* env, const char* class_name, const char* what) noexcept {
  if (env->ExceptionCheck()) return;
  char message[1024];
  std::snprintf(message, sizeof(message), "rocksdb-cuckoo: %s", what);
  for (char* c = message; *c != '\0'; ++c) {
    if (static_cast<unsigned char>(*c) >= 0x80) *c = '?';  // modified UTF-8
  }
  jclass cls = env->FindClass(class_name);
  if (cls != nullptr) env->ThrowNew(cls, message);
}

// Runs `body`; a C++ exception becomes a Java one, and the result
// `on_error`, which `body` also returns after throwing a Java exception.
template <typename R, typename Body>
R Guarded(JNIEnv* env, R on_error, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    ThrowJava(env, "java/lang/OutOfMemoryError", "native allocation failed");
  } catch (const std::exception& e) {
    ThrowJava(env, "java/lang/RuntimeException", e.what());
  } catch (...) {
    ThrowJava(env, "java/lang/RuntimeException", "unknown native exception");
  }
  return on_error;
}

// The text of a Java string (the policy's options are ASCII); false with an
// exception pending.
bool ToStdString(JNIEnv* env, jstring text, std::string* out) {
  out->clear();
  if (text == nullptr) return true;
  const char* chars = env->GetStringUTFChars(text, nullptr);
  if (chars == nullptr) return false;  // OutOfMemoryError is pending
  struct Release {
    JNIEnv* env;
    jstring text;
    const char* chars;
    ~Release() { env->ReleaseStringUTFChars(text, chars); }
  } release{env, text, chars};
  out->assign(chars);
  return true;
}

// The id of the filter policy of `table_factory`, or null when there is
// none or the table is not block-based. GetOptions<T> looks the options up
// by name, without RTTI.
jstring PolicyIdOf(
    JNIEnv* env,
    const std::shared_ptr<ROCKSDB_NAMESPACE::TableFactory>& table_factory) {
  if (table_factory == nullptr) return nullptr;
  const auto* table_options =
      table_factory->GetOptions<ROCKSDB_NAMESPACE::BlockBasedTableOptions>();
  if (table_options == nullptr || table_options->filter_policy == nullptr) {
    return nullptr;
  }
  return env->NewStringUTF(table_options->filter_policy->GetId().c_str());
}

}  // namespace

extern "C" {

// long CuckooFilter.newFilter(double bitsPerKey, String options): the
// policy, checked as an OPTIONS file's would be; IllegalArgumentException
// naming the problem otherwise.
JNIEXPORT jlong JNICALL Java_io_github_rocksdbcuckoo_CuckooFilter_newFilter(
    JNIEnv* env, jclass, jdouble bits_per_key, jstring joptions) {
  return Guarded(env, jlong{0}, [&]() -> jlong {
    std::string options;
    if (!ToStdString(env, joptions, &options)) return 0;
    std::string problem = rocksdb_cuckoo::CheckBitsPerKey(bits_per_key);
    if (!problem.empty()) {
      ThrowJava(env, "java/lang/IllegalArgumentException", problem.c_str());
      return 0;
    }
    auto policy =
        std::make_shared<rocksdb_cuckoo::CuckooFilterPolicy>(bits_per_key);
    if (!options.empty()) {
      // The policy's own options, strictly: an unknown name is an error.
      ROCKSDB_NAMESPACE::ConfigOptions strict;
      strict.ignore_unknown_options = false;
      strict.ignore_unsupported_options = false;
      const ROCKSDB_NAMESPACE::Status status =
          policy->ConfigureFromString(strict, options);
      if (!status.ok()) {
        ThrowJava(env, "java/lang/IllegalArgumentException",
                  status.ToString().c_str());
        return 0;
      }
      if (!(policy->bits_per_key() == bits_per_key)) {
        ThrowJava(env, "java/lang/IllegalArgumentException",
                  "bits_per_key in the options differs from bitsPerKey");
        return 0;
      }
    }
    problem = rocksdb_cuckoo::CheckLevelBudgets(policy->options());
    if (!problem.empty()) {
      ThrowJava(env, "java/lang/IllegalArgumentException", problem.c_str());
      return 0;
    }
    return reinterpret_cast<jlong>(new FilterHandle(std::move(policy)));
  });
}

// String CuckooFilter.idOf(long handle): the policy's id, as an OPTIONS
// file names it.
JNIEXPORT jstring JNICALL Java_io_github_rocksdbcuckoo_CuckooFilter_idOf(
    JNIEnv* env, jclass, jlong handle) {
  return Guarded(env, jstring{nullptr}, [&]() -> jstring {
    const auto* policy = reinterpret_cast<const FilterHandle*>(handle);
    return env->NewStringUTF((*policy)->GetId().c_str());
  });
}

// String CuckooFilter.policyIdOfColumnFamilyOptions(long handle)
JNIEXPORT jstring JNICALL
Java_io_github_rocksdbcuckoo_CuckooFilter_policyIdOfColumnFamilyOptions(
    JNIEnv* env, jclass, jlong handle) {
  return Guarded(env, jstring{nullptr}, [&]() -> jstring {
    return PolicyIdOf(
        env,
        reinterpret_cast<const ROCKSDB_NAMESPACE::ColumnFamilyOptions*>(handle)
            ->table_factory);
  });
}

// String CuckooFilter.policyIdOfOptions(long handle): an Options handle is
// a rocksdb::Options*, converted to its ColumnFamilyOptions base.
JNIEXPORT jstring JNICALL
Java_io_github_rocksdbcuckoo_CuckooFilter_policyIdOfOptions(JNIEnv* env, jclass,
                                                            jlong handle) {
  return Guarded(env, jstring{nullptr}, [&]() -> jstring {
    const ROCKSDB_NAMESPACE::ColumnFamilyOptions* options =
        reinterpret_cast<const ROCKSDB_NAMESPACE::Options*>(handle);
    return PolicyIdOf(env, options->table_factory);
  });
}

// boolean NativeLoader.registerDefault(): "cuckoofilter" in the
// ObjectLibrary::Default() of librocksdbjni, for options strings and OPTIONS
// files. Registering again does nothing.
JNIEXPORT jboolean JNICALL
Java_io_github_rocksdbcuckoo_NativeLoader_registerDefault(JNIEnv* env, jclass) {
  return Guarded(env, jboolean{JNI_FALSE}, [&]() -> jboolean {
    return rocksdb_cuckoo_register_default() == 0 ? JNI_TRUE : JNI_FALSE;
  });
}

}  // extern "C"
