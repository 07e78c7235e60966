#include "symbolize_trace.h"

#include <cstdio>

#include "command.h"

namespace spoor::cli {

int symbolize_trace(const std::string& path, const symbolizer::Options&, const Addr2lineStyle&) {
  std::fprintf(stderr, "spoor symbolize: --trace '%s': not implemented yet\n", path.c_str());
  return kExitUsage;
}

}  // namespace spoor::cli
