// examine_program_image (preload/program_image.h) on ELF headers of other
// classes and machines, written by hand: a 32-bit or foreign program's
// loader cannot load the shim and would say so on the program's stderr,
// so such a program starts without it and is named.
#include <elf.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>

#include "../program_image.h"
#include "run_command.h"

namespace {

using spoor::preload::examine_program_image;

// A file holding only an ELF header of the given class and machine.
std::string header_file(const std::string& name, unsigned char elf_class, uint16_t machine) {
  unsigned char header[sizeof(Elf64_Ehdr)] = {};
  std::memcpy(header, ELFMAG, SELFMAG);
  header[EI_CLASS] = elf_class;
  header[EI_DATA] = ELFDATA2LSB;
  header[EI_VERSION] = EV_CURRENT;
  const uint16_t type = ET_EXEC;
  std::memcpy(header + offsetof(Elf64_Ehdr, e_type), &type, sizeof type);
  std::memcpy(header + offsetof(Elf64_Ehdr, e_machine), &machine, sizeof machine);
  const std::string path = spoor::test::temp_path(name);
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(header), elf_class == ELFCLASS32 ? sizeof(Elf32_Ehdr) : sizeof header);
  return path;
}

TEST(ProgramImage, AThirtyTwoBitProgramStartsWithoutTheShimAndIsNamed) {
  const auto image = examine_program_image(header_file("i386-program", ELFCLASS32, EM_386).c_str(), false);
  EXPECT_STREQ(image.why, "32-bit x86 program");
  EXPECT_TRUE(image.without_preload);
}

TEST(ProgramImage, AnotherMachinesProgramStartsWithoutTheShimAndIsNamed) {
#if defined(__aarch64__)
  const uint16_t foreign = EM_X86_64;
  const char* name = "program for another machine";
#else
  const uint16_t foreign = EM_AARCH64;
  const char* name = "aarch64 program";
#endif
  const auto image = examine_program_image(header_file("foreign-program", ELFCLASS64, foreign).c_str(), false);
  EXPECT_STREQ(image.why, name);
  EXPECT_TRUE(image.without_preload);
}

TEST(ProgramImage, ThisMachinesDynamicProgramTakesTheShim) {
  const auto image = examine_program_image("true", true);
  EXPECT_STREQ(image.why, "");
  EXPECT_FALSE(image.without_preload);
}

}  // namespace
