// The integrations configuration (spec 4.12): the metrics and logs instances without
// their monitors/PodLogs (so that `autoscrape` references resolve), plus one
// `<name>_configs` list per integration name for the Deployment or DaemonSet subset.
#include "reconcile/agent/config_common.hpp"

namespace aop::agent {

Result<boost::json::value> integrations_config_tree(const Hierarchy& h, const AssetStore& assets,
                                                    const Options& options, bool all_nodes,
                                                    std::vector<Problem>* problems) {
  using namespace detail;
  RenderContext ctx(h, assets, options, problems);

  object metrics;
  metrics["wal_directory"] = kDataDir;
  metrics["global"] = metrics_global(ctx, false);
  array mconfigs;
  for (const auto& e : h.metrics) mconfigs.emplace_back(metrics_instance_config(ctx, e, false));
  set_ne_list(metrics, "configs", std::move(mconfigs));

  object logs;
  logs["positions_directory"] = kDataDir;
  array lconfigs;
  for (const auto& e : h.logs) lconfigs.emplace_back(logs_instance_config(ctx, e, false));
  set_ne_list(logs, "configs", std::move(lconfigs));

  object integrations;
  integrations["metrics"] = object{{"autoscrape", object{{"enable", false}}}};
  for (const auto& in : h.integrations) {
    if (in.spec.all_nodes != all_nodes) continue;
    value config = object();
    if (in.spec.config && !in.spec.config->is_null()) config = *in.spec.config;
    auto& list = integrations[in.spec.name + "_configs"];
    if (!list.is_array()) list = array();
    list.get_array().push_back(std::move(config));
  }

  object root{{"server", server_block(h.agent)},
              {"metrics", std::move(metrics)},
              {"logs", std::move(logs)},
              {"integrations", std::move(integrations)}};
  return finish(ctx, std::move(root));
}

Result<RenderedConfig> render_integrations_config(const Hierarchy& h, const AssetStore& assets,
                                                  const Options& options, bool all_nodes) {
  RenderedConfig out;
  auto tree = integrations_config_tree(h, assets, options, all_nodes, &out.problems);
  if (!tree) return tree.error();
  out.text = emit_config(std::move(*tree), options);
  return out;
}

}  // namespace aop::agent
