// Files for the real programs the export tests read outputs back with
// (have_program, in run_command.h, says whether one is installed:
// scripts/install-test-deps.sh installs them all).
#ifndef SPOOR_TESTS_EXPORT_CONSUMER_H
#define SPOOR_TESTS_EXPORT_CONSUMER_H

#include <fstream>
#include <string>

#include "run_command.h"

namespace spoor::test {

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

}  // namespace spoor::test

#endif  // SPOOR_TESTS_EXPORT_CONSUMER_H
