// Result<T>: a value or the message saying why there is none. The reader
// never throws; every fallible call returns one of these.
#ifndef SPOOR_READER_RESULT_H
#define SPOOR_READER_RESULT_H

#include <optional>
#include <string>
#include <utility>

namespace spoor::reader {

// The problem, in words a user can act on ("not a Spoor trace: ...").
struct Error {
  std::string message;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit on purpose
  Result(Error error) : error_(std::move(error.message)) {}  // NOLINT

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }

  // Only when ok().
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

  // Empty when ok().
  const std::string& error() const { return error_; }

 private:
  std::optional<T> value_;
  std::string error_;
};

}  // namespace spoor::reader

#endif  // SPOOR_READER_RESULT_H
