// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The module's entry point: the CF data type (RDB, AOF rewrite, MEMORY
// USAGE, DEBUG DIGEST, COPY) and the registration of the CF.* commands with
// their flags, key specs and ACL categories. One binary serves Redis 7.0 and
// later and Valkey: the API functions newer servers add (ACL categories)
// are looked up at load time and used only where the server has them.
#define CUCKOO_CF_DEFINES_MODULE_API
#include <cstddef>
#include <exception>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "cf_commands.h"
#include "cf_module_format.h"
#include "cf_value.h"
#include "redis_module_api.h"

namespace cuckoo_cf {
namespace {

// The RDB encoding version of the type's records: 2 writes the record as
// string buffers (cf_module_format.h, ForEachRecordBuffer), so that saving
// copies nothing the size of a filter; 1 is the whole record in one buffer,
// read still.
constexpr int kEncodingVersion = 2;
constexpr int kSingleBufferVersion = 1;

void* RdbLoad(RedisModuleIO* io, int encoding_version) {
  if (encoding_version != kEncodingVersion &&
      encoding_version != kSingleBufferVersion) {
    RedisModule_LogIOError(
        io, "warning",
        "CF record of encoding version %d: this module reads %d and %d",
        encoding_version, kSingleBufferVersion, kEncodingVersion);
    return nullptr;
  }
  try {
    std::string error;
    std::optional<FilterValue> value;
    // Each buffer as RedisModule_LoadStringBuffer gives it; false after an
    // I/O error (logged by the server) or a refused buffer (*error set).
    const auto for_each_buffer = [&](const auto& use) {
      const uint64_t count = encoding_version == kSingleBufferVersion
                                 ? 1
                                 : RedisModule_LoadUnsigned(io);
      for (uint64_t i = 0; i < count && !RedisModule_IsIOError(io); ++i) {
        size_t size = 0;
        char* buffer = RedisModule_LoadStringBuffer(io, &size);
        if (buffer == nullptr) return false;
        struct Release {
          char* buffer;
          ~Release() { RedisModule_Free(buffer); }
        } release{buffer};
        if (!use(buffer, size)) return false;
      }
      return !RedisModule_IsIOError(io);
    };
    bool read;
    if (encoding_version == kSingleBufferVersion) {
      read = for_each_buffer([&](const char* data, size_t size) {
        value = ReadSingleBufferRecord(std::string(data, size), &error);
        return value.has_value();
      });
    } else {
      RecordReader reader;
      read = for_each_buffer([&](const char* data, size_t size) {
        return reader.Add(data, size, &error);
      });
      if (read) value = reader.Finish(&error);
    }
    if (RedisModule_IsIOError(io)) return nullptr;
    if (!read || !value.has_value()) {
      RedisModule_LogIOError(io, "warning", "invalid CF record: %s",
                             error.c_str());
      return nullptr;
    }
    return new FilterValue(std::move(*value));
  } catch (const std::exception& e) {
    RedisModule_LogIOError(io, "warning", "CF record not loaded: %s", e.what());
    return nullptr;
  }
}

void RdbSave(RedisModuleIO* io, void* value) {
  const FilterValue& filter = *static_cast<FilterValue*>(value);
  RedisModule_SaveUnsigned(io, RecordBufferCount(filter));
  ForEachRecordBuffer(filter, [&](const char* data, size_t size) {
    RedisModule_SaveStringBuffer(io, data, size);
  });
}

void AofRewrite(RedisModuleIO* aof, RedisModuleString* key, void* value) {
  static_cast<FilterValue*>(value)->ForEachChunk(
      [&](uint64_t position, const std::string& chunk) {
        RedisModule_EmitAOF(aof, "CF.LOADCHUNK", "slb", key,
                            static_cast<long long>(position), chunk.data(),
                            chunk.size());
      });
}

size_t MemoryUsage(const void* value) {
  return static_cast<const FilterValue*>(value)->MemoryUsage();
}

void Digest(RedisModuleDigest* digest, void* value) {
  ForEachRecordBuffer(*static_cast<FilterValue*>(value),
                      [&](const char* data, size_t size) {
                        RedisModule_DigestAddStringBuffer(digest, data, size);
                      });
  RedisModule_DigestEndSequence(digest);
}

void Free(void* value) { delete static_cast<FilterValue*>(value); }

// Active defragmentation (`activedefrag yes`, in a server built with the
// allocator it needs): the server offers each of a value's allocations to
// RedisModule_DefragAlloc, which copies it into a fuller part of the heap
// when its own part is sparse, frees it and returns the copy, or returns
// NULL. The filter's buffers are arrays of plain values, which a copy of
// their bytes moves (RelocatableArray). The value's own object is not: it
// is moved out to the stack, its storage offered as raw bytes, and moved
// back into wherever the storage then is.
struct DefragCounts {
  unsigned long long values = 0;
  unsigned long long buffers = 0;
} defrag_moved;

int Defrag(RedisModuleDefragCtx* ctx, RedisModuleString*, void** value) {
  static_assert(std::is_nothrow_move_constructible_v<FilterValue>,
                "nothing may throw between the value's two moves");
  static_assert(alignof(FilterValue) <= alignof(std::max_align_t),
                "the moved storage is aligned as the allocator aligns");
  auto* old = static_cast<FilterValue*>(*value);
  FilterValue held(std::move(*old));
  old->~FilterValue();
  void* storage = RedisModule_DefragAlloc(ctx, old);
  defrag_moved.values += storage != nullptr;
  auto* moved =
      new (storage != nullptr ? storage : old) FilterValue(std::move(held));
  *value = moved;
  defrag_moved.buffers += static_cast<unsigned long long>(
      moved->RelocateStorage([ctx](void* buffer) {
        return RedisModule_DefragAlloc(ctx, buffer);
      }));
  return 0;  // done with this value
}

// INFO cuckoocf_defrag: the allocations Defrag moved since the module was
// loaded.
void Info(RedisModuleInfoCtx* ctx, int) {
  if (RedisModule_InfoAddSection(ctx, "defrag") == REDISMODULE_ERR) return;
  RedisModule_InfoAddFieldULongLong(ctx, "defrag_values_moved",
                                    defrag_moved.values);
  RedisModule_InfoAddFieldULongLong(ctx, "defrag_buffers_moved",
                                    defrag_moved.buffers);
}

void* Copy(RedisModuleString*, RedisModuleString*, const void* value) {
  try {
    return new FilterValue(*static_cast<const FilterValue*>(value));
  } catch (const std::exception&) {
    return nullptr;  // COPY then fails
  }
}

// The ACL functions of Redis 7.2 (categories of commands) and 7.4 (new
// categories), absent from older servers' API.
using AddAclCategoryFn = int (*)(RedisModuleCtx*, const char*);
using SetCommandAclCategoriesFn = int (*)(RedisModuleCommand*, const char*);

int RegisterCommands(RedisModuleCtx* ctx) {
  AddAclCategoryFn add_category = nullptr;
  SetCommandAclCategoriesFn set_categories = nullptr;
  RedisModule_GetApi("RedisModule_AddACLCategory", &add_category);
  RedisModule_GetApi("RedisModule_SetCommandACLCategories", &set_categories);
  const bool own_category =
      add_category != nullptr && add_category(ctx, "cuckoo") == REDISMODULE_OK;
  for (const CommandSpec& spec : Commands()) {
    if (RedisModule_CreateCommand(ctx, spec.name, spec.handler, spec.flags,
                                  spec.first_key, spec.last_key,
                                  1) == REDISMODULE_ERR) {
      RedisModule_Log(ctx, "warning", "could not register %s", spec.name);
      return REDISMODULE_ERR;
    }
    RedisModuleCommand* command = RedisModule_GetCommand(ctx, spec.name);
    if (set_categories != nullptr) {
      const std::string categories =
          std::string(spec.acl_categories) + (own_category ? " cuckoo" : "");
      if (set_categories(command, categories.c_str()) == REDISMODULE_ERR) {
        return REDISMODULE_ERR;
      }
    }
    RedisModuleCommandKeySpec key_specs[3] = {};
    const uint64_t flags[2] = {spec.key_flags, spec.second_key_flags};
    for (int k = 0; k <= spec.last_key - spec.first_key; ++k) {
      key_specs[k].flags = flags[k];
      key_specs[k].begin_search_type = REDISMODULE_KSPEC_BS_INDEX;
      key_specs[k].bs.index.pos = spec.first_key + k;
      key_specs[k].find_keys_type = REDISMODULE_KSPEC_FK_RANGE;
      key_specs[k].fk.range.lastkey = 0;
      key_specs[k].fk.range.keystep = 1;
    }
    RedisModuleCommandInfo info = {};
    info.version = REDISMODULE_COMMAND_INFO_VERSION;
    info.key_specs = key_specs;
    if (RedisModule_SetCommandInfo(command, &info) == REDISMODULE_ERR) {
      RedisModule_Log(ctx, "warning", "could not set the key specs of %s",
                      spec.name);
      return REDISMODULE_ERR;
    }
  }
  return REDISMODULE_OK;
}

}  // namespace
}  // namespace cuckoo_cf

extern "C" __attribute__((visibility("default"))) int RedisModule_OnLoad(
    RedisModuleCtx* ctx, RedisModuleString**, int argc) {
  if (RedisModule_Init(ctx, "cuckoocf", 1, REDISMODULE_APIVER_1) ==
      REDISMODULE_ERR) {
    return REDISMODULE_ERR;
  }
  if (argc != 0) {
    RedisModule_Log(ctx, "warning", "the CF module takes no arguments");
    return REDISMODULE_ERR;
  }
  RedisModule_SetModuleOptions(ctx, REDISMODULE_OPTIONS_HANDLE_IO_ERRORS);
  RedisModuleTypeMethods methods = {};
  methods.version = REDISMODULE_TYPE_METHOD_VERSION;
  methods.rdb_load = cuckoo_cf::RdbLoad;
  methods.rdb_save = cuckoo_cf::RdbSave;
  methods.aof_rewrite = cuckoo_cf::AofRewrite;
  methods.mem_usage = cuckoo_cf::MemoryUsage;
  methods.digest = cuckoo_cf::Digest;
  methods.free = cuckoo_cf::Free;
  methods.copy = cuckoo_cf::Copy;
  // Every server the module loads in has both (Redis 6.2 and later).
  if (RedisModule_DefragAlloc != nullptr) methods.defrag = cuckoo_cf::Defrag;
  RedisModuleType* type = RedisModule_CreateDataType(
      ctx, "cuckoo-CF", cuckoo_cf::kEncodingVersion, &methods);
  if (type == nullptr) return REDISMODULE_ERR;
  cuckoo_cf::SetFilterType(type);
  if (RedisModule_RegisterInfoFunc(ctx, cuckoo_cf::Info) == REDISMODULE_ERR) {
    return REDISMODULE_ERR;
  }
  return cuckoo_cf::RegisterCommands(ctx);
}
