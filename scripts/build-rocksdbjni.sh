#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Builds RocksJava (the rocksdbjni jar with librocksdbjni-linux64.so inside)
# from a release tarball, offline, the way Maven Central's jar is built, and
# caches it outside the tree: the stock jar that the Java library's tests run
# against.
#
# Maven's jar is RocksDB's `make rocksdbjavastatic` (PORTABLE=1,
# DEBUG_LEVEL=0: -O2, NDEBUG, -fno-rtti) in a devtoolset image, whose
# libstdc++ has the old std::string ABI; the library has no visibility flags
# or version script, so it exports RocksDB's C++ symbols. Here: the same
# Makefile targets and flags, with -D_GLIBCXX_USE_CXX11_ABI=0, except that
#   - the compression libraries are Debian's, linked dynamically, instead of
#     static copies that rocksdbjavastatic_deps downloads (RocksDB calls
#     Snappy through its char* functions only, so the ABI does not matter);
#   - the JNI sources are compiled one object each (a makefile read after
#     RocksDB's own), in parallel and through the compiler cache, with the
#     same flags, rather than in one compiler call;
#   - the test jars that java/Makefile would download (it compiles the
#     tests, four of whose JNI headers the library needs) are Debian's
#     junit4, hamcrest and assertj, copied where it looks first.
# RocksDB's platform detection reads its switches from the environment:
# gflags, jemalloc, liburing and the rest that Debian has and the Maven image
# has not are turned off there.
#
# usage: scripts/build-rocksdbjni.sh VERSION | TARBALL
#   VERSION  9.7.3 (Kafka 4.0), 10.1.3 (Kafka 4.1) or frocksdb-8.10.0
#            (Flink 2.x): the tarballs in $ROCKSDB_TARBALLS or
#            ../shared/rocksdb, checked against scripts/rocksdb-source.sha256
#   prints the folder holding rocksdbjni.jar, librocksdbjni-linux64.so and
#   `source`, the tree it was built from. 15 to 25 minutes on two cores the
#   first time, seconds once cached.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
repo_root=$cuckoo_repo_root
arg=${1:?usage: scripts/build-rocksdbjni.sh VERSION | TARBALL}

cuckoo_install_packages build-rocksdbjni make g++ openjdk-17-jdk-headless junit4 \
  libhamcrest-java libassertj-core-java libsnappy-dev zlib1g-dev libbz2-dev \
  liblz4-dev libzstd-dev
if [ -f "$arg" ]; then
  tarball=$arg
else
  name=rocksdb-$arg.tar.gz
  [[ "$arg" == frocksdb-* ]] && name=$arg.tar.gz
  tarball=""
  for dir in ${ROCKSDB_TARBALLS:+"$ROCKSDB_TARBALLS"} "$repo_root/../shared/rocksdb"; do
    [ -f "$dir/$name" ] && tarball=$dir/$name && break
  done
  [ -n "$tarball" ] || die "no $name in ${ROCKSDB_TARBALLS:-} $repo_root/../shared/rocksdb"
fi
# Verified by its pinned checksum, extracted once.
tree=$("$repo_root/scripts/fetch-rocksdb-source.sh" "$cuckoo_cache_root/rocksdbjni-source" \
  --full "$tarball")
version=$(awk '/^#define ROCKSDB_(MAJOR|MINOR|PATCH) / { v = v (v == "" ? "" : ".") $3 }
  END { print v }' "$tree/include/rocksdb/version.h")
flavour=rocksdb
[ -f "$tree/java/src/main/java/org/rocksdb/FlinkCompactionFilter.java" ] && flavour=frocksdb

java_home=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
# SKIP_DEPENDS: no -MM pass over every source, for dependency files that a
# tree built once does not need.
make_vars=(PORTABLE=1 DEBUG_LEVEL=0 USE_RTTI=0 DISABLE_WARNING_AS_ERROR=1 SKIP_DEPENDS=1
  EXTRA_CXXFLAGS=-D_GLIBCXX_USE_CXX11_ABI=0 ROCKSDB_PLUGINS= "JAVA_HOME=$java_home"
  "JAVA_COMPRESSIONS=-lsnappy -lz -lbz2 -llz4 -lzstd")
digest=$(printf '%s\n' "$tree" "${make_vars[@]}" "$(g++ -dumpfullversion)" | sha256sum | cut -c1-10)
out=$cuckoo_cache_root/rocksdbjni-$flavour-$version-$digest
if [ -f "$out/.complete" ]; then
  echo "$out"
  exit 0
fi

export ROCKSDB_DISABLE_GFLAGS=1 ROCKSDB_DISABLE_JEMALLOC=1 ROCKSDB_DISABLE_TCMALLOC=1 \
  ROCKSDB_DISABLE_NUMA=1 ROCKSDB_DISABLE_TBB=1 ROCKSDB_DISABLE_MEMKIND=1 \
  ROCKSDB_DISABLE_BENCHMARK=1 ROCKSDB_DISABLE_PG=1 ROCKSDB_USE_IO_URING=0
unset CFLAGS CXXFLAGS LDFLAGS USE_RTTI ROCKSDB_CXX_STANDARD
# No git repository above the tree: the Makefile's version stamp asks git.
export GIT_CEILING_DIRECTORIES=$(dirname "$tree")
# The compiler cache through Debian's links: the Makefile names its compiler.
[ -n "$cuckoo_ccache" ] && [ -d /usr/lib/ccache ] && export PATH=/usr/lib/ccache:$PATH

# java/Makefile copies its test jars from MVN_LOCAL when they are there, and
# downloads them otherwise. Mockito and cglib are imported by no test: an
# empty jar stands for each.
mvn_local=$tree/.m2-debian
jm_var() { awk -v k="$1" '$1 == k && $2 == "=" { print $3 }' "$tree/java/Makefile"; }
seed() {  # group/artifact path, jar, file name
  mkdir -p "$mvn_local/$1"
  cp "$2" "$mvn_local/$1/$3"
}
empty=$tree/.empty.jar
(cd "$(mktemp -d)" && "$java_home/bin/jar" --create --file "$empty" -C . .)
seed "junit/junit/$(jm_var JAVA_JUNIT_VER)" /usr/share/java/junit4.jar \
  "junit-$(jm_var JAVA_JUNIT_VER).jar"
seed "org/hamcrest/hamcrest/$(jm_var JAVA_HAMCREST_VER)" /usr/share/java/hamcrest.jar \
  "hamcrest-$(jm_var JAVA_HAMCREST_VER).jar"
seed "org/assertj/assertj-core/$(jm_var JAVA_ASSERTJ_VER)" /usr/share/java/assertj-core.jar \
  "assertj-core-$(jm_var JAVA_ASSERTJ_VER).jar"
seed "org/mockito/mockito-all/$(jm_var JAVA_MOCKITO_VER)" "$empty" \
  "mockito-all-$(jm_var JAVA_MOCKITO_VER).jar"
seed "cglib/cglib/$(jm_var JAVA_CGLIB_VER)" "$empty" "cglib-$(jm_var JAVA_CGLIB_VER).jar"
make_vars+=("MVN_LOCAL=$mvn_local")

# Every goal's name holds "rocksdbjavastatic", which gives the static build's
# object folder, DEBUG_LEVEL=0 and flags (RocksDB's Makefile).
extra_mk=$tree/.cuckoo-jni.mk
cat >"$extra_mk" <<'MAKE'
JNI_OBJECTS := $(patsubst %.cc,$(OBJ_DIR)/jni/%.o,$(ALL_JNI_NATIVE_SOURCES))
$(OBJ_DIR)/jni/%.o: %.cc
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS) -I./java/. $(JAVA_INCLUDE) -fPIC -c $< -o $@
rocksdbjavastatic_cuckoo_classes:
	cd java && $(MAKE) java java_test
rocksdbjavastatic_cuckoo_lib: $(LIB_OBJECTS) $(JNI_OBJECTS)
	$(CXX) $(CXXFLAGS) -shared -fPIC -o ./java/target/$(ROCKSDBJNILIB) $(JNI_OBJECTS) \
	  $(LIB_OBJECTS) $(JAVA_COMPRESSIONS) $(JAVA_STATIC_LDFLAGS)
	cd java/target && strip $(STRIPFLAGS) $(ROCKSDBJNILIB)
rocksdbjavastatic_cuckoo_flags:
	@echo $(CXXFLAGS)
MAKE
rocksdb_make() { make --no-print-directory -C "$tree" -f Makefile -f "$extra_mk" "${make_vars[@]}" "$@"; }
flags=$(rocksdb_make rocksdbjavastatic_cuckoo_flags | tr '\n' ' ')
for flag in -fno-rtti -DNDEBUG -O2 -D_GLIBCXX_USE_CXX11_ABI=0; do
  [[ " $flags " == *" $flag "* ]] || die "RocksDB's flags lack $flag: $flags"
done
[[ " $flags " != *" -march="* && " $flags " != *" -fvisibility"* ]] ||
  die "RocksDB's flags are not Maven's: $flags"

started=$(date +%s)
log "building rocksdbjni $flavour $version (15 to 25 minutes on two cores the first time)"
rocksdb_make rocksdbjavastatic_cuckoo_classes >"$tree/.cuckoo-java.log" 2>&1 ||
  { tail -n 30 "$tree/.cuckoo-java.log" >&2; die "compiling RocksJava's classes failed"; }
rocksdb_make -j2 rocksdbjavastatic_cuckoo_lib >"$tree/.cuckoo-build.log" 2>&1 ||
  { grep -E 'error|Error' "$tree/.cuckoo-build.log" | head -n 20 >&2
    die "building librocksdbjni failed (log: $tree/.cuckoo-build.log)"; }
rocksdb_make rocksdbjava_jar >>"$tree/.cuckoo-build.log" 2>&1 ||
  die "packing the rocksdbjni jar failed (log: $tree/.cuckoo-build.log)"

library=$tree/java/target/librocksdbjni-linux64.so
jar=$(ls "$tree"/java/target/*rocksdbjni-*-linux64.jar | head -n 1)
# What the plugin relies on: RocksDB's symbols exported with the old
# std::string ABI, and no RTTI.
symbols=$(nm -D --defined-only "$library")
grep -q ' _ZN7rocksdb12FilterPolicy16CreateFromString.*RKSs' <<<"$symbols" ||
  die "$library does not export FilterPolicy::CreateFromString with the old std::string ABI"
! grep -q ' _ZTIN7rocksdb12FilterPolicyE$' <<<"$symbols" ||
  die "$library has RocksDB's typeinfo: built with RTTI"
rm -rf "$out"
mkdir -p "$out"
cp "$library" "$out/"
cp "$jar" "$out/rocksdbjni.jar"
ln -sfn "$tree" "$out/source"
echo "$flavour $version" >"$out/release"
touch "$out/.complete"
log "rocksdbjni $flavour $version built in $((($(date +%s) - started) / 60)) minutes: $out"
echo "$out"
