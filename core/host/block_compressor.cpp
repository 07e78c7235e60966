// BlockCompressor: finding block boundaries in the byte stream, cutting
// runs, and the packing threads.
#include "spoor/host/block_compressor.h"

#include <time.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "spoor/compress/huge_pages.h"
#include "spoor/compress/packed_blocks.h"
#include "spoor/format.h"
#include "spoor/trace_writer.h"

namespace spoor::host {
namespace {

namespace fmt = spoor::format;
using Clock = std::chrono::steady_clock;

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

using compress::PageBuffer;

struct Job {
  PageBuffer bytes;
  bool verbatim = false;  // the file header, or bytes that are not blocks
  uint64_t sequence = 0;  // the order it is written in
};

// A packed (or stored) job waiting for its turn to be written.
struct Packed {
  PageBuffer bytes;              // the run (written as it is when `store`)
  std::vector<uint8_t> payload;  // the COMPRESSED block's payload
  bool verbatim = false;
  bool store = false;
  bool hurry = false;
  bool behind = false;
  bool skipped = false;  // the file failed before it was packed: neither packed nor written
};

constexpr uint32_t kDefaultMostThreads = 8;

uint32_t cpu_count() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : n;
}

}  // namespace

struct BlockCompressor::Impl {
  CompressionOptions options;
  Output output;

  // Drainer side: bytes not handed over yet. [0, complete) is whole blocks
  // (or, before the header is out, the file header); `scan` is where the
  // next block header to check starts.
  PageBuffer pending;
  size_t complete = 0;
  size_t scan = 0;
  bool header_out = false;  // the file header was handed over
  bool not_blocks = false;  // something that is no block came: pass all through
  Clock::time_point oldest{};  // when the first complete block of `pending` came
  uint64_t next_sequence = 0;

  // Shared with the packing threads (under `mutex`).
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<Job> queue;
  uint64_t queued_bytes = 0;  // handed over and not written yet
  uint64_t unpacked_bytes = 0;  // of those, in `queue` (no packing thread took them yet)
  // The drainer waits on it while queued_bytes is over memory_limit().
  std::condition_variable room;
  uint32_t packing = 0;       // threads packing a run now
  uint32_t allowed = 1;       // how many may
  // Packed runs waiting for the ones cut before them; the thread that
  // finds the next one in order writes it, and every ready one after it.
  std::map<uint64_t, Packed> ready;
  uint64_t next_out = 0;
  bool writing = false;  // a thread is writing (owns `writer` and `put`)
  // Buffers the packing threads are done with, pages still mapped: the
  // drainer's next runs are gathered in them, so handing a run over costs
  // no copy and no page fault (a fresh 4 MiB buffer cost ~2.5 ms of the
  // drainer's time, up to 13 ms, in page faults and copying).
  std::vector<PageBuffer> spare;
  std::vector<std::vector<uint8_t>> spare_payloads;
  static constexpr size_t kSpareBuffers = 4;
  // Spare buffers a packing thread with nothing to pack makes ahead, pages
  // touched, once the drainer asked (make_spares_ahead: it fell behind).
  // The drainer would otherwise gather its next runs in fresh memory and
  // take the page faults itself, between two looks at the program's
  // rings: on a virtual machine whose host takes freed memory back,
  // 2-4 ms per 2 MiB page, ~100 ms of a 50 MB trace's drain, and the
  // rings filled meanwhile. Not from the start: the touching takes CPU
  // the traced program would have, and slowed it where the drainer kept
  // up anyway (bench/RESULTS.md).
  static constexpr size_t kWarmSpares = 1;
  bool spares_wanted = false;  // make_spares_ahead() was called
  bool warming = false;        // a packing thread is making a spare
  bool stopping = false;
  bool finished = false;
  // The output failed: nothing more reaches the file, so runs still
  // waiting are not packed (a full disk would otherwise cost the CPUs the
  // whole backlog's packing for nothing). Set by the writing thread.
  std::atomic<bool> failed{false};
  CompressionStats stats;
  std::unique_ptr<TraceWriter> writer;  // used by the writing thread only
  std::vector<std::thread> threads;
  uint32_t thread_count = 0;  // threads.size(), set before any starts
  std::string start_problem;  // why a packing thread could not start ("" when all did)

  // What the runs waiting to be packed or written may hold at most.
  // Beyond it the drainer waits for the file: the program's rings fill,
  // and what they drop meanwhile is counted (with --wait-when-full the
  // program waits instead). Without this bound a program that outran a
  // slow file grew the recorder by ~130 MB a second, to 4.2 GB in 30 s.
  // At least four runs, so that packing threads always have work.
  uint64_t memory_limit() const {
    const uint64_t limit = options.backlog_limit + options.backlog_limit / 2;
    return limit > 4 * options.run_bytes ? limit : 4 * options.run_bytes;
  }

  void hand_over(PageBuffer bytes, bool verbatim) {
    if (bytes.empty()) return;
    {
      std::unique_lock lock(mutex);
      if (queued_bytes > memory_limit()) {
        const Clock::time_point start = Clock::now();
        room.wait(lock, [&] { return queued_bytes <= memory_limit(); });
        stats.drain_wait_seconds += std::chrono::duration<double>(Clock::now() - start).count();
      }
      queued_bytes += bytes.size();
      if (!verbatim) unpacked_bytes += bytes.size();
      queue.push_back(Job{std::move(bytes), verbatim, next_sequence++});
    }
    wake.notify_one();
  }

  // An empty buffer for the next run: a spare one, or a new one.
  PageBuffer take_buffer() {
    PageBuffer buffer;
    {
      std::lock_guard lock(mutex);
      if (!spare.empty()) {
        buffer = std::move(spare.back());
        spare.pop_back();
      }
    }
    wake.notify_one();  // an idle packing thread may make the next spare
    buffer.clear();
    return buffer;
  }

  size_t whole_run_bytes() const { return options.run_bytes + (options.run_bytes >> 2); }

  // Whether an idle packing thread should make a spare buffer now (under
  // `mutex`).
  bool wants_spare() const { return spares_wanted && !warming && !stopping && spare.size() < kWarmSpares; }

  // A buffer for a whole run with every page touched, made outside the
  // lock, 2 MiB at a time: it stops early (a spare partly touched) once a
  // run waits to be packed or the recording ends, which must not wait for
  // the rest.
  PageBuffer make_spare(std::unique_lock<std::mutex>& lock) {
    warming = true;
    lock.unlock();
    PageBuffer buffer;
    buffer.reserve(whole_run_bytes());
    // The bytes past size() are the buffer's own storage, written before
    // anything reads them (runs are gathered with insert()): a store per
    // 4 KiB page faults each in, a 2 MiB one as a whole.
    volatile uint8_t* const bytes = buffer.data();
    const size_t capacity = buffer.capacity();
    for (size_t at = 0; at < capacity; at += compress::kHugePageBytes) {
      const size_t end = capacity - at > compress::kHugePageBytes ? at + compress::kHugePageBytes : capacity;
      for (size_t page = at; page < end; page += 4096) bytes[page] = 0;
      std::lock_guard check(mutex);
      if (stopping || (!queue.empty() && packing < allowed)) break;
    }
    lock.lock();
    warming = false;
    ++stats.spares_made;
    return buffer;
  }

  // Room in `pending` for `more` bytes. A run's buffer is sized for a whole
  // run (1.25x run_bytes, in 2 MiB pages) only once it holds more than
  // kSmallRun: the kernel zeroes each 2 MiB page as it is first touched,
  // and a recording of a short program (`spoor record -- true`) touched
  // two or three of them for a few KiB of trace, ~9 ms of its ~33 ms.
  static constexpr size_t kSmallRun = 256u << 10;
  void make_room(size_t more) {
    const size_t need = pending.size() + more;
    if (need <= pending.capacity()) return;
    const size_t whole = whole_run_bytes();
    if (need <= kSmallRun && kSmallRun < whole) {
      pending.reserve(kSmallRun);
      return;
    }
    // The few bytes gathered so far (the tail after the file header, a
    // short trace's first 256 KiB) move into a spare rather than into
    // fresh memory.
    PageBuffer spare_buffer = take_buffer();
    if (spare_buffer.capacity() >= need) {
      compress::append_bytes(spare_buffer, pending.data(), pending.size());
      pending = std::move(spare_buffer);
      return;
    }
    pending.reserve(need > whole ? need : whole);
    std::lock_guard lock(mutex);
    ++stats.runs_gathered_fresh;
    // A spare too small for this one block still serves a later run.
    if (spare_buffer.capacity() >= options.run_bytes && spare.size() < kSpareBuffers)
      spare.push_back(std::move(spare_buffer));
  }

  // Hands over pending[0, end) (the buffer itself: no copy) and keeps the
  // rest, a partial block at most, in the next buffer.
  void hand_over_prefix(size_t end, bool verbatim) {
    PageBuffer next = take_buffer();
    compress::append_bytes(next, pending.data() + end, pending.size() - end);
    pending.resize(end);
    hand_over(std::move(pending), verbatim);
    pending = std::move(next);
    complete -= end;
    scan -= end;
  }

  // Moves `scan` over every block that has fully arrived.
  void find_complete_blocks() {
    if (!header_out) {
      if (pending.size() < sizeof(fmt::FileHeader)) return;
      uint32_t header_size = 0;
      std::memcpy(&header_size, pending.data() + offsetof(fmt::FileHeader, header_size), 4);
      if (header_size < sizeof(fmt::FileHeader)) header_size = sizeof(fmt::FileHeader);
      if (pending.size() < header_size) return;
      complete = scan = header_size;
      hand_over_prefix(header_size, true);
      header_out = true;
    }
    while (!not_blocks && pending.size() - scan >= sizeof(fmt::BlockHeader)) {
      fmt::BlockHeader h{};
      std::memcpy(&h, pending.data() + scan, sizeof h);
      if (h.magic != fmt::kBlockMagic || h.size > fmt::kMaxBlockPayload ||
          h.type == fmt::kBlockCompressed) {
        not_blocks = true;
        break;
      }
      if (pending.size() - scan < sizeof h + h.size) break;
      if (complete == 0) oldest = Clock::now();
      scan += sizeof h + h.size;
      complete = scan;
    }
    if (not_blocks) {  // rare and small: a copy, keeping the buffer
      hand_over(pending, true);
      pending.clear();
      complete = scan = 0;
    }
  }

  // Hands over runs of about run_bytes each; the last, shorter one only if
  // `all`.
  void cut_runs(bool all) {
    size_t at = 0;
    while (at < complete) {
      fmt::BlockHeader h{};
      std::memcpy(&h, pending.data() + at, sizeof h);
      at += sizeof h + h.size;
      if (at >= options.run_bytes) {
        hand_over_prefix(at, false);
        at = 0;
      }
    }
    if (all && complete > 0) hand_over_prefix(complete, false);
  }

  bool put(const void* data, size_t size) {
    if (failed.load()) return false;
    if (!output(data, size)) failed.store(true);
    return !failed.load();
  }
  static bool sink_thunk(void* self, const void* data, size_t size) {
    return static_cast<Impl*>(self)->put(data, size);
  }

  // Writes the ready runs that are next in order. Called with `lock` held
  // and `writing` set by this thread; writes with it released.
  void write_ready(std::unique_lock<std::mutex>& lock) {
    for (auto it = ready.find(next_out); it != ready.end(); it = ready.find(next_out)) {
      Packed done = std::move(it->second);
      ready.erase(it);
      lock.unlock();
      if (done.skipped) {
        // nothing reaches a failed file
      } else if (done.store) {
        put(done.bytes.data(), done.bytes.size());
      } else {
        const TraceWriter::Piece piece{done.payload.data(), done.payload.size()};
        writer->block(fmt::kBlockCompressed, &piece, 1);
      }
      lock.lock();
      ++next_out;
      const uint64_t size = done.bytes.size();
      queued_bytes -= size;
      room.notify_all();
      if (!done.verbatim && done.store && !done.skipped) stats.stored_bytes += size;
      if (!done.store) {
        stats.raw_bytes += size;
        stats.packed_bytes += sizeof(fmt::BlockHeader) + done.payload.size();
        stats.blocks++;
        if (done.hurry) stats.fast_bytes += size;
        if (done.behind) stats.behind_bytes += size;
      }
      if (spare.size() < kSpareBuffers && done.bytes.capacity() >= options.run_bytes)
        spare.push_back(std::move(done.bytes));
      if (spare_payloads.size() < thread_count && done.payload.capacity() > 0)
        spare_payloads.push_back(std::move(done.payload));
    }
  }

  // One packing thread: takes the oldest waiting run while fewer than
  // `allowed` threads pack, packs it with its own Packers (each keeps a
  // zstd context and the layout's scratch memory between runs).
  void run() {
    // Made at this thread's first run: each holds a zstd context and a
    // splitter whose 256 KiB key table is filled as it is made (a short
    // recording made four and packed with one; `spoor record -- true`
    // spent ~3 ms of its ~28 ms on them).
    std::optional<compress::Packer> packer;
    // Format 1.1's record columns at zstd's fastest level pack two to three
    // times as fast (7x instead of 12x on heap traces): used while half the
    // backlog limit is waiting.
    std::optional<compress::Packer> fast_packer;
    std::string problem;
    bool packed_any = false;
    std::unique_lock lock(mutex);
    for (;;) {
      // Behind: a run was already waiting when this thread came for work
      // (it packed the last one slower than the program made the next).
      const bool run_waiting = !queue.empty() && packing < allowed;
      wake.wait(lock, [&] { return (stopping && queue.empty()) || (!queue.empty() && packing < allowed) || wants_spare(); });
      if (queue.empty() && stopping) break;
      if (queue.empty() || packing >= allowed) {  // nothing this thread may pack: a spare
        PageBuffer made = make_spare(lock);
        if (spare.size() < kSpareBuffers) spare.push_back(std::move(made));
        continue;
      }
      // Packing behind: runs wait for a packing thread. Writing behind: they
      // wait, packed or stored, for the file. Storing a run unpacked
      // helps only the first (it hands the file 8x the bytes).
      const uint64_t unpacked = unpacked_bytes;
      const uint64_t unwritten = queued_bytes - unpacked_bytes;
      Job job = std::move(queue.front());
      queue.pop_front();
      if (!job.verbatim) unpacked_bytes -= job.bytes.size();
      ++packing;
      Packed done;
      if (!spare_payloads.empty()) {
        done.payload = std::move(spare_payloads.back());
        spare_payloads.pop_back();
      }
      lock.unlock();

      done.verbatim = job.verbatim;
      done.skipped = failed.load();
      done.hurry = unpacked > options.backlog_limit / 2;
      std::optional<compress::Packer>& wanted = done.hurry ? fast_packer : packer;
      if (!job.verbatim && !done.skipped && !wanted) {
        if (done.hurry) wanted.emplace(1, fmt::kLayoutRecordColumns);
        else wanted.emplace(options.level);
      }
      // A run that waited, in the same layout at zstd's level 1
      // (behind_level): zstd's part of the packing is 30-45% faster there
      // than at 3, heap traces come out ~1% smaller and others 6-11%
      // larger (bench/RESULTS.md): speed first while the program outruns
      // the packing, the level asked for while it keeps up.
      done.behind = !done.hurry && run_waiting && options.behind_level != options.level;
      if (!done.hurry && wanted) wanted->set_level(done.behind ? options.behind_level : options.level);
      const uint64_t two_runs = 2 * options.run_bytes;
      const bool file_keeps_up = unwritten <= (options.backlog_limit / 4 > two_runs ? options.backlog_limit / 4 : two_runs);
      done.store = done.skipped || job.verbatim || (unpacked > options.backlog_limit && file_keeps_up) ||
                   !wanted->pack(job.bytes, done.payload, &problem);
      packed_any = packed_any || !job.verbatim;
      done.bytes = std::move(job.bytes);

      lock.lock();
      --packing;
      ready.emplace(job.sequence, std::move(done));
      if (!writing) {
        writing = true;
        write_ready(lock);
        writing = false;
      }
      wake.notify_all();  // a thread may pack again, or the finisher may look
    }
    stats.cpu_seconds += thread_cpu_seconds();
    stats.threads += packed_any ? 1 : 0;
  }
};

BlockCompressor::BlockCompressor(const CompressionOptions& options, Output output)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.options = options;
  if (s.options.run_bytes > fmt::kMaxCompressedRaw / 2) s.options.run_bytes = fmt::kMaxCompressedRaw / 2;
  const uint32_t cpus = cpu_count();
  const uint32_t threads = s.options.threads != 0 ? s.options.threads : (cpus < kDefaultMostThreads ? cpus : kDefaultMostThreads);
  const uint32_t at_first = s.options.threads_at_first != 0 ? s.options.threads_at_first
                                                            : (cpus / 2 > 0 ? cpus / 2 : 1);
  s.allowed = at_first < threads ? at_first : threads;
  s.output = std::move(output);
  s.writer = std::make_unique<TraceWriter>(Sink{impl_.get(), &Impl::sink_thunk});
  s.thread_count = threads;
  // A thread that cannot start (a cgroup's pids.max, RLIMIT_NPROC) leaves
  // the others to pack; with none, running() tells the caller, which
  // writes the trace uncompressed. Before any thread runs, thread_count
  // and allowed are this thread's alone.
  for (uint32_t i = 0; i < threads; ++i) {
    try {
      s.threads.emplace_back([p = impl_.get()] { p->run(); });
    } catch (const std::system_error& e) {
      std::lock_guard lock(s.mutex);
      s.thread_count = static_cast<uint32_t>(s.threads.size());
      if (s.allowed > s.thread_count) s.allowed = s.thread_count;
      s.start_problem = std::to_string(s.thread_count) + " of " + std::to_string(threads) +
                        " packing threads started (" + e.code().message() + ")";
      break;
    }
  }
}

bool BlockCompressor::running() const { return !impl_->threads.empty(); }

std::string BlockCompressor::start_problem() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->start_problem;
}

BlockCompressor::~BlockCompressor() { finish(); }

void BlockCompressor::write(const void* data, size_t size) {
  Impl& s = *impl_;
  if (s.finished || size == 0) return;
  const auto* p = static_cast<const uint8_t*>(data);
  s.make_room(size);
  compress::append_bytes(s.pending, p, size);
  s.find_complete_blocks();
  if (s.complete >= s.options.run_bytes) s.cut_runs(false);
}

void BlockCompressor::flush() {
  Impl& s = *impl_;
  if (s.finished || s.complete == 0) return;
  if (Clock::now() - s.oldest >= std::chrono::milliseconds(s.options.max_delay_ms)) s.cut_runs(true);
}

void BlockCompressor::make_spares_ahead() {
  Impl& s = *impl_;
  {
    std::lock_guard lock(s.mutex);
    if (s.spares_wanted) return;
    s.spares_wanted = true;
  }
  s.wake.notify_all();
}

void BlockCompressor::use_threads(uint32_t threads) {
  Impl& s = *impl_;
  {
    std::lock_guard lock(s.mutex);
    const uint32_t most = s.thread_count;
    s.allowed = threads == 0 ? 1 : (threads < most ? threads : most);
  }
  s.wake.notify_all();
}

bool BlockCompressor::finish() {
  Impl& s = *impl_;
  if (!s.finished) {
    s.cut_runs(true);
    // A cut-off block (a writer that failed mid-block) goes out as it is.
    s.hand_over(std::move(s.pending), true);
    s.pending.clear();
    s.complete = s.scan = 0;
    {
      std::lock_guard lock(s.mutex);
      s.stopping = true;
      // Nothing else comes: what is left is packed on every thread.
      s.allowed = s.thread_count;
    }
    s.wake.notify_all();
    for (std::thread& t : s.threads) t.join();
    s.finished = true;
  }
  return !s.failed.load();
}

CompressionStats BlockCompressor::stats() const {
  std::lock_guard lock(impl_->mutex);
  CompressionStats stats = impl_->stats;
  stats.memory_limit = impl_->memory_limit();
  stats.spares_ready = impl_->spare.size();
  return stats;
}

}  // namespace spoor::host
