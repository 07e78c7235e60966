// spoor::unwind on samples in the dynamic loader, made up from its file
// alone (no process): its entry code, which has no CFI, is the outermost
// frame of every process before main, and a stop in a function that has
// CFI says whether the stack copy was missing or too short.
#include <fcntl.h>
#include <gelf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "spoor/unwind/process_unwinder.h"

namespace {

namespace uw = spoor::unwind;

constexpr const char* kLoader = "/lib64/ld-linux-x86-64.so.2";
constexpr uint64_t kBias = 0x7f0000000000;
constexpr uint64_t kSp = 0x7ffd00010000;

struct Loader {
  bool found = false;
  uint64_t entry = 0;         // e_entry
  uint64_t tls_get_addr = 0;  // a function with CFI (exported, so findable)
};

Loader loader() {
  Loader out;
  elf_version(EV_CURRENT);
  const int fd = open(kLoader, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  if (Elf* elf = elf_begin(fd, ELF_C_READ, nullptr)) {
    GElf_Ehdr h;
    if (gelf_getehdr(elf, &h) != nullptr && h.e_machine == EM_X86_64) {
      out.entry = h.e_entry;
      for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) == nullptr || sh.sh_type != SHT_DYNSYM) continue;
        Elf_Data* data = elf_getdata(scn, nullptr);
        for (size_t i = 0; data != nullptr && i < sh.sh_size / sh.sh_entsize; ++i) {
          GElf_Sym sym;
          if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) continue;
          const char* name = elf_strptr(elf, sh.sh_link, sym.st_name);
          if (name != nullptr && std::strcmp(name, "__tls_get_addr") == 0) out.tls_get_addr = sym.st_value;
        }
      }
      out.found = out.entry != 0 && out.tls_get_addr != 0;
    }
    elf_end(elf);
  }
  close(fd);
  return out;
}

// The loader mapped at kBias, as the trace would describe it.
uw::ProcessUnwinder unwinder_with_loader() {
  uw::ProcessUnwinder u;
  spoor::symbolizer::ModuleInfo m;
  m.path = kLoader;
  m.bias = kBias;
  m.start = kBias;
  m.size = 0x100000;
  u.add_module(m);
  return u;
}

// Registers of the perf mask perf's DWARF unwinding uses, all 0 but ip and sp.
struct Sample {
  std::vector<uint64_t> regs;
  std::vector<uint8_t> stack;
  uw::UserSample user;

  Sample(uint64_t ip, std::vector<uint8_t> stack_copy) : stack(std::move(stack_copy)) {
    for (unsigned bit = 0; bit < 64; ++bit) {
      if ((uw::kPerfRegsDwarfMask >> bit & 1) == 0) continue;
      regs.push_back(bit == uw::kPerfIp ? ip : bit == uw::kPerfSp ? kSp : 0);
    }
    user.ip = ip;
    user.regs_abi = uw::kRegsAbi64;
    user.regs.mask = uw::kPerfRegsDwarfMask;
    user.regs.values = {reinterpret_cast<const uint8_t*>(regs.data()), regs.size() * 8};
    user.stack = stack;
  }
};

TEST(LoaderFrames, TheLoadersEntryCodeIsTheOutermostFrame) {
  const Loader l = loader();
  if (!l.found) GTEST_SKIP() << "no x86-64 " << kLoader;
  uw::ProcessUnwinder u = unwinder_with_loader();
  // At _start (argc on the stack), and in _dl_start_user after _dl_start
  // returned: both hand-written, without CFI, and the bottom of the stack.
  for (const uint64_t offset : {uint64_t{0}, uint64_t{8}}) {
    const Sample s(kBias + l.entry + offset, std::vector<uint8_t>(256, 0));
    const uw::UnwoundStack r = u.unwind(s.user);
    EXPECT_EQ(r.method, uw::UnwindMethod::dwarf);
    EXPECT_EQ(r.pcs, std::vector<uint64_t>{kBias + l.entry + offset});
    EXPECT_EQ(r.stop_reason, "") << "at entry + " << offset;
  }
}

TEST(LoaderFrames, AReturnIntoTheEntryCodeEndsTheWalkCleanly) {
  const Loader l = loader();
  if (!l.found) GTEST_SKIP() << "no x86-64 " << kLoader;
  uw::ProcessUnwinder u = unwinder_with_loader();
  // At the first instruction of a function: the return address is at sp,
  // here one into _dl_start_user (as _dl_init's is in a real process).
  std::vector<uint8_t> stack(256, 0);
  const uint64_t ret = kBias + l.entry + 8;
  std::memcpy(stack.data(), &ret, 8);
  const Sample s(kBias + l.tls_get_addr, stack);
  const uw::UnwoundStack r = u.unwind(s.user);
  EXPECT_EQ(r.pcs, (std::vector<uint64_t>{kBias + l.tls_get_addr, ret}));
  EXPECT_EQ(r.stop_reason, "");
}

TEST(LoaderFrames, AStopForWantOfStackSaysWhetherTheCopyWasMissingOrShort) {
  const Loader l = loader();
  if (!l.found) GTEST_SKIP() << "no x86-64 " << kLoader;
  uw::ProcessUnwinder u = unwinder_with_loader();
  const Sample none(kBias + l.tls_get_addr, {});
  uw::UnwoundStack r = u.unwind(none.user);
  EXPECT_EQ(r.pcs.size(), 1u);
  EXPECT_NE(r.stop_reason.find("no copy of the user stack"), std::string::npos) << r.stop_reason;
  const Sample short_copy(kBias + l.tls_get_addr, std::vector<uint8_t>(4, 0));
  r = u.unwind(short_copy.user);
  EXPECT_EQ(r.pcs.size(), 1u);
  EXPECT_NE(r.stop_reason.find("ends before the caller's frame"), std::string::npos) << r.stop_reason;
}

}  // namespace
