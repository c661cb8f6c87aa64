# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# The plugin's sources, as absolute paths: compiled against the linked
# RocksDB by plugin/CMakeLists.txt, and against MyRocks' 6.29 headers by
# myrocks/CMakeLists.txt.
set(CUCKOO_PLUGIN_DIR ${CMAKE_CURRENT_LIST_DIR})
set(CUCKOO_PLUGIN_SOURCES
  ${CUCKOO_PLUGIN_DIR}/allocator_rounding.cc
  ${CUCKOO_PLUGIN_DIR}/construction_charge.cc
  ${CUCKOO_PLUGIN_DIR}/cuckoo_filter_bits_builder.cc
  ${CUCKOO_PLUGIN_DIR}/cuckoo_filter_bits_reader.cc
  ${CUCKOO_PLUGIN_DIR}/cuckoo_filter_policy.cc
  ${CUCKOO_PLUGIN_DIR}/level_budgets.cc)
