// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The compiler attributes the hot paths use, in one place: what every file
// of the core may include without taking in anything else.
#pragma once

// The hot paths are inlined into every lookup loop whatever the
// compiler's size heuristics say: a call per key costs more than the work.
#define CUCKOO_ALWAYS_INLINE inline __attribute__((always_inline))
// The same for a lambda, after its parameters. A lambda that only
// prefetches has no effect that the compiler counts: unless it is inlined
// before the compiler looks for functions without side effects, calls to it
// are deleted as dead code.
#define CUCKOO_INLINE_LAMBDA __attribute__((always_inline))
// And cold paths are kept out of line, so that the hot ones that branch to
// them stay small enough to inline.
#define CUCKOO_NOINLINE __attribute__((noinline))
// A cold path of a lookup that reads memory and writes none is declared
// pure: the compiler then knows that the call leaves the filter as it was,
// so what a caller's lookup loop read from the filter before the call is
// still valid after it, and the loop keeps more of it in registers. Only
// for functions with no side effect at all.
#define CUCKOO_PURE __attribute__((pure))
