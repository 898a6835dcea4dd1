// `agent-operator render -f PATH...`: the cluster state comes from YAML files instead of
// an API server, and the objects the controllers would apply go to stdout as one
// multi-document YAML stream, sorted by (kind, namespace, name). The Grafana Agent part
// runs the same pipeline as the live controller (plan_root(), reconcile/agent/
// pipeline.hpp), and the telegraf part the same steps as its controller, so a GitOps
// pipeline sees exactly what a cluster would get.
//
// Problems go to stderr naming the file and object. The exit status is 1 when any root
// failed or any source was invalid; every root that could be rendered is still printed.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <boost/json.hpp>

#include "app/operator.hpp"
#include "app/render_output.hpp"
#include "k8s/label_selector.hpp"
#include "k8s/yaml.hpp"
#include "reconcile/agent/kubelet.hpp"
#include "reconcile/agent/memory_cluster.hpp"
#include "reconcile/agent/pipeline.hpp"
#include "reconcile/telegraf/render.hpp"

namespace aop::app {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

struct Input {
  json::value object;
  std::string origin;  // "path" or "path (document N)"
};

bool has_yaml_extension(const fs::path& p) {
  const auto ext = p.extension().string();
  return ext == ".yaml" || ext == ".yml" || ext == ".json";
}

// Files named on the command line are read whatever their extension; directories are
// walked recursively for *.yaml, *.yml and *.json, in path order.
Result<std::vector<fs::path>> expand(const std::vector<std::string>& paths) {
  std::vector<fs::path> out;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<fs::path> found;
      for (const auto& e : fs::recursive_directory_iterator(p, ec)) {
        if (e.is_regular_file() && has_yaml_extension(e.path())) found.push_back(e.path());
      }
      if (ec) return make_error(p + ": " + ec.message());
      std::sort(found.begin(), found.end());
      out.insert(out.end(), found.begin(), found.end());
    } else if (fs::exists(p, ec)) {
      out.emplace_back(p);
    } else {
      return make_error(p + ": no such file or directory");
    }
  }
  return out;
}

Result<std::vector<Input>> load(const std::vector<std::string>& paths) {
  auto files = expand(paths);
  if (!files) return files.error();
  std::vector<Input> out;
  for (const auto& file : *files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return make_error(file.string() + ": cannot be read");
    std::stringstream text;
    text << in.rdbuf();
    auto docs = k8s::yaml::parse_all(text.str());
    if (!docs) return make_error(file.string() + ": " + docs.error().message);
    for (std::size_t i = 0; i < docs->size(); ++i) {
      json::value& doc = (*docs)[i];
      const std::string origin = docs->size() == 1
                                     ? file.string()
                                     : file.string() + " (document " + std::to_string(i + 1) + ")";
      // A List (kubectl get -o yaml) expands into its items.
      if (doc.is_object() && doc.as_object().contains("items") &&
          doc.as_object().at("items").is_array()) {
        auto& items = doc.as_object().at("items").as_array();
        for (std::size_t j = 0; j < items.size(); ++j) {
          out.push_back({items[j], origin + " (items[" + std::to_string(j) + "])"});
        }
      } else {
        out.push_back({std::move(doc), origin});
      }
    }
  }
  return out;
}

std::string describe(const json::value& v) {
  if (!v.is_object()) return "a non-object document";
  const auto& o = v.as_object();
  std::string kind = o.contains("kind") && o.at("kind").is_string()
                         ? std::string(o.at("kind").as_string())
                         : std::string("object");
  std::string name;
  if (const auto* m = o.if_contains("metadata"); m != nullptr && m->is_object()) {
    const auto& meta = m->as_object();
    if (const auto* ns = meta.if_contains("namespace"); ns != nullptr && ns->is_string()) {
      name = std::string(ns->as_string()) + "/";
    }
    if (const auto* n = meta.if_contains("name"); n != nullptr && n->is_string()) {
      name += std::string(n->as_string());
    }
  }
  return kind + " " + name;
}

std::string string_at(const json::object& o, std::initializer_list<std::string_view> path) {
  const json::value* v = nullptr;
  const json::object* cur = &o;
  for (const auto key : path) {
    if (cur == nullptr) return {};
    v = cur->if_contains(key);
    if (v == nullptr) return {};
    cur = v->is_object() ? &v->as_object() : nullptr;
  }
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

bool enabled(const Options& o, std::string_view controller) {
  return std::find(o.controllers.begin(), o.controllers.end(), controller) != o.controllers.end();
}

class Renderer {
 public:
  explicit Renderer(const Options& o) : options_(o) {}

  // Every document must be a Kubernetes object (errors name file and document); kinds
  // no enabled controller reads are ignored with a warning.
  void check(const std::vector<Input>& inputs);
  void agent(const std::vector<Input>& inputs);
  void telegraf(const std::vector<Input>& inputs);
  void kubelet(const std::vector<Input>& inputs);
  int print(const RenderOutput& output);

 private:
  // "<severity>: <where>: <message>", or without `where` when it is empty.
  void report(std::string_view severity, const std::string& where, const std::string& message) {
    const std::string prefix = where.empty() ? std::string() : where + ": ";
    std::fprintf(stderr, "%.*s: %s%s\n", static_cast<int>(severity.size()), severity.data(),
                 prefix.c_str(), message.c_str());
    if (severity == "error") failed_ = true;
  }

  const Options& options_;
  std::vector<json::object> objects_;
  bool failed_ = false;
};

std::string_view json_type(const json::value& v) {
  switch (v.kind()) {
    case json::kind::object:
      return "a mapping";
    case json::kind::array:
      return "a list";
    case json::kind::string:
      return "a string";
    case json::kind::null:
      return "null";
    case json::kind::bool_:
      return "a boolean";
    default:
      return "a number";
  }
}

void Renderer::check(const std::vector<Input>& inputs) {
  const bool agent = enabled(options_, "agent");
  const bool telegraf = enabled(options_, "telegraf");
  const bool nodes = !options_.kubelet_service.empty();
  for (const auto& in : inputs) {
    if (!in.object.is_object()) {
      report("error", in.origin,
             "the document is " + std::string(json_type(in.object)) +
                 ", not a Kubernetes object (a mapping with apiVersion, kind and metadata)");
      continue;
    }
    const auto& o = in.object.as_object();
    const std::string api_version = string_at(o, {"apiVersion"});
    const std::string kind = string_at(o, {"kind"});
    if (api_version.empty() || kind.empty()) {
      report("error", in.origin,
             std::string("the object has no ") + (kind.empty() ? "kind" : "apiVersion") +
                 " (a string), so it is not a Kubernetes object");
      continue;
    }
    const auto agent_kind = agent::kind_of(o);
    // The generated kinds (Services, workloads) are outputs, not read.
    const bool agent_input = agent_kind && *agent_kind != agent::Kind::service &&
                             *agent_kind != agent::Kind::stateful_set &&
                             *agent_kind != agent::Kind::daemon_set &&
                             *agent_kind != agent::Kind::deployment;
    const bool read =
        (agent && agent_input) ||
        (telegraf && ((api_version == "v1" && kind == "Namespace") ||
                      (api_version.starts_with("argoproj.io/") && kind == "Application"))) ||
        (nodes && api_version == "v1" && kind == "Node");
    if (!read) {
      report("warning", in.origin,
             describe(in.object) + " (apiVersion " + api_version +
                 "): not a kind the enabled controllers read; ignored");
    }
  }
}

void Renderer::agent(const std::vector<Input>& inputs) {
  agent::MemoryCluster cluster;
  std::map<std::string, std::string> origin_of;  // "kind ns/name" -> origin
  for (const auto& in : inputs) {
    if (in.object.is_object() && agent::kind_of(in.object.as_object())) {
      if (auto added = cluster.add(in.object); !added) {
        report("error", in.origin, added.error().message);
        continue;
      }
      origin_of[describe(in.object)] = in.origin;
    }
  }
  const agent::Options agent_options = app::agent_options(options_);
  k8s::LabelSelector selector;
  if (!options_.agent_selector.empty())
    selector = *k8s::parse_label_selector_string(options_.agent_selector);

  for (const k8s::ObjectPtr& root : cluster.compact(agent::Kind::grafana_agent)) {
    const std::string what = "GrafanaAgent " + root->key().str();
    const std::string origin = origin_of.count(what) != 0 ? origin_of[what] : std::string();
    const std::string where = origin.empty() ? what : origin + ": " + what;
    // A decode error (its message names the agent) is reported for every agent, selected
    // or not.
    if (!selector.matches(root->labels())) {
      agent::DecodeCache once(false);
      const auto decoded = agent::decode_root(*root, once);
      if (!decoded.ok()) report("error", origin, decoded.failure->message);
      continue;
    }
    const agent::RootPlan plan = agent::plan_root(*root, cluster, agent_options);
    for (const auto& p : plan.problems) {
      report(p.severity == agent::Severity::error ? "error" : "warning", where, p.str());
    }
    if (plan.failure && plan.failure->stage == agent::Stage::decode) {
      report("error", origin, plan.failure->message);
    } else if (plan.failure) {
      report("error", where, plan.failure->message);
    }
    for (const auto& step : plan.apply.steps) {
      if (step.action == runtime::ApplyStep::Action::apply) objects_.push_back(step.object);
    }
  }
}

void Renderer::telegraf(const std::vector<Input>& inputs) {
  std::vector<json::value> objects;
  objects.reserve(inputs.size());
  for (const auto& in : inputs) objects.push_back(in.object);
  const auto result = telegraf::render(objects, options_.telegraf);
  for (const auto& p : result.problems) {
    report("error", std::string(telegraf::reason_name(p.reason)), p.message);
  }
  // result.notes list the objects the telegraf pipeline skipped: every other kind of a
  // mixed directory among them, so they are not printed (the Grafana Agent side reads
  // those kinds, and problems above already name every invalid source).
  for (const auto& o : result.objects) objects_.push_back(o);
}

void Renderer::kubelet(const std::vector<Input>& inputs) {
  const auto slash = options_.kubelet_service.find('/');
  const k8s::ObjectKey target{options_.kubelet_service.substr(0, slash),
                              options_.kubelet_service.substr(slash + 1)};
  std::vector<agent::KubeletNode> nodes;
  for (const auto& in : inputs) {
    if (!in.object.is_object() || string_at(in.object.as_object(), {"kind"}) != "Node" ||
        string_at(in.object.as_object(), {"apiVersion"}) != "v1") {
      continue;
    }
    auto node = agent::decode_kubelet_node(in.object);
    if (!node) {
      report("error", in.origin, node.error().message);
      continue;
    }
    nodes.push_back(std::move(*node));
  }
  auto objects = agent::kubelet_objects(target, nodes);
  if (!objects) {
    report("error", "kubelet Service " + options_.kubelet_service, objects.error().message);
    return;
  }
  for (const auto& r : objects->refused) {
    report("warning", "Node " + r.node,
           r.type + " " + r.address +
               " is left out of the kubelet Endpoints: the API server "
               "refuses it there (" +
               r.reason + ")");
  }
  objects_.push_back(objects->service);
  objects_.push_back(objects->endpoints);
}

int Renderer::print(const RenderOutput& output) {
  for (const auto& note : prepare_for_apply(objects_, output.owner_references)) {
    std::fprintf(stderr, "note: %s\n", note.c_str());
  }
  if (!output.output_dir.empty()) {
    // Files of roots that went away are pruned only when every root rendered: a root that
    // fails keeps its last good files, so a GitOps tool does not delete its objects.
    if (auto w = write_manifest_dir(output.output_dir, objects_, !failed_); !w) {
      std::fprintf(stderr, "error: %s\n", w.error().message.c_str());
      return 1;
    }
    return failed_ ? 1 : 0;
  }
  const std::string out = yaml_stream(objects_);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  return failed_ ? 1 : 0;
}

}  // namespace

int run_render(const Options& options, const std::vector<std::string>& paths,
               const RenderOutput& output) {
  auto inputs = load(paths);
  if (!inputs) {
    std::fprintf(stderr, "error: %s\n", inputs.error().message.c_str());
    return 1;
  }
  Renderer r(options);
  r.check(*inputs);
  if (enabled(options, "agent")) r.agent(*inputs);
  if (enabled(options, "telegraf")) r.telegraf(*inputs);
  if (!options.kubelet_service.empty()) r.kubelet(*inputs);
  return r.print(output);
}

}  // namespace aop::app
