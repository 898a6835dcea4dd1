#include "app/root_readiness.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "app/options.hpp"
#include "k8s/label_selector.hpp"
#include "net/metrics.hpp"
#include "reconcile/agent/kinds.hpp"

namespace aop::app {

namespace asio = boost::asio;

namespace {

// "True", "False" or "Unknown" (absent): the Ready condition in status.conditions.
std::string ready_status(const k8s::Object& agent) {
  const auto conditions = agent.at({"status", "conditions"});
  if (!conditions || !conditions->is_array()) return "Unknown";
  for (const auto& c : conditions->as_array()) {
    if (!c.is_object()) continue;
    const auto* type = c.as_object().if_contains("type");
    const auto* status = c.as_object().if_contains("status");
    if (type != nullptr && type->is_string() && type->as_string() == "Ready" && status != nullptr &&
        status->is_string()) {
      const auto s = status->as_string();
      return s == "True" || s == "False" ? std::string(s) : std::string("Unknown");
    }
  }
  return "Unknown";
}

}  // namespace

asio::awaitable<void> count_root_readiness(k8s::InformerFactory& informers, const Options& options,
                                           net::Duration period, const std::atomic<bool>& stopped) {
  // The agent controller's own cache of GrafanaAgents (same spec as in its constructor).
  k8s::CacheSpec spec;
  spec.gvk = agent::gvk(agent::Kind::grafana_agent);
  spec.namespaced = true;
  k8s::KindCache& agents = informers.cache(spec);
  k8s::LabelSelector selector;
  if (!options.agent_selector.empty()) {
    selector = *k8s::parse_label_selector_string(options.agent_selector);  // validated
  }
  auto& family = net::metrics::registry().gauge(
      "agent_operator_roots",
      "Managed roots by their Ready condition (True, False, Unknown when not yet set).",
      {"controller", "ready"});
  auto& backends = net::metrics::registry().gauge(
      "agent_operator_agent_roots",
      "Managed GrafanaAgents by the backend of their last reconcile (status.backend).",
      {"backend"});
  auto& on_static = backends.with({"static"});
  auto& on_alloy = backends.with({"alloy"});
  auto& ready_true = family.with({"grafana-agent", "True"});
  auto& ready_false = family.with({"grafana-agent", "False"});
  auto& ready_unknown = family.with({"grafana-agent", "Unknown"});

  asio::steady_timer timer(co_await asio::this_coro::executor);
  while (!stopped.load()) {
    double counts[3] = {0, 0, 0};
    double by_backend[2] = {0, 0};
    for (const auto& a : agents.list()) {
      if (!selector.matches(a->labels())) continue;
      const std::string s = ready_status(*a);
      ++counts[s == "True" ? 0 : s == "False" ? 1 : 2];
      const auto backend = a->at({"status", "backend"});
      if (backend && backend->is_string()) {
        if (backend->as_string() == "static") ++by_backend[0];
        if (backend->as_string() == "alloy") ++by_backend[1];
      }
    }
    on_static.set(by_backend[0]);
    on_alloy.set(by_backend[1]);
    ready_true.set(counts[0]);
    ready_false.set(counts[1]);
    ready_unknown.set(counts[2]);
    timer.expires_after(period);
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return;
  }
}

}  // namespace aop::app
