// Which loaded objects only the shim needs (shim_libraries.h): the
// DT_NEEDED closure of libspoor-preload.so minus that of the executable.
// Objects are matched to DT_NEEDED names by their file's base name, which
// is the soname for every library the loader found by search.
#include "shim_libraries.h"

#include <elf.h>
#include <dlfcn.h>
#include <link.h>

#include <cstring>

namespace spoor::preload {
namespace {

constexpr int kMaxObjects = 256;  // as ShimOnlyLibraries's
constexpr int kMaxNeeded = 64;

struct Object {
  const char* name;       // base name ("" for the executable)
  uintptr_t load_start;   // lowest PT_LOAD, biased
  uintptr_t load_end;
  const char* needed[kMaxNeeded];
  int needed_count;
  bool is_shim, for_program, for_shim;
};

struct Objects {
  Object list[kMaxObjects];
  int count = 0;
};

const char* base_name(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}

// The address a dynamic entry's d_ptr names: relocated by the loader on
// most targets, left as a link-time address where .dynamic is read-only.
uintptr_t dynamic_address(uintptr_t value, uintptr_t bias) { return value < bias ? value + bias : value; }

int collect(dl_phdr_info* info, size_t, void* raw) {
  auto* objects = static_cast<Objects*>(raw);
  if (objects->count == kMaxObjects) return 0;
  Object& o = objects->list[objects->count];
  o = Object{};
  o.name = base_name(info->dlpi_name != nullptr ? info->dlpi_name : "");
  o.load_start = UINTPTR_MAX;
  const ElfW(Dyn)* dynamic = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_DYNAMIC) dynamic = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + ph.p_vaddr);
    if (ph.p_type != PT_LOAD) continue;
    const uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    if (start < o.load_start) o.load_start = start;
    if (start + ph.p_memsz > o.load_end) o.load_end = start + ph.p_memsz;
  }
  const uintptr_t shim_pc = reinterpret_cast<uintptr_t>(&collect);
  o.is_shim = shim_pc >= o.load_start && shim_pc < o.load_end;
  if (dynamic != nullptr) {
    const char* strtab = nullptr;
    for (const ElfW(Dyn)* d = dynamic; d->d_tag != DT_NULL; ++d)
      if (d->d_tag == DT_STRTAB) strtab = reinterpret_cast<const char*>(dynamic_address(d->d_un.d_ptr, info->dlpi_addr));
    for (const ElfW(Dyn)* d = dynamic; strtab != nullptr && d->d_tag != DT_NULL; ++d)
      if (d->d_tag == DT_NEEDED && o.needed_count < kMaxNeeded) o.needed[o.needed_count++] = strtab + d->d_un.d_val;
  }
  objects->count++;
  return 0;
}

// Marks everything `from` needs, transitively, with `mark`.
void mark_closure(Objects& objects, int from, bool Object::*mark) {
  int stack[kMaxObjects];
  int depth = 0;
  objects.list[from].*mark = true;
  stack[depth++] = from;
  while (depth > 0) {
    const Object& o = objects.list[stack[--depth]];
    for (int n = 0; n < o.needed_count; ++n)
      for (int i = 0; i < objects.count; ++i) {
        Object& dep = objects.list[i];
        if (dep.*mark || std::strcmp(dep.name, o.needed[n]) != 0) continue;
        dep.*mark = true;
        stack[depth++] = i;
      }
  }
}

}  // namespace

// The shim's own image, from its ELF header to the end of its .bss (both
// provided by the linker): two compares. dladdr, which this used, also
// looks for the nearest symbol, a scan of the whole symbol table of the
// object holding `pc`: ~0.4 ms in libLLVM, whose constructors make
// thousands of allocations before attach (clang-format took 2 s instead
// of 0.09).
extern "C" const char __ehdr_start[] __attribute__((visibility("hidden")));
extern "C" const char _end[] __attribute__((visibility("hidden")));

bool in_shim(uintptr_t pc) {
  return pc >= reinterpret_cast<uintptr_t>(__ehdr_start) && pc < reinterpret_cast<uintptr_t>(_end);
}

ShimOnlyLibraries::ShimOnlyLibraries() {
  static Objects objects;  // large; attach runs once per image
  objects.count = 0;
  dl_iterate_phdr(collect, &objects);
  if (objects.count == 0) return;
  mark_closure(objects, 0, &Object::for_program);  // the executable comes first
  for (int i = 0; i < objects.count; ++i)
    if (objects.list[i].is_shim) mark_closure(objects, i, &Object::for_shim);
  for (int i = 0; i < objects.count && count_ < kMaxObjects; ++i) {
    const Object& o = objects.list[i];
    if (o.for_shim && !o.for_program) ranges_[count_++] = {o.load_start, o.load_end};
  }
}

bool ShimOnlyLibraries::contains(uintptr_t pc) const {
  for (int i = 0; i < count_; ++i)
    if (pc >= ranges_[i].start && pc < ranges_[i].end) return true;
  return false;
}

}  // namespace spoor::preload
