// Trace: opening (from a path or from bytes) and the lookups over what the
// block walk found.
#include "spoor/reader/trace.h"

#include <limits>

#include "spoor/reader/event.h"
#include "trace_data.h"

namespace spoor::reader {
namespace {

// n / d when the quotient fits in 64 bits: x86-64's divq divides 128 bits
// by 64 in one instruction, where the compiler's signed 128-by-128
// division (__divti3) took 2% of a 22 M-event report's time. The same
// quotient, truncated; false when it does not fit (or elsewhere).
bool divide_to_64(unsigned __int128 n, uint64_t d, uint64_t& quotient) {
#if defined(__x86_64__)
  const auto high = static_cast<uint64_t>(n >> 64);
  if (d == 0 || high >= d) return false;
  uint64_t remainder = 0;
  __asm__("divq %4" : "=a"(quotient), "=d"(remainder) : "a"(static_cast<uint64_t>(n)), "d"(high), "rm"(d));
  return true;
#else
  (void)n, (void)d, (void)quotient;
  return false;
#endif
}

}  // namespace

int64_t Clock::to_ns(uint64_t ticks) const {
  // Ticks before tick_ref are a negative difference, not a huge one. 128-bit
  // arithmetic keeps (ticks - tick_ref) * 10^12 exact for any 64-bit input.
  const __int128 diff = static_cast<int64_t>(ticks - tick_ref);
  const unsigned __int128 magnitude = static_cast<unsigned __int128>(diff < 0 ? -diff : diff) * 1'000'000'000'000u;
  uint64_t quotient = 0;
  const __int128 ns =
      divide_to_64(magnitude, freq_millihz, quotient)
          ? monotonic_ns_ref + (diff < 0 ? -static_cast<__int128>(quotient) : static_cast<__int128>(quotient))
          : monotonic_ns_ref + diff * 1'000'000'000'000 / static_cast<__int128>(freq_millihz);
  if (ns > std::numeric_limits<int64_t>::max()) return std::numeric_limits<int64_t>::max();
  if (ns < std::numeric_limits<int64_t>::min()) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(ns);
}

const Value* Event::field(std::string_view name) const {
  for (const FieldValue& f : fields)
    if (f.field->name == name) return &f.value;
  return nullptr;
}

Result<Trace> Trace::open(const std::string& path) {
  Result<MappedFile> file = MappedFile::open(path);
  if (!file) return Error{file.error()};
  auto data = std::make_unique<Data>();
  data->file = std::move(file).value();
  data->bytes = data->file.bytes();
  if (auto error = walk_blocks(*data)) return *error;
  return Trace(std::move(data));
}

Result<Trace> Trace::from_bytes(std::vector<uint8_t> bytes) {
  auto data = std::make_unique<Data>();
  data->owned = std::move(bytes);
  data->bytes = {data->owned.data(), data->owned.size()};
  if (auto error = walk_blocks(*data)) return *error;
  return Trace(std::move(data));
}

Trace::Trace(std::unique_ptr<Data> data) : data_(std::move(data)) {}
Trace::Trace(Trace&&) noexcept = default;
Trace& Trace::operator=(Trace&&) noexcept = default;
Trace::~Trace() = default;

std::span<const uint8_t> Trace::bytes() const { return data_->bytes; }
uint16_t Trace::version_major() const { return data_->version_major; }
uint16_t Trace::version_minor() const { return data_->version_minor; }
const Clock& Trace::clock() const { return data_->clock; }
bool Trace::has_clock() const { return data_->has_clock; }
const std::vector<Process>& Trace::processes() const { return data_->processes; }
const std::vector<Process>& Trace::process_blocks() const { return data_->process_blocks; }
const std::vector<Stream>& Trace::streams() const { return data_->streams; }
const std::deque<Provider>& Trace::providers() const { return data_->providers; }
const std::deque<EventDescriptor>& Trace::events() const { return data_->events; }
const CompressionSummary& Trace::compression() const { return data_->compression; }
const std::optional<Damage>& Trace::damage() const { return data_->damage; }

void Trace::limit_expanded_bytes(uint64_t bytes) {
  std::lock_guard lock(data_->expansions.mutex);
  data_->expansions.limit = bytes;
}

Trace::ExpansionStats Trace::expansion_stats() const {
  std::lock_guard lock(data_->expansions.mutex);
  return ExpansionStats{data_->expansions.expansions, data_->expansions.peak_bytes, data_->expansions.by_readers};
}
const std::vector<std::string>& Trace::warnings() const { return data_->warnings; }

const std::vector<SymbolMap>& Trace::symbol_maps() const { return data_->symbol_maps; }
const SymbolMap* Trace::symbol_map(uint32_t pid) const {
  auto it = data_->symbol_map_by_pid.find(pid);
  return it == data_->symbol_map_by_pid.end() ? nullptr : &data_->symbol_maps[it->second];
}
const Process* Trace::process(uint32_t pid) const {
  auto it = data_->process_by_pid.find(pid);
  return it == data_->process_by_pid.end() ? nullptr : &data_->processes[it->second];
}

const Stream* Trace::stream(uint32_t stream_id) const {
  auto it = data_->stream_by_id.find(stream_id);
  return it == data_->stream_by_id.end() ? nullptr : &data_->streams[it->second];
}

const Provider* Trace::provider(uint32_t pid, uint16_t index) const {
  auto it = data_->provider_by_key.find(process_key(pid, index));
  return it == data_->provider_by_key.end() ? nullptr : it->second;
}

const EventDescriptor* Trace::event(uint32_t pid, uint16_t key) const {
  auto it = data_->event_by_key.find(process_key(pid, key));
  return it == data_->event_by_key.end() ? nullptr : it->second;
}

}  // namespace spoor::reader
