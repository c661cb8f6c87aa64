# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# What every build of the project shares: the build type (Release unless
# named), C++17, position-independent code, the warning flags
# (CUCKOO_WARNINGS), and the header-only core library (include/cuckoo, no
# RocksDB types) as the target cuckoo_core, with xxHash, its one dependency.
# Included right after project() by the project's CMakeLists.txt, and by
# module/CMakeLists.txt when the module is built on its own.
if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE Release CACHE STRING "Build type" FORCE)
endif()
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
set(CUCKOO_WARNINGS -Wall -Wextra -Wshadow -Werror)

find_package(PkgConfig REQUIRED)
# XXH3's output is frozen only from xxHash 0.8.0: filters written by a build
# against an older xxHash would not read back under a newer one.
pkg_check_modules(XXHASH IMPORTED_TARGET libxxhash>=0.8.0)
if(NOT XXHASH_FOUND)
  message(FATAL_ERROR "rocksdb-cuckoo needs xxHash 0.8.0 or later (Debian: "
                      "libxxhash-dev): XXH3, its key hash, changed its output "
                      "before 0.8.0, so filters would not read back")
endif()

add_library(cuckoo_core INTERFACE)
add_library(rocksdb_cuckoo::core ALIAS cuckoo_core)
target_include_directories(cuckoo_core INTERFACE
  $<BUILD_INTERFACE:${CMAKE_CURRENT_LIST_DIR}/../include>
  $<INSTALL_INTERFACE:include>)
target_link_libraries(cuckoo_core INTERFACE PkgConfig::XXHASH)
target_compile_features(cuckoo_core INTERFACE cxx_std_17)

# cuckoo_fetch(VAR SCRIPT FOLDER DESCRIPTION HINT): when the cache variable
# VAR is empty, runs SCRIPT (one of scripts/fetch-*.sh, which fetch a source
# from Debian's archive) into FOLDER of the build tree and sets VAR to the
# folder it prints; stops with HINT, how to do without, when it fails.
function(cuckoo_fetch var script folder description hint)
  set(${var} "" CACHE PATH "${description}")
  if(${var})
    return()
  endif()
  execute_process(COMMAND ${script} ${CMAKE_BINARY_DIR}/${folder}
                  OUTPUT_VARIABLE fetched OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "Could not fetch ${var} (${description}); ${hint}")
  endif()
  set(${var} "${fetched}" CACHE PATH "${description}" FORCE)
endfunction()
