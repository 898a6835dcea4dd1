// The assemble stage (pipeline.hpp): the static-mode configuration files from the
// fragments, in upstream's layout and order. A file's first error is the first one in
// the order upstream renders the file (global block; then per instance its fields, its
// members' jobs, its additional scrape configs), so messages match upstream's.
#include <stdexcept>

#include "reconcile/agent/config_common.hpp"
#include "reconcile/agent/pipeline.hpp"

namespace aop::agent {

namespace json = boost::json;

namespace {

// What one file gathers from its fragments.
struct FileBuild {
  std::vector<Problem> problems;
  std::optional<std::string> error;

  void take(const std::vector<Problem>& more, const std::optional<std::string>& e) {
    problems.insert(problems.end(), more.begin(), more.end());
    if (!error && e) error = e;
  }
};

// Fragments are moved into the last file that uses them and copied before.
class Assembler {
 public:
  // `texts`: where the members rendered as text go, the tree referring to them; null
  // when the fragments have none.
  Assembler(Fragments& f, const Hierarchy& h, std::vector<std::shared_ptr<const MemberText>>* texts)
      : f_(f), h_(h), texts_(texts) {
    for (const auto& e : h.metrics) {
      for (const auto& m : e.service_monitors) ++uses_[key(Kind::service_monitor, m)];
      for (const auto& m : e.pod_monitors) ++uses_[key(Kind::pod_monitor, m)];
      for (const auto& m : e.probes) ++uses_[key(Kind::probe, m)];
    }
    for (const auto& e : h.logs) {
      for (const auto& m : e.pod_logs) ++uses_[key(Kind::pod_logs, m)];
    }
  }

  json::value metrics(FileBuild& b) {
    json::object metrics;
    metrics["wal_directory"] = detail::kDataDir;
    metrics["global"] = f_.metrics_global.fields;
    b.take(f_.metrics_global.problems, f_.metrics_global.error);
    json::array configs;
    for (std::size_t i = 0; i < h_.metrics.size(); ++i) {
      const MetricsEntry& e = h_.metrics[i];
      const InstanceFragment& inst = f_.metrics_instances[i];
      b.take(inst.problems, inst.error);
      json::array scrape;
      // Sized once: growing a large array frees large blocks, and each such free makes
      // malloc consolidate every small chunk the fragments left behind.
      std::size_t n = inst.additional.configs.size();
      for (const auto& m : e.service_monitors) n += size(key(Kind::service_monitor, m));
      for (const auto& m : e.pod_monitors) n += size(key(Kind::pod_monitor, m));
      for (const auto& m : e.probes) n += size(key(Kind::probe, m));
      scrape.reserve(n);
      for (const auto& m : e.service_monitors) member(key(Kind::service_monitor, m), scrape, b);
      for (const auto& m : e.pod_monitors) member(key(Kind::pod_monitor, m), scrape, b);
      for (const auto& m : e.probes) member(key(Kind::probe, m), scrape, b);
      configs.emplace_back(entry(inst, std::move(scrape), b));
    }
    detail::set_ne_list(metrics, "configs", std::move(configs));
    return json::object{{"server", f_.server}, {"metrics", std::move(metrics)}};
  }

  json::value logs(FileBuild& b) {
    json::object logs;
    logs["positions_directory"] = detail::kDataDir;
    json::array configs;
    for (std::size_t i = 0; i < h_.logs.size(); ++i) {
      const InstanceFragment& inst = f_.logs_instances[i];
      b.take(inst.problems, inst.error);
      json::array scrape;
      for (const auto& m : h_.logs[i].pod_logs) member(key(Kind::pod_logs, m), scrape, b);
      configs.emplace_back(entry(inst, std::move(scrape), b));
    }
    detail::set_ne_list(logs, "configs", std::move(configs));
    return json::object{{"server", f_.server}, {"logs", std::move(logs)}};
  }

  // The instances without their members (so that `autoscrape` references resolve), and
  // one `<name>_configs` list per integration name of the subset.
  json::value integrations(bool all_nodes, FileBuild& b) {
    json::object metrics;
    metrics["wal_directory"] = detail::kDataDir;
    metrics["global"] = f_.integrations_global.fields;
    b.take(f_.integrations_global.problems, f_.integrations_global.error);
    json::array mconfigs;
    for (const auto& inst : f_.metrics_instances) {
      b.take(inst.problems, inst.error);
      mconfigs.emplace_back(entry(inst, {}, b));
    }
    detail::set_ne_list(metrics, "configs", std::move(mconfigs));

    json::object logs;
    logs["positions_directory"] = detail::kDataDir;
    json::array lconfigs;
    for (const auto& inst : f_.logs_instances) {
      b.take(inst.problems, inst.error);
      lconfigs.emplace_back(entry(inst, {}, b));
    }
    detail::set_ne_list(logs, "configs", std::move(lconfigs));

    json::object integrations;
    integrations["metrics"] = json::object{{"autoscrape", json::object{{"enable", false}}}};
    for (std::size_t i = 0; i < h_.integrations.size(); ++i) {
      const Integration& in = h_.integrations[i];
      if (in.spec.all_nodes != all_nodes) continue;
      auto& list = integrations[in.spec.name + "_configs"];
      if (!list.is_array()) list = json::array();
      list.get_array().push_back(std::move(f_.integrations[i]));  // in one subset only
    }
    return json::object{{"server", f_.server},
                        {"metrics", std::move(metrics)},
                        {"logs", std::move(logs)},
                        {"integrations", std::move(integrations)}};
  }

 private:
  template <class Member>
  static MemberKey key(Kind kind, const Shared<Member>& m) {
    return MemberKey{kind, {m->metadata.ns, m->metadata.name}};
  }

  std::size_t size(const MemberKey& k) const {
    const ScrapeFragment& m = f_.members.at(k);
    return m.configs.size() + (m.text ? 1 : 0);
  }

  void member(const MemberKey& k, json::array& scrape, FileBuild& b) {
    ScrapeFragment& m = f_.members.at(k);
    b.take(m.problems, m.error);
    if (m.text) {
      if (texts_ == nullptr) throw std::logic_error("assemble: a text fragment for a tree");
      scrape.push_back(json::object{{k8s::yaml::kSpliceKey, texts_->size()}});
      texts_->push_back(m.text);
    }
    if (--uses_[k] == 0) {
      for (auto& c : m.configs) scrape.push_back(std::move(c));
    } else {
      for (const auto& c : m.configs) scrape.push_back(c);
    }
  }

  // An instance's config entry: its fields, then `scrape` (its members' jobs, taken by
  // the caller after the fields) followed by its additional scrape configs, then its
  // trailing fields.
  static json::object entry(const InstanceFragment& inst, json::array scrape, FileBuild& b) {
    json::object o = inst.fields;
    for (const auto& c : inst.additional.configs) scrape.push_back(c);
    b.take(inst.additional.problems, inst.additional.error);
    detail::set_ne_list(o, "scrape_configs", std::move(scrape));
    for (const auto& kv : inst.trailing) o[kv.key()] = kv.value();
    return o;
  }

  Fragments& f_;
  const Hierarchy& h_;
  std::vector<std::shared_ptr<const MemberText>>* texts_;
  std::map<MemberKey, int> uses_;
};

}  // namespace

namespace {

// One file into `out`: false (with out.failure set) when it failed.
bool assemble_one(Assembler& a, const Hierarchy& hierarchy, ConfigFile file,
                  std::optional<boost::json::value>& tree, std::vector<Problem>& problems,
                  std::optional<StageFailure>& failure) {
  FileBuild b;
  json::value t;
  switch (file) {
    case ConfigFile::metrics:
      t = a.metrics(b);
      break;
    case ConfigFile::logs:
      t = a.logs(b);
      break;
    case ConfigFile::integrations_deploy:
      t = a.integrations(false, b);
      break;
    case ConfigFile::integrations_ds:
      t = a.integrations(true, b);
      break;
  }
  if (b.error) {
    // The whole file fails, as upstream.
    failure =
        StageFailure{Stage::assemble, runtime::Errc::render_failed,
                     "rendering " + config_secret_name(hierarchy.agent, file) + ": " + *b.error};
    return false;
  }
  null_trim(t);
  tree = std::move(t);
  problems.insert(problems.end(), b.problems.begin(), b.problems.end());
  return true;
}

}  // namespace

Outcome<ConfigTrees> assemble(Fragments fragments, const Hierarchy& hierarchy) {
  Outcome<ConfigTrees> out;
  Assembler a(fragments, hierarchy, &out.value.members);
  for (const ConfigFile file : kConfigFiles) {
    if (!config_needed(hierarchy, file)) continue;
    // The files before a failing one stand.
    if (!assemble_one(a, hierarchy, file, out.value[file], out.problems, out.failure)) break;
  }
  return out;
}

Outcome<boost::json::value> assemble_file(Fragments fragments, const Hierarchy& hierarchy,
                                          ConfigFile file) {
  Outcome<boost::json::value> out;
  Assembler a(fragments, hierarchy, nullptr);
  std::optional<boost::json::value> tree;
  if (assemble_one(a, hierarchy, file, tree, out.problems, out.failure))
    out.value = std::move(*tree);
  return out;
}

}  // namespace aop::agent
