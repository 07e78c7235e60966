#!/usr/bin/env bash
# Installs what scripts/test.sh needs, only the packages that are missing:
# the build dependencies (scripts/install-deps.sh) and the peer tools the
# comparison tests check Spoor against, heaptrack (allocation counts and
# bytes; zstd compresses its output) and valgrind (leaked bytes). Without
# the peers those tests skip.
set -euo pipefail
exec "$(dirname "$0")/install-deps.sh" heaptrack zstd valgrind "$@"
