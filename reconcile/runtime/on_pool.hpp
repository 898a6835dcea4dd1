// Runs CPU-heavy work (planning, rendering, hashing) on a thread pool and resumes the
// awaiting coroutine on its own executor with the result, or with the exception the work
// threw: watch events and API answers on the io threads never wait behind a render.
//
//   RootPlan plan = co_await on_pool<RootPlan>(compute, [&] { return plan_root(...); });
#pragma once

#include <exception>
#include <functional>
#include <utility>

#include <boost/asio/async_result.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace aop::runtime {

template <class R>
boost::asio::awaitable<R> on_pool(boost::asio::thread_pool& pool, std::function<R()> fn) {
  namespace asio = boost::asio;
  return asio::async_initiate<const asio::use_awaitable_t<>&, void(std::exception_ptr, R)>(
      [&pool](auto handler, std::function<R()> f) {
        auto work = asio::make_work_guard(asio::get_associated_executor(handler));
        asio::post(pool, [handler = std::move(handler), work = std::move(work),
                          f = std::move(f)]() mutable {
          std::exception_ptr error;
          R result{};
          try {
            result = f();
          } catch (...) {
            error = std::current_exception();
          }
          const auto ex = work.get_executor();
          asio::dispatch(
              ex, [handler = std::move(handler), error, result = std::move(result)]() mutable {
                std::move(handler)(error, std::move(result));
              });
        });
      },
      asio::use_awaitable, std::move(fn));
}

}  // namespace aop::runtime
