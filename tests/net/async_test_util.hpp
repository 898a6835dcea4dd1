// Test helpers for coroutine code: an io_context running on background threads, a
// way to run a coroutine to completion from the test thread (failing loudly instead
// of hanging), waiting on a condition with a generous deadline, and a scripted raw
// server that answers with canned bytes (for malformed and truncated responses).
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>

namespace aop::net::testing {

namespace asio = boost::asio;

// Generous: only reached when something is broken (a hang), never in a passing run.
inline constexpr auto kHangLimit = std::chrono::seconds(60);

class IoThreads {
 public:
  explicit IoThreads(int threads = 2) : work_(asio::make_work_guard(io_)) {
    for (int i = 0; i < threads; ++i) {
      threads_.emplace_back([this] {
        io_.run();
        ++finished_;
      });
    }
  }
  // Lets outstanding work drain first (a coroutine finishing on another context may
  // still hold work on this one), and stops what is left after a few seconds.
  ~IoThreads() {
    work_.reset();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (finished_.load() < static_cast<int>(threads_.size()) &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    io_.stop();
    for (auto& t : threads_) t.join();
  }
  asio::io_context& io() { return io_; }
  asio::any_io_executor executor() { return io_.get_executor(); }

  // Runs `aw` on the io_context and returns its result. A coroutine that does not
  // finish within kHangLimit aborts the test binary with a message: returning would
  // free objects the coroutine still uses.
  template <class T>
  T run(asio::awaitable<T> aw) {
    auto future = asio::co_spawn(io_, std::move(aw), asio::use_future);
    if (future.wait_for(kHangLimit) != std::future_status::ready) {
      std::fprintf(stderr, "FATAL: coroutine did not finish within %lld s (hang)\n",
                   static_cast<long long>(kHangLimit.count()));
      std::abort();
    }
    return future.get();
  }

 private:
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::vector<std::thread> threads_;
  std::atomic<int> finished_{0};
};

// Polls `condition` until it holds; false after kHangLimit.
inline bool wait_until(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + kHangLimit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

// Accepts connections on 127.0.0.1 and, for each, reads the request header and
// writes `response`; then closes (or keeps the connection open when `hold_open`).
// With a TLS context, the connection closes without a TLS close_notify (truncation).
class ScriptedServer {
 public:
  ScriptedServer(asio::any_io_executor ex, std::string response, bool hold_open = false,
                 std::shared_ptr<asio::ssl::context> tls = nullptr, bool wait_for_request = true)
      : acceptor_(asio::make_strand(ex), {asio::ip::make_address("127.0.0.1"), 0}),
        response_(std::move(response)),
        hold_open_(hold_open),
        wait_for_request_(wait_for_request),
        tls_(std::move(tls)) {
    // On the acceptor's strand, like the destructor's close: the loop and the close must
    // not run at once on two threads (ThreadSanitizer found them doing so).
    asio::co_spawn(acceptor_.get_executor(), accept_loop(), asio::detached);
  }
  ~ScriptedServer() {
    std::promise<void> done;
    asio::post(acceptor_.get_executor(), [&] {
      boost::system::error_code ec;
      acceptor_.close(ec);
      for (auto& s : held_) s->close(ec);
      done.set_value();
    });
    done.get_future().wait();
  }
  std::uint16_t port() const { return acceptor_.local_endpoint().port(); }
  int accepted() const { return accepted_.load(); }

 private:
  asio::awaitable<void> accept_loop() {
    for (;;) {
      auto [ec, socket] = co_await acceptor_.async_accept(asio::as_tuple(asio::use_awaitable));
      if (ec) co_return;
      ++accepted_;
      auto held = std::make_shared<asio::ip::tcp::socket>(std::move(socket));
      held_.push_back(held);
      asio::co_spawn(acceptor_.get_executor(), serve(held), asio::detached);
    }
  }

  template <class Stream>
  asio::awaitable<void> answer(Stream& stream) {
    if (wait_for_request_) {
      std::string request;
      auto [rec, n] = co_await asio::async_read_until(
          stream, asio::dynamic_buffer(request), "\r\n\r\n", asio::as_tuple(asio::use_awaitable));
      if (rec) co_return;
    }
    co_await asio::async_write(stream, asio::buffer(response_),
                               asio::as_tuple(asio::use_awaitable));
  }

  asio::awaitable<void> serve(std::shared_ptr<asio::ip::tcp::socket> socket) {
    boost::system::error_code ec;
    if (tls_) {
      asio::ssl::stream<asio::ip::tcp::socket&> stream(*socket, *tls_);
      auto [hec] = co_await stream.async_handshake(asio::ssl::stream_base::server,
                                                   asio::as_tuple(asio::use_awaitable));
      if (!hec) co_await answer(stream);
    } else {
      co_await answer(*socket);
    }
    if (!hold_open_) socket->close(ec);  // abrupt: no TLS close_notify
  }

  asio::ip::tcp::acceptor acceptor_;
  std::string response_;
  bool hold_open_;
  bool wait_for_request_;
  std::shared_ptr<asio::ssl::context> tls_;
  std::vector<std::shared_ptr<asio::ip::tcp::socket>> held_;  // owned by the accept loop
  std::atomic<int> accepted_{0};
};

}  // namespace aop::net::testing
