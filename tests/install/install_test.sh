#!/bin/sh
# Usage: install_test.sh BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR CXX [CXXFLAGS]
# Installs the build into a scratch prefix, then builds and runs a consumer
# with find_package(spoor) and another with pkg-config. CXXFLAGS are the
# parent build's (a sanitizer build's libraries need them at link time).
set -eu
build=$1 consumer=$2 work=$3 cxx=$4 cxxflags=${5:-}
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
test -x "$work/prefix/bin/spoor"
cmake -S "$consumer" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="$cxxflags" -DCMAKE_EXE_LINKER_FLAGS="$cxxflags" >/dev/null
cmake --build "$work/consumer" >/dev/null
"$work/consumer/consumer" "$work/consumer.spoor"
"$work/prefix/bin/spoor" info "$work/consumer.spoor" | grep -q "Spoor.Test.Consumer"
echo "find_package(spoor): ok"
pcdir=$(dirname "$(find "$work/prefix" -name spoor.pc | head -n 1)")
flags=$(PKG_CONFIG_PATH="$pcdir" pkg-config --define-prefix --cflags --libs spoor)
# shellcheck disable=SC2086
"$cxx" -std=c++20 $cxxflags "$consumer/pkgconfig_main.cpp" $flags -o "$work/pc_consumer"
"$work/pc_consumer"
echo "pkg-config spoor: ok"
