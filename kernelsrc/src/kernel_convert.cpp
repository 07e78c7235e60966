#include "spoor/kernelsrc/kernel_convert.h"

#include <algorithm>
#include <cstring>

#include "spoor/kernelsrc/kernel_events.h"
#include "syscall_names.h"  // generated: kSyscallNames from <sys/syscall.h>

namespace spoor::kernelsrc {
namespace {

uint64_t read_unsigned(Bytes raw, const TracepointField& f) {
  if (f.offset + f.size > raw.size() || f.size > 8) return 0;
  uint64_t v = 0;
  std::memcpy(&v, raw.data() + f.offset, f.size);
  if (f.is_signed && f.size < 8 && (v >> (f.size * 8 - 1)) & 1) v |= ~uint64_t{0} << (f.size * 8);
  return v;
}

Str read_string(Bytes raw, const TracepointField& f) {
  if (f.offset + f.size > raw.size()) return Str("", 0);
  const char* s = reinterpret_cast<const char*>(raw.data() + f.offset);
  return Str(s, strnlen(s, f.size));
}

Blob u64_blob(const std::vector<uint64_t>& v) { return Blob{v.data(), static_cast<uint32_t>(v.size() * 8)}; }

// The i-th kStackChunkBytes of a stack copy (empty past its end): what
// CpuSample's stack, stack_2, ... hold.
Blob stack_chunk(Bytes stack, uint32_t i) {
  const size_t from = std::min<size_t>(stack.size(), size_t{i} * kStackChunkBytes);
  const size_t n = std::min<size_t>(stack.size() - from, kStackChunkBytes);
  return Blob{stack.data() + from, static_cast<uint32_t>(n)};
}

}  // namespace

const char* syscall_name(uint64_t nr) {
  auto it = std::lower_bound(std::begin(kSyscallNames), std::end(kSyscallNames), nr,
                             [](const SyscallName& s, uint64_t n) { return s.nr < n; });
  return it != std::end(kSyscallNames) && it->nr == nr ? it->name : "";
}

RawLayout raw_layout(Role role, const TracepointFormat& format) {
  RawLayout l;
  std::vector<const char*> names;
  switch (role) {
    case Role::syscall_enter: {
      // __syscall_nr, then the arguments: every field after it, in offset order.
      const TracepointField* nr = format.field("__syscall_nr");
      if (nr == nullptr) return l;
      l.fields.push_back(*nr);
      std::vector<TracepointField> args;
      for (const auto& [name, f] : format.fields)
        if (f.offset > nr->offset && !name.starts_with("common_")) args.push_back(f);
      std::sort(args.begin(), args.end(), [](auto& a, auto& b) { return a.offset < b.offset; });
      if (args.size() > 6) args.resize(6);
      l.fields.insert(l.fields.end(), args.begin(), args.end());
      l.complete = true;
      return l;
    }
    case Role::syscall_exit: names = {"__syscall_nr", "ret"}; break;
    case Role::raw_syscall_enter: names = {"id", "args"}; break;
    case Role::raw_syscall_exit: names = {"id", "ret"}; break;
    case Role::sched_switch: names = {"prev_pid", "prev_comm", "prev_state", "next_pid", "next_comm"}; break;
    case Role::sched_waking: names = {"pid", "comm", "target_cpu"}; break;
    case Role::block_issue:
    case Role::block_complete: names = {"dev", "sector", "nr_sector", "rwbs"}; break;
    default: return l;
  }
  for (const char* n : names) {
    const TracepointField* f = format.field(n);
    if (f == nullptr) return l;
    l.fields.push_back(*f);
  }
  // sched_waking's context (irq or task), when the format has it: an
  // extra field last, so a kernel without it still works.
  if (role == Role::sched_waking)
    if (const TracepointField* flags = format.field("common_flags")) l.fields.push_back(*flags);
  l.complete = true;
  return l;
}

bool KernelConvert::convert(Bytes record, uint32_t cpu, const std::function<uint64_t(uint64_t)>& ticks,
                            TraceWriter& w, KernelStream& out) {
  const perf_event_header& h = header_of(record);
  uint64_t id = 0;
  auto bad = [&] {
    ++corrupt_;
    out.add_lost(1);
    return false;
  };
  if (!record_identifier(record, &id)) return bad();
  const EventMeta* meta = event_of(id);
  if (meta == nullptr) {
    // Records of no event of ours: THROTTLE and the like carry their own
    // ids. Anything else is a record we cannot read.
    return h.type == PERF_RECORD_THROTTLE || h.type == PERF_RECORD_UNTHROTTLE ? true : bad();
  }
  const EventMeta& m = *meta;
  if (h.type == PERF_RECORD_SAMPLE) return sample(m, record, w, out, ticks) || bad();

  SampleId sid;
  if (!parse_sample_id(record, m.sample_type, &sid)) return bad();
  const uint64_t t = ticks(sid.time);
  switch (h.type) {
    case PERF_RECORD_MMAP2: {
      Mmap2 mm;
      if (!parse_mmap2(record, m.sample_type, &mm)) return bad();
      if (on_mmap_) on_mmap_(mm.addr, mm.filename);
      out.append(w, kMmap, t, mm.pid, mm.tid, mm.addr, mm.len, mm.pgoff, mm.prot, mm.flags,
                 Str(mm.filename.data(), mm.filename.size()),
                 Blob{mm.build_id.data(), static_cast<uint32_t>(mm.build_id.size())});
      return true;
    }
    case PERF_RECORD_COMM: {
      Comm c;
      if (!parse_comm(record, m.sample_type, &c)) return bad();
      out.append(w, kComm, t, c.pid, c.tid, Str(c.comm.data(), c.comm.size()), c.exec);
      return true;
    }
    case PERF_RECORD_FORK:
    case PERF_RECORD_EXIT: {
      Task task;
      if (!parse_task(record, m.sample_type, &task)) return bad();
      if (h.type == PERF_RECORD_FORK) out.append(w, kFork, t, task.pid, task.tid, task.ppid, task.ptid);
      else out.append(w, kExit, t, task.pid, task.tid);
      return true;
    }
    case PERF_RECORD_SWITCH: {
      if (record.size() != sizeof(perf_event_header) + sample_id_size(m.sample_type)) return bad();
      const bool switched_out = (h.misc & PERF_RECORD_MISC_SWITCH_OUT) != 0;
      const bool preempted = switched_out && (h.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) != 0;
      out.append(w, kContextSwitch, t, sid.pid, sid.tid, sid.cpu, switched_out, preempted);
      return true;
    }
    case PERF_RECORD_LOST: {
      Lost lost;
      if (!parse_lost(record, m.sample_type, &lost)) return bad();
      out.add_lost(lost.lost);
      out.append(w, kLost, t, cpu, Str(m.source.data(), m.source.size()), lost.lost);
      return true;
    }
    case PERF_RECORD_THROTTLE:
    case PERF_RECORD_UNTHROTTLE:
    case PERF_RECORD_ITRACE_START:
    case PERF_RECORD_KSYMBOL:
    case PERF_RECORD_BPF_EVENT:
    case PERF_RECORD_CGROUP:
    case PERF_RECORD_TEXT_POKE:
    case PERF_RECORD_NAMESPACES:
    case PERF_RECORD_LOST_SAMPLES:
      return true;  // not part of the schema
    default:
      return bad();
  }
}

bool KernelConvert::time_of(Bytes record, uint64_t* time_ns) const {
  uint64_t id = 0;
  if (!record_identifier(record, &id)) return false;
  const EventMeta* meta = event_of(id);
  return meta != nullptr && record_time(record, meta->sample_type, time_ns);
}

bool KernelConvert::sample(const EventMeta& m, Bytes record, TraceWriter& w, KernelStream& out,
                           const std::function<uint64_t(uint64_t)>& ticks) {
  Sample s;
  if (!parse_sample(record, m.sample_type, m.regs_mask, &s)) return false;
  const uint64_t t = ticks(s.time);
  // Split the callchain at its PERF_CONTEXT_* markers: kernel frames come
  // first (after PERF_CONTEXT_KERNEL), then PERF_CONTEXT_USER and the user's.
  user_.clear();
  kernel_.clear();
  std::vector<uint64_t>* into = &user_;
  for (uint64_t i = 0; i < s.callchain_nr; ++i) {
    uint64_t ip;
    std::memcpy(&ip, s.callchain.data() + i * 8, 8);
    if (ip >= static_cast<uint64_t>(PERF_CONTEXT_MAX)) {
      into = ip == static_cast<uint64_t>(PERF_CONTEXT_KERNEL) ? &kernel_ : &user_;
      continue;
    }
    into->push_back(ip);
  }
  switch (m.role) {
    case Role::cpu_sample:
      kernel_addresses_.insert(kernel_.begin(), kernel_.end());
      // A copy longer than one Blob holds goes on in stack_2..stack_4; the
      // kernel keeps every copy below their sum (attr_plan.h).
      static_assert(kStackChunks == 4, "CpuSample has stack and stack_2..stack_4");
      out.append(w, kCpuSample, t, s.pid, s.tid, s.cpu, s.ip, static_cast<uint32_t>(s.regs_abi),
                 s.regs_abi != 0 ? m.regs_mask : uint64_t{0},
                 Blob{s.regs.data(), static_cast<uint32_t>(s.regs.size())}, stack_chunk(s.stack, 0),
                 u64_blob(user_), u64_blob(kernel_), stack_chunk(s.stack, 1), stack_chunk(s.stack, 2),
                 stack_chunk(s.stack, 3));
      return true;
    case Role::fault_minor:
    case Role::fault_major:
      if (s.ip >> 63) kernel_addresses_.insert(s.ip);  // a fault the kernel took on the program's behalf
      out.append(w, kPageFault, t, s.pid, s.tid, s.cpu, s.addr, s.ip, m.role == Role::fault_major, u64_blob(user_));
      return true;
    default: break;
  }
  if (!m.raw.complete) return false;
  const auto& f = m.raw.fields;
  const Bytes raw = s.raw;
  switch (m.role) {
    case Role::syscall_enter:
    case Role::raw_syscall_enter: {
      uint64_t args[6] = {};
      const uint64_t nr = read_unsigned(raw, f[0]);
      if (m.role == Role::raw_syscall_enter) {
        if (f[1].offset + 48 > raw.size()) return false;
        std::memcpy(args, raw.data() + f[1].offset, 48);
      } else {
        for (size_t i = 1; i < f.size(); ++i) args[i - 1] = read_unsigned(raw, f[i]);
      }
      const char* name = m.syscall.empty() ? syscall_name(nr) : m.syscall.c_str();
      out.append(w, kSyscallEnter, t, s.pid, s.tid, s.cpu, static_cast<uint32_t>(nr), Str(name),
                 Blob{args, sizeof args});
      return true;
    }
    case Role::syscall_exit:
    case Role::raw_syscall_exit: {
      const uint64_t nr = read_unsigned(raw, f[0]);
      const char* name = m.syscall.empty() ? syscall_name(nr) : m.syscall.c_str();
      out.append(w, kSyscallExit, t, s.pid, s.tid, s.cpu, static_cast<uint32_t>(nr), Str(name),
                 static_cast<int64_t>(read_unsigned(raw, f[1])));
      return true;
    }
    case Role::sched_switch:
      out.append(w, kSchedSwitch, t, s.cpu, static_cast<uint32_t>(read_unsigned(raw, f[0])), read_string(raw, f[1]),
                 read_unsigned(raw, f[2]), static_cast<uint32_t>(read_unsigned(raw, f[3])), read_string(raw, f[4]));
      return true;
    case Role::sched_waking: {
      // The tracepoint fires in the waker's context: the sample's pid is
      // the waker, unless an interrupt (hard, soft or NMI: trace_entry's
      // TRACE_FLAG_HARDIRQ 0x08, SOFTIRQ 0x10, NMI 0x40) did the waking:
      // then it is whichever task the interrupt hit.
      constexpr uint64_t kInterruptFlags = 0x08 | 0x10 | 0x40;
      const bool irq = f.size() > 3 && (read_unsigned(raw, f[3]) & kInterruptFlags) != 0;
      out.append(w, kSchedWaking, t, s.cpu, s.tid, static_cast<uint32_t>(read_unsigned(raw, f[0])),
                 read_string(raw, f[1]), static_cast<uint32_t>(read_unsigned(raw, f[2])), irq);
      return true;
    }
    case Role::block_issue:
    case Role::block_complete:
      out.append(w, kBlockRequest, t, s.cpu, s.pid, static_cast<uint32_t>(read_unsigned(raw, f[0])),
                 read_unsigned(raw, f[1]), static_cast<uint32_t>(read_unsigned(raw, f[2]) * 512),
                 read_string(raw, f[3]), m.role == Role::block_issue);
      return true;
    default:
      return false;
  }
}

}  // namespace spoor::kernelsrc
