// Errors as values. Transport-level failures use boost::system::error_code with the
// project's categories; failures that need context for a user (a JSON path, an object
// name, a file) carry a message and use aop::Result<T>.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

#include <boost/system/result.hpp>

namespace aop {

// Build with make_error("what, where, what to do"). Error is deliberately not
// constructible from a bare string (its constructor is private), so functions returning
// Result<std::string> or Result<boost::json::value> can return plain values unambiguously.
class Error {
 public:
  Error() = default;
  std::string message;

 private:
  explicit Error(std::string m) : message(std::move(m)) {}
  friend Error make_error(std::string message);
};

// Called by boost::system::result<T, Error>::value() on an error: a programmer error.
[[noreturn]] inline void throw_exception_from_error(const Error& e,
                                                    const boost::source_location& = {}) {
  throw std::runtime_error(e.message);
}

template <class T>
using Result = boost::system::result<T, Error>;

inline Error make_error(std::string message) {
  return Error(std::move(message));
}

}  // namespace aop
