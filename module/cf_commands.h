// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The CF.* commands: their table (names, flags, key positions, ACL
// categories) for cf_module.cc to register, and the data type they use.
#pragma once

#include <cstdint>
#include <vector>

#include "redis_module_api.h"

namespace cuckoo_cf {

struct CommandSpec {
  const char* name;
  RedisModuleCmdFunc handler;
  const char* flags;  // RedisModule_CreateCommand's
  int first_key;
  int last_key;
  uint64_t key_flags;          // REDISMODULE_CMD_KEY_* of the first key's spec
  const char* acl_categories;  // besides the module's own category
  uint64_t second_key_flags = 0;  // the second key's, if any
};

const std::vector<CommandSpec>& Commands();

// The module's data type, created by RedisModule_OnLoad before the
// commands are registered.
void SetFilterType(RedisModuleType* type);

}  // namespace cuckoo_cf
