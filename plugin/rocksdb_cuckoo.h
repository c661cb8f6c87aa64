/* SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only */
/* The C interface of rocksdb-cuckoo, for programs that use RocksDB through
 * its C API (rocksdb/c.h), as the Go, Python, Rust and Java bindings do:
 * one call that makes the "cuckoofilter" filter policy known to RocksDB.
 * Link librocksdb_cuckoo.so (or the static librocksdb_cuckoo plugin library
 * with a C++ linker) beside librocksdb. */
#ifndef ROCKSDB_CUCKOO_H_
#define ROCKSDB_CUCKOO_H_

#ifdef __cplusplus
extern "C" {
#endif

/* Registers the "cuckoofilter" policy in RocksDB's default object library,
 * so that options strings and OPTIONS files parsed afterwards can name it:
 * "block_based_table_factory={filter_policy=cuckoofilter:10}". Call it
 * before parsing them. Registering again does nothing. Returns 0 on
 * success, -1 if the policy could not be registered.
 *
 * RocksDB's C API parses options leniently: a policy it cannot load (this
 * one, unregistered, or a misspelled name) is dropped without an error, and
 * the DB runs without a filter. Check the policy in effect: the OPTIONS
 * file RocksDB writes into the DB's directory names it (filter_policy=
 * nullptr when there is none), and once a file is written,
 * rocksdb_property_value(db, "rocksdb.aggregated-table-properties") has a
 * nonzero "filter block size". */
int rocksdb_cuckoo_register_default(void);

#ifdef __cplusplus
}
#endif

#endif /* ROCKSDB_CUCKOO_H_ */
