// The corpus of invalid inputs (tests/validation/corpus/rows.yaml) against the live
// Grafana Agent controller on kube-sim. The CRDs are loaded without their schemas (as an
// old CRD, or none, would be), so every row reaches the controller instead of being
// refused at admission: the operator must validate everything itself.
//
// The base hierarchy is deployed once. Then, row by row: the row's change is written
// (referenced Secrets and ConfigMaps first, so no half-made state is ever valid), the
// expected report must appear in the GrafanaAgent's status (kind, namespace, name, field
// path, message), and the objects deployed before must be byte-identical (the same
// resourceVersion: not written at all) wherever the row leaves the deployment as it was:
// a refused root, a new member left out, additional scrape configs left out. A row that
// breaks a deployed member must leave that member out and keep the root reconciled. Then
// the change is reverted and the root must come back without problems.
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "k8s/yaml.hpp"
#include "tests/agent/agent_sim_support.hpp"
#include "tests/validation/corpus.hpp"

namespace aop::agent::testing {
namespace {

namespace fs = std::filesystem;

// Per row (a failing row must not hold the run for the fixture's long deadline).
constexpr auto kRowDeadline = std::chrono::seconds(20);

// deploy/crds with every version's schema replaced by "any object".
std::string schemaless_crds(const fs::path& dir) {
  fs::create_directories(dir);
  int n = 0;
  for (const auto& e : fs::recursive_directory_iterator(crd_dir())) {
    if (!e.is_regular_file() || e.path().extension() != ".yaml") continue;
    std::ifstream in(e.path());
    std::stringstream text;
    text << in.rdbuf();
    auto docs = k8s::yaml::parse_all(text.str());
    if (!docs) throw std::runtime_error(e.path().string() + ": " + docs.error().message);
    for (auto& d : *docs) {
      if (!d.is_object() || d.as_object().if_contains("kind") == nullptr ||
          d.as_object().at("kind") != "CustomResourceDefinition") {
        continue;
      }
      for (auto& v : d.at_pointer("/spec/versions").as_array()) {
        v.as_object()["schema"] = json::object{
            {"openAPIV3Schema",
             json::object{{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}}};
      }
      std::ofstream out(dir / ("crd-" + std::to_string(n++) + ".json"));
      out << json::serialize(d);
    }
  }
  return dir.string();
}

k8s::GroupVersionKind gvk_of(const json::value& o) {
  const std::string api_version(o.at("apiVersion").as_string());
  const auto slash = api_version.find('/');
  k8s::GroupVersionKind g;
  if (slash != std::string::npos) g.group = api_version.substr(0, slash);
  g.version = slash == std::string::npos ? api_version : api_version.substr(slash + 1);
  g.kind = std::string(o.at("kind").as_string());
  return g;
}

std::string meta(const json::value& o, std::string_view field) {
  const auto* v = o.at("metadata").as_object().if_contains(field);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

bool is_reference(const json::value& o) {
  const auto& kind = o.at("kind");
  return kind == "Secret" || kind == "ConfigMap";
}

class CorpusSim {
 public:
  explicit CorpusSim(const fs::path& crds) : env({}, schemaless_crds(crds)) {
    agent = &env.add_agent_controller(module_options());
    env.start();
  }

  // Creates or replaces the object as given.
  void put(json::value o) {
    o.at("metadata").as_object().erase("uid");
    const auto live = env.get(gvk_of(o), meta(o, "namespace"), meta(o, "name"));
    if (!live) {
      wrote(o, env.create(o));
      return;
    }
    o.at("metadata").as_object()["resourceVersion"] = live->at("metadata").at("resourceVersion");
    auto r = env.io.run(env.driver->update(o));
    EXPECT_TRUE(r.has_value()) << "update " << json::serialize(o) << ": "
                               << (r ? std::string() : r.error().describe());
    if (r) wrote(o, *r);
  }
  void remove(const json::value& o) {
    auto r = env.io.run(
        env.driver->remove(gvk_of(o), k8s::ObjectKey{meta(o, "namespace"), meta(o, "name")}));
    EXPECT_TRUE(r.has_value()) << r.error().describe();
    wrote(o, json::value());
  }

  // Waits until the controller has seen every write since the last settle() (its caches
  // hold what was written) and has no reconcile queued or running, twice in a row: then
  // the status and the deployment are those of the state written, not of a state on the
  // way to it. (A root that failed may wait for a retry with backoff: the retry reads the
  // same state.)
  bool settle() {
    auto& queue = agent->controller().queue();
    int quiet = 0;
    const bool settled = tst::wait_until(
        [&] {
          bool seen = true;
          for (const auto& [kind, key, version] : written_) {
            seen = seen && cache_holds(*agent, kind, key, version);
          }
          quiet = seen && queue.len() == 0 && queue.processing() == 0 ? quiet + 1 : 0;
          return quiet >= 2;
        },
        kRowDeadline);
    if (!settled) {
      for (const auto& [kind, key, version] : written_) {
        ADD_FAILURE() << kind_name(kind) << " " << key.str() << " written at resourceVersion "
                      << version << ", the controller's cache holds "
                      << agent->cached_version(kind, key);
      }
      ADD_FAILURE() << "reconciles queued " << queue.len() << ", running " << queue.processing();
    }
    written_.clear();
    return settled;
  }

  // Every object the controller deployed for the root, serialized whole.
  std::map<std::string, std::string> deployed() {
    std::map<std::string, std::string> out;
    for (const Kind k :
         {Kind::secret, Kind::service, Kind::stateful_set, Kind::daemon_set, Kind::deployment}) {
      for (const auto& o : env.list(k, "monitoring")) {
        const auto* labels = o.at("metadata").as_object().if_contains("labels");
        if (labels == nullptr || !labels->as_object().contains(kManagedByKey)) continue;
        out[std::string(kind_name(k)) + " " + meta(o, "name")] = json::serialize(o);
      }
    }
    return out;
  }

  json::array problems() {
    const auto status = env.agent_status("monitoring", "agent");
    const auto* p = status.if_contains("problems");
    return p != nullptr && p->is_array() ? p->as_array() : json::array();
  }

  AgentSim env;
  AgentController* agent = nullptr;

 private:
  // What settle() waits for: the kind, key and resourceVersion ("" once deleted) written.
  std::vector<std::tuple<Kind, k8s::ObjectKey, std::string>> written_;

  void wrote(const json::value& o, const json::value& live) {
    const auto kind = kind_of(gvk_of(o));
    ASSERT_TRUE(kind.has_value()) << json::serialize(o);
    written_.emplace_back(*kind, k8s::ObjectKey{meta(o, "namespace"), meta(o, "name")},
                          live.is_object() ? meta(live, "resourceVersion") : std::string());
  }
};

bool reported(const json::array& problems, const test::CorpusExpect& e) {
  for (const auto& v : problems) {
    const auto& p = v.as_object();
    const auto str = [&](std::string_view k) {
      const auto* f = p.if_contains(k);
      return f != nullptr && f->is_string() ? std::string(f->as_string()) : std::string();
    };
    if (str("kind") == e.kind && str("namespace") == e.ns && str("name") == e.name &&
        str("field") == e.field && str("message").find(e.message) != std::string::npos &&
        (str("severity") == "Warning") == e.warning) {
      return true;
    }
  }
  return false;
}

TEST(CorpusSim, EveryRowIsReportedByTheLiveControllerAndTheDeploymentStays) {
  const auto corpus = test::load_corpus();
  const fs::path tmp = fs::temp_directory_path() / ("corpus-crds-" + std::to_string(::getpid()));
  CorpusSim sim(tmp);
  fs::remove_all(tmp);
  auto& env = sim.env;

  // The base: Namespaces, references, then the rest.
  for (const auto& o : corpus.base) {
    if (o.at("kind") == "Namespace") sim.put(o);
  }
  for (const bool refs : {true, false}) {
    for (const auto& o : corpus.base) {
      if (o.at("kind") != "Namespace" && is_reference(o) == refs) sim.put(o);
    }
  }
  ASSERT_TRUE(tst::wait_until(
      [&] {
        return env.condition_status("monitoring", "agent", "Reconciled") == "True" &&
               env.exists(Kind::stateful_set, "monitoring", "agent-shard-1") &&
               env.exists(Kind::daemon_set, "monitoring", "agent-logs") && sim.problems().empty();
      },
      kDeadline))
      << json::serialize(env.agent_status("monitoring", "agent"));
  ASSERT_TRUE(sim.settle());

  std::map<std::string, const json::value*> base_of;
  for (const auto& o : corpus.base) {
    base_of[std::string(o.at("kind").as_string()) + " " + meta(o, "namespace") + "/" +
            meta(o, "name")] = &o;
  }
  std::size_t identical = 0;
  for (const auto& row : corpus.rows) {
    SCOPED_TRACE(row.id);
    const auto before = sim.deployed();
    ASSERT_FALSE(before.empty());
    // Does the row break a member that is deployed (rather than add one, or change a
    // root-level object or a reference)?
    bool breaks_deployed_member = false;
    for (const auto& o : row.changed) {
      const auto kind = kind_of(gvk_of(o));
      const bool member = kind && *kind != Kind::grafana_agent && *kind != Kind::metrics_instance &&
                          *kind != Kind::logs_instance && !is_reference(o);
      const std::string key = std::string(o.at("kind").as_string()) + " " + meta(o, "namespace") +
                              "/" + meta(o, "name");
      if (member && base_of.contains(key)) breaks_deployed_member = true;
    }

    for (const bool refs : {true, false}) {
      for (const auto& o : row.changed) {
        if (is_reference(o) == refs) sim.put(o);
      }
    }
    ASSERT_TRUE(sim.settle()) << "the controller did not settle after the row's writes";
    const auto& e = row.expect;
    const bool seen = reported(sim.problems(), e);
    EXPECT_TRUE(seen) << "expected " << e.kind << " " << e.ns << "/" << e.name << ": " << e.field
                      << ": ..." << e.message << "...\nstatus: "
                      << json::serialize(env.agent_status("monitoring", "agent"));
    if (seen) {
      const std::string reconciled = env.condition_status("monitoring", "agent", "Reconciled");
      if (row.scope == test::Scope::root && !e.warning) {
        EXPECT_EQ(reconciled, "False");
      } else {
        EXPECT_EQ(reconciled, "True");
      }
      if (!e.warning && !breaks_deployed_member) {
        // The status is written after the reconcile's writes: nothing more comes.
        EXPECT_EQ(sim.deployed(), before) << "the deployment changed";
        ++identical;
      }
    }

    // Revert: the row's objects back to the base (or gone), references last.
    for (const bool refs : {false, true}) {
      for (const auto& o : row.changed) {
        if (is_reference(o) != refs) continue;
        const std::string key = std::string(o.at("kind").as_string()) + " " + meta(o, "namespace") +
                                "/" + meta(o, "name");
        if (const auto it = base_of.find(key); it != base_of.end()) {
          sim.put(*it->second);
        } else {
          sim.remove(o);
        }
      }
    }
    ASSERT_TRUE(sim.settle()) << "the controller did not settle after the revert";
    ASSERT_TRUE(sim.problems().empty() &&
                env.condition_status("monitoring", "agent", "Reconciled") == "True")
        << "not back to the base: " << json::serialize(env.agent_status("monitoring", "agent"));
  }
  EXPECT_GE(identical, 200u) << "rows checked for a byte-identical deployment";
  std::cout << corpus.rows.size() << " rows through the live controller, " << identical
            << " with the deployment checked byte-identical\n";
}

}  // namespace
}  // namespace aop::agent::testing
