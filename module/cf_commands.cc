// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The CF.* commands, compatible with RedisBloom's: the same arguments,
// defaults, replies (RESP2 integers, RESP3 booleans where RedisBloom gives
// them) and error strings, so that its clients work unchanged. Beyond it:
// CF.RESERVE's BITS (fingerprint width) or FPRATE (the width for a rate),
// SEED, and CF.MERGE.
//
// Growth
// ------
// RedisBloom grows by chaining: each expansion adds a sub-filter that every
// lookup probes, so its false-positive rates add up. Here the filter grows
// in place (cuckoo_filter.h, "Growth"): a lookup stays two buckets, and the
// false-positive rate never exceeds that of BITS-bit fingerprints.
// RedisBloom rounds EXPANSION n up to a power of two e, and CF.INFO reports
// e as the "Expansion rate"; each of its growths chains a sub-filter e times
// the last. Here each growth multiplies the table by 2e, so that after k
// growths it holds (2e)^k times the reserved size, at least the
// 1 + e + ... + e^k of RedisBloom's chain, and CF.INFO reports e as
// RedisBloom does. The filter may grow until it is at least 32 times its
// reserved size, as RedisBloom's default of 32 sub-filters allows at
// EXPANSION 1. The price
// is paid up front: every slot holds the growth bits it will give up, so an
// EXPANSION 1 filter has BITS + 5 bits per slot until it has grown.
// EXPANSION 0 never grows.
//
// Bucket size
// -----------
// RedisBloom's BUCKETSIZE b (1 to 255) is the slots of a bucket of 8-bit
// fingerprints: a larger b fills the filter further and raises its
// false-positive rate. BUCKETSIZE 2, 4 and 8 are that here too. The core's
// buckets have 2, 4 or 8 slots, so any other b gets the layout with the
// fewest table bits per item (sizing.h) whose false-positive rate at the
// reserved capacity is at most that of RedisBloom's first sub-filter for b
// at the same capacity (2b slots compared, 255 fingerprint values, at the
// load of its nextpow2(capacity / b) buckets), with fingerprints no
// narrower than RedisBloom's 8 bits: narrower ones give a key too few
// alternate buckets for a large filter to reach its load. BITS or FPRATE
// then set the width in that layout's buckets. CF.INFO reports b as given: the
// value keeps it where the layout does not (cf_module_format.h, "The arguments
// chunk").
//
// Replication
// -----------
// Every write is deterministic given the filter's state (its kick-out
// victims come from a generator whose state is part of the filter), so
// replicating the commands keeps replicas identical to the primary. What
// is not in a command is its filter's random seed: a command that creates a
// filter replicates a CF.RESERVE that names the seed, before itself. An
// insert that finds the filter full still advances its generator, so a
// CF.ADD that fails replicates as the CF.INSERT of its item, which gives no
// error. A CF.DEL that deleted nothing changed nothing, and is not
// replicated. The one write that depends on more than the state is an
// insert that fails for want of memory, answered as for a full filter. It
// leaves the filter as it was (not replicated), or, when the growth failed,
// as if the filter could not grow: the replica may have the memory, so that
// insert replicates as CF.INSERT key NOGROW ITEMS item, which holds the
// replica's filter at its size and ends in the same state.
#include "cf_commands.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cf_value.h"
#include "cuckoo/sizing.h"

namespace cuckoo_cf {
namespace {

RedisModuleType* filter_type = nullptr;

// RedisBloom's largest capacity; this module's default fingerprint width,
// and how far a filter may grow (log2 of the factor).
constexpr long long kMaxCapacity = 1LL << 30;
constexpr long long kDefaultBits = 8;
constexpr int kGrowthBits = 5;

const char* const kLoadingError =
    "ERR the filter is still being loaded by CF.LOADCHUNK";

// CF.RESERVE's arguments, with RedisBloom's defaults.
struct ReserveArgs {
  long long capacity = 1024;
  long long bucket_size = 2;  // as given (see "Bucket size")
  int slots = 2;              // the layout's, for bucket_size
  long long max_iterations = 20;
  long long expansion = 1;
  long long bits = kDefaultBits;
  double fprate = 0;  // FPRATE when given: chooses bits
  std::optional<uint64_t> seed;
};

// CF.RESERVE's integer options, with RedisBloom's ranges (BITS is this
// module's).
struct IntegerOption {
  const char* name;
  long long low;
  long long high;
  long long ReserveArgs::*field;
};

constexpr IntegerOption kIntegerOptions[] = {
    {"BUCKETSIZE", 1, 255, &ReserveArgs::bucket_size},
    {"MAXITERATIONS", 1, 65535, &ReserveArgs::max_iterations},
    {"EXPANSION", 0, 32768, &ReserveArgs::expansion},
    {"BITS", cuckoo::kMinFingerprintBits, cuckoo::kMaxFingerprintBits,
     &ReserveArgs::bits},
};

// The server writes a boolean as RESP2's integer 1 or 0, and a map as an
// array of pairs, for a RESP2 client: only where RedisBloom's RESP3 reply
// is not what RESP2 would give is the protocol asked (its flags are a call
// that computes many).
bool IsResp3(RedisModuleCtx* ctx) {
  return (RedisModule_GetContextFlags(ctx) & REDISMODULE_CTX_FLAGS_RESP3) != 0;
}

// A boolean when as_bool, or an integer.
int ReplyWithFlag(RedisModuleCtx* ctx, bool as_bool, long long value) {
  if (as_bool) return RedisModule_ReplyWithBool(ctx, value != 0);
  return RedisModule_ReplyWithLongLong(ctx, value);
}

int ReplyWithError(RedisModuleCtx* ctx, const std::string& message) {
  return RedisModule_ReplyWithError(ctx, message.c_str());
}

bool ArgIs(RedisModuleString* arg, const char* word) {
  size_t size;
  const char* data = RedisModule_StringPtrLen(arg, &size);
  return size == std::strlen(word) && strncasecmp(data, word, size) == 0;
}

std::string ArgString(RedisModuleString* arg) {
  size_t size;
  const char* data = RedisModule_StringPtrLen(arg, &size);
  return std::string(data, size);
}

// The key and its filter: status kFound with value set, or why not. It
// closes the key when it goes out of scope, however the command ends: the
// commands do not use the context's automatic memory, whose list of
// what to free costs an allocation in every command.
enum class Status { kEmpty, kWrongType, kFound };
struct Opened {
  Opened(RedisModuleKey* opened_key, Status opened_status,
         FilterValue* opened_value)
      : key(opened_key), status(opened_status), value(opened_value) {}
  ~Opened() { RedisModule_CloseKey(key); }
  Opened(const Opened&) = delete;
  Opened& operator=(const Opened&) = delete;

  RedisModuleKey* const key;
  const Status status;
  FilterValue* const value;
};

Opened Open(RedisModuleCtx* ctx, RedisModuleString* name, int mode) {
  auto* key =
      static_cast<RedisModuleKey*>(RedisModule_OpenKey(ctx, name, mode));
  const int type = RedisModule_KeyType(key);
  if (type == REDISMODULE_KEYTYPE_EMPTY) {
    return Opened(key, Status::kEmpty, nullptr);
  }
  if (type != REDISMODULE_KEYTYPE_MODULE ||
      RedisModule_ModuleTypeGetType(key) != filter_type) {
    return Opened(key, Status::kWrongType, nullptr);
  }
  return Opened(key, Status::kFound,
                static_cast<FilterValue*>(RedisModule_ModuleTypeGetValue(key)));
}

// RedisBloom's replies for a key that is missing or of another type.
const char* StatusError(Status status) {
  switch (status) {
    case Status::kEmpty:
      return "ERR not found";
    case Status::kWrongType:
      return REDISMODULE_ERRORMSG_WRONGTYPE;
    case Status::kFound:
      break;
  }
  return "ERR item exists";
}

void Notify(RedisModuleCtx* ctx, const char* event, RedisModuleString* key) {
  RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_GENERIC, event, key);
}

// The integer option named by arg, or nullptr.
const IntegerOption* FindIntegerOption(RedisModuleString* arg) {
  for (const IntegerOption& option : kIntegerOptions) {
    if (ArgIs(arg, option.name)) return &option;
  }
  return nullptr;
}

// Parses value into option's field of args if it is in the option's range;
// otherwise replies with RedisBloom's error and returns false.
bool ParseIntegerOption(RedisModuleCtx* ctx, const IntegerOption& option,
                        RedisModuleString* value, ReserveArgs* args) {
  long long parsed;
  if (RedisModule_StringToLongLong(value, &parsed) != REDISMODULE_OK) {
    ReplyWithError(ctx, std::string("Couldn't parse ") + option.name);
    return false;
  }
  if (parsed < option.low || parsed > option.high) {
    ReplyWithError(ctx, std::string(option.name) +
                            ": value must be in the range [" +
                            std::to_string(option.low) + ", " +
                            std::to_string(option.high) + "]");
    return false;
  }
  args->*option.field = parsed;
  return true;
}

bool CheckCapacity(RedisModuleCtx* ctx, const ReserveArgs& args) {
  if (args.capacity < 2 * args.bucket_size || args.capacity > kMaxCapacity) {
    ReplyWithError(ctx, "Capacity must be in the range [2 * BUCKETSIZE, " +
                            std::to_string(kMaxCapacity) + "]");
    return false;
  }
  return true;
}

// EXPANSION n's growth factor (twice n rounded up to a power of two; 0 for
// none) and how many growths reach kGrowthBits doublings (see "Growth").
struct Growth {
  uint32_t factor = 0;
  uint32_t max_growths = 0;
  int reserved_bits() const {
    return factor == 0 ? 0
                       : __builtin_ctz(factor) * static_cast<int>(max_growths);
  }
};

Growth GrowthOf(long long expansion) {
  Growth growth;
  if (expansion <= 0) return growth;
  growth.factor = 2;
  while (growth.factor < 2 * static_cast<uint64_t>(expansion)) {
    growth.factor *= 2;
  }
  const int factor_bits = __builtin_ctz(growth.factor);
  growth.max_growths =
      static_cast<uint32_t>((kGrowthBits + factor_bits - 1) / factor_bits);
  return growth;
}

cuckoo::BucketLayout LayoutOf(int slots, long long bits) {
  return cuckoo::BucketLayout{slots, static_cast<int>(bits),
                              slots == 4 && bits >= 5};
}

// The layout for BUCKETSIZE b at `capacity` (see "Bucket size"), with its
// default width.
cuckoo::BucketLayout LayoutForBucketSize(long long b, long long capacity) {
  if (b == 2 || b == 4 || b == 8) {
    return LayoutOf(static_cast<int>(b), kDefaultBits);
  }
  uint64_t buckets = 1;
  while (buckets < static_cast<uint64_t>(capacity / b)) buckets *= 2;
  const double redisbloom_load =
      std::min(1.0, static_cast<double>(capacity) / (buckets * b));
  const cuckoo::FilterConfig config = cuckoo::ChooseForFalsePositiveRate(
      cuckoo::FalsePositiveRate(static_cast<double>(b), 8, redisbloom_load),
      cuckoo::Construction::kDynamic, kDefaultBits);
  return LayoutOf(config.layout.bucket_size, config.layout.fingerprint_bits);
}

cuckoo::CuckooFilterOptions OptionsOf(const ReserveArgs& args, uint64_t seed) {
  cuckoo::CuckooFilterOptions options;
  options.layout = LayoutOf(args.slots, args.bits);
  options.max_kicks = static_cast<uint32_t>(args.max_iterations);
  options.seed = seed;
  const Growth growth = GrowthOf(args.expansion);
  options.expansion = growth.factor;
  if (growth.factor != 0) options.max_growths = growth.max_growths;
  return options;
}

// FPRATE: the narrowest fingerprint whose false-positive rate at the
// filter's sustained load, once every growth has used its bits, is at most
// the rate asked for. Replies with the error and returns false when no
// width that the growth bits leave reaches it.
bool ChooseBitsForRate(RedisModuleCtx* ctx, ReserveArgs* args) {
  const int widest =
      cuckoo::kMaxFingerprintBits - GrowthOf(args->expansion).reserved_bits();
  const std::optional<int> bits = cuckoo::NarrowestFingerprintForRate(
      args->slots, args->fprate, widest, cuckoo::Construction::kDynamic);
  if (bits.has_value()) {
    args->bits = *bits;
    return true;
  }
  ReplyWithError(ctx, "FPRATE: " + std::to_string(args->fprate) +
                          " needs fingerprints wider than the " +
                          std::to_string(widest) +
                          " bits that BUCKETSIZE and EXPANSION leave");
  return false;
}

uint64_t RandomSeed() {
  std::random_device device;
  return (uint64_t{device()} << 32) ^ device();
}

// Creates the filter in the empty key, replicates its creation with the
// seed (see "Replication") and notifies "cf.reserve". Replies with the error
// and returns null when the filter cannot be made.
FilterValue* Create(RedisModuleCtx* ctx, const Opened& opened,
                    RedisModuleString* name, const ReserveArgs& args) {
  const uint64_t seed = args.seed.has_value() ? *args.seed : RandomSeed();
  const cuckoo::CuckooFilterOptions options = OptionsOf(args, seed);
  FilterValue* value;
  try {
    value = new FilterValue(cuckoo::CuckooFilter::Reserve(
                                static_cast<uint64_t>(args.capacity), options),
                            static_cast<int>(args.bucket_size));
  } catch (const std::bad_alloc&) {
    ReplyWithError(ctx, "ERR Insufficient memory to create filter");
    return nullptr;
  } catch (const std::exception& e) {
    ReplyWithError(ctx,
                   std::string("ERR Could not create filter: ") + e.what());
    return nullptr;
  }
  RedisModule_ModuleTypeSetValue(opened.key, filter_type, value);
  const std::string seed_text = std::to_string(seed);
  RedisModule_Replicate(ctx, "CF.RESERVE", "slclclclclcc", name, args.capacity,
                        "BUCKETSIZE", args.bucket_size, "MAXITERATIONS",
                        args.max_iterations, "EXPANSION", args.expansion,
                        "BITS", args.bits, "SEED", seed_text.c_str());
  Notify(ctx, "cf.reserve", name);
  return value;
}

// CF.RESERVE key capacity [BUCKETSIZE n] [MAXITERATIONS n] [EXPANSION n]
//            [BITS n | FPRATE r] [SEED n]
int Reserve(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 3 || argc % 2 == 0) return RedisModule_WrongArity(ctx);
  ReserveArgs args;
  bool bits_given = false;
  if (RedisModule_StringToLongLong(argv[2], &args.capacity) != REDISMODULE_OK) {
    return ReplyWithError(ctx, "Bad capacity");
  }
  for (int i = 3; i < argc; i += 2) {
    RedisModuleString* value = argv[i + 1];
    if (const IntegerOption* option = FindIntegerOption(argv[i])) {
      if (!ParseIntegerOption(ctx, *option, value, &args)) {
        return REDISMODULE_OK;
      }
      if (option->field == &ReserveArgs::bits) bits_given = true;
    } else if (ArgIs(argv[i], "FPRATE")) {
      if (RedisModule_StringToDouble(value, &args.fprate) != REDISMODULE_OK) {
        return ReplyWithError(ctx, "Couldn't parse FPRATE");
      }
      if (!(args.fprate > 0 && args.fprate < 1)) {
        return ReplyWithError(ctx, "FPRATE: value must be in the range (0, 1)");
      }
    } else if (ArgIs(argv[i], "SEED")) {
      unsigned long long seed;
      if (RedisModule_StringToULongLong(value, &seed) != REDISMODULE_OK) {
        return ReplyWithError(ctx, "Couldn't parse SEED");
      }
      args.seed = seed;
    } else {
      return ReplyWithError(ctx,
                            "Unknown argument received: " + ArgString(argv[i]));
    }
  }
  if (args.fprate > 0 && bits_given) {
    return ReplyWithError(ctx, "FPRATE and BITS exclude each other");
  }
  if (!CheckCapacity(ctx, args)) return REDISMODULE_OK;
  const cuckoo::BucketLayout layout =
      LayoutForBucketSize(args.bucket_size, args.capacity);
  args.slots = layout.bucket_size;
  if (args.fprate > 0) {
    if (!ChooseBitsForRate(ctx, &args)) return REDISMODULE_OK;
  } else if (!bits_given) {
    args.bits = layout.fingerprint_bits;
  }
  const Opened opened =
      Open(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
  if (opened.status != Status::kEmpty) {
    return ReplyWithError(ctx, StatusError(opened.status));
  }
  if (Create(ctx, opened, argv[1], args) == nullptr) return REDISMODULE_OK;
  return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

// The shared part of CF.ADD, CF.ADDNX, CF.INSERT and CF.INSERTNX.
struct InsertMode {
  bool nx;
  bool multi;  // CF.INSERT*: an array reply, and no error for a full filter
  bool create;
  ReserveArgs reserve;
  bool grow = true;  // false: NOGROW, the filter is held at its size
};

// Holds a filter's growth for one command (NOGROW).
class GrowthHold {
 public:
  GrowthHold(cuckoo::CuckooFilter& filter, bool held) : filter_(filter) {
    filter_.HoldGrowth(held);
  }
  ~GrowthHold() { filter_.HoldGrowth(false); }
  GrowthHold(const GrowthHold&) = delete;
  GrowthHold& operator=(const GrowthHold&) = delete;

 private:
  cuckoo::CuckooFilter& filter_;
};

// A command's scratch array: on the stack for the few items of most
// commands, on the heap for more.
template <typename T>
class ItemArray {
 public:
  explicit ItemArray(size_t count) : data_(local_) {
    if (count > kLocal) {
      heap_.reset(new T[count]);
      data_ = heap_.get();
    }
  }
  ItemArray(const ItemArray&) = delete;  // data_ may point into local_
  ItemArray& operator=(const ItemArray&) = delete;
  T* data() { return data_; }
  T& operator[](size_t i) { return data_[i]; }

 private:
  static constexpr size_t kLocal = 16;
  T local_[kLocal];
  std::unique_ptr<T[]> heap_;
  T* data_;
};

// Each item's hash, for the batched calls.
void HashItems(const cuckoo::CuckooFilter& filter, RedisModuleString** items,
               int num_items, uint64_t* hashes) {
  for (int i = 0; i < num_items; ++i) {
    size_t size;
    const char* data = RedisModule_StringPtrLen(items[i], &size);
    hashes[i] = HashItem(filter, data, size);
  }
}

// Why an item was not stored for want of memory (see "Replication").
enum Refusal : char {
  kStoredOrFull = 0,  // not refused: replicated as it was answered
  kUnchanged = 1,     // nothing changed: not replicated
  kGrowthRefused = 2  // replicated with NOGROW
};

// An InsertResult that the batched insert never writes: the items it did
// not reach keep it.
constexpr auto kNotReached = static_cast<cuckoo::InsertResult>(-1);

// Inserts the items with the filter's batched insert, one batch from the
// first item and a new one after each item refused for want of memory.
// Such an item is answered as for a full filter, and refused[i] says
// whether the filter changed: the growth that failed counted a failed
// insert (CuckooFilter::GrowAndInsert); a reservation that failed before
// the walk changed nothing.
void InsertBatched(cuckoo::CuckooFilter& filter, const uint64_t* hashes,
                   int num_items, bool if_absent, cuckoo::InsertResult* results,
                   Refusal* refused) {
  const size_t count = static_cast<size_t>(num_items);
  std::fill(refused, refused + count, kStoredOrFull);
  size_t done = 0;
  while (done < count) {
    std::fill(results + done, results + count, kNotReached);
    const uint64_t failed_before = filter.history().failed_inserts;
    try {
      if (if_absent) {
        filter.InsertManyIfAbsent(hashes + done, count - done, results + done);
      } else {
        filter.InsertMany(hashes + done, count - done, results + done);
      }
      return;
    } catch (const std::bad_alloc&) {
      uint64_t full_before = 0;
      while (results[done] != kNotReached) {
        full_before += results[done] == cuckoo::InsertResult::kFull;
        ++done;
      }
      const uint64_t failed = filter.history().failed_inserts - failed_before;
      refused[done] = failed > full_before ? kGrowthRefused : kUnchanged;
      results[done++] = cuckoo::InsertResult::kFull;
    }
  }
}

int InsertItems(RedisModuleCtx* ctx, RedisModuleString** argv,
                RedisModuleString** items, int num_items,
                const InsertMode& mode) {
  const Opened opened =
      Open(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
  FilterValue* value = opened.value;
  if (opened.status == Status::kEmpty && mode.create) {
    value = Create(ctx, opened, argv[1], mode.reserve);
    if (value == nullptr) return REDISMODULE_OK;
  } else if (opened.status != Status::kFound) {
    return ReplyWithError(ctx, StatusError(opened.status));
  } else if (!value->ready()) {
    return ReplyWithError(ctx, kLoadingError);
  }
  cuckoo::CuckooFilter& filter = value->mutable_filter();
  ItemArray<uint64_t> hashes(static_cast<size_t>(num_items));
  ItemArray<cuckoo::InsertResult> results(static_cast<size_t>(num_items));
  ItemArray<Refusal> refused(static_cast<size_t>(num_items));
  HashItems(filter, items, num_items, hashes.data());
  {
    const GrowthHold hold(filter, !mode.grow);
    InsertBatched(filter, hashes.data(), num_items, mode.nx, results.data(),
                  refused.data());
  }
  // Booleans for every single-item reply, and in CF.INSERT's array.
  const bool as_bool = !mode.nx || !mode.multi;
  if (mode.multi) RedisModule_ReplyWithArray(ctx, num_items);
  bool full = false;
  bool inserted = false;
  bool any_refused = false;
  for (int i = 0; i < num_items; ++i) {
    any_refused |= refused[i] != kStoredOrFull;
    switch (results[i]) {
      case cuckoo::InsertResult::kOk:
        inserted = true;
        ReplyWithFlag(ctx, as_bool, 1);
        break;
      case cuckoo::InsertResult::kMayExist:
        ReplyWithFlag(ctx, as_bool, 0);
        break;
      case cuckoo::InsertResult::kFull:
        full = true;
        if (!mode.multi) {
          ReplyWithError(ctx, "Filter is full");
        } else if (!mode.nx && IsResp3(ctx)) {
          RedisModule_ReplyWithBool(ctx, 0);
        } else {
          RedisModule_ReplyWithLongLong(ctx, -1);
        }
        break;
    }
  }
  if (any_refused || (full && !mode.multi)) {
    // Item by item, as CF.INSERT, which answers a full filter without an
    // error; NOGROW where the primary could not grow.
    const char* command = mode.nx ? "CF.INSERTNX" : "CF.INSERT";
    for (int i = 0; i < num_items; ++i) {
      if (refused[i] == kUnchanged) continue;
      if (refused[i] == kGrowthRefused || !mode.grow) {
        RedisModule_Replicate(ctx, command, "sccs", argv[1], "NOGROW", "ITEMS",
                              items[i]);
      } else {
        RedisModule_Replicate(ctx, command, "scs", argv[1], "ITEMS", items[i]);
      }
    }
  } else {
    RedisModule_ReplicateVerbatim(ctx);
  }
  if (inserted) Notify(ctx, mode.multi ? "cf.insert" : "cf.add", argv[1]);
  return REDISMODULE_OK;
}

// CF.ADD key item, and CF.ADDNX (kIfAbsent)
template <bool kIfAbsent>
int Add(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return RedisModule_WrongArity(ctx);
  const InsertMode mode{kIfAbsent, false, true, ReserveArgs{}};
  return InsertItems(ctx, argv, argv + 2, 1, mode);
}

// CF.INSERT key [CAPACITY n] [NOCREATE] [NOGROW] ITEMS item..., and
// CF.INSERTNX (kIfAbsent). NOGROW (not RedisBloom's): the filter does not
// grow for these items; those that do not fit are answered as for a full
// filter.
template <bool kIfAbsent>
int Insert(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 4) return RedisModule_WrongArity(ctx);
  InsertMode mode{kIfAbsent, true, true, ReserveArgs{}};
  int at = 2;
  int items = -1;
  while (at < argc && items < 0) {
    if (ArgIs(argv[at], "CAPACITY")) {
      if (++at == argc) return RedisModule_WrongArity(ctx);
      if (RedisModule_StringToLongLong(argv[at++], &mode.reserve.capacity) !=
          REDISMODULE_OK) {
        return ReplyWithError(ctx, "Bad capacity");
      }
      if (!CheckCapacity(ctx, mode.reserve)) return REDISMODULE_OK;
    } else if (ArgIs(argv[at], "NOCREATE")) {
      mode.create = false;
      ++at;
    } else if (ArgIs(argv[at], "NOGROW")) {
      mode.grow = false;
      ++at;
    } else if (ArgIs(argv[at], "ITEMS")) {
      items = ++at;
    } else {
      return ReplyWithError(ctx, "Unknown argument received");
    }
  }
  if (items < 0 || items == argc) return RedisModule_WrongArity(ctx);
  return InsertItems(ctx, argv, argv + items, argc - items, mode);
}

// What a read command asks of each item.
enum class Question {
  kExists,     // CF.EXISTS key item
  kManyExist,  // CF.MEXISTS key item...
  kCount,      // CF.COUNT key item
};

// CF.EXISTS, CF.MEXISTS and CF.COUNT. A missing key answers 0 for every
// item, as RedisBloom does.
template <Question kQuestion>
int Check(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  constexpr bool kMulti = kQuestion == Question::kManyExist;
  if ((kMulti && argc < 3) || (!kMulti && argc != 3)) {
    return RedisModule_WrongArity(ctx);
  }
  const Opened opened = Open(ctx, argv[1], REDISMODULE_READ);
  if (opened.status == Status::kFound && !opened.value->ready()) {
    return ReplyWithError(ctx, kLoadingError);
  }
  const int num_items = argc - 2;
  ItemArray<long long> answers(static_cast<size_t>(num_items));
  std::fill(answers.data(), answers.data() + num_items, 0);
  if (opened.status == Status::kFound) {
    const cuckoo::CuckooFilter& filter = opened.value->filter();
    ItemArray<uint64_t> hashes(static_cast<size_t>(num_items));
    HashItems(filter, argv + 2, num_items, hashes.data());
    if (kQuestion == Question::kCount) {
      answers[0] = filter.Count(hashes[0]);
    } else if (num_items == 1) {
      // One item has no batch to overlap with.
      answers[0] = filter.Contains(hashes[0]);
    } else {
      ItemArray<bool> found(static_cast<size_t>(num_items));
      filter.ContainsBatch(hashes.data(), static_cast<size_t>(num_items),
                           found.data());
      for (int i = 0; i < num_items; ++i) answers[i] = found[i];
    }
  }
  const bool as_bool = kQuestion != Question::kCount;
  if (kMulti) RedisModule_ReplyWithArray(ctx, num_items);
  for (int i = 0; i < num_items; ++i) {
    ReplyWithFlag(ctx, as_bool, answers[i]);
  }
  return REDISMODULE_OK;
}

// CF.DEL key item
int Del(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return RedisModule_WrongArity(ctx);
  const Opened opened =
      Open(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
  if (opened.status != Status::kFound) return ReplyWithError(ctx, "Not found");
  if (!opened.value->ready()) return ReplyWithError(ctx, kLoadingError);
  cuckoo::CuckooFilter& filter = opened.value->mutable_filter();
  size_t size;
  const char* data = RedisModule_StringPtrLen(argv[2], &size);
  const bool deleted = filter.Erase(HashItem(filter, data, size));
  if (deleted) {
    RedisModule_ReplicateVerbatim(ctx);
    Notify(ctx, "cf.del", argv[1]);
  }
  return RedisModule_ReplyWithBool(ctx, deleted);
}

// CF.INFO key
int Info(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 2) return RedisModule_WrongArity(ctx);
  const Opened opened = Open(ctx, argv[1], REDISMODULE_READ);
  if (opened.status != Status::kFound) {
    return ReplyWithError(ctx, StatusError(opened.status));
  }
  if (!opened.value->ready()) return ReplyWithError(ctx, kLoadingError);
  const cuckoo::CuckooFilterInfo info = opened.value->filter().Info();
  const std::pair<const char*, long long> fields[] = {
      {"Size", static_cast<long long>(opened.value->MemoryUsage())},
      {"Number of buckets", static_cast<long long>(info.num_buckets)},
      {"Number of filters", static_cast<long long>(info.num_growths) + 1},
      {"Number of items inserted", static_cast<long long>(info.items_stored)},
      {"Number of items deleted", static_cast<long long>(info.items_deleted)},
      {"Bucket size", opened.value->bucket_size()},
      {"Expansion rate", info.expansion / 2LL},  // see "Growth"
      {"Max iterations", info.max_iterations},
  };
  constexpr long kFields = sizeof(fields) / sizeof(fields[0]);
  RedisModule_ReplyWithMap(ctx, kFields);
  for (const auto& [field, number] : fields) {
    RedisModule_ReplyWithSimpleString(ctx, field);
    RedisModule_ReplyWithLongLong(ctx, number);
  }
  return REDISMODULE_OK;
}

// CF.SCANDUMP key iterator: [next iterator, chunk], or [0, nil] at the end.
int ScanDump(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return RedisModule_WrongArity(ctx);
  long long position;
  if (RedisModule_StringToLongLong(argv[2], &position) != REDISMODULE_OK ||
      position < 0) {
    return ReplyWithError(ctx, "Invalid position");
  }
  const Opened opened = Open(ctx, argv[1], REDISMODULE_READ);
  if (opened.status != Status::kFound) {
    return ReplyWithError(ctx, StatusError(opened.status));
  }
  if (!opened.value->ready()) return ReplyWithError(ctx, kLoadingError);
  std::vector<uint8_t> chunk;
  RedisModule_ReplyWithArray(ctx, 2);
  if (!opened.value->DumpChunk(static_cast<uint64_t>(position), &chunk)) {
    RedisModule_ReplyWithLongLong(ctx, 0);
    return RedisModule_ReplyWithNull(ctx);
  }
  RedisModule_ReplyWithLongLong(ctx, position + 1);
  return RedisModule_ReplyWithStringBuffer(
      ctx, reinterpret_cast<const char*>(chunk.data()), chunk.size());
}

// CF.LOADCHUNK key iterator data: the iterator CF.SCANDUMP gave with data.
// A refused chunk leaves the key as it was.
int LoadChunk(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 4) return RedisModule_WrongArity(ctx);
  long long position;
  if (RedisModule_StringToLongLong(argv[2], &position) != REDISMODULE_OK ||
      position <= 0) {
    return ReplyWithError(ctx, "Invalid position");
  }
  const Opened opened =
      Open(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
  const std::string chunk = ArgString(argv[3]);
  std::string error;
  if (position == 1) {
    if (opened.status != Status::kEmpty) {
      return ReplyWithError(ctx, StatusError(opened.status));
    }
    std::optional<FilterValue> value = FilterValue::StartLoad(chunk, &error);
    if (!value.has_value()) {
      return ReplyWithError(ctx, "ERR Couldn't load chunk: " + error);
    }
    RedisModule_ModuleTypeSetValue(opened.key, filter_type,
                                   new FilterValue(std::move(*value)));
  } else {
    if (opened.status != Status::kFound) {
      return ReplyWithError(ctx, StatusError(opened.status));
    }
    const uint64_t expected = opened.value->next_chunk_position();
    if (expected != static_cast<uint64_t>(position)) {
      return ReplyWithError(
          ctx, expected == 0 ? "ERR item exists"
                             : "ERR Couldn't load chunk: position " +
                                   std::to_string(expected) + " is expected");
    }
    if (!opened.value->LoadChunk(chunk, &error)) {
      return ReplyWithError(ctx, "ERR Couldn't load chunk: " + error);
    }
  }
  RedisModule_ReplicateVerbatim(ctx);
  Notify(ctx, "cf.loadchunk", argv[1]);
  return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

// CF.MERGE destination source: adds every item of source to destination,
// which is created as a copy when it does not exist. The filters must have
// the same geometry and seed.
int Merge(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return RedisModule_WrongArity(ctx);
  const Opened source = Open(ctx, argv[2], REDISMODULE_READ);
  if (source.status != Status::kFound) {
    return ReplyWithError(ctx, StatusError(source.status));
  }
  if (!source.value->ready()) return ReplyWithError(ctx, kLoadingError);
  const Opened destination =
      Open(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
  if (destination.status == Status::kWrongType) {
    return ReplyWithError(ctx, StatusError(destination.status));
  }
  if (destination.status == Status::kEmpty) {
    RedisModule_ModuleTypeSetValue(destination.key, filter_type,
                                   new FilterValue(source.value->filter()));
  } else {
    if (!destination.value->ready()) return ReplyWithError(ctx, kLoadingError);
    cuckoo::CuckooFilter& into = destination.value->mutable_filter();
    if (into.options().seed != source.value->filter().options().seed) {
      return ReplyWithError(
          ctx,
          "ERR the filters hash items with different seeds: CF.MERGE into a "
          "missing key copies the source, or give both the same CF.RESERVE "
          "SEED");
    }
    if (into.Merge(source.value->filter()) != cuckoo::InsertResult::kOk) {
      return ReplyWithError(ctx, "Filter is full");
    }
  }
  RedisModule_ReplicateVerbatim(ctx);
  Notify(ctx, "cf.merge", argv[1]);
  return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

// Every command runs inside this: no exception may cross into the server.
template <int (*Handler)(RedisModuleCtx*, RedisModuleString**, int)>
int Guarded(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  try {
    return Handler(ctx, argv, argc);
  } catch (const std::bad_alloc&) {
    return ReplyWithError(ctx, "ERR Insufficient memory");
  } catch (const std::exception& e) {
    return ReplyWithError(ctx, std::string("ERR ") + e.what());
  }
}

constexpr uint64_t kWriteKey =
    REDISMODULE_CMD_KEY_RW | REDISMODULE_CMD_KEY_UPDATE;
constexpr uint64_t kInsertKey =
    REDISMODULE_CMD_KEY_RW | REDISMODULE_CMD_KEY_INSERT;
constexpr uint64_t kReadKey =
    REDISMODULE_CMD_KEY_RO | REDISMODULE_CMD_KEY_ACCESS;

}  // namespace

void SetFilterType(RedisModuleType* type) { filter_type = type; }

const std::vector<CommandSpec>& Commands() {
  static const std::vector<CommandSpec> commands = {
      {"cf.reserve", Guarded<Reserve>, "write deny-oom fast", 1, 1, kInsertKey,
       "write fast"},
      {"cf.add", Guarded<Add<false>>, "write deny-oom fast", 1, 1, kInsertKey,
       "write"},
      {"cf.addnx", Guarded<Add<true>>, "write deny-oom fast", 1, 1, kInsertKey,
       "write"},
      {"cf.insert", Guarded<Insert<false>>, "write deny-oom", 1, 1, kInsertKey,
       "write"},
      {"cf.insertnx", Guarded<Insert<true>>, "write deny-oom", 1, 1, kInsertKey,
       "write"},
      {"cf.exists", Guarded<Check<Question::kExists>>, "readonly fast", 1, 1,
       kReadKey, "read"},
      {"cf.mexists", Guarded<Check<Question::kManyExist>>, "readonly fast", 1,
       1, kReadKey, "read"},
      {"cf.count", Guarded<Check<Question::kCount>>, "readonly fast", 1, 1,
       kReadKey, "read"},
      {"cf.del", Guarded<Del>, "write fast", 1, 1, kWriteKey, "write"},
      {"cf.info", Guarded<Info>, "readonly fast", 1, 1, kReadKey, "read fast"},
      {"cf.scandump", Guarded<ScanDump>, "readonly", 1, 1, kReadKey, "read"},
      {"cf.loadchunk", Guarded<LoadChunk>, "write deny-oom", 1, 1, kInsertKey,
       "write"},
      {"cf.merge", Guarded<Merge>, "write deny-oom", 1, 2, kInsertKey, "write",
       kReadKey},
  };
  return commands;
}

}  // namespace cuckoo_cf
