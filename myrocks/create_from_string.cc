// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The MyRocks preload's one entry point: RocksDB 6.29's
// FilterPolicy::CreateFromString, which parses the filter_policy of an
// options string or OPTIONS file.
//
// In 6.29 that function knows only RocksDB's own filters and never asks the
// object registry, so a plugin cannot register "cuckoofilter" there. But
// MariaDB's ha_rocksdb.so, which links RocksDB statically, exports the
// function and calls it from its option parser through its PLT, and
// mariadbd loads ha_rocksdb.so after LD_PRELOAD's libraries: the call binds
// to this definition. It answers the cuckoofilter names and hands every
// other value to the caller's own definition.
//
// The caller's definition: ha_rocksdb.so is loaded RTLD_LOCAL, so
// dlsym(RTLD_NEXT) does not see it. The return address names the object
// that called; dlopen(RTLD_NOLOAD) of it gives a handle whose lookups search
// that object and its dependencies only, which this preload is not among.
// RTLD_NEXT serves a caller whose RocksDB is in the global scope.
//
// The policy's classes are compiled against 6.29's headers: they match
// only a 6.29 library. Before it answers, the preload asks the caller's
// RocksDB its version (GetRocksVersionAsString, from the same handle), and
// when it is not 6.29 it answers nothing itself, forwards every value, and
// says so once on standard error, which mariadbd writes to its error log.
#include <dlfcn.h>

#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "cuckoo_filter_policy.h"
#include "rocksdb/convenience.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/status.h"

namespace {

namespace rdb = ROCKSDB_NAMESPACE;
using rocksdb_cuckoo::CuckooFilterPolicy;
using rocksdb_cuckoo::CuckooFilterPolicyOptions;

using CreateFromStringFunction =
    rdb::Status (*)(const rdb::ConfigOptions&, const std::string&,
                    std::shared_ptr<const rdb::FilterPolicy>*);
using VersionFunction = std::string (*)(bool with_patch);

constexpr const char* kCreateFromStringSymbol =
    "_ZN7rocksdb12FilterPolicy16CreateFromStringERKNS_13ConfigOptionsERKNSt7__"
    "cxx1112basic_stringIcSt11char_traitsIcESaIcEEEPSt10shared_ptrIKS0_E";
constexpr const char* kVersionSymbol =
    "_ZN7rocksdb23GetRocksVersionAsStringB5cxx11Eb";
constexpr const char* kBuiltFor = "6.29.";

// The RocksDB a caller belongs to.
struct CallerRocksDb {
  CreateFromStringFunction create_from_string = nullptr;  // its own
  bool answer_cuckoo = false;  // its version is the one built for
};

// The object holding `address`, by its file name ("" when unknown).
std::string ObjectOf(const void* address) {
  Dl_info info;
  return dladdr(address, &info) != 0 && info.dli_fname != nullptr
             ? info.dli_fname
             : std::string();
}

// The caller's RocksDB: both symbols from the calling object when it
// defines CreateFromString, else both from RTLD_NEXT's scope. The object
// is pinned (RTLD_NODELETE), since the function found is kept.
CallerRocksDb Resolve(const std::string& object) {
  void* create = nullptr;
  void* version = nullptr;
  if (!object.empty()) {
    void* handle =
        dlopen(object.c_str(), RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
    if (handle != nullptr) {
      create = dlsym(handle, kCreateFromStringSymbol);
      version = dlsym(handle, kVersionSymbol);
      dlclose(handle);  // RTLD_NOLOAD counted a reference
    }
  }
  if (create == nullptr) {
    create = dlsym(RTLD_NEXT, kCreateFromStringSymbol);
    version = dlsym(RTLD_NEXT, kVersionSymbol);
  }
  CallerRocksDb rocksdb;
  // Never this preload's own definition.
  if (create != reinterpret_cast<void*>(&rdb::FilterPolicy::CreateFromString)) {
    rocksdb.create_from_string =
        reinterpret_cast<CreateFromStringFunction>(create);
  }
  const std::string found =
      version != nullptr ? reinterpret_cast<VersionFunction>(version)(true)
                         : "unknown";
  rocksdb.answer_cuckoo =
      rocksdb.create_from_string != nullptr &&
      found.compare(0, std::string(kBuiltFor).size(), kBuiltFor) == 0;
  if (!rocksdb.answer_cuckoo) {
    std::fprintf(stderr,
                 "rocksdb-cuckoo (MyRocks preload): the RocksDB in %s is %s, "
                 "not the %sx it was built for%s: it answers no filter "
                 "policy there\n",
                 object.empty() ? "the caller" : object.c_str(), found.c_str(),
                 kBuiltFor,
                 rocksdb.create_from_string == nullptr
                     ? ", or its CreateFromString is not found"
                     : "");
  }
  return rocksdb;
}

// Once per calling object. Resolved outside the lock: it enters the
// dynamic loader and the caller's RocksDB.
CallerRocksDb CallerOf(const void* caller) {
  static std::mutex mutex;
  static std::map<std::string, CallerRocksDb>* known =
      new std::map<std::string, CallerRocksDb>();
  const std::string object = ObjectOf(caller);
  {
    const std::lock_guard<std::mutex> lock(mutex);
    const auto it = known->find(object);
    if (it != known->end()) return it->second;
  }
  const CallerRocksDb resolved = Resolve(object);
  const std::lock_guard<std::mutex> lock(mutex);
  return known->emplace(object, resolved).first->second;
}

// Whether `value` names this policy: "cuckoofilter[:...]", the forms of the
// plugin's options strings, or "rocksdb_cuckoo.Cuckoo", the name 6.29's
// OPTIONS files store (the policy's Name()), which comes back with default
// options when MyRocks checks a restarted DB's OPTIONS file.
bool NamesCuckoo(const std::string& value) {
  const std::string name = CuckooFilterPolicy::kClassName();
  return value == CuckooFilterPolicy::kCompatibilityName() || value == name ||
         value.compare(0, name.size() + 1, name + ":") == 0;
}

rdb::Status CreateCuckoo(const std::string& value,
                         std::shared_ptr<const rdb::FilterPolicy>* policy) {
  CuckooFilterPolicyOptions options;
  std::string problem;
  if (value != CuckooFilterPolicy::kCompatibilityName() &&
      !rocksdb_cuckoo::ParseCuckooFilterId(value, &options, &problem)) {
    std::fprintf(stderr, "rocksdb-cuckoo (MyRocks preload): %s\n",
                 problem.c_str());
    // 6.29 builds a status with a message out of line: the message went
    // to the log above.
    return rdb::Status::InvalidArgument();
  }
  policy->reset(new CuckooFilterPolicy(options));
  return rdb::Status::OK();
}

}  // namespace

namespace ROCKSDB_NAMESPACE {

// Nothing may throw into RocksDB: a failure to answer is an error status.
Status FilterPolicy::CreateFromString(
    const ConfigOptions& options, const std::string& value,
    std::shared_ptr<const FilterPolicy>* policy) {
  try {
    const CallerRocksDb caller = CallerOf(__builtin_return_address(0));
    if (caller.answer_cuckoo && NamesCuckoo(value)) {
      return CreateCuckoo(value, policy);
    }
    if (caller.create_from_string == nullptr) return Status::NotSupported();
    return caller.create_from_string(options, value, policy);
  } catch (...) {
    std::fprintf(stderr,
                 "rocksdb-cuckoo (MyRocks preload): cannot parse the filter "
                 "policy '%s' (out of memory)\n",
                 value.c_str());
    return Status::MemoryLimit();
  }
}

}  // namespace ROCKSDB_NAMESPACE
