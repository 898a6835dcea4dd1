// Drives a single-threaded io_context from the test thread until a condition holds, with
// a generous deadline (a hang fails, not blocks).
#pragma once

#include <chrono>

#include <boost/asio/io_context.hpp>

namespace aop::runtime::testing {

template <class Pred>
bool run_until(boost::asio::io_context& io, Pred done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    io.restart();
    io.run_for(std::chrono::milliseconds(2));
  }
  return true;
}

}  // namespace aop::runtime::testing
