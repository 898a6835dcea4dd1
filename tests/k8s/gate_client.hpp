// An ApiClient in front of another that can cut its user off from the server, for
// tests of disconnections and partitions:
//   open    requests pass;
//   refuse  requests fail at once as if the server were unreachable, and open watch
//           streams end;
//   hang    requests wait until the mode changes and then fail (as a request into a
//           partition times out), and open watch streams end.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>

#include <boost/asio/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "k8s/api_client.hpp"

namespace aop::testing {

class GateClient final : public k8s::ApiClient {
 public:
  enum class Mode { open, refuse, hang };

  explicit GateClient(k8s::ApiClient& inner) : inner_(inner) {}

  void set(Mode mode) {
    mode_ = mode;
    if (mode == Mode::open) return;
    const std::lock_guard lock(mutex_);
    for (auto* s : streams_) s->close();
  }
  Mode mode() const { return mode_; }

  k8s::ResourceRegistry& registry() override { return inner_.registry(); }
  boost::asio::awaitable<k8s::ApiResult<void>> discover() override {
    const bool ok = co_await pass();
    if (!ok) co_return unreachable();
    co_return co_await inner_.discover();
  }
  boost::asio::awaitable<k8s::ApiResult<boost::json::value>> get(
      const k8s::GroupVersionKind& gvk, const k8s::ObjectKey& key) override {
    const bool ok = co_await pass();
    if (!ok) co_return unreachable();
    co_return co_await inner_.get(gvk, key);
  }
  boost::asio::awaitable<k8s::ApiResult<k8s::ListResult>> list(
      const k8s::GroupVersionKind& gvk, std::string_view ns,
      const k8s::ListOptions& options) override {
    const bool ok = co_await pass();
    if (!ok) co_return unreachable();
    co_return co_await inner_.list(gvk, ns, options);
  }
  boost::asio::awaitable<k8s::ApiResult<k8s::ListPage>> list_page(
      const k8s::GroupVersionKind& gvk, std::string_view ns, const k8s::ListOptions& options,
      std::string continue_token) override {
    const bool ok = co_await pass();
    if (!ok) co_return unreachable();
    co_return co_await inner_.list_page(gvk, ns, options, std::move(continue_token));
  }
  boost::asio::awaitable<k8s::ApiResult<k8s::ObjectListPage>> list_objects_page(
      const k8s::GroupVersionKind& gvk, std::string_view ns, const k8s::ListOptions& options,
      std::string continue_token, k8s::Transform transform) override {
    const bool ok = co_await pass();
    if (!ok) co_return unreachable();
    co_return co_await inner_.list_objects_page(gvk, ns, options, std::move(continue_token),
                                                transform);
  }
  boost::asio::awaitable<k8s::ApiResult<std::unique_ptr<k8s::WatchStream>>> watch(
      const k8s::GroupVersionKind& gvk, std::string_view ns,
      const k8s::WatchOptions& options) override {
    const bool ok = co_await pass();
    if (!ok) co_return unreachable();
    auto s = co_await inner_.watch(gvk, ns, options);
    if (!s) co_return s.error();
    co_return std::unique_ptr<k8s::WatchStream>(new Stream(*this, std::move(*s)));
  }
  boost::asio::awaitable<k8s::ApiResult<boost::json::value>> create(
      const boost::json::value& o) override {
    const bool ok = co_await pass();
    if (!ok) co_return unreachable();
    co_return co_await inner_.create(o);
  }
  boost::asio::awaitable<k8s::ApiResult<boost::json::value>> update(
      const boost::json::value& o) override {
    const bool ok = co_await pass();
    if (!ok) co_return unreachable();
    co_return co_await inner_.update(o);
  }
  boost::asio::awaitable<k8s::ApiResult<boost::json::value>> update_status(
      const boost::json::value& o) override {
    const bool ok = co_await pass();
    if (!ok) co_return unreachable();
    co_return co_await inner_.update_status(o);
  }
  boost::asio::awaitable<k8s::ApiResult<boost::json::value>> patch(const k8s::GroupVersionKind& gvk,
                                                                   const k8s::ObjectKey& key,
                                                                   k8s::PatchType type,
                                                                   const boost::json::value& p,
                                                                   bool status) override {
    const bool ok = co_await pass();
    if (!ok) co_return unreachable();
    co_return co_await inner_.patch(gvk, key, type, p, status);
  }
  boost::asio::awaitable<k8s::ApiResult<void>> remove(const k8s::GroupVersionKind& gvk,
                                                      const k8s::ObjectKey& key,
                                                      const k8s::DeleteOptions& options) override {
    const bool ok = co_await pass();
    if (!ok) co_return unreachable();
    co_return co_await inner_.remove(gvk, key, options);
  }

 private:
  class Stream final : public k8s::WatchStream {
   public:
    Stream(GateClient& gate, std::unique_ptr<k8s::WatchStream> inner)
        : gate_(gate), inner_(std::move(inner)) {
      const std::lock_guard lock(gate_.mutex_);
      gate_.streams_.insert(this);
      if (gate_.mode_ != Mode::open) inner_->close();
    }
    ~Stream() override {
      const std::lock_guard lock(gate_.mutex_);
      gate_.streams_.erase(this);
    }
    boost::asio::awaitable<k8s::ApiResult<k8s::WatchEvent>> next() override {
      auto e = co_await inner_->next();
      if (gate_.mode_ != Mode::open) co_return unreachable();
      co_return e;
    }
    boost::asio::awaitable<k8s::ApiResult<k8s::ObjectWatchEvent>> next_object(
        const k8s::Transform& transform, const k8s::GroupVersionKind& kind) override {
      auto e = co_await inner_->next_object(transform, kind);
      if (gate_.mode_ != Mode::open) co_return unreachable();
      co_return e;
    }
    void close() override { inner_->close(); }

   private:
    GateClient& gate_;
    std::unique_ptr<k8s::WatchStream> inner_;
  };

  // Whether a request may go through; in hang mode, waits for the mode to change first.
  // (Callers store the result before testing it: GCC 12 miscompiles `if (!co_await f())`.)
  boost::asio::awaitable<bool> pass() {
    if (mode_ == Mode::hang) {
      auto ex = co_await boost::asio::this_coro::executor;
      while (mode_ == Mode::hang) {
        boost::asio::steady_timer t(ex, std::chrono::milliseconds(5));
        co_await t.async_wait(boost::asio::use_awaitable);
      }
      co_return false;  // the request "timed out" in the partition
    }
    co_return mode_ == Mode::open;
  }

  static k8s::ApiError unreachable() {
    k8s::ApiError e;
    e.transport = boost::asio::error::connection_refused;
    e.message = "gate closed";
    return e;
  }

  k8s::ApiClient& inner_;
  std::atomic<Mode> mode_{Mode::open};
  std::mutex mutex_;  // owns streams_
  std::set<Stream*> streams_;
};

}  // namespace aop::testing
