// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Uses the installed package: registers the policy, parses it strictly, and
// builds a core filter. Exits nonzero on any failure.
#include <cstdio>
#include <memory>

#include "cuckoo/cuckoo_filter.h"
#include "cuckoo_filter_policy.h"
#include "rocksdb/convenience.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/utilities/object_registry.h"

int main() {
  rocksdb_cuckoo::cuckoo_filter_register(
      *ROCKSDB_NAMESPACE::ObjectLibrary::Default(), "");
  ROCKSDB_NAMESPACE::ConfigOptions strict;
  strict.ignore_unsupported_options = false;
  strict.input_strings_escaped = false;
  std::shared_ptr<const ROCKSDB_NAMESPACE::FilterPolicy> policy;
  const auto status = ROCKSDB_NAMESPACE::FilterPolicy::CreateFromString(
      strict, "cuckoofilter:12", &policy);
  if (!status.ok() || policy == nullptr) {
    std::printf("policy: %s\n", status.ToString().c_str());
    return 1;
  }
  cuckoo::CuckooFilter filter(100);
  if (filter.Insert(42) != cuckoo::InsertResult::kOk || !filter.Contains(42)) {
    return 1;
  }
  std::printf("consumer: %s from the installed package\n",
              policy->GetId().c_str());
  return 0;
}
