// Errors as values. Transport-level failures use boost::system::error_code with the
// project's categories; failures that need context for a user (a JSON path, an object
// name, a file) carry a message and use aop::Result<T>.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

#include <boost/system/result.hpp>

namespace aop {

struct Error {
  std::string message;
};

// Called by boost::system::result<T, Error>::value() on an error: a programmer error.
[[noreturn]] inline void throw_exception_from_error(const Error& e,
                                                    const boost::source_location& = {}) {
  throw std::runtime_error(e.message);
}

template <class T>
using Result = boost::system::result<T, Error>;

inline Error make_error(std::string message) { return Error{std::move(message)}; }

}  // namespace aop
