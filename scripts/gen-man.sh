#!/bin/sh
# Writes the man page trainprof(1) from the help the built binary prints
# (scripts/man.awk does the conversion), so the page says what --help says.
# Run by the build (CMakeLists.txt); POSIX sh and awk, nothing else.
# usage: gen-man.sh TRAINPROF VERSION OUT
set -eu
bin=$1
version=$2
out=$3
here=$(dirname "$0")
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT
{
  echo "@@top"
  "$bin" --help
  for cmd in $("$bin" --list-commands); do
    echo "@@command $cmd"
    "$bin" "$cmd" --help
  done
} | awk -v version="$version" -f "$here/man.awk" >"$tmp"
mv "$tmp" "$out"
trap - EXIT
