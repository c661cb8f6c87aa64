# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Downloads the upstream tarball of a Debian source package (sourced, not
# run), for the scripts that fetch RocksDB's source tree and Redis's module
# header. The system's apt configuration is left alone: the deb-src entries,
# lists and cache live in a private folder of the caller's download cache.
#
# usage: source "$(dirname "${BASH_SOURCE[0]}")/lib/debian-source.sh"
#        debian_mirror
#        debian_source_download PACKAGE UPSTREAM SUITE OUT APT_DIR
#   PACKAGE   the source package, e.g. rocksdb or redis
#   UPSTREAM  its upstream version; any Debian revision of it will do, as
#             they share the tarball
#   SUITE     a Debian suite such as trixie, or "" for the system's own
#             suites (with their security and stable updates)
#   OUT       where the tarball goes (its name must be the orig tarball's)
#   APT_DIR   the private apt folder
# Progress goes to standard error; returns 1 with a reason when Debian has no
# such package or tarball. The caller checks the checksum.
debian_source_download() {
  local package=$1 upstream=$2 suite=$3 out=$4 apt_dir=$5
  mkdir -p "$apt_dir/sources.list.d" "$apt_dir/state/lists/partial" \
    "$apt_dir/cache/archives/partial"
  # The system's binary-package entries, turned into deb-src entries (and
  # moved to another suite if asked), in a private sources folder.
  : >"$apt_dir/sources.list"
  : >"$apt_dir/sources.list.d/system-as-src.sources"
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk -v suite="$suite" 'BEGIN { RS = ""; FS = OFS = "\n"; ORS = "\n\n" }
         {
           binary = 0
           release = 0  # lists a release suite, not only -updates/-security
           for (i = 1; i <= NF; i++) {
             if ($i ~ /^Types:/ && (" " $i " ") ~ / deb /) { binary = 1; $i = "Types: deb-src" }
             if ($i ~ /^Suites:/) {
               n = split(substr($i, 8), names, " ")
               for (j = 1; j <= n; j++) if (names[j] !~ /-/) release = 1
               if (suite != "") $i = "Suites: " suite
             }
           }
           if (binary && (suite == "" || release)) print
         }' "$f" >>"$apt_dir/sources.list.d/system-as-src.sources"
  done
  if [ -f /etc/apt/sources.list ]; then
    awk -v suite="$suite" '$1 == "deb" && (suite == "" || $0 !~ /-(security|updates|backports)/) {
        $1 = "deb-src"
        if (suite != "") {
          # deb [options] URI suite components...
          for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i !~ /\]$/) break
          $(i + 1) = suite
        }
        print
      }' /etc/apt/sources.list >>"$apt_dir/sources.list"
  fi
  local apt_opts=(-q -o "Dir::Etc::SourceList=$apt_dir/sources.list"
    -o "Dir::Etc::SourceParts=$apt_dir/sources.list.d"
    -o "Dir::State=$apt_dir/state" -o "Dir::Cache=$apt_dir/cache"
    -o "APT::Sandbox::User=$(id -un)")
  apt-get "${apt_opts[@]}" update >&2
  local deb_version
  deb_version=$(apt-cache "${apt_opts[@]}" showsrc "$package" 2>/dev/null |
    sed -n 's/^Version: //p' | awk -v up="$upstream" '{
        v = $0; sub(/^[0-9]+:/, "", v); sub(/-[^-]*$/, "", v)
        if (v == up) { print; exit }
      }')
  if [ -z "$deb_version" ]; then
    echo "Debian${suite:+ $suite} has no $package source package of version $upstream" >&2
    return 1
  fi
  local name uri
  name=$(basename "$out")
  uri=$(apt-get "${apt_opts[@]}" source --print-uris "$package=$deb_version" |
    awk -v name="$name" '$2 == name { gsub("\047", "", $1); print $1 }')
  if [ -z "$uri" ]; then
    echo "apt knows no $name for $package=$deb_version" >&2
    return 1
  fi
  echo "downloading $name (Debian source package $package=$deb_version)" >&2
  /usr/lib/apt/apt-helper -o "APT::Sandbox::User=$(id -un)" download-file \
    "$uri" "$out.partial" >&2
  mv "$out.partial" "$out"
}

# debian_mirror: prints the Debian archive that this machine's apt takes its
# own release from (the first source whose suite is the system's codename:
# not its -security or -updates archives, nor a third party's), read from
# the deb822 .sources files or sources.list. A company mirror is then used as
# apt uses it, and no host is named here. Returns 1 when there is none.
debian_mirror() {
  local codename uri
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  [ -n "$codename" ] || return 1
  uri=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
    awk -v codename="$codename" 'BEGIN { RS = ""; FS = "\n" }
      {
        deb = 0; release = 0; uri = ""
        for (i = 1; i <= NF; i++) {
          if ($i ~ /^Types:/ && (" " $i " ") ~ / deb /) deb = 1
          if ($i ~ /^URIs:/) { split(substr($i, 6), uris, " "); uri = uris[1] }
          if ($i ~ /^Suites:/ && (" " substr($i, 8) " ") ~ (" " codename " ")) release = 1
        }
        if (deb && release && uri != "") { print uri; exit }
      }')
  if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
    # deb [options] URI suite components...
    uri=$(awk -v codename="$codename" '$1 == "deb" {
        for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i !~ /\]$/) break
        if ($(i + 1) == codename) { print $i; exit }
      }' /etc/apt/sources.list)
  fi
  [ -n "$uri" ] || return 1
  echo "${uri%/}"
}

# debian_pinned_tarball PACKAGE UPSTREAM NAME SUMS: the upstream tarball NAME
# of Debian's source package PACKAGE, checked against the sha256 that the
# file SUMS pins for NAME; kept in the download cache, and downloaded (at
# most twice) when no copy there matches. Prints its path; dies (common.sh)
# when SUMS pins no NAME or Debian's tarball does not match.
debian_pinned_tarball() {
  local package=$1 upstream=$2 name=$3 sums=$4
  local sha downloads tarball attempt
  sha=$(sed -n "s/^\([0-9a-f]\{64\}\)  $name\$/\1/p" "$sums")
  [ -n "$sha" ] || die "$name is not a tarball this project pins ($sums)"
  downloads=${XDG_CACHE_HOME:-$HOME/.cache}/rocksdb-cuckoo/downloads
  mkdir -p "$downloads"
  tarball=$downloads/$name
  for attempt in 1 2 3; do
    if (cd "$downloads" && echo "$sha  $name" | sha256sum --check --quiet - >/dev/null 2>&1); then
      echo "$tarball"
      return 0
    fi
    if [ -f "$tarball" ]; then
      log "$name does not match its pinned sha256 $sha: deleted"
      rm -f "$tarball"
    fi
    [ "$attempt" != 3 ] || break
    debian_source_download "$package" "$upstream" "" "$tarball" "$downloads/apt" ||
      die "no $package $upstream source from Debian"
  done
  die "the downloaded $name does not match its pinned sha256"
}

# debian_extract TARBALL OUT MARKER TAR_ARG...: extracts the members
# TAR_ARG... name (tar's -x options and patterns) of TARBALL into the folder
# OUT, whole or not at all, unless OUT/MARKER is already there; prints OUT.
# Dies (common.sh) when tar fails.
debian_extract() {
  local tarball=$1 out=$2 marker=$3
  shift 3
  if [ ! -f "$out/$marker" ]; then
    rm -rf "$out.partial"
    mkdir -p "$out.partial"
    tar -xf "$tarball" -C "$out.partial" "$@" ||
      die "$tarball holds no $marker where it was looked for"
    rm -rf "$out"
    mv "$out.partial" "$out"
  fi
  echo "$out"
}
