// The live Grafana Agent controller and the kubelet Service/Endpoints controller, as
// modules app/ runs (reconcile/runtime/module.hpp).
//
// Grafana Agent controller:
//   caches     the 5 grafana kinds and 3 coreos kinds (full objects); Namespaces,
//              Secrets and ConfigMaps metadata-only (referenced contents are read with
//              GET on demand, live_view.hpp); owned Secrets (metadata-only), Services,
//              StatefulSets, DaemonSets and Deployments filtered by the managed-by label
//   events     a GrafanaAgent (matching --agent-selector) reconciles itself; a member,
//              a Namespace's labels or a referenced Secret/ConfigMap reconciles exactly
//              the roots whose recorded reads it falls into (old and new labels); an
//              owned object reconciles its owner, unless it is the echo of our own write
//   reconcile  plan_root() (pipeline.hpp; the same code path as `agent-operator
//              render`), the plan through the apply engine, then root_status()
//              (root_status.hpp: conditions, counts, problems) and Warning Events
//              (root_events.hpp)
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "k8s/resource.hpp"
#include "reconcile/agent/kinds.hpp"
#include "reconcile/agent/options.hpp"
#include "reconcile/runtime/controller.hpp"
#include "reconcile/runtime/module.hpp"

namespace aop::agent {

struct AgentModuleOptions {
  Options agent;               // operator labels, version, compat
  std::string agent_selector;  // --agent-selector: label-selector string ("" = every agent)
  // --agent-incremental-render: keep each member's rendered fragment and render again
  // only the members that changed (fragment_cache.hpp). On by default: for the static
  // backend a kept fragment is its packed text, about 1.8 kB per member, and a reconcile
  // after one change of a 300-member root costs half the CPU (bench/RESULTS.md).
  bool incremental_render = true;
};

// The Grafana Agent controller module. The extra accessors serve tests and benchmarks.
class AgentController final : public runtime::ControllerModule {
 public:
  // Registers the caches and handlers with ctx.informers. Throws std::invalid_argument
  // when the agent selector does not parse (app/ validates it first).
  AgentController(const runtime::ModuleContext& ctx, AgentModuleOptions options);
  ~AgentController() override;
  AgentController(const AgentController&) = delete;
  AgentController& operator=(const AgentController&) = delete;

  const std::string& name() const override;
  std::string not_ready_reason() const override;
  void start_reconciling() override;
  void stop_reconciling() override;
  boost::asio::awaitable<bool> stop(runtime::Duration deadline) override;

  runtime::Controller& controller();
  // Reconciles run so far (every root), and of one root.
  std::uint64_t reconciles() const;
  std::uint64_t reconciles(const std::string& root) const;
  // Nothing queued, delayed or in flight.
  bool idle();
  // The owned caches show the last writes of `root` (runtime::ApplyEngine::caches_caught_up).
  bool caches_caught_up(const std::string& root);
  // The resourceVersion of `key` in the controller's cache of `kind` ("" when it holds
  // none), so that a test can wait until the controller has seen its writes.
  std::string cached_version(Kind kind, const k8s::ObjectKey& key) const;
  // Watch events of owned objects that were only the echo of the controller's own
  // writes, dropped without a reconcile (runtime::ApplyEngine::unless_own_write).
  std::uint64_t own_write_echoes() const;
  // GETs of referenced Secrets/ConfigMaps so far, and contents held.
  std::uint64_t asset_fetches() const;
  std::size_t asset_contents() const;
  // Members and roots decoded so far (the decode stage's cache misses).
  std::uint64_t decodes() const;
  // Distinct objects of this kind found invalid now (agent_operator_invalid_objects).
  std::size_t invalid_objects(Kind kind) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::unique_ptr<runtime::ControllerModule> make_agent_module(const runtime::ModuleContext& ctx,
                                                             AgentModuleOptions options);

// The kubelet Service/Endpoints controller (--kubelet-service=<ns>/<name>):
// watches Nodes (cluster-wide) and keeps the Service and Endpoints `service` equal to
// kubelet_objects() of every Node: created when absent, updated only when they differ
// (conflicts re-read and retried), a Node without an address fails with backoff.
class KubeletController final : public runtime::ControllerModule {
 public:
  KubeletController(const runtime::ModuleContext& ctx, k8s::ObjectKey service);
  ~KubeletController() override;
  KubeletController(const KubeletController&) = delete;
  KubeletController& operator=(const KubeletController&) = delete;

  const std::string& name() const override;
  std::string not_ready_reason() const override;
  void start_reconciling() override;
  void stop_reconciling() override;
  boost::asio::awaitable<bool> stop(runtime::Duration deadline) override;

  runtime::Controller& controller();
  std::uint64_t reconciles() const;
  bool idle();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::unique_ptr<runtime::ControllerModule> make_kubelet_module(const runtime::ModuleContext& ctx,
                                                               k8s::ObjectKey service);

}  // namespace aop::agent
