//===- Status.h - Error values of the runtime -------------------*- C++ -*-===//
//
// The runtime must build and run without LLVM (it is shipped to GPU machines
// that have none), so it cannot use llvm::Error. Status and Expected<T> are
// the small equivalents: a failure carries one human-readable message that
// already names the CUDA call, file or JSON path that failed.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_STATUS_H
#define GPUOPT_RUNTIME_STATUS_H

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace gpuopt::runtime {

/// Success, or a failure with a message.
class [[nodiscard]] Status {
public:
  static Status success() { return Status(); }
  static Status error(std::string Message) {
    Status S;
    S.Failed = true;
    S.Message = std::move(Message);
    return S;
  }

  bool ok() const { return !Failed; }
  /// True on failure, as llvm::Error: `if (Status S = f()) return S;`.
  explicit operator bool() const { return Failed; }
  const std::string &message() const { return Message; }

private:
  bool Failed = false;
  std::string Message;
};

/// A value or the Status explaining why there is none.
template <typename T> class [[nodiscard]] Expected {
public:
  Expected(T Value) : Value(std::move(Value)) {}
  Expected(Status Error) : Error(std::move(Error)) {
    assert(!this->Error.ok() && "Expected built from a successful Status");
  }

  /// True when a value is present.
  explicit operator bool() const { return Value.has_value(); }
  T &operator*() { return *Value; }
  const T &operator*() const { return *Value; }
  T *operator->() { return &*Value; }
  const T *operator->() const { return &*Value; }
  /// The failure; only valid when there is no value.
  const Status &status() const { return Error; }
  Status takeStatus() { return std::move(Error); }

private:
  std::optional<T> Value;
  Status Error;
};

} // namespace gpuopt::runtime

#endif // GPUOPT_RUNTIME_STATUS_H
