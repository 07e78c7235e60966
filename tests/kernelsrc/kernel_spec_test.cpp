#include "spoor/kernelsrc/kernel_spec.h"

#include <gtest/gtest.h>

namespace spoor::kernelsrc {
namespace {

TEST(KernelSpec, SyscallNamesFollowTheSyscallsWordUntilAnotherSource) {
  KernelRequest r;
  std::string error;
  ASSERT_TRUE(parse_kernel_spec("samples,syscalls:read,write,faults,switches", &r, &error)) << error;
  EXPECT_TRUE(r.samples && r.faults && r.switches);
  EXPECT_EQ(r.syscalls, (std::vector<std::string>{"read", "write"}));
  EXPECT_FALSE(r.all_syscalls || r.sched || r.block || r.all);
}

TEST(KernelSpec, SyscallsAloneIsEverySyscall) {
  KernelRequest r;
  std::string error;
  ASSERT_TRUE(parse_kernel_spec("syscalls", &r, &error));
  EXPECT_TRUE(r.all_syscalls);
  EXPECT_TRUE(r.any());
}

TEST(KernelSpec, UnknownWordsAreRefusedByName) {
  KernelRequest r;
  std::string error;
  EXPECT_FALSE(parse_kernel_spec("samples,cycles", &r, &error));
  EXPECT_NE(error.find("'cycles'"), std::string::npos) << error;
  EXPECT_FALSE(parse_kernel_spec("syscalls:Read", &r, &error));
  EXPECT_NE(error.find("not a syscall name"), std::string::npos) << error;
}

TEST(KernelSpec, EmptyAsksForNothing) {
  KernelRequest r;
  std::string error;
  EXPECT_TRUE(parse_kernel_spec("", &r, &error));
  EXPECT_FALSE(r.any());
}

}  // namespace
}  // namespace spoor::kernelsrc
