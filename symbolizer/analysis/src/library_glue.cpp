// Naming functions for tables, and telling the C++ library's frames apart.
#include "spoor/analysis/library_glue.h"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace spoor::analysis {

std::string short_function(const std::string& name) {
  // CPython's perf map names ("py::<module>:/app/main.py", "py::Cache.get:
  // /app/cache.py") are no C++: their brackets and colons are the name.
  if (name.starts_with("py::")) return name;
  std::string out;
  int depth = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (depth == 0 && out.ends_with("operator")) {
      // operator<, operator<<, operator() ...: symbols, not brackets.
      size_t j = i;
      if (name.compare(i, 2, "()") == 0) {
        j = i + 2;
      } else {
        while (j < name.size() && j - i < 3 &&
               std::string_view("<>=!+-*/%^&|~[]").find(name[j]) != std::string_view::npos)
          ++j;
      }
      if (j > i) {
        out.append(name, i, j - i);
        i = j - 1;
        continue;
      }
    }
    if (c == '<') {
      if (depth++ == 0) out += "<...>";
    } else if (c == '>' && depth > 0) {
      --depth;
    } else if (depth == 0) {
      if (c == '(' && name.compare(i, 21, "(anonymous namespace)") != 0) break;  // the parameters
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  // A templated function's demangled name starts with its return type.
  const size_t bracket = out.find('<');
  const size_t space = bracket == std::string::npos ? std::string::npos : out.rfind(' ', bracket);
  if (space != std::string::npos && out.find("operator") == std::string::npos && name[0] != '[') out.erase(0, space + 1);
  return out.empty() ? name : out;
}

bool is_library_glue(const std::string& function_name, const std::string& file, const std::string& module) {
  if (file.starts_with("/usr/include/") || file.find("/include/c++/") != std::string::npos) return true;
  // Rust's standard library and the crates it vendors (hashbrown for
  // HashMap) keep the paths of the toolchain's build.
  if (file.starts_with("/rustc/") || file.starts_with("/rust/deps/")) return true;
  const std::string function = short_function(function_name);
  if (function.starts_with("std::") || function.starts_with("__gnu_cxx::") || function.starts_with("operator new") ||
      function.starts_with("__cxa_") || function.starts_with("__rust_") || function.starts_with("__rdl_"))
    return true;
  return file.empty() && module.find("libstdc++") != std::string::npos;
}

bool is_allocator_wrapper(const std::string& function_name) {
  std::string name = short_function(function_name);
  if (name.empty() || name[0] == '[') return false;  // "[spoor: ...]" and other labels
  const size_t scope = name.rfind("::");
  if (scope != std::string::npos) name.erase(0, scope + 2);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const std::string_view part : {"malloc", "calloc", "realloc", "zalloc", "memalign", "strdup", "strndup",
                                      "wcsdup", "memdup"})
    if (name.find(part) != std::string::npos) return true;
  return name.ends_with("alloc") && !name.ends_with("dealloc");
}

bool in_python_interpreter(const Frame& f) {
  const std::string name = base_name(f.module);
  return name.starts_with("libpython") || name.starts_with("python");
}

namespace {

// With CPython's perf trampolines on, a Python function's frame
// ("py::build:/app/app.py") stands above the interpreter's frames that
// run it: an allocation the interpreter made for it (list_resize,
// PyUnicode_New) is named after the Python function, as a C++
// allocation is named after the code above std::vector. An extension
// module's C code in between is the program's own, and keeps the name.
size_t python_function_above(std::span<const Frame> frames, size_t from) {
  for (size_t i = from; i < frames.size(); ++i) {
    if (frames[i].function.starts_with("py::")) return i;
    if (!in_python_interpreter(frames[i])) return from;
  }
  return from;
}

}  // namespace

size_t own_frame_index(std::span<const Frame> frames) {
  size_t own = 0;
  for (size_t i = 0; i < frames.size(); ++i) {
    const Frame& f = frames[i];
    if (is_library_glue(f) || is_allocator_wrapper(f.function)) {
      own = i + 1;
      continue;
    }
    if (!f.function.empty()) break;
    // An unnamed frame (a static function of a stripped library) belongs
    // to the allocator only when a wrapper of its own module calls it.
    size_t next = i + 1;
    while (next < frames.size() && frames[next].function.empty()) ++next;
    if (next == frames.size() || frames[next].module != f.module || !is_allocator_wrapper(frames[next].function)) break;
  }
  if (own < frames.size() && in_python_interpreter(frames[own])) own = python_function_above(frames, own);
  return own < frames.size() ? own : 0;
}

}  // namespace spoor::analysis
