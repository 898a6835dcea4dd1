// The live telegraf controller: the pure core of this directory driven by the
// shared runtime. Queue keys are TARGET namespaces, the namespaces that get a telegraf
// Deployment; every reconcile rebuilds one target from the caches:
//
//   Namespace cache (cluster-wide, shared) ─┐
//   Application informers (argocd, or all;  ├─▶ sources pointing at <ns> ─▶ plan_target
//     started once the CRD is served)      ─┘        │ read_source, problems → Events
//   token Secret (one object, own informer) ─────────┤
//                                                    ▼
//         ConfigMap + token Secret + Deployment ─▶ ApplyEngine (hash: no write when
//         (owned caches, managed-by selector)        unchanged; prune by namespace)
//
// Events: a Namespace or Application event enqueues the target it points at now and the
// one it pointed at before, so moving an Application's destination cleans up the old
// target. Owned objects deleted or edited by someone else enqueue their namespace.
//
// Clean-up: a target with no source left gets its managed objects deleted by the
// controller itself, also when the Namespace owns them (the Namespace outlives the
// removal of its annotation); the ownerReference to the Namespace only covers the
// deletion of the Namespace, which the API server's garbage collector handles.
// A target with an invalid source is held: nothing deployed there is touched.
//
// The Application CRD is optional: when it is not served the controller runs on
// Namespaces alone, says so once in the log, and polls discovery
// (TelegrafModuleSettings::application_discovery_period); when the CRD appears the
// Application informers start, without a restart.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "net/clock.hpp"
#include "net/metrics.hpp"
#include "reconcile/runtime/module.hpp"
#include "reconcile/telegraf/options.hpp"

namespace aop::telegraf {

// Settings of the live controller that are not part of the generated objects (those are
// in TelegrafOptions, shared with `render`).
struct TelegrafModuleSettings {
  std::string name = "telegraf";  // the `controller` metric label and log field
  // While the Application CRD is not served, how often discovery is polled for it.
  net::Duration application_discovery_period = std::chrono::seconds(30);
  // How soon a target is looked at again while a cache it needs is still syncing.
  net::Duration not_synced_retry = std::chrono::seconds(1);
  // nullptr = the process-wide registry.
  net::metrics::Registry* registry = nullptr;
};

// Annotation on the pod template holding a short hash of the InfluxDB token (only when a
// token Secret is configured), so that a rotated token rolls the pods: the environment
// variable taken from a Secret is read only when a container starts. The value is the
// first 16 hex digits of SHA-256("rubin-telegraf-token:" + token), never the token.
inline constexpr std::string_view kTokenHashAnnotation =
    "telegraf.influxdata.com/rubin-telegraf-token-hash";
// The apply engine's content-hash annotation on everything the controller writes.
inline constexpr std::string_view kAppliedHashAnnotation =
    "telegraf.influxdata.com/rubin-telegraf-applied-hash";

// Figures for tests and the metrics endpoint.
struct TelegrafStats {
  std::size_t managed_namespaces = 0;  // targets with a deployed telegraf
  std::size_t endpoints = 0;           // endpoints scraped across them
  std::size_t invalid_sources = 0;     // sources with an invalid annotation or destination
  std::uint64_t reconciles = 0;        // reconciles finished (any result)
};

class TelegrafController final : public runtime::ControllerModule {
 public:
  // Registers its caches with ctx.informers (call before the factory starts) and starts
  // its own informers (Applications, the token Secret) and the discovery poll.
  TelegrafController(const runtime::ModuleContext& ctx, TelegrafOptions options,
                     TelegrafModuleSettings settings = {});
  ~TelegrafController() override;
  TelegrafController(const TelegrafController&) = delete;
  TelegrafController& operator=(const TelegrafController&) = delete;

  const std::string& name() const override;
  std::string not_ready_reason() const override;
  void start_reconciling() override;
  void stop_reconciling() override;
  boost::asio::awaitable<bool> stop(net::Duration deadline) override;

  // Enqueues every target now (what the periodic resync does).
  void resync_now();
  // Nothing queued, delayed or in flight.
  bool idle() const;
  // Reconciles of one target finished so far.
  std::uint64_t reconciles(std::string_view target_namespace) const;
  TelegrafStats stats() const;
  // True once the Application informers run (the CRD is served).
  bool watching_applications() const;

  struct State;

 private:
  std::shared_ptr<State> state_;
};

std::unique_ptr<runtime::ControllerModule> make_telegraf_module(
    const runtime::ModuleContext& ctx, TelegrafOptions options,
    TelegrafModuleSettings settings = {});

}  // namespace aop::telegraf
