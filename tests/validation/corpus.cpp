#include "tests/validation/corpus.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include <boost/json.hpp>

#include "k8s/yaml.hpp"

namespace aop::test {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string str(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

const std::map<std::string, std::string>& api_versions() {
  static const std::map<std::string, std::string> m = {
      {"GrafanaAgent", "monitoring.grafana.com/v1alpha1"},
      {"MetricsInstance", "monitoring.grafana.com/v1alpha1"},
      {"LogsInstance", "monitoring.grafana.com/v1alpha1"},
      {"PodLogs", "monitoring.grafana.com/v1alpha1"},
      {"Integration", "monitoring.grafana.com/v1alpha1"},
      {"ServiceMonitor", "monitoring.coreos.com/v1"},
      {"PodMonitor", "monitoring.coreos.com/v1"},
      {"Probe", "monitoring.coreos.com/v1"},
      {"Secret", "v1"},
      {"ConfigMap", "v1"}};
  return m;
}

json::value* find(std::vector<json::value>& objects, const std::string& kind, const std::string& ns,
                  const std::string& name) {
  for (auto& o : objects) {
    const auto& obj = o.as_object();
    const auto& md = obj.at("metadata").as_object();
    if (str(obj, "kind") == kind && str(md, "namespace") == ns && str(md, "name") == name) {
      return &o;
    }
  }
  return nullptr;
}

// "Kind ns/name" of a patch.
void apply_patch(std::vector<json::value>& objects, const json::object& change,
                 std::vector<json::value>& changed, const std::string& id) {
  const std::string target = str(change, "patch");
  const auto space = target.find(' ');
  const auto slash = target.find('/');
  if (space == std::string::npos || slash == std::string::npos) {
    throw std::runtime_error(id + ": patch must be \"Kind namespace/name\"");
  }
  const std::string kind = target.substr(0, space);
  const std::string ns = target.substr(space + 1, slash - space - 1);
  const std::string name = target.substr(slash + 1);
  json::value* o = find(objects, kind, ns, name);
  if (o == nullptr) throw std::runtime_error(id + ": no object " + target + " in base.yaml");
  for (const char* part : {"spec", "stringData", "data"}) {
    if (const auto* p = change.if_contains(part)) {
      auto& obj = o->as_object();
      if (!obj.contains(part)) obj[part] = json::object();
      merge_patch(obj[part], *p);
    }
  }
  changed.push_back(*o);
}

}  // namespace

void merge_patch(json::value& target, const json::value& patch) {
  if (!patch.is_object()) {
    target = patch;
    return;
  }
  if (!target.is_object()) target = json::object();
  auto& t = target.as_object();
  for (const auto& kv : patch.as_object()) {
    if (kv.value().is_null()) {
      t.erase(kv.key());
    } else {
      merge_patch(t[kv.key()], kv.value());
    }
  }
}

Corpus load_corpus() {
  const fs::path dir = fs::path(AOP_SOURCE_DIR) / "tests" / "validation" / "corpus";
  Corpus out;
  auto base = k8s::yaml::parse_all(read_file(dir / "base.yaml"));
  if (!base) throw std::runtime_error("base.yaml: " + base.error().message);
  out.base = std::move(*base);
  auto rows_doc = k8s::yaml::parse(read_file(dir / "rows.yaml"));
  if (!rows_doc) throw std::runtime_error("rows.yaml: " + rows_doc.error().message);
  const auto& doc = rows_doc->as_object();
  const auto& templates = doc.at("templates").as_object();
  for (const auto& rv : doc.at("rows").as_array()) {
    const auto& r = rv.as_object();
    CorpusRow row;
    row.id = str(r, "id");
    row.cls = str(r, "class");
    row.objects = out.base;
    std::string kind;
    std::string ns;
    std::string name;
    if (const std::string add = str(r, "add"); !add.empty()) {
      const auto* tmpl = templates.if_contains(add);
      if (tmpl == nullptr) throw std::runtime_error(row.id + ": no template for " + add);
      json::value spec = *tmpl;
      if (const auto* s = r.if_contains("spec")) merge_patch(spec, *s);
      json::object labels =
          add == "Integration" ? json::object{{"agent", "main"}} : json::object{{"team", "web"}};
      json::object o{
          {"apiVersion", api_versions().at(add)},
          {"kind", add},
          {"metadata",
           json::object{{"name", "bad"}, {"namespace", "apps"}, {"labels", std::move(labels)}}},
          {"spec", std::move(spec)}};
      row.objects.emplace_back(o);
      row.changed.emplace_back(std::move(o));
      kind = add;
      ns = "apps";
      name = "bad";
    } else if (r.contains("patch")) {
      apply_patch(row.objects, r, row.changed, row.id);
      const std::string target = str(r, "patch");
      kind = target.substr(0, target.find(' '));
      ns = target.substr(target.find(' ') + 1, target.find('/') - target.find(' ') - 1);
      name = target.substr(target.find('/') + 1);
    } else {
      throw std::runtime_error(row.id + ": a row needs add or patch");
    }
    if (const auto* also = r.if_contains("also")) {
      for (const auto& a : also->as_array())
        apply_patch(row.objects, a.as_object(), row.changed, row.id);
    }
    const auto& e = r.at("expect").as_object();
    row.expect.kind = e.contains("kind") ? str(e, "kind") : kind;
    row.expect.ns = e.contains("namespace") ? str(e, "namespace") : ns;
    row.expect.name = e.contains("name") ? str(e, "name") : name;
    row.expect.field = str(e, "field");
    row.expect.message = str(e, "message");
    row.expect.warning = str(e, "severity") == "warning";
    if (row.expect.field.empty() || row.expect.message.empty()) {
      throw std::runtime_error(row.id + ": expect needs field and message");
    }
    row.api_version = api_versions().at(row.expect.kind);
    const bool root_kind = row.expect.kind == "GrafanaAgent" ||
                           row.expect.kind == "MetricsInstance" ||
                           row.expect.kind == "LogsInstance";
    if (!root_kind) {
      row.scope = Scope::member;
    } else if (row.expect.field.starts_with("spec.additionalScrapeConfigs")) {
      row.scope = Scope::additional_scrape_configs;
    } else {
      row.scope = Scope::root;
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

}  // namespace aop::test
