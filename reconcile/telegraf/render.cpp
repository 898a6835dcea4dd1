#include "reconcile/telegraf/render.hpp"

#include "reconcile/telegraf/objects.hpp"

namespace aop::telegraf {

RenderResult render(std::span<const boost::json::value> objects, const TelegrafOptions& options,
                    std::optional<std::string_view> token) {
  RenderResult out;
  std::vector<Source> sources;
  sources.reserve(objects.size());
  for (const boost::json::value& object : objects) {
    SourceRead read = read_source(object, options);
    for (Problem& p : read.problems) out.problems.push_back(std::move(p));
    if (!read.ignored.empty()) out.notes.push_back("ignored " + read.ignored);
    if (read.source) sources.push_back(std::move(*read.source));
  }
  for (TargetPlan& plan : plan_targets(sources)) {
    for (Problem& p : plan.problems) out.problems.push_back(std::move(p));
    if (auto built = build_objects(plan, options, token)) {
      out.objects.push_back(std::move(built->config_map));
      if (built->secret) out.objects.push_back(std::move(*built->secret));
      out.objects.push_back(std::move(built->deployment));
    }
  }
  return out;
}

}  // namespace aop::telegraf
