// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The MyRocks preload's FilterPolicy::CreateFromString
// (myrocks/create_from_string.cc), with the preload linked into this test,
// so in the global scope as LD_PRELOAD puts it, and a stand-in RocksDB
// (fake_rocksdb.cc) loaded RTLD_LOCAL as mariadbd loads ha_rocksdb.so.
// Against a 6.29 RocksDB it answers every cuckoofilter form and the name
// 6.29's OPTIONS files store, refuses malformed ones, and forwards every
// other value to that RocksDB's own function; against any other version it
// forwards everything.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "rocksdb/filter_policy.h"
#include "rocksdb/status.h"

namespace {

namespace rdb = ROCKSDB_NAMESPACE;

using ParseFunction = rdb::Status (*)(const std::string&,
                                      std::shared_ptr<const rdb::FilterPolicy>*,
                                      bool*);

class FakeRocksDb {
 public:
  explicit FakeRocksDb(const char* path)
      : handle_(dlopen(path, RTLD_NOW | RTLD_LOCAL)) {
    EXPECT_NE(handle_, nullptr) << dlerror();
    if (handle_ != nullptr) {
      parse_ = reinterpret_cast<ParseFunction>(
          dlsym(handle_, "FakeParseFilterPolicy"));
    }
    EXPECT_NE(parse_, nullptr);
  }
  ~FakeRocksDb() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  FakeRocksDb(const FakeRocksDb&) = delete;
  FakeRocksDb& operator=(const FakeRocksDb&) = delete;

  // The status, the policy made, and whether the fake's own function
  // answered.
  struct Parsed {
    rdb::Status status;
    std::shared_ptr<const rdb::FilterPolicy> policy;
    bool forwarded = false;
  };
  Parsed Parse(const std::string& value) const {
    Parsed parsed;
    if (parse_ != nullptr) {
      parsed.status = parse_(value, &parsed.policy, &parsed.forwarded);
    }
    return parsed;
  }

 private:
  void* handle_;
  ParseFunction parse_ = nullptr;
};

TEST(CreateFromStringTest, AnswersTheCuckooFormsIn629) {
  const FakeRocksDb rocksdb(FAKE_ROCKSDB_6_29);
  for (const char* value :
       {"cuckoofilter", "cuckoofilter:10", "cuckoofilter:12.5",
        "cuckoofilter:10:monkey:8", "rocksdb_cuckoo.Cuckoo"}) {
    SCOPED_TRACE(value);
    const FakeRocksDb::Parsed parsed = rocksdb.Parse(value);
    EXPECT_TRUE(parsed.status.ok());
    EXPECT_FALSE(parsed.forwarded);
    ASSERT_NE(parsed.policy, nullptr);
    // 6.29 names the filter block after Name(): the plugin's block key.
    EXPECT_STREQ(parsed.policy->Name(), "rocksdb_cuckoo.Cuckoo");
  }
}

TEST(CreateFromStringTest, RefusesMalformedCuckooFormsIn629) {
  const FakeRocksDb rocksdb(FAKE_ROCKSDB_6_29);
  for (const char* value :
       {"cuckoofilter:", "cuckoofilter:ten", "cuckoofilter:2",
        "cuckoofilter:10:sideways", "cuckoofilter:10:monkey:1",
        "cuckoofilter:10:monkey:8:1"}) {
    SCOPED_TRACE(value);
    const FakeRocksDb::Parsed parsed = rocksdb.Parse(value);
    EXPECT_TRUE(parsed.status.IsInvalidArgument());
    EXPECT_FALSE(parsed.forwarded);
    EXPECT_EQ(parsed.policy, nullptr);
  }
}

TEST(CreateFromStringTest, ForwardsEveryOtherValueIn629) {
  const FakeRocksDb rocksdb(FAKE_ROCKSDB_6_29);
  for (const char* value : {"bloomfilter:10:false", "ribbonfilter:10", "",
                            "nullptr", "cuckoofilterx", "Cuckoo"}) {
    SCOPED_TRACE(value);
    const FakeRocksDb::Parsed parsed = rocksdb.Parse(value);
    EXPECT_TRUE(parsed.forwarded);
    EXPECT_TRUE(parsed.status.IsBusy());  // the fake's own answer
  }
}

TEST(CreateFromStringTest, ForwardsEverythingInAnotherVersion) {
  const FakeRocksDb rocksdb(FAKE_ROCKSDB_7_8);
  for (const char* value :
       {"cuckoofilter:10", "rocksdb_cuckoo.Cuckoo", "bloomfilter:10:false"}) {
    SCOPED_TRACE(value);
    const FakeRocksDb::Parsed parsed = rocksdb.Parse(value);
    EXPECT_TRUE(parsed.forwarded);
    EXPECT_TRUE(parsed.status.IsBusy());
    EXPECT_EQ(parsed.policy, nullptr);
  }
}

}  // namespace
