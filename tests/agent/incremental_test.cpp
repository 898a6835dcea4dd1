// Incremental rendering (reconcile/agent/fragment_cache.hpp): random sequences of cluster
// changes (members added, edited, relabelled and deleted; referenced Secrets edited,
// emptied, deleted and restored; root fields, shard counts and the backend changed;
// instance selectors changed; the root deleted and created again), each step planned
// twice for each of two roots that select the same members: with the fragment and decode
// caches kept across steps and shared by the roots (as the live controller keeps them),
// and from scratch. Every generated object (its bytes and hash), every problem and the
// failure must be the same. The sequences run with small members and with members large
// enough that the config files are gzip-compressed in several chunks.
// Seeded and deterministic: AOP_INCREMENTAL_SEED=<n> replays one seed, and a failure
// names its seed and step.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <zlib.h>
#include <boost/json.hpp>

#include "k8s/base64.hpp"
#include "reconcile/agent/memory_cluster.hpp"
#include "reconcile/agent/pipeline.hpp"

namespace aop::agent {
namespace {

namespace json = boost::json;
using json::array;
using json::object;
using json::value;

constexpr std::string_view kHash = "agent.example.com/hash";
const std::vector<std::string>& namespaces() {
  static const std::vector<std::string> v = {"apps", "web", "db"};
  return v;
}
const std::vector<std::string>& teams() {
  static const std::vector<std::string> v = {"x", "y", "z"};
  return v;
}

// The cluster as the test changes it; every write bumps resourceVersion as the API
// server does, and a created object gets a new UID. `padding`: bytes of text each
// endpoint of a member adds to the configuration (0: a few dozen).
class Model {
 public:
  explicit Model(std::uint64_t seed, std::size_t padding = 0) : rng_(seed), padding_(padding) {}

  std::size_t padding() const { return padding_; }

  std::mt19937_64& rng() { return rng_; }
  int pick(int n) { return static_cast<int>(rng_() % static_cast<std::uint64_t>(n)); }
  bool coin() { return pick(2) == 0; }
  template <class T>
  const T& one_of(const std::vector<T>& v) {
    return v[static_cast<std::size_t>(pick(static_cast<int>(v.size())))];
  }

  using Key = std::tuple<std::string, std::string, std::string>;  // kind, ns, name

  void put(object o) {
    auto& md = o["metadata"].as_object();
    const Key key{std::string(o["kind"].as_string()), std::string(md["namespace"].as_string()),
                  std::string(md["name"].as_string())};
    const auto it = objects_.find(key);
    md["uid"] = it != objects_.end() ? it->second.at("metadata").at("uid")
                                     : value("uid-" + std::to_string(++uids_));
    md["resourceVersion"] = std::to_string(++rv_);
    objects_[key] = std::move(o);
  }
  void erase(const Key& key) { objects_.erase(key); }
  std::vector<Key> keys(std::string_view kind) const {
    std::vector<Key> out;
    for (const auto& [k, o] : objects_) {
      if (std::get<0>(k) == kind) out.push_back(k);
    }
    return out;
  }
  const object* find(const Key& key) const {
    const auto it = objects_.find(key);
    return it == objects_.end() ? nullptr : &it->second;
  }

  MemoryCluster cluster() const {
    MemoryCluster c;
    for (const auto& [k, o] : objects_) EXPECT_TRUE(c.add(o).has_value());
    return c;
  }

 private:
  std::mt19937_64 rng_;
  std::size_t padding_;
  std::map<Key, object> objects_;
  std::uint64_t uids_ = 0;
  std::uint64_t rv_ = 0;
};

object meta(const std::string& ns, const std::string& name, object labels = {}) {
  return object{{"namespace", ns}, {"name", name}, {"labels", std::move(labels)}};
}

object secret_key(const std::string& name, const std::string& key) {
  return object{{"name", name}, {"key", key}};
}

// A reference to one of the Secrets the model keeps (tok1, tok2; keys token, user, pass),
// sometimes to a key or Secret that never exists.
object some_ref(Model& m) {
  const int r = m.pick(10);
  if (r == 0) return secret_key("absent", "token");
  if (r == 1) return secret_key("tok1", "nokey");
  return secret_key(m.coin() ? "tok1" : "tok2", m.one_of<std::string>({"token", "user", "pass"}));
}

array relabelings(Model& m) {
  array out;
  for (int i = m.pick(3); i > 0; --i) {
    out.push_back(object{{"sourceLabels", array{"__meta_kubernetes_pod_node_name"}},
                         {"targetLabel", "node_" + std::to_string(m.pick(5))}});
  }
  if (m.pick(8) == 0) out.push_back(object{{"action", "replace"}, {"regex", "("}});  // invalid
  if (m.pick(4) == 0) {
    // Written escaped for the agent's environment expansion, or as a literal block, whose
    // layout depends on the column it is written at.
    out.push_back(object{{"sourceLabels", array{"__address__"}},
                         {"targetLabel", "origin"},
                         {"replacement", m.coin() ? "${1}:$$x\\y" : "line one\nline two\n"}});
  }
  if (m.padding() > 0) {
    // A long replacement, different per write: large files, gzip-compressed in chunks.
    std::string text;
    while (text.size() < m.padding()) text += "v" + std::to_string(m.pick(1000000)) + "\n";
    out.push_back(object{{"sourceLabels", array{"__address__"}},
                         {"targetLabel", "padding"},
                         {"replacement", std::move(text)}});
  }
  return out;
}

object endpoint(Model& m) {
  object e{{"port", "p" + std::to_string(m.pick(3))}};
  if (m.coin()) e["interval"] = std::to_string(10 + m.pick(3) * 10) + "s";
  if (m.pick(3) == 0) e["bearerTokenSecret"] = some_ref(m);
  if (m.pick(4) == 0) e["basicAuth"] = object{{"username", some_ref(m)}, {"password", some_ref(m)}};
  if (m.pick(4) == 0) {
    e["tlsConfig"] = object{{"ca", object{{"secret", some_ref(m)}}}, {"serverName", "svc"}};
  }
  auto rl = relabelings(m);
  if (!rl.empty()) e["relabelings"] = std::move(rl);
  return e;
}

object member_labels(Model& m) {
  return object{{"team", m.one_of(teams())}};
}

object service_monitor(Model& m, const std::string& ns, const std::string& name) {
  array endpoints;
  for (int i = 1 + m.pick(3); i > 0; --i) endpoints.push_back(endpoint(m));
  object spec{{"selector", object{{"matchLabels", object{{"app", name}}}}},
              {"endpoints", std::move(endpoints)}};
  if (m.pick(4) == 0) spec["namespaceSelector"] = object{{"any", true}};
  if (m.pick(4) == 0) spec["jobLabel"] = "app.kubernetes.io/name";
  // Printed `1e+06` upstream and `1000000` with Compat::fixed.
  if (m.pick(4) == 0) spec["sampleLimit"] = 1000000;
  return object{{"apiVersion", "monitoring.coreos.com/v1"},
                {"kind", "ServiceMonitor"},
                {"metadata", meta(ns, name, member_labels(m))},
                {"spec", std::move(spec)}};
}

object pod_monitor(Model& m, const std::string& ns, const std::string& name) {
  array endpoints;
  for (int i = 1 + m.pick(2); i > 0; --i) endpoints.push_back(endpoint(m));
  return object{{"apiVersion", "monitoring.coreos.com/v1"},
                {"kind", "PodMonitor"},
                {"metadata", meta(ns, name, member_labels(m))},
                {"spec", object{{"selector", object{{"matchLabels", object{{"app", name}}}}},
                                {"podMetricsEndpoints", std::move(endpoints)}}}};
}

object probe(Model& m, const std::string& ns, const std::string& name) {
  object spec{{"prober", object{{"url", "blackbox:9115"}}},
              {"targets", object{{"staticConfig",
                                  object{{"static", array{"https://" + name + ".example"}}}}}}};
  if (m.coin()) spec["bearerTokenSecret"] = some_ref(m);
  if (m.coin()) spec["interval"] = "30s";
  return object{{"apiVersion", "monitoring.coreos.com/v1"},
                {"kind", "Probe"},
                {"metadata", meta(ns, name, member_labels(m))},
                {"spec", std::move(spec)}};
}

object pod_logs(Model& m, const std::string& ns, const std::string& name) {
  object spec{{"selector", object{{"matchLabels", object{{"app", name}}}}}};
  auto rl = relabelings(m);
  if (!rl.empty()) spec["relabelings"] = std::move(rl);
  if (m.coin()) spec["jobLabel"] = "app";
  return object{{"apiVersion", "monitoring.grafana.com/v1alpha1"},
                {"kind", "PodLogs"},
                {"metadata", meta(ns, name, member_labels(m))},
                {"spec", std::move(spec)}};
}

object secret(Model& m, const std::string& ns, const std::string& name) {
  object data;
  for (const char* key : {"token", "user", "pass"}) {
    if (m.pick(6) != 0) data[key] = k8s::base64_encode("v" + std::to_string(m.pick(4)));
  }
  return object{{"apiVersion", "v1"},
                {"kind", "Secret"},
                {"metadata", meta(ns, name)},
                {"data", std::move(data)}};
}

object agent(Model& m, const std::string& name = "agent") {
  object metrics{{"instanceSelector", object{}},
                 {"shards", 1 + m.pick(4)},
                 {"remoteWrite", array{object{{"url", "https://prometheus/api/v1/write"}}}}};
  if (m.coin()) metrics["scrapeInterval"] = std::to_string(15 + m.pick(3) * 15) + "s";
  if (m.pick(3) == 0) metrics["ignoreNamespaceSelectors"] = true;
  if (m.pick(3) == 0) metrics["enforcedNamespaceLabel"] = "tenant";
  if (m.pick(3) == 0) metrics["externalLabels"] = object{{"site", "s" + std::to_string(m.pick(3))}};
  // The other fields the member renderers read (member_view() of fragments.hpp).
  if (m.pick(5) == 0) metrics["overrideHonorLabels"] = true;
  if (m.pick(5) == 0) metrics["overrideHonorTimestamps"] = true;
  if (m.pick(5) == 0) metrics["enforcedSampleLimit"] = 1000 * (1 + m.pick(3));
  if (m.pick(5) == 0) metrics["enforcedTargetLimit"] = 10 * (1 + m.pick(3));
  object logs{{"instanceSelector", object{}}};
  if (m.pick(4) == 0) logs["ignoreNamespaceSelectors"] = true;
  if (m.pick(4) == 0) logs["enforcedNamespaceLabel"] = "tenant";
  object spec{{"metrics", std::move(metrics)}, {"logs", std::move(logs)}};
  if (m.pick(3) == 0) {
    // The API server block is copied into every member's service discovery.
    object api{{"host", "https://kube-" + std::to_string(m.pick(2)) + ":6443"}};
    if (m.coin()) {
      api["basicAuth"] =
          object{{"username", secret_key("api", "user")}, {"password", secret_key("api", "pass")}};
    }
    spec["apiServer"] = std::move(api);
  }
  object md = meta("monitoring", name);
  // (Not with large members: the Alloy backend's files are never gzip-compressed.)
  if (m.padding() == 0 && m.pick(4) == 0) {
    md["annotations"] = object{{"operator.agent.grafana.com/backend", "alloy"}};
  }
  return object{{"apiVersion", "monitoring.grafana.com/v1alpha1"},
                {"kind", "GrafanaAgent"},
                {"metadata", std::move(md)},
                {"spec", std::move(spec)}};
}

object team_selector(Model& m) {
  if (m.pick(4) == 0) return object{};
  array values{value(m.one_of(teams()))};
  if (m.coin()) values.push_back(value(m.one_of(teams())));
  return object{
      {"matchExpressions",
       array{object{{"key", "team"}, {"operator", "In"}, {"values", std::move(values)}}}}};
}

object metrics_instance(Model& m, const std::string& name) {
  return object{{"apiVersion", "monitoring.grafana.com/v1alpha1"},
                {"kind", "MetricsInstance"},
                {"metadata", meta("monitoring", name)},
                {"spec", object{{"serviceMonitorSelector", team_selector(m)},
                                {"serviceMonitorNamespaceSelector", object{}},
                                {"podMonitorSelector", team_selector(m)},
                                {"podMonitorNamespaceSelector", object{}},
                                {"probeSelector", team_selector(m)},
                                {"probeNamespaceSelector", object{}}}}};
}

object logs_instance(Model& m) {
  return object{{"apiVersion", "monitoring.grafana.com/v1alpha1"},
                {"kind", "LogsInstance"},
                {"metadata", meta("monitoring", "logs")},
                {"spec", object{{"clients", array{object{{"url", "http://loki"}}}},
                                {"podLogsSelector", team_selector(m)},
                                {"podLogsNamespaceSelector", object{}}}}};
}

using MemberMaker = object (*)(Model&, const std::string&, const std::string&);
struct MemberKind {
  std::string kind;
  MemberMaker make;
};
const std::vector<MemberKind>& member_kinds() {
  static const std::vector<MemberKind> v = {{"ServiceMonitor", service_monitor},
                                            {"PodMonitor", pod_monitor},
                                            {"Probe", probe},
                                            {"PodLogs", pod_logs}};
  return v;
}

void add_member(Model& m) {
  const auto& k = m.one_of(member_kinds());
  const std::string& ns = m.one_of(namespaces());
  const std::string name = "m" + std::to_string(m.pick(12));
  if (m.find({k.kind, ns, name}) == nullptr) m.put(k.make(m, ns, name));
}

// The second root: the first's spec under another name (its members' fragments are the
// first's), sometimes with other external labels (the same), or a spec of its own.
object second_agent(Model& m) {
  const object* first = m.find({"GrafanaAgent", "monitoring", "agent"});
  if (first == nullptr || m.pick(3) == 0) return agent(m, "agent-b");
  object o = *first;
  auto& md = o["metadata"].as_object();
  md["name"] = "agent-b";
  md.erase("uid");
  md.erase("resourceVersion");
  if (m.coin()) {
    o["spec"].as_object()["metrics"].as_object()["externalLabels"] =
        object{{"root", "b" + std::to_string(m.pick(3))}};
  }
  return o;
}

void populate(Model& m) {
  m.put(agent(m));
  m.put(second_agent(m));
  m.put(metrics_instance(m, "a"));
  m.put(metrics_instance(m, "b"));
  m.put(logs_instance(m));
  m.put(secret(m, "monitoring", "api"));
  for (const auto& ns : namespaces()) {
    m.put(secret(m, ns, "tok1"));
    m.put(secret(m, ns, "tok2"));
  }
  for (int i = 0; i < 20; ++i) add_member(m);
}

// One random change; returns what it did (for the failure message).
std::string change(Model& m) {
  std::vector<Model::Key> members;
  for (const auto& k : member_kinds()) {
    for (auto& key : m.keys(k.kind)) members.push_back(key);
  }
  const auto member = [&]() -> const Model::Key& { return m.one_of(members); };
  switch (m.pick(12)) {
    case 0:
      add_member(m);
      return "add a member";
    case 1:
    case 2:
      if (members.empty()) return "nothing";
      {
        const auto& key = member();
        for (const auto& k : member_kinds()) {
          if (k.kind == std::get<0>(key)) m.put(k.make(m, std::get<1>(key), std::get<2>(key)));
        }
        return "edit " + std::get<0>(key) + " " + std::get<1>(key) + "/" + std::get<2>(key);
      }
    case 3:
      if (members.empty()) return "nothing";
      {
        const auto& key = member();
        object o = *m.find(key);
        o["metadata"].as_object()["labels"] = member_labels(m);
        m.put(std::move(o));
        return "relabel " + std::get<0>(key) + " " + std::get<2>(key);
      }
    case 4:
      if (members.empty()) return "nothing";
      {
        const auto& key = member();
        m.erase(key);
        return "delete " + std::get<0>(key) + " " + std::get<2>(key);
      }
    case 5:
    case 6: {
      const bool api = m.pick(4) == 0;
      const std::string ns = api ? "monitoring" : m.one_of(namespaces());
      const std::string name = api ? "api" : (m.coin() ? "tok1" : "tok2");
      if (m.pick(5) == 0) {
        m.erase({"Secret", ns, name});
        return "delete Secret " + ns + "/" + name;
      }
      m.put(secret(m, ns, name));
      return "write Secret " + ns + "/" + name;
    }
    case 7:
      if (m.coin()) {
        m.put(second_agent(m));
        return "edit the second GrafanaAgent";
      }
      m.put(agent(m));
      return "edit the GrafanaAgent";
    case 8:
    case 9: {
      // One field of one root, as a user edits it: each field a member's fragment reads
      // (member_view() of fragments.hpp) must reach its key, and the others must not
      // matter.
      const std::string name = m.coin() ? "agent" : "agent-b";
      const object* found = m.find({"GrafanaAgent", "monitoring", name});
      if (found == nullptr) return "nothing";
      object o = *found;
      auto& spec = o["spec"].as_object();
      auto& metrics = spec["metrics"].as_object();
      auto& logs = spec["logs"].as_object();
      const auto flip = [&](object& block, std::string_view key, value v) {
        if (block.contains(key) && m.coin()) {
          block.erase(key);
        } else {
          block[key] = std::move(v);
        }
      };
      std::string field;
      switch (m.pick(12)) {
        case 0:
          field = "spec.metrics.shards";
          metrics["shards"] = 1 + m.pick(4);
          break;
        case 1:
          field = "spec.metrics.enforcedNamespaceLabel";
          flip(metrics, "enforcedNamespaceLabel", m.coin() ? "tenant" : "team");
          break;
        case 2:
          field = "spec.metrics.ignoreNamespaceSelectors";
          flip(metrics, "ignoreNamespaceSelectors", true);
          break;
        case 3:
          field = "spec.metrics.overrideHonorLabels";
          flip(metrics, "overrideHonorLabels", true);
          break;
        case 4:
          field = "spec.metrics.overrideHonorTimestamps";
          flip(metrics, "overrideHonorTimestamps", true);
          break;
        case 5:
          field = "spec.metrics.enforcedSampleLimit";
          flip(metrics, "enforcedSampleLimit", 100 * (1 + m.pick(3)));
          break;
        case 6:
          field = "spec.metrics.enforcedTargetLimit";
          flip(metrics, "enforcedTargetLimit", 1 + m.pick(3));
          break;
        case 7:
          field = "spec.logs.enforcedNamespaceLabel";
          flip(logs, "enforcedNamespaceLabel", m.coin() ? "tenant" : "team");
          break;
        case 8:
          field = "spec.logs.ignoreNamespaceSelectors";
          flip(logs, "ignoreNamespaceSelectors", true);
          break;
        case 9:
          field = "spec.apiServer";
          flip(spec, "apiServer",
               object{{"host", "https://kube-" + std::to_string(m.pick(3)) + ":6443"}});
          break;
        case 10:
          field = "spec.metrics.externalLabels";
          flip(metrics, "externalLabels", object{{"site", "s" + std::to_string(m.pick(3))}});
          break;
        default:
          field = "spec.metrics.scrapeInterval";
          flip(metrics, "scrapeInterval", value(std::to_string(15 + m.pick(3) * 15) + "s"));
          break;
      }
      m.put(std::move(o));
      return "change " + field + " of " + name;
    }
    case 10:
      if (m.coin()) {
        m.put(logs_instance(m));
        return "edit the LogsInstance";
      }
      m.put(metrics_instance(m, m.coin() ? "a" : "b"));
      return "edit a MetricsInstance";
    default:
      if (m.pick(3) == 0) {
        m.erase({"GrafanaAgent", "monitoring", "agent"});
        m.put(agent(m));
        return "delete and create the GrafanaAgent";
      }
      return "nothing (resync)";
  }
}

std::string text_of(const RootPlan& plan) {
  std::string out;
  for (const auto& step : plan.apply.steps) {
    out += std::to_string(static_cast<int>(step.action)) + " " + step.key.str() + " " + step.hash +
           "\n" + json::serialize(step.object) + "\n";
  }
  for (const auto& p : plan.problems) out += "problem: " + p.str() + "\n";
  if (plan.failure) {
    out += "failure: " + std::string(stage_name(plan.failure->stage)) + ": " +
           plan.failure->message + "\n";
  }
  if (plan.alloy_translation) {
    for (const auto& s : *plan.alloy_translation) out += "alloy: " + s + "\n";
  }
  return out;
}

k8s::ObjectPtr root_in(const MemoryCluster& c) {
  for (const auto& o : c.compact(Kind::grafana_agent)) return o;
  return nullptr;
}

struct SequenceRun {
  std::uint64_t hits = 0;
  std::uint64_t shared_hits = 0;
  std::uint64_t misses = 0;
  std::size_t most_chunks = 0;  // of a config Secret's gzip encoding
  int steps_compared = 0;
};

// The gzip members of a stream, counted by reading it with zlib member by member.
std::size_t gzip_members(std::string_view gz) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) return 0;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  zs.avail_in = static_cast<uInt>(gz.size());
  std::vector<char> buf(1 << 16);
  std::size_t n = 0;
  for (;;) {
    zs.next_out = reinterpret_cast<Bytef*>(buf.data());
    zs.avail_out = static_cast<uInt>(buf.size());
    const int rc = inflate(&zs, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      ++n;
      if (zs.avail_in == 0 || inflateReset(&zs) != Z_OK) break;
    } else if (rc != Z_OK) {
      break;
    }
  }
  inflateEnd(&zs);
  return n;
}

// The largest number of gzip members (chunks) of a config Secret the plan applies (0:
// none is gzip-compressed).
std::size_t most_chunks(const RootPlan& plan) {
  std::size_t most = 0;
  for (const auto& step : plan.apply.steps) {
    const auto* data = step.object.if_contains("data");
    if (data == nullptr || !data->is_object()) continue;
    const auto* file = data->get_object().if_contains("agent.yml");
    if (file == nullptr || !file->is_string() || !file->get_string().starts_with("H4sI")) continue;
    if (const auto bytes = k8s::base64_decode(file->get_string())) {
      most = std::max(most, gzip_members(*bytes));
    }
  }
  return most;
}

SequenceRun run_sequence(std::uint64_t seed, const Options& options, int steps,
                         std::size_t padding = 0) {
  Model m(seed, padding);
  populate(m);
  DecodeCache decode_cache;
  FragmentCache fragment_cache;
  SequenceRun run;
  std::size_t chunks = 0;
  for (int step = 0; step < steps; ++step) {
    const std::string what = step == 0 ? "the initial cluster" : change(m);
    SCOPED_TRACE("seed " + std::to_string(seed) + " (AOP_INCREMENTAL_SEED=" + std::to_string(seed) +
                 "), step " + std::to_string(step) + ": " + what);
    const MemoryCluster c = m.cluster();
    for (const auto& root : c.compact(Kind::grafana_agent)) {
      SCOPED_TRACE("root " + root->key().str());
      const RootPlan cached =
          plan_root(*root, PipelineInputs{c, c, options, decode_cache, kHash, &fragment_cache});
      DecodeCache uncached(false);
      const RootPlan full =
          plan_root(*root, PipelineInputs{c, c, options, uncached, kHash, nullptr});
      EXPECT_EQ(text_of(cached), text_of(full));
      if (::testing::Test::HasFailure()) return run;
      chunks = std::max(chunks, most_chunks(cached));
    }
    ++run.steps_compared;
  }
  run.most_chunks = chunks;
  run.hits = fragment_cache.hits();
  run.shared_hits = fragment_cache.shared_hits();
  run.misses = fragment_cache.misses();
  return run;
}

std::vector<std::uint64_t> seeds() {
  // Read before any thread starts.
  if (const char* s = std::getenv("AOP_INCREMENTAL_SEED")) {  // NOLINT(concurrency-mt-unsafe)
    return {std::stoull(s)};
  }
  std::vector<std::uint64_t> out;
  for (std::uint64_t i = 1; i <= 6; ++i) out.push_back(i * 7919);
  return out;
}

TEST(IncrementalRender, RandomChangeSequencesRenderTheSameBytesAsFullRenders) {
  std::uint64_t hits = 0;
  std::uint64_t shared_hits = 0;
  for (const auto seed : seeds()) {
    for (const Compat compat : {Compat::upstream, Compat::fixed}) {
      Options options;
      options.compat = compat;
      const SequenceRun run = run_sequence(seed, options, 50);
      if (HasFailure()) return;
      EXPECT_EQ(run.steps_compared, 50) << "seed " << seed;
      hits += run.hits;
      shared_hits += run.shared_hits;
    }
  }
  // The sequences did exercise reuse (not only misses), also of the other root's.
  EXPECT_GT(hits, 0u);
  EXPECT_GT(shared_hits, 0u);
}

// The same with members large enough that the config files are gzip-compressed in
// several chunks (config_text.hpp), kept per root: the Secrets' bytes are the same as a
// file compressed from nothing.
TEST(IncrementalRender, LargeFilesCompressedInKeptChunksHaveTheSameBytes) {
  const auto all = seeds();
  std::size_t chunks = 0;
  for (std::size_t i = 0; i < all.size() && i < 3; ++i) {
    const SequenceRun run = run_sequence(all[i], Options{}, 20, 24 * 1024);
    if (HasFailure()) return;
    EXPECT_EQ(run.steps_compared, 20) << "seed " << all[i];
    chunks = std::max(chunks, run.most_chunks);
  }
  EXPECT_GT(chunks, 1u) << "no config Secret was large enough to be gzipped in chunks";
}

// What the cache saves, counted: an unchanged resync renders no member again, a change
// of one member renders that member alone, a Secret change the members that read it, and
// a root change every member.
TEST(IncrementalRender, RendersOnlyWhatChanged) {
  Model m(1);
  m.put(
      object{{"apiVersion", "monitoring.grafana.com/v1alpha1"},
             {"kind", "GrafanaAgent"},
             {"metadata", meta("monitoring", "agent")},
             {"spec", object{{"metrics", object{{"instanceSelector", object{}}, {"shards", 2}}}}}});
  object mi = metrics_instance(m, "a");
  mi["spec"].as_object()["serviceMonitorSelector"] = object{};
  m.put(std::move(mi));
  object tok = secret(m, "apps", "tok1");
  tok["data"] = object{{"token", k8s::base64_encode("t1")}};
  m.put(tok);
  for (int i = 0; i < 5; ++i) {
    const std::string name = "sm" + std::to_string(i);
    m.put(object{
        {"apiVersion", "monitoring.coreos.com/v1"},
        {"kind", "ServiceMonitor"},
        {"metadata", meta("apps", name)},
        {"spec", object{{"selector", object{}}, {"endpoints", array{object{{"port", "http"}}}}}}});
  }
  // sm0 reads the token.
  object sm0 = *m.find({"ServiceMonitor", "apps", "sm0"});
  sm0["spec"].as_object()["endpoints"] =
      array{object{{"port", "http"}, {"bearerTokenSecret", secret_key("tok1", "token")}}};
  m.put(std::move(sm0));

  DecodeCache decode_cache;
  FragmentCache cache;
  const Options options;
  const auto plan = [&] {
    const MemoryCluster c = m.cluster();
    const auto root = root_in(c);
    const auto before = cache.misses();
    const RootPlan p = plan_root(*root, PipelineInputs{c, c, options, decode_cache, kHash, &cache});
    EXPECT_FALSE(p.failure) << p.failure->message;
    return cache.misses() - before;
  };
  EXPECT_EQ(plan(), 5u);  // cold
  EXPECT_EQ(cache.size(), 5u);
  EXPECT_EQ(plan(), 0u);                              // unchanged
  m.put(*m.find({"ServiceMonitor", "apps", "sm3"}));  // a new resourceVersion
  EXPECT_EQ(plan(), 1u);
  tok["data"] = object{{"token", k8s::base64_encode("t2")}};
  m.put(tok);
  EXPECT_EQ(plan(), 1u);  // sm0 alone read it
  // A status write changes the root's resourceVersion, not its inputs.
  object root = *m.find({"GrafanaAgent", "monitoring", "agent"});
  root["status"] = object{{"conditions", array{}}};
  m.put(root);
  EXPECT_EQ(plan(), 0u);
  root["spec"].as_object()["metrics"].as_object()["shards"] = 7;
  m.put(root);
  EXPECT_EQ(plan(), 5u);
  // A deleted member's entry goes at the root's next render; a deleted root's at once.
  m.erase({"ServiceMonitor", "apps", "sm4"});
  EXPECT_EQ(plan(), 0u);
  EXPECT_EQ(cache.size(), 4u);
  cache.forget(std::string(root["metadata"].at("uid").as_string()));
  EXPECT_EQ(cache.size(), 0u);
}

// Off (--agent-incremental-render=false): nothing is kept.
TEST(IncrementalRender, ADisabledCacheKeepsNothing) {
  Model m(3);
  populate(m);
  const MemoryCluster c = m.cluster();
  DecodeCache decode_cache;
  FragmentCache cache(false);
  const Options options;
  (void)plan_root(*root_in(c), PipelineInputs{c, c, options, decode_cache, kHash, &cache});
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.hits() + cache.misses(), 0u);
}

}  // namespace
}  // namespace aop::agent
