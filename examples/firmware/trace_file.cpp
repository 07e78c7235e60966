#include "trace_file.h"

#include "semihosting.h"
#include "systick_clock.h"

namespace firmware {

bool TraceFile::sink_write(void* self, const void* data, size_t size) {
  auto* file = static_cast<TraceFile*>(self);
  return semihosting::write(file->handle_, data, size);
}

bool TraceFile::open(const char* path) {
  handle_ = semihosting::open_for_writing(path);
  if (handle_ < 0) return false;
  spoor::format::ClockBlock clock{};
  clock.source = spoor::format::kClockHook;
  clock.freq_millihz = uint64_t{systick::kHz} * 1000;
  // Tick 0 is when SysTick started, which the trace calls time 0; there is
  // no wall clock.
  clock.tick_ref = 0;
  clock.monotonic_ns_ref = 0;
  clock.realtime_ns_ref = 0;
  static constexpr char kName[] = "spoor-firmware-example";
  static constexpr char kCommandLine[] = "firmware.elf";
  return writer_.file_header() == spoor::Status::ok && writer_.clock(clock) == spoor::Status::ok &&
         writer_.process(kTracePid, 0, kName, kCommandLine, sizeof kCommandLine - 1) ==
             spoor::Status::ok &&
         writer_.stream(0, kTracePid, 0) == spoor::Status::ok;
}

void TraceFile::write_new_metadata() {
  const spoor::Status s = writer_.new_metadata(kTracePid);
  if (s != spoor::Status::ok && totals_.status == spoor::Status::ok) totals_.status = s;
}

void TraceFile::drain(const spoor::RingView& ring) {
  spoor::drain_ring(ring, writer_, /*final=*/false, totals_, [this] { write_new_metadata(); });
}

bool TraceFile::finish(const spoor::RingView& ring) {
  spoor::flush_ring(ring);
  // final: no writer is left mid-event, so nothing can be busy.
  spoor::drain_ring(ring, writer_, /*final=*/true, totals_, [this] { write_new_metadata(); });
  if (writer_.new_metadata(kTracePid) != spoor::Status::ok && totals_.status == spoor::Status::ok)
    totals_.status = spoor::Status::sink_failed;
  spoor::end_streams(ring, writer_, totals_);
  const bool closed = semihosting::close(handle_);
  handle_ = -1;
  return closed && totals_.status == spoor::Status::ok;
}

}  // namespace firmware
