#include "net/detail/async_semaphore.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "net/error.hpp"

namespace aop::net::detail {
namespace {

// Keeps the waiter's executor alive (work guard) while it is suspended and resumes it
// there with post(), never inline on the releasing thread.
template <class Handler>
class WaiterFor final : public AsyncSemaphore::Waiter {
 public:
  explicit WaiterFor(Handler handler)
      : handler_(std::move(handler)),
        work_(boost::asio::make_work_guard(boost::asio::get_associated_executor(handler_))) {}

  void complete(boost::system::error_code ec) override {
    auto executor = work_.get_executor();
    boost::asio::post(executor, [handler = std::move(handler_), ec,
                                 work = std::move(work_)]() mutable { std::move(handler)(ec); });
  }

 private:
  Handler handler_;
  boost::asio::executor_work_guard<boost::asio::associated_executor_t<Handler>> work_;
};

}  // namespace

bool AsyncSemaphore::try_acquire() {
  const std::lock_guard lock(mutex_);
  if (closed_ || permits_ == 0) return false;
  --permits_;
  return true;
}

boost::asio::awaitable<boost::system::error_code> AsyncSemaphore::acquire() {
  if (try_acquire()) co_return boost::system::error_code{};
  constexpr auto token = boost::asio::as_tuple(boost::asio::use_awaitable);
  auto [ec] =
      co_await boost::asio::async_initiate<decltype(token), void(boost::system::error_code)>(
          [this](auto handler) {
            enqueue(std::make_unique<WaiterFor<decltype(handler)>>(std::move(handler)));
          },
          token);
  co_return ec;
}

void AsyncSemaphore::enqueue(std::unique_ptr<Waiter> waiter) {
  std::unique_lock lock(mutex_);
  if (closed_ || permits_ > 0) {
    const boost::system::error_code ec =
        closed_ ? Errc::client_closed : boost::system::error_code{};
    if (!closed_) --permits_;
    lock.unlock();
    waiter->complete(ec);
    return;
  }
  waiters_.push_back(std::move(waiter));
}

void AsyncSemaphore::release() {
  std::unique_lock lock(mutex_);
  if (waiters_.empty()) {
    ++permits_;
    return;
  }
  std::unique_ptr<Waiter> next = std::move(waiters_.front());
  waiters_.pop_front();
  lock.unlock();
  next->complete({});
}

void AsyncSemaphore::close() {
  std::deque<std::unique_ptr<Waiter>> failed;
  {
    const std::lock_guard lock(mutex_);
    closed_ = true;
    failed.swap(waiters_);
  }
  for (auto& w : failed) w->complete(Errc::client_closed);
}

std::size_t AsyncSemaphore::available() const {
  const std::lock_guard lock(mutex_);
  return permits_;
}

std::size_t AsyncSemaphore::waiting() const {
  const std::lock_guard lock(mutex_);
  return waiters_.size();
}

}  // namespace aop::net::detail
