#include "app/modules.hpp"

#include "reconcile/agent/controller.hpp"
#include "reconcile/telegraf/controller.hpp"

namespace aop::app {

runtime::QueueOptions queue_options(const Options& o) {
  runtime::QueueOptions q;
  q.policy.base_delay = std::chrono::duration_cast<net::Duration>(o.queue_backoff_base);
  q.policy.max_delay = std::chrono::duration_cast<net::Duration>(o.queue_backoff_max);
  q.policy.api_max_delay = std::chrono::duration_cast<net::Duration>(o.queue_api_backoff_max);
  q.policy.retry_qps = o.queue_qps;
  q.policy.retry_burst = static_cast<std::uint32_t>(o.queue_burst);
  q.drain_on_shutdown = o.queue_shutdown == "drain";
  return q;
}

Result<std::vector<std::unique_ptr<runtime::ControllerModule>>> make_modules(
    const runtime::ModuleContext& ctx, const Options& o) {
  std::vector<std::unique_ptr<runtime::ControllerModule>> modules;
  for (const auto& name : o.controllers) {
    if (name == "agent") {
      agent::AgentModuleOptions a;
      a.agent = agent_options(o);
      a.agent_selector = o.agent_selector;
      a.incremental_render = o.agent_incremental_render;
      modules.push_back(agent::make_agent_module(ctx, std::move(a)));
    } else if (name == "telegraf") {
      modules.push_back(telegraf::make_telegraf_module(ctx, o.telegraf));
    }
  }
  if (!o.kubelet_service.empty()) {
    const auto slash = o.kubelet_service.find('/');
    modules.push_back(agent::make_kubelet_module(
        ctx,
        k8s::ObjectKey{o.kubelet_service.substr(0, slash), o.kubelet_service.substr(slash + 1)}));
  }
  return modules;
}

}  // namespace aop::app
