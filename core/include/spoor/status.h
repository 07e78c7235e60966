// Status codes returned by the core. The core never throws and never
// allocates; every public function documents which of these it returns.
#ifndef SPOOR_STATUS_H
#define SPOOR_STATUS_H

namespace spoor {

enum class Status : int {
  ok = 0,
  invalid_argument = 1,  // a size, count or name the function cannot use
  out_of_space = 2,      // a fixed-capacity table or the caller's span is full
  empty = 3,             // nothing to return yet (no packet ready)
  busy = 4,              // a writer has reserved but not committed; try again
  sink_failed = 5,       // the output sink reported an error
  already_exists = 6,    // registered twice
};

constexpr const char* status_name(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::invalid_argument: return "invalid argument";
    case Status::out_of_space: return "out of space";
    case Status::empty: return "empty";
    case Status::busy: return "busy";
    case Status::sink_failed: return "sink failed";
    case Status::already_exists: return "already exists";
  }
  return "unknown status";
}

}  // namespace spoor

#endif  // SPOOR_STATUS_H
