// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The policy's FilterBitsReader: zero-copy probes of a filter block, and the
// always-match reader for blocks this build does not read.
#pragma once

#include <cstdint>
#include <deque>

#include "filter_format.h"
#include "table/block_based/filter_policy_internal.h"

namespace rocksdb_cuckoo {

// A reader of `block` (block.has_table), compiled for its layout and bucket
// count where it can be (cuckoo::VisitTable).
ROCKSDB_NAMESPACE::FilterBitsReader* NewCuckooFilterBitsReader(
    const DecodedBlock& block);

// Whether the reader of `block` (block.has_table) answers "may match" for
// every key whose cuckoo::HashKey is in `hashes`: the builder's
// MaybePostVerify checks a block through the code that will read it. The
// reader lives on the stack.
bool MayMatchEveryHash(const DecodedBlock& block,
                       const std::deque<uint64_t>& hashes);

// A reader that answers "may match" for every key.
ROCKSDB_NAMESPACE::FilterBitsReader* NewAlwaysMatchBitsReader();

}  // namespace rocksdb_cuckoo
