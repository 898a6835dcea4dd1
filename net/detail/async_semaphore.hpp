// Internal: a counting semaphore for coroutines on any number of threads. acquire()
// suspends the calling coroutine (no thread blocks) until a permit is released; the
// waiter is resumed on its own executor. Used for the HTTP client's connection cap.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>

#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>

namespace aop::net::detail {

class AsyncSemaphore {
 public:
  explicit AsyncSemaphore(std::size_t permits) : permits_(permits) {}
  ~AsyncSemaphore() { close(); }
  AsyncSemaphore(const AsyncSemaphore&) = delete;
  AsyncSemaphore& operator=(const AsyncSemaphore&) = delete;

  // Waits for a permit, first come first served. After close(): Errc::client_closed.
  boost::asio::awaitable<boost::system::error_code> acquire();
  bool try_acquire();
  // Hands the permit to the longest waiter, or returns it.
  void release();
  // Fails every waiter and every later acquire.
  void close();

  std::size_t available() const;
  std::size_t waiting() const;

  // A suspended acquirer; completes exactly once.
  class Waiter {
   public:
    virtual ~Waiter() = default;
    virtual void complete(boost::system::error_code ec) = 0;
  };
  // Called from acquire()'s initiation (under no lock): grants or queues the waiter.
  void enqueue(std::unique_ptr<Waiter> waiter);

 private:
  mutable std::mutex mutex_;  // owns permits_, waiters_, closed_
  std::size_t permits_;
  std::deque<std::unique_ptr<Waiter>> waiters_;
  bool closed_ = false;
};

}  // namespace aop::net::detail
