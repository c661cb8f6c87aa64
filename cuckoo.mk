# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# In-tree build with RocksDB's Makefile or CMake: with this repository at
# rocksdb/plugin/cuckoo, `make ROCKSDB_PLUGINS=cuckoo` or
# `cmake -DROCKSDB_PLUGINS=cuckoo` compiles the plugin into librocksdb and
# registers "cuckoofilter" when ObjectRegistry::Default() is created.
# RocksDB's CMake reads the SOURCES, FUNC and LIBS lines with regular
# expressions: keep each on one line, spelled "name = value".
cuckoo_SOURCES = plugin/allocator_rounding.cc plugin/construction_charge.cc plugin/cuckoo_filter_bits_builder.cc plugin/cuckoo_filter_bits_reader.cc plugin/cuckoo_filter_policy.cc plugin/level_budgets.cc
cuckoo_HEADERS = plugin/cuckoo_filter_policy.h plugin/rocksdb_cuckoo.h plugin/rocksdb_versions.h
cuckoo_FUNC = cuckoo_filter_register
cuckoo_LIBS = xxhash
cuckoo_CXXFLAGS = -I./plugin/cuckoo/include
cuckoo_LDFLAGS = -lxxhash
