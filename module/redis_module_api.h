// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The server's module API (redismodule.h, fetched from the server's source
// package by scripts/fetch-redis-module-header.sh). The header defines its
// function pointers in whichever file includes it; cf_module.cc, which
// fills them in at load time, defines them, and every other file of the
// module declares them.
#pragma once

#ifndef CUCKOO_CF_DEFINES_MODULE_API
#define REDISMODULE_API extern
#endif
#include "redismodule.h"
