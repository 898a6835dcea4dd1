// Golden tests of the Grafana Agent controller's pipeline (plan_root(), as `render` and
// the live controller run it).
//
// Each directory under tests/agent/golden/<case>/ holds:
//   input.yaml          the cluster state: custom resources, Secrets, ConfigMaps, Namespaces
//   options.yaml        (optional) {compat: upstream|fixed, labels: {..}, operatorVersion: ..}
//   <secret>.agent.yml  (optional) expected bytes of the `agent.yml` of config Secret <secret>
//   expected.yaml       (optional) every step of the apply plan, in order, as YAML
//                       documents: applied objects (Secret data shown decoded; a config's
//                       `agent.yml` shown as "<agent.yml>" or "<agent.yml gzip>"), and
//                       {action: delete-if-managed|prune, ...} for the other steps (a
//                       prune's `keep`: the objects of its kind the plan applies)
//   problems.txt        (optional) expected problems, one Problem::str() per line
//   error.txt           (optional) expected failure of each root that failed, one a line
// Every GrafanaAgent of the input is reconciled (in namespace/name order). Expected files
// were written by hand from the specification; actual outputs are written next to the
// build for review (<build>/tests/agent-golden/<case>/).
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "k8s/base64.hpp"
#include "k8s/yaml.hpp"
#include "reconcile/agent/encoding.hpp"
#include "reconcile/agent/memory_cluster.hpp"
#include "reconcile/agent/pipeline.hpp"

namespace aop::agent {
namespace {

namespace fs = std::filesystem;
using boost::json::array;
using boost::json::object;
using boost::json::value;

fs::path golden_dir() {
  return fs::path(AOP_SOURCE_DIR) / "tests" / "agent" / "golden";
}
fs::path actual_dir() {
  return fs::path(AOP_BINARY_DIR) / "tests" / "agent-golden";
}

std::optional<std::string> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

std::vector<std::string> case_names() {
  std::vector<std::string> out;
  if (!fs::exists(golden_dir())) return out;
  for (const auto& e : fs::directory_iterator(golden_dir())) {
    if (e.is_directory()) out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

Options load_options(const fs::path& dir) {
  Options o;
  o.operator_version = "v0.1.0";
  const auto text = read_file(dir / "options.yaml");
  if (!text) return o;
  auto v = k8s::yaml::parse(*text);
  EXPECT_TRUE(v.has_value()) << "options.yaml: " << v.error().message;
  if (!v || !v->is_object()) return o;
  const auto& m = v->get_object();
  if (const auto* c = m.if_contains("compat")) {
    o.compat = c->as_string() == "fixed" ? Compat::fixed : Compat::upstream;
  }
  if (const auto* l = m.if_contains("labels")) {
    for (const auto& kv : l->as_object()) {
      o.operator_labels[std::string(kv.key())] = std::string(kv.value().as_string());
    }
  }
  if (const auto* ver = m.if_contains("operatorVersion")) {
    o.operator_version = std::string(ver->as_string());
  }
  return o;
}

// Steps as comparable documents (see the file comment).
value step_document(const runtime::ApplyPlan& plan, const runtime::ApplyStep& s,
                    std::map<std::string, std::string>& configs) {
  using Action = runtime::ApplyStep::Action;
  switch (s.action) {
    case Action::apply: {
      object o = s.object;
      if (s.kind == gvk(Kind::secret)) {
        auto& data = o["data"].as_object();
        for (auto& kv : data) {
          auto bytes = k8s::base64_decode(kv.value().as_string());
          EXPECT_TRUE(bytes.has_value());
          if (!bytes) continue;
          if (kv.key() == "agent.yml") {
            const bool gz = bytes->size() >= 2 && static_cast<unsigned char>((*bytes)[0]) == 0x1f &&
                            static_cast<unsigned char>((*bytes)[1]) == 0x8b;
            std::string text = *bytes;
            if (gz) {
              auto plain = gzip_decompress(*bytes);
              EXPECT_TRUE(plain.has_value());
              text = plain.value_or("");
            }
            configs[s.key.name] = text;
            kv.value() = gz ? "<agent.yml gzip>" : "<agent.yml>";
          } else {
            kv.value() = *bytes;
          }
        }
      }
      return o;
    }
    case Action::delete_if_managed:
      return object{{"action", "delete-if-managed"},
                    {"kind", s.kind.kind},
                    {"namespace", s.key.ns},
                    {"name", s.key.name}};
    case Action::prune: {
      EXPECT_EQ(s.prune.kinds.size(), 1u);
      EXPECT_EQ(s.prune.namespaces.size(), 1u);
      EXPECT_TRUE(s.prune.controller_only);
      const k8s::GroupVersionKind kind = s.prune.kinds.at(0);
      object labels;
      for (const auto& [k, v] : s.prune.match_labels) labels[k] = v;
      array keep;
      for (const auto& st : plan.steps) {
        if (st.action == Action::apply && st.kind == kind) keep.emplace_back(st.key.name);
      }
      return object{{"action", "prune"},
                    {"kind", kind.kind},
                    {"namespace", s.prune.namespaces.at(0)},
                    {"matchLabels", std::move(labels)},
                    {"ownerUID", s.prune.owner_uid},
                    {"keep", std::move(keep)}};
    }
  }
  return nullptr;
}

// The first differing line with some context, instead of two unreadable long strings.
std::string line_diff(const std::string& expected, const std::string& actual) {
  auto split = [](const std::string& s) {
    std::vector<std::string> lines;
    std::istringstream in(s);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
  };
  const auto e = split(expected);
  const auto a = split(actual);
  std::size_t i = 0;
  while (i < e.size() && i < a.size() && e[i] == a[i]) ++i;
  if (i == e.size() && i == a.size()) return "(texts differ only in trailing newlines)";
  std::ostringstream out;
  out << "first difference at line " << i + 1 << "\n";
  const std::size_t from = i >= 3 ? i - 3 : 0;
  for (std::size_t k = from; k < i; ++k) out << "    " << e[k] << "\n";
  for (std::size_t k = i; k < std::min(e.size(), i + 4); ++k) out << "  - " << e[k] << "\n";
  for (std::size_t k = i; k < std::min(a.size(), i + 4); ++k) out << "  + " << a[k] << "\n";
  return out.str();
}

class Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, Matches) {
  const fs::path dir = golden_dir() / GetParam();
  const fs::path out_dir = actual_dir() / GetParam();
  fs::remove_all(out_dir);
  const auto input = read_file(dir / "input.yaml");
  ASSERT_TRUE(input.has_value()) << dir << "/input.yaml missing";
  auto docs = k8s::yaml::parse_all(*input);
  ASSERT_TRUE(docs.has_value()) << "input.yaml: " << docs.error().message;
  MemoryCluster cluster;
  for (auto& d : *docs) {
    auto added = cluster.add(std::move(d));
    ASSERT_TRUE(added.has_value()) << added.error().message;
  }
  const Options options = load_options(dir);

  std::vector<std::string> problems;
  std::string error;
  array steps;
  std::map<std::string, std::string> configs;
  for (const k8s::ObjectPtr& root : cluster.compact(Kind::grafana_agent)) {
    const RootPlan plan = plan_root(*root, cluster, options);
    for (const auto& p : plan.problems) problems.push_back(p.str());
    for (const auto& s : plan.apply.steps) steps.push_back(step_document(plan.apply, s, configs));
    if (plan.failure) error += plan.failure->message + "\n";
  }

  // Write actual outputs for review, then compare.
  std::string problems_text;
  for (const auto& p : problems) problems_text += p + "\n";
  std::string steps_text;
  for (const auto& s : steps) steps_text += "---\n" + k8s::yaml::emit(s, {.indent = 2});
  write_file(out_dir / "expected.yaml", steps_text);
  if (!problems_text.empty()) write_file(out_dir / "problems.txt", problems_text);
  if (!error.empty()) write_file(out_dir / "error.txt", error);
  for (const auto& [name, text] : configs) write_file(out_dir / (name + ".agent.yml"), text);

  EXPECT_EQ(read_file(dir / "problems.txt").value_or(""), problems_text) << "problems";
  EXPECT_EQ(read_file(dir / "error.txt").value_or(""), error) << "error";
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string file = e.path().filename().string();
    const std::string suffix = ".agent.yml";
    if (file.size() <= suffix.size() || file.substr(file.size() - suffix.size()) != suffix) {
      continue;
    }
    const std::string secret = file.substr(0, file.size() - suffix.size());
    const auto it = configs.find(secret);
    ASSERT_NE(it, configs.end()) << "no config Secret " << secret << " was generated";
    const std::string expected = *read_file(e.path());
    EXPECT_TRUE(expected == it->second)
        << "config " << file << ": " << line_diff(expected, it->second);
  }
  if (const auto expected_text = read_file(dir / "expected.yaml")) {
    auto expected = k8s::yaml::parse_all(*expected_text);
    ASSERT_TRUE(expected.has_value()) << "expected.yaml: " << expected.error().message;
    ASSERT_EQ(expected->size(), steps.size()) << "number of steps; actual:\n" << steps_text;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      EXPECT_EQ((*expected)[i], steps[i])
          << "step " << i << "\nexpected:\n"
          << k8s::yaml::emit((*expected)[i], {.indent = 2}) << "actual:\n"
          << k8s::yaml::emit(steps[i], {.indent = 2});
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, Golden, ::testing::ValuesIn(case_names()), [](const auto& info) {
  std::string n = info.param;
  for (auto& c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return n;
});

}  // namespace
}  // namespace aop::agent
