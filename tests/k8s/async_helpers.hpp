// Helpers for integration tests: an io_context on background threads, running a
// coroutine to completion from the test thread, and waiting for a condition with a
// generous deadline (never a fixed sleep).
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

namespace aop::testing {

class IoThreads {
 public:
  explicit IoThreads(int threads = 2) : work_(boost::asio::make_work_guard(io_)) {
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { io_.run(); });
  }
  ~IoThreads() { stop(); }
  void stop() {
    work_.reset();
    io_.stop();
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
  }
  boost::asio::io_context& io() { return io_; }
  boost::asio::any_io_executor executor() { return io_.get_executor(); }

  // Runs a coroutine on the io_context and waits for its result.
  template <class T>
  T run(boost::asio::awaitable<T> a) {
    return boost::asio::co_spawn(io_, std::move(a), boost::asio::use_future).get();
  }
  void run(boost::asio::awaitable<void> a) {
    boost::asio::co_spawn(io_, std::move(a), boost::asio::use_future).get();
  }

 private:
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::vector<std::thread> threads_;
};

// Polls `condition` until it holds or `timeout` passes; true if it held.
inline bool wait_until(const std::function<bool()>& condition,
                       std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // poll interval
  }
  return true;
}

}  // namespace aop::testing
