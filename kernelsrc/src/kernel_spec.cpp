#include "spoor/kernelsrc/kernel_spec.h"

#include <algorithm>
#include <cctype>

namespace spoor::kernelsrc {
namespace {

bool is_syscall_name(const std::string& w) {
  return !w.empty() && std::all_of(w.begin(), w.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_';
  });
}

}  // namespace

bool parse_kernel_spec(const std::string& text, KernelRequest* r, std::string* error) {
  bool in_syscalls = false;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string w = text.substr(start, comma - start);
    start = comma + 1;
    if (w.empty()) {
      if (comma == text.size()) break;
      continue;
    }
    if (w == "samples") r->samples = true, in_syscalls = false;
    else if (w == "switches") r->switches = true, in_syscalls = false;
    else if (w == "faults") r->faults = true, in_syscalls = false;
    else if (w == "sched") r->sched = true, in_syscalls = false;
    else if (w == "block") r->block = true, in_syscalls = false;
    else if (w == "all") r->all = true, in_syscalls = false;
    else if (w == "syscalls" || w == "syscalls:*") r->all_syscalls = true, in_syscalls = false;
    else if (w.starts_with("syscalls:") || in_syscalls) {
      std::string name = w.starts_with("syscalls:") ? w.substr(9) : w;
      if (!is_syscall_name(name)) {
        *error = "'" + w + "' is not a syscall name (as in syscalls:read,write)";
        return false;
      }
      if (std::find(r->syscalls.begin(), r->syscalls.end(), name) == r->syscalls.end()) r->syscalls.push_back(name);
      in_syscalls = true;
    } else {
      *error = "unknown kernel source '" + w +
               "' (known: samples, switches, faults, syscalls[:NAME,...], sched, block, all)";
      return false;
    }
  }
  return true;
}

}  // namespace spoor::kernelsrc
