# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# A private MariaDB server with MyRocks, for the MyRocks test and benchmark
# (sourced, not run): Debian's mariadbd on a Unix socket in a folder of the
# caller's, with no TCP port, the ROCKSDB engine loaded from Debian's
# ha_rocksdb.so, and optionally the MyRocks preload (myrocks/). Every wait is
# bounded; mariadb_stop ends the server whatever state it is in.
#
# usage: source "$(dirname "${BASH_SOURCE[0]}")/lib/mariadb.sh"
#        mariadb_install_packages WHO [PACKAGE...]
#        mariadb_init DIR
#        mariadb_start DIR CF_OPTIONS [PRELOAD] [MYSQLD_OPTION...]
#        mariadb_sql DIR SQL...     (tab-separated rows, no header)
#        mariadb_stop DIR
#   DIR         the server's folder: data/, sock, err.log, my.cnf
#   CF_OPTIONS  rocksdb_default_cf_options, e.g.
#               block_based_table_factory={filter_policy=cuckoofilter:10}
#               ("" for none)
#   PRELOAD     the MyRocks preload (librocksdb_cuckoo_myrocks.so), or ""
# mariadb_start returns 1 when the server does not come up within 60 s;
# whether the ROCKSDB engine loaded is the caller's to ask
# (mariadb_rocksdb_loaded).

mariadb_plugin_dir=/usr/lib/mysql/plugin

# Debian's MariaDB with MyRocks, and any other packages the caller needs.
mariadb_install_packages() {
  local who=$1
  shift
  cuckoo_install_packages "$who" mariadb-server mariadb-plugin-rocksdb "$@"
  [ -f "$mariadb_plugin_dir/ha_rocksdb.so" ] ||
    die "no $mariadb_plugin_dir/ha_rocksdb.so (Debian's mariadb-plugin-rocksdb)"
}

# --force: where the host's name does not resolve (a minimal root file
# system, a container), mariadb-install-db otherwise stops before writing
# the system tables; the server is reached only through its socket, as
# root@localhost, which needs no name.
mariadb_init() {
  local dir=$1
  mkdir -p "$dir"
  rm -rf "$dir/data"
  mariadb-install-db --no-defaults --datadir="$dir/data" --user="$(id -un)" \
    --auth-root-authentication-method=normal --force >"$dir/install.log" 2>&1 ||
    die "mariadb-install-db failed: $dir/install.log"
}

mariadb_start() {
  local dir=$1 cf_options=$2 preload=${3:-}
  shift 3 || shift $#
  : >"$dir/err.log"
  {
    echo "[mariadbd]"
    echo "datadir=$dir/data"
    echo "socket=$dir/sock"
    echo "pid-file=$dir/mariadbd.pid"
    echo "log-error=$dir/err.log"
    echo "skip-networking"
    echo "user=$(id -un)"
    echo "plugin-load-add=ha_rocksdb.so"
    [ -z "$cf_options" ] || echo "rocksdb_default_cf_options=$cf_options"
    local option
    for option in "$@"; do echo "$option"; done
  } >"$dir/my.cnf"
  rm -f "$dir/sock"
  if [ -n "$preload" ]; then
    LD_PRELOAD=$preload mariadbd --defaults-file="$dir/my.cnf" </dev/null \
      >>"$dir/err.log" 2>&1 &
  else
    mariadbd --defaults-file="$dir/my.cnf" </dev/null >>"$dir/err.log" 2>&1 &
  fi
  echo $! >"$dir/server.pid"
  local waited
  for waited in $(seq 600); do
    mariadb -S "$dir/sock" -uroot --connect-timeout=2 -e "select 1" \
      >/dev/null 2>&1 && return 0
    kill -0 "$(cat "$dir/server.pid")" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

mariadb_sql() {
  local dir=$1
  shift
  mariadb -S "$dir/sock" -uroot --connect-timeout=10 --batch \
    --skip-column-names -e "$*"
}

# Whether the ROCKSDB engine is loaded and usable.
mariadb_rocksdb_loaded() {
  [ "$(mariadb_sql "$1" "select support from information_schema.engines \
    where engine = 'ROCKSDB'" 2>/dev/null)" != "" ]
}

mariadb_stop() {
  local dir=$1 pid waited
  [ -f "$dir/server.pid" ] || return 0
  pid=$(cat "$dir/server.pid")
  rm -f "$dir/server.pid"
  kill -0 "$pid" 2>/dev/null || return 0
  timeout 40 mariadb-admin -S "$dir/sock" -uroot --connect-timeout=2 \
    --shutdown-timeout=30 shutdown >/dev/null 2>&1 ||
    kill -TERM "$pid" 2>/dev/null || true
  for waited in $(seq 300); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
