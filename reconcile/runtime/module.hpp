// A controller as the application runs it. app/ owns the process (io_context, servers,
// signals, leader election) and drives every module through the same life cycle:
//
//   construct (register caches and handlers with the shared InformerFactory)
//   -> caches start for every replica, so a standby is warm and ready
//   -> start_reconciling() once this replica leads (or at once without election)
//   -> stop_reconciling() the moment leadership is lost: no write after it returns
//   -> stop(deadline) on shutdown: finish in-flight reconciles, then return
//
// Modules never talk to each other; what they share (the API client, the informer
// factory, the event recorder, the write gate) comes in the ModuleContext.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "k8s/api_client.hpp"
#include "k8s/event_recorder.hpp"
#include "k8s/informer_factory.hpp"
#include "net/clock.hpp"
#include "reconcile/runtime/work_queue.hpp"

namespace aop::runtime {

struct ModuleContext {
  boost::asio::any_io_executor executor;  // the multi-threaded io_context
  k8s::ApiClient* client = nullptr;
  k8s::InformerFactory* informers = nullptr;
  k8s::EventRecorder* events = nullptr;
  // True while this replica may write (leader, or no leader election). Checked before
  // every write, so losing leadership stops writes at once.
  std::function<bool()> may_write;
  // The operator's own namespace ("" outside a cluster), e.g. for Secrets it copies.
  std::string operator_namespace;
  int workers = 4;
  Duration resync_period = std::chrono::minutes(10);
  // The controllers' "work queue progress" line while keys wait; 0 = never.
  Duration progress_period = std::chrono::seconds(30);
  QueueOptions queue;
  // Every delay, deadline and timer of the module reads this clock (nullptr: the real
  // one); tests substitute a net::FakeClock.
  const net::Clock* clock = nullptr;

  const net::Clock& time() const { return clock != nullptr ? *clock : net::steady_clock(); }
};

class ControllerModule {
 public:
  virtual ~ControllerModule() = default;
  virtual const std::string& name() const = 0;
  // "" when this module's caches are synced, else what it waits for (for /readyz).
  virtual std::string not_ready_reason() const = 0;
  virtual void start_reconciling() = 0;
  virtual void stop_reconciling() = 0;
  // Finishes in-flight reconciles for up to `deadline`; true when all finished in time.
  virtual boost::asio::awaitable<bool> stop(Duration deadline) = 0;
};

}  // namespace aop::runtime
