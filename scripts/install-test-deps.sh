#!/usr/bin/env bash
# Installs what scripts/test.sh needs, only the packages that are missing:
# the build dependencies (scripts/install-deps.sh) and the peer tools the
# comparison tests check Spoor against, heaptrack (allocation counts and
# bytes; zstd compresses its output) and valgrind (leaked bytes), and the
# real programs tests/preload/program_matrix_test.cpp traces (a JVM among
# them: openjdk-17-jdk-headless, whose java runs a source file), and the
# consumers spoor export's tests read its output with: go tool pprof
# (golang-go) and protoc --decode_raw (protobuf-compiler), and perf
# (linux-perf), whose counts tests/kernelsrc checks the kernel sources
# against, and fio, whose io_uring engine drives its ring with inline
# system calls (tests/preload/completeness_test.cpp), and debuginfod, the
# server tests/symbolizer/debuginfod_test.cpp fetches modules from by build
# ID. Without them those tests skip.
set -euo pipefail
exec "$(dirname "$0")/install-deps.sh" heaptrack zstd valgrind python3 git sqlite3 xz-utils make golang-go protobuf-compiler linux-perf openjdk-17-jdk-headless fio debuginfod "$@"
