// The language library's frames at the top of an allocation's stack: every
// allocation through std::vector, std::string or operator new (or Rust's
// Vec, String, HashMap) shares them
// whoever allocates, so a site or an allocating function is named after
// the first frame above them, the program's own code.
#ifndef SPOOR_ANALYSIS_LIBRARY_GLUE_H
#define SPOOR_ANALYSIS_LIBRARY_GLUE_H

#include <span>
#include <string>

#include "spoor/analysis/symbolized_stacks.h"

namespace spoor::analysis {

// A C++ name as a table can show it: template arguments as <...>, no
// parameter list, no return type ("void std::vector<int, std::allocator<int> >
// ::_M_realloc_insert<int>(...)" -> "std::vector<...>::_M_realloc_insert<...>");
// operator<, operator<< and names in brackets are kept.
std::string short_function(const std::string& name);

// The C++ library's inline code (std::allocator, basic_string::_M_create...),
// operator new and libstdc++'s own frames; Rust's standard library
// (alloc::alloc, RawVec, hashbrown: sources under /rustc/ and /rust/deps/)
// and its allocator shims (__rust_alloc, __rdl_alloc).
bool is_library_glue(const std::string& function, const std::string& file, const std::string& module);
inline bool is_library_glue(const Frame& f) { return is_library_glue(f.function, f.file, f.module); }

// An allocator wrapper by its name: a function whose last name part
// (case aside) says it allocates and hands the block on: *malloc*, *calloc*,
// *realloc*, *zalloc*, *memalign*, *alloc at the end (not *dealloc), and the *strdup*,
// *strndup*, *wcsdup*, *memdup* copies. CRYPTO_zalloc, g_malloc0,
// PyObject_Malloc, sqlite3DbMallocRaw, xmalloc, pool_alloc, __strdup are;
// __alloc_dir, list_resize, allocate_nodes are not (they use the memory).
bool is_allocator_wrapper(const std::string& function);

// CPython's own code: its library (libpython3.12.so) or an executable that
// links it in (Debian's /usr/bin/python3.11).
bool in_python_interpreter(const Frame& f);

// The index of the frame an allocation is named after: the first above
// the leading frames that are language glue or allocator wrappers (an
// unnamed frame among them counts with them when the next named frame is
// a wrapper of the same module: sqlite's static sqlite3MemMalloc under
// sqlite3Malloc). 0 when no frame is left above them. Where CPython's
// perf trampolines name Python functions ("py::build:/app/app.py"), the
// interpreter's frames below the innermost one count as glue too.
size_t own_frame_index(std::span<const Frame> frames);

}  // namespace spoor::analysis

#endif  // SPOOR_ANALYSIS_LIBRARY_GLUE_H
