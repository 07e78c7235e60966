// How spoor report's text shortens C++ names for its tables.
#include "report_format.h"

#include <gtest/gtest.h>

using spoor::cli::short_function;

TEST(ShortFunction, TemplateArgumentsParametersAndReturnTypesGo) {
  EXPECT_EQ(short_function("std::__new_allocator<char>::allocate(unsigned long, void const*)"),
            "std::__new_allocator<...>::allocate");
  EXPECT_EQ(short_function("void std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >"
                           "::_M_construct<char*>(char*, char*, std::forward_iterator_tag)"),
            "std::__cxx11::basic_string<...>::_M_construct<...>");
  EXPECT_EQ(short_function("render_page(char const*, unsigned int)"), "render_page");
  EXPECT_EQ(short_function("worker"), "worker");
}

TEST(ShortFunction, OperatorsAnonymousNamespacesAndBracketedNamesStay) {
  EXPECT_EQ(short_function("operator<<(std::ostream&, Point const&)"), "operator<<");
  EXPECT_EQ(short_function("Point::operator<(Point const&) const"), "Point::operator<");
  EXPECT_EQ(short_function("(anonymous namespace)::checksum(std::string const&)"), "(anonymous namespace)::checksum");
  EXPECT_EQ(short_function("[spoor: recording the event]"), "[spoor: recording the event]");
  EXPECT_EQ(short_function(""), "");
}

TEST(ShortFunction, CpythonPerfMapNamesStayWhole) {
  EXPECT_EQ(short_function("py::<module>:/app/main.py"), "py::<module>:/app/main.py");
  EXPECT_EQ(short_function("py::Cache.get:/app/cache.py"), "py::Cache.get:/app/cache.py");
}

namespace {

TEST(LibraryGlue, CppAndRustLibraryFramesAreGlueTheProgramsAreNot) {
  using spoor::analysis::is_library_glue;
  EXPECT_TRUE(is_library_glue("std::__new_allocator<char>::allocate(unsigned long, void const*)",
                              "/usr/include/c++/12/bits/new_allocator.h", "/usr/bin/app"));
  EXPECT_TRUE(is_library_glue("operator new(unsigned long)", "", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"));
  EXPECT_TRUE(is_library_glue("alloc::alloc::alloc", "/rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/alloc/src/alloc.rs",
                              "/tmp/app"));
  EXPECT_TRUE(is_library_glue("hashbrown::raw::RawTable<T,A>::reserve", "/rust/deps/hashbrown-0.16.1/src/raw/mod.rs",
                              "/tmp/app"));
  EXPECT_TRUE(is_library_glue("__rust_alloc", "", "/tmp/app"));
  EXPECT_FALSE(is_library_glue("main::work", "/tmp/app/src/main.rs", "/tmp/app"));
  EXPECT_FALSE(is_library_glue("render_page", "/src/demo.cpp", "/usr/bin/demo"));
  EXPECT_FALSE(is_library_glue("serde_json::de::from_str", "/root/.cargo/registry/src/serde_json-1.0/src/de.rs",
                               "/tmp/app"))
      << "a crate the program depends on is its own code, as a C++ library it links is";
}

TEST(LibraryGlue, AllocatorWrappersAreToldByTheirNames) {
  using spoor::analysis::is_allocator_wrapper;
  for (const char* name : {"CRYPTO_zalloc", "g_malloc0", "PyObject_Malloc", "_PyObject_Calloc", "sqlite3DbMallocRaw",
                           "sqlite3Realloc", "xmalloc", "xstrdup", "__GI___strdup", "pool_alloc", "Arena::Alloc(unsigned long)",
                           "_PyMem_RawWcsdup", "posix_memalign", "g_memdup2", "checked_malloc(unsigned long)"})
    EXPECT_TRUE(is_allocator_wrapper(name)) << name;
  for (const char* name : {"__alloc_dir", "list_resize", "allocate_nodes", "__GI__IO_file_doallocate", "main", "",
                           "[spoor: recording the event]", "render_page(char const*)", "subtype_dealloc"})
    EXPECT_FALSE(is_allocator_wrapper(name)) << name;
}

spoor::analysis::Frame frame(const char* function, const char* module) {
  spoor::analysis::Frame f;
  f.function = function;
  f.module = module;
  return f;
}

TEST(LibraryGlue, TheOwnFrameIsAboveTheGlueAndTheWrappers) {
  using spoor::analysis::own_frame_index;
  const std::vector<spoor::analysis::Frame> openssl = {frame("CRYPTO_zalloc", "libcrypto.so.3"),
                                                       frame("EVP_MD_CTX_new", "libcrypto.so.3"), frame("main", "app")};
  EXPECT_EQ(own_frame_index(openssl), 1u);
  // sqlite's static sqlite3MemMalloc has no name in a stripped library;
  // sqlite3Malloc, of the same module, calls it.
  const std::vector<spoor::analysis::Frame> sqlite = {frame("", "libsqlite3.so.0"), frame("sqlite3Malloc", "libsqlite3.so.0"),
                                                      frame("sqlite3VdbeExec", "libsqlite3.so.0")};
  EXPECT_EQ(own_frame_index(sqlite), 2u);
  // A stripped program's own frames stay, whatever is above them.
  const std::vector<spoor::analysis::Frame> stripped = {frame("", "app"), frame("", "app"), frame("xmalloc", "libfoo.so")};
  EXPECT_EQ(own_frame_index(stripped), 0u);
  const std::vector<spoor::analysis::Frame> cpp = {frame("operator new(unsigned long)", "libstdc++.so.6"),
                                                   frame("std::vector<int>::_M_realloc_insert<int>", "app"),
                                                   frame("fill", "app")};
  EXPECT_EQ(own_frame_index(cpp), 2u);
  // Nothing but wrappers: the first frame names it.
  const std::vector<spoor::analysis::Frame> only = {frame("g_malloc", "libglib.so"), frame("g_malloc0", "libglib.so")};
  EXPECT_EQ(own_frame_index(only), 0u);
}

TEST(LibraryGlue, UnderCpythonsPerfTrampolinesThePythonFunctionAllocates) {
  using spoor::analysis::own_frame_index;
  const char* lib = "/usr/lib/libpython3.12.so.1.0";
  // The interpreter grew a list for build(): named after build.
  const std::vector<spoor::analysis::Frame> list = {
      frame("_PyObject_Malloc", lib), frame("list_resize", lib), frame("_PyEval_EvalFrameDefault", lib),
      frame("py::build:/app/app.py", ""), frame("py_trampoline_evaluator", lib), frame("py::main:/app/app.py", "")};
  EXPECT_EQ(own_frame_index(list), 3u);
  // An executable that links the interpreter in, as Debian's python3.11.
  const std::vector<spoor::analysis::Frame> linked_in = {frame("PyUnicode_New", "/usr/bin/python3.11"),
                                                         frame("py::<module>:/app/app.py", "")};
  EXPECT_EQ(own_frame_index(linked_in), 1u);
  // An extension module's C code is the program's own.
  const std::vector<spoor::analysis::Frame> extension = {frame("PyMem_Malloc", lib), frame("fill_array", "_native.so"),
                                                         frame("_PyEval_EvalFrameDefault", lib),
                                                         frame("py::build:/app/app.py", "")};
  EXPECT_EQ(own_frame_index(extension), 1u);
  // Without the trampolines there is no Python function to name.
  const std::vector<spoor::analysis::Frame> plain = {frame("list_resize", lib), frame("_PyEval_EvalFrameDefault", lib),
                                                     frame("Py_RunMain", lib), frame("main", "/usr/bin/python3")};
  EXPECT_EQ(own_frame_index(plain), 0u);
}

}  // namespace
