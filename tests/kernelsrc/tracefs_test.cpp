#include "spoor/kernelsrc/tracefs.h"

#include <gtest/gtest.h>

#include "spoor/kernelsrc/kernel_convert.h"

namespace spoor::kernelsrc {
namespace {

// sched_switch's format as a 6.x kernel prints it.
constexpr const char* kSchedSwitch = R"(name: sched_switch
ID: 372
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:char prev_comm[16];	offset:8;	size:16;	signed:0;
	field:pid_t prev_pid;	offset:24;	size:4;	signed:1;
	field:int prev_prio;	offset:28;	size:4;	signed:1;
	field:long prev_state;	offset:32;	size:8;	signed:1;
	field:char next_comm[16];	offset:40;	size:16;	signed:0;
	field:pid_t next_pid;	offset:56;	size:4;	signed:1;
	field:int next_prio;	offset:60;	size:4;	signed:1;

print fmt: "prev_comm=%s prev_pid=%d", REC->prev_comm, REC->prev_pid
)";

constexpr const char* kEnterWrite = R"(name: sys_enter_write
ID: 840
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:int __syscall_nr;	offset:8;	size:4;	signed:1;
	field:unsigned int fd;	offset:16;	size:8;	signed:0;
	field:const char * buf;	offset:24;	size:8;	signed:0;
	field:size_t count;	offset:32;	size:8;	signed:0;
)";

TEST(TracepointFormat, ReadsTheIdAndEveryFieldByItsBareName) {
  auto f = parse_tracepoint_format(kSchedSwitch);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->id, 372u);
  ASSERT_NE(f->field("prev_comm"), nullptr);
  EXPECT_EQ(f->field("prev_comm")->offset, 8u);
  EXPECT_EQ(f->field("prev_comm")->size, 16u);
  EXPECT_EQ(f->field("next_pid")->offset, 56u);
  EXPECT_TRUE(f->field("prev_state")->is_signed);
  EXPECT_EQ(f->field("print"), nullptr);
  EXPECT_TRUE(raw_layout(Role::sched_switch, *f).complete);
  EXPECT_FALSE(raw_layout(Role::sched_waking, *f).complete) << "sched_waking's fields are not there";
}

// sched_waking's format as a 6.x kernel prints it.
constexpr const char* kSchedWaking = R"(name: sched_waking
ID: 375
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:char comm[16];	offset:8;	size:16;	signed:0;
	field:pid_t pid;	offset:24;	size:4;	signed:1;
	field:int prio;	offset:28;	size:4;	signed:1;
	field:int target_cpu;	offset:32;	size:4;	signed:1;
)";

TEST(TracepointFormat, SchedWakingReadsCommonFlagsLastWhenTheFormatHasThem) {
  auto f = parse_tracepoint_format(kSchedWaking);
  ASSERT_TRUE(f);
  const RawLayout l = raw_layout(Role::sched_waking, *f);
  ASSERT_TRUE(l.complete);
  ASSERT_EQ(l.fields.size(), 4u) << "pid, comm, target_cpu, then common_flags (interrupt context)";
  EXPECT_EQ(l.fields[0].offset, 24u);
  EXPECT_EQ(l.fields[3].offset, 2u);
  EXPECT_EQ(l.fields[3].size, 1u);

  std::string without(kSchedWaking);
  without.erase(without.find("\tfield:unsigned char common_flags"), without.find("\tfield:unsigned char common_preempt") -
                                                                        without.find("\tfield:unsigned char common_flags"));
  auto g = parse_tracepoint_format(without);
  ASSERT_TRUE(g);
  const RawLayout l2 = raw_layout(Role::sched_waking, *g);
  EXPECT_TRUE(l2.complete) << "common_flags is optional";
  EXPECT_EQ(l2.fields.size(), 3u);
}

TEST(TracepointFormat, SyscallArgumentsAreTheFieldsAfterTheNumberInOffsetOrder) {
  auto f = parse_tracepoint_format(kEnterWrite);
  ASSERT_TRUE(f);
  const RawLayout l = raw_layout(Role::syscall_enter, *f);
  ASSERT_TRUE(l.complete);
  ASSERT_EQ(l.fields.size(), 4u);  // __syscall_nr, fd, buf, count
  EXPECT_EQ(l.fields[0].offset, 8u);
  EXPECT_EQ(l.fields[1].offset, 16u);
  EXPECT_EQ(l.fields[3].offset, 32u);
}

TEST(TracepointFormat, NoIdNoFormat) { EXPECT_FALSE(parse_tracepoint_format("name: x\nformat:\n")); }

}  // namespace
}  // namespace spoor::kernelsrc
