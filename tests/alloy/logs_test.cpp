// The logs translation: static logs trees (rendered by the static backend from custom
// resources, or written by hand as JSON) to Alloy files. Every output goes through the
// Alloy checker; the worked example of the backend specification must come out byte for
// byte as golden/worked_example/logs (typed in from the specification, not generated).
#include <algorithm>
#include <cctype>
#include <map>

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "reconcile/agent/config.hpp"
#include "reconcile/alloy/labels.hpp"
#include "reconcile/alloy/logs.hpp"
#include "tests/alloy/support.hpp"

namespace aop::alloy {
namespace {

namespace fs = std::filesystem;
using boost::json::value;
using test::file;
using test::problems_text;

LogsRoot logs_root(const test::Root& r, bool integers = false) {
  return {r.ns(), r.name(), integers, test::agent_clients(r.hierarchy)};
}

value logs_tree(const test::Root& r, const agent::Options& options = {}) {
  auto tree = test::static_tree(r, agent::ConfigFile::logs, options);
  EXPECT_TRUE(tree.has_value());
  return tree ? *tree : value();
}

// Translates, writes and checks.
std::vector<check::SourceFile> translate_checked(const value& tree, const LogsRoot& root,
                                                 AlloyConfig* out = nullptr) {
  AlloyConfig c = translate_logs(tree, root);
  auto files = test::written(c.files, root.ns, root.name);
  const auto v = check::check_config(files, root.ns, root.name);
  EXPECT_TRUE(v.empty()) << check::to_string(v);
  if (out != nullptr) *out = std::move(c);
  return files;
}

TEST(LogsTranslation, WorkedExampleIsReproducedByteForByte) {
  const auto roots = test::roots(test::read(test::worked_example() / "input.yaml"));
  ASSERT_EQ(roots.size(), 1U);
  AlloyConfig c;
  const auto files = translate_checked(logs_tree(roots[0]), logs_root(roots[0]), &c);
  EXPECT_TRUE(c.problems.empty()) << problems_text(c.problems);
  const fs::path dir = test::worked_example() / "logs";
  const std::vector<std::string> keys = {"main.alloy", "li_monitoring_logs_af352d97.alloy",
                                         "discovery.alloy",
                                         "logs_podLogs_monitoring_web_b96d73cb.alloy"};
  ASSERT_EQ(files.size(), keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(files[i].key, keys[i]);
    EXPECT_EQ(files[i].text, test::read(dir / keys[i])) << keys[i];
  }
  std::size_t secrets = 0;
  const auto v =
      test::check_packed(c.files, "monitoring", "agent", "agent-alloy-logs-config", &secrets);
  EXPECT_TRUE(v.empty()) << check::to_string(v);
  EXPECT_EQ(secrets, 1U);
}

// The static golden inputs of the static backend that hold logs, each root's static logs
// tree with the options of its directory.
struct GoldenLogs {
  std::string name;
  test::Root root;
  value tree;
  bool integers = false;
};

std::vector<GoldenLogs> golden_logs(unsigned shuffle_seed = 0) {
  std::vector<GoldenLogs> out;
  const fs::path dir = fs::path(AOP_SOURCE_DIR) / "tests/agent/golden";
  for (const auto& e : fs::directory_iterator(dir)) {
    const auto input = e.path() / "input.yaml";
    if (!fs::exists(input)) continue;
    const bool fixed =
        fs::exists(e.path() / "options.yaml") &&
        test::read(e.path() / "options.yaml").find("compat: fixed") != std::string::npos;
    agent::Options options;
    options.compat = fixed ? agent::Compat::fixed : agent::Compat::upstream;
    for (auto& r : test::roots(test::read(input), options, shuffle_seed)) {
      if (r.hierarchy.logs.empty()) continue;
      auto tree = test::static_tree(r, agent::ConfigFile::logs, options);
      if (!tree) continue;  // a render error of the static backend (missing Secret key, ...)
      out.push_back({e.path().filename().string() + " " + r.ns() + "/" + r.name(), std::move(r),
                     std::move(*tree), fixed});
    }
  }
  std::sort(out.begin(), out.end(),
            [](const GoldenLogs& a, const GoldenLogs& b) { return a.name < b.name; });
  return out;
}

TEST(LogsTranslation, EveryStaticGoldenInputPassesTheChecker) {
  std::size_t translated = 0;
  std::size_t jobs = 0;
  for (const auto& g : golden_logs()) {
    SCOPED_TRACE(g.name);
    const AlloyConfig c = translate_logs(g.tree, logs_root(g.root, g.integers));
    const auto files = test::written(c.files, g.root.ns(), g.root.name());
    const auto v = check::check_config(files, g.root.ns(), g.root.name());
    EXPECT_TRUE(v.empty()) << check::to_string(v) << problems_text(c.problems);
    if (translation_failed(c.problems)) continue;
    ++translated;
    for (const auto& f : files) jobs += f.key.rfind("logs_", 0) == 0 ? 1 : 0;
  }
  // logs-clients monitoring/agent fails as a whole (a journal job, class B).
  EXPECT_GE(translated, 8U);
  EXPECT_GE(jobs, 6U);
}

// deploy/examples, the documented starting point, translates and loads.
TEST(LogsTranslation, DeployExamples) {
  std::string yaml;
  for (const auto& e : fs::directory_iterator(fs::path(AOP_SOURCE_DIR) / "deploy/examples")) {
    if (e.path().extension() == ".yaml") yaml += test::read(e.path()) + "\n---\n";
  }
  std::size_t jobs = 0;
  for (const auto& r : test::roots(yaml)) {
    if (r.hierarchy.logs.empty()) continue;
    AlloyConfig c;
    const auto files = translate_checked(logs_tree(r), logs_root(r), &c);
    EXPECT_FALSE(translation_failed(c.problems)) << problems_text(c.problems);
    for (const auto& f : files) jobs += f.key.rfind("logs_", 0) == 0 ? 1 : 0;
  }
  EXPECT_GE(jobs, 1U);
}

// Rendering twice, and from custom resources listed in another order, gives the same bytes.
TEST(LogsTranslation, DeterministicUnderShuffledInputs) {
  const auto reference = golden_logs();
  ASSERT_FALSE(reference.empty());
  for (const unsigned seed : {1U, 7U, 42U}) {
    const auto shuffled = golden_logs(seed);
    ASSERT_EQ(shuffled.size(), reference.size());
    for (std::size_t i = 0; i < reference.size(); ++i) {
      SCOPED_TRACE(reference[i].name);
      const auto& a = reference[i];
      const auto& b = shuffled[i];
      const auto fa = test::written(translate_logs(a.tree, logs_root(a.root, a.integers)).files,
                                    a.root.ns(), a.root.name());
      const auto fb = test::written(translate_logs(b.tree, logs_root(b.root, b.integers)).files,
                                    b.root.ns(), b.root.name());
      ASSERT_EQ(fa.size(), fb.size());
      for (std::size_t k = 0; k < fa.size(); ++k) {
        EXPECT_EQ(fa[k].key, fb[k].key);
        EXPECT_EQ(fa[k].text, fb[k].text);
      }
    }
  }
}

// ---- Hand-written static trees -------------------------------------------------------------

value tree_of(std::string_view json) {
  return boost::json::parse(json);
}

LogsRoot root_a() {
  return {"ns", "a", false, {}};
}

// A logs tree with instance ns/li, its clients and one additional job.
value one_job(std::string_view job, std::string_view clients = R"j([{"url": "http://loki"}])j") {
  return tree_of(R"j({"logs": {"positions_directory": "/var/lib/grafana-agent/data", "configs": [
      {"name": "ns/li", "clients": )j" +
                 std::string(clients) + R"j(, "scrape_configs": [)j" + std::string(job) + "]}]}}");
}

// A job tailing /var/log/*.log with the given pipeline stages.
std::string job_with_stages(std::string_view stages) {
  return R"j({"job_name": "j", "static_configs": [{"targets": ["localhost"],
      "labels": {"__path__": "/var/log/*.log"}}], "pipeline_stages": )j" +
         std::string(stages) + "}";
}

const std::string kJob = ident("logs", "j", "ns/li/j");
const std::string kLoki = ident("loki", "ns_li_0", "LogsInstance/ns/li/0");

// The stage blocks of the job's loki.process (the text after its forward_to line).
std::string stage_text(const std::vector<check::SourceFile>& files) {
  const auto* f = file(files, kJob + ".alloy");
  if (f == nullptr) return "<no job file>";
  const auto process = f->text.find("loki.process \"");
  const auto forward = f->text.find("  forward_to = ", process);
  const auto first = f->text.find('\n', forward) + 1;
  return f->text.substr(first, f->text.size() - 2 - first);
}

TEST(LogsTranslation, StageMappingTable) {
  const struct {
    const char* stage;
    const char* alloy;
  } cases[] = {
      {R"j({"cri": {}})j", "  stage.cri {}\n"},
      {R"j({"cri": {"max_partial_lines": 0.0, "max_partial_line_size": "64kb",
                    "max_partial_line_size_truncate": true}})j",
       "  stage.cri {\n    max_partial_line_size = 65536\n"
       "    max_partial_line_size_truncate = true\n  }\n"},
      {R"j({"cri": {"max_partial_lines": 50.0, "max_partial_line_size": 1000.0}})j",
       "  stage.cri {\n    max_partial_lines = 50\n    max_partial_line_size = 1000\n  }\n"},
      {R"j({"docker": {}})j", "  stage.docker {}\n"},
      {R"j({"regex": {"source": "msg", "expression": "^(?P<level>\\w+)"}})j",
       "  stage.regex {\n    expression = \"^(?P<level>\\\\w+)\"\n    source = \"msg\"\n  }\n"},
      {R"j({"json": {"source": "body", "expressions": {"level": "lvl", "msg": ""},
                     "drop_malformed": true}})j",
       "  stage.json {\n    expressions = {\n      level = \"lvl\",\n      msg = \"\",\n    }\n"
       "    source = \"body\"\n    drop_malformed = true\n  }\n"},
      {R"j({"logfmt": {"mapping": {"b": "c", "a": ""}, "source": "x"}})j",
       "  stage.logfmt {\n    mapping = {\n      a = \"\",\n      b = \"c\",\n    }\n"
       "    source = \"x\"\n  }\n"},
      {R"j({"replace": {"replace": "****", "source": "msg", "expression": "password=(\\S+)"}})j",
       "  stage.replace {\n    expression = \"password=(\\\\S+)\"\n    source = \"msg\"\n"
       "    replace = \"****\"\n  }\n"},
      {R"j({"template": {"template": "{{ .Value | ToUpper }}", "source": "new"}})j",
       "  stage.template {\n    source = \"new\"\n    template = \"{{ .Value | ToUpper }}\"\n  "
       "}\n"},
      {R"j({"template": {"source": "new"}})j",
       "  stage.template {\n    source = \"new\"\n    template = \"\"\n  }\n"},
      {R"j({"pack": {"labels": ["pod", "container"], "ingest_timestamp": false}})j",
       "  stage.pack {\n    labels = [\"pod\", \"container\"]\n    ingest_timestamp = false\n  "
       "}\n"},
      {R"j({"pack": {}})j", "  stage.pack {\n    labels = []\n  }\n"},
      {R"j({"timestamp": {"action_on_failure": "skip", "location": "Europe/Paris",
                          "fallback_formats": ["UnixMs"], "format": "RFC3339", "source": "ts"}})j",
       "  stage.timestamp {\n    source = \"ts\"\n    format = \"RFC3339\"\n"
       "    fallback_formats = [\"UnixMs\"]\n    location = \"Europe/Paris\"\n"
       "    action_on_failure = \"skip\"\n  }\n"},
      {R"j({"output": {"source": "msg"}})j", "  stage.output {\n    source = \"msg\"\n  }\n"},
      {R"j({"labeldrop": ["a", "b"]})j",
       "  stage.label_drop {\n    values = [\"a\", \"b\"]\n  }\n"},
      {R"j({"labelallow": ["c"]})j", "  stage.label_keep {\n    values = [\"c\"]\n  }\n"},
      {R"j({"labels": {"level": null, "app": "a"}})j",
       "  stage.labels {\n    values = {\n      app = \"a\",\n      level = \"\",\n    }\n  }\n"},
      {R"j({"static_labels": {"env": "prod"}})j",
       "  stage.static_labels {\n    values = {\n      env = \"prod\",\n    }\n  }\n"},
      {R"j({"structured_metadata": {"trace_id": null, "user": "uid"}})j",
       "  stage.structured_metadata {\n    values = {\n      trace_id = \"\",\n"
       "      user = \"uid\",\n    }\n  }\n"},
      {R"j({"limit": {"max_distinct_labels": 100.0, "by_label_name": "app", "drop": true,
                      "burst": 20.0, "rate": 10.0}})j",
       "  stage.limit {\n    rate = 10\n    burst = 20\n    drop = true\n"
       "    by_label_name = \"app\"\n    max_distinct_labels = 100\n  }\n"},
      {R"j({"limit": {"rate": 0.5, "burst": 5.0}})j",
       "  stage.limit {\n    rate = 0.5\n    burst = 5\n    drop = false\n  }\n"},
      {R"j({"multiline": {"max_lines": 128.0, "max_wait_time": "3s", "firstline": "^\\d{4}"}})j",
       "  stage.multiline {\n    firstline = \"^\\\\d{4}\"\n    max_wait_time = \"3s\"\n"
       "    max_lines = 128\n  }\n"},
      {R"j({"tenant": {"source": "t"}})j", "  stage.tenant {\n    source = \"t\"\n  }\n"},
      {R"j({"tenant": {"label": "", "value": "v"}})j",
       "  stage.tenant {\n    value = \"v\"\n  }\n"},
      {R"j({"drop": {"drop_counter_reason": "r", "longer_than": "8KB", "older_than": "24h",
                     "expression": "x", "separator": ";", "source": ["a", "b"]}})j",
       "  stage.drop {\n    source = \"a,b\"\n    separator = \";\"\n    expression = \"x\"\n"
       "    older_than = \"24h\"\n    longer_than = \"8192B\"\n    drop_counter_reason = \"r\"\n"
       "  }\n"},
      {R"j({"drop": {"value": "debug", "source": "level"}})j",
       "  stage.drop {\n    source = \"level\"\n    value = \"debug\"\n  }\n"},
      {R"j({"sampling": {"drop_counter_reason": "s", "rate": 0.25}})j",
       "  stage.sampling {\n    rate = 0.25\n    drop_counter_reason = \"s\"\n  }\n"},
      {R"j({"decolorize": {}})j", "  stage.decolorize {}\n"},
      {R"j({"match": {"drop_counter_reason": "not_web", "action": "keep", "pipeline_name": "web",
                      "selector": "{app=\"web\"}", "stages": [
                        {"json": {"expressions": {"level": "lvl"}}},
                        {},
                        {"match": {"selector": "{level=\"debug\"}", "action": "drop"}}]}})j",
       "  stage.match {\n    selector = \"{app=\\\"web\\\"}\"\n    pipeline_name = \"web\"\n"
       "    action = \"keep\"\n    drop_counter_reason = \"not_web\"\n"
       "    stage.json {\n      expressions = {\n        level = \"lvl\",\n      }\n    }\n"
       "    stage.match {\n      selector = \"{level=\\\"debug\\\"}\"\n"
       "      action = \"drop\"\n    }\n  }\n"},
      {R"j({"match": {"selector": "{a=\"b\"}", "stages": [{"docker": {}}]}})j",
       "  stage.match {\n    selector = \"{a=\\\"b\\\"}\"\n    stage.docker {}\n  }\n"},
      {R"j({"metrics": {
          "b_hist": {"type": "Histogram", "source": "rt", "config": {"action": ""}},
          "a_count": {"type": "COUNTER", "description": "d", "prefix": "", "source": "line",
                      "max_idle_duration": "24h",
                      "config": {"match_all": true, "count_entry_bytes": true, "action": "Add"}},
          "c_gauge": {"type": "gauge", "prefix": "my_",
                      "config": {"value": "q", "action": "Set"}},
          "d_hist": {"type": "histogram", "config": {"buckets": [0.001, 1000000.0]}}}})j",
       "  stage.metrics {\n"
       "    metric.counter {\n      name = \"a_count\"\n      description = \"d\"\n"
       "      source = \"line\"\n      prefix = \"promtail_custom_\"\n"
       "      max_idle_duration = \"24h\"\n      action = \"add\"\n      match_all = true\n"
       "      count_entry_bytes = true\n    }\n"
       "    metric.histogram {\n      name = \"b_hist\"\n      source = \"rt\"\n"
       "      prefix = \"promtail_custom_\"\n"
       "      buckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]\n    }\n"
       "    metric.gauge {\n      name = \"c_gauge\"\n      prefix = \"my_\"\n"
       "      value = \"q\"\n      action = \"set\"\n    }\n"
       "    metric.histogram {\n      name = \"d_hist\"\n      prefix = \"promtail_custom_\"\n"
       "      buckets = [0.001, 1000000]\n    }\n  }\n"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.stage);
    AlloyConfig out;
    const auto files = translate_checked(one_job(job_with_stages("[" + std::string(c.stage) + "]")),
                                         root_a(), &out);
    EXPECT_TRUE(out.problems.empty()) << problems_text(out.problems);
    EXPECT_EQ(stage_text(files), c.alloy);
  }
}

// Elements without a stage are skipped, as promtail skipped them; order is kept.
TEST(LogsTranslation, EmptyElementsAreNoStage) {
  const auto files = translate_checked(
      one_job(job_with_stages(R"j([{}, {"docker": {}}, {}, {"cri": {}}])j")), root_a());
  EXPECT_EQ(stage_text(files), "  stage.docker {}\n  stage.cri {}\n");
}

// Stages that promtail and Alloy reject skip their job (class A) and name the field.
TEST(LogsTranslation, StageViolationsSkipTheJob) {
  const struct {
    const char* stage;
    const char* message;  // after `spec.additionalScrapeConfigs[0].pipeline_stages[0]`
  } cases[] = {
      {R"j("cri")j", ": expected a mapping"},
      {R"j({"docker": {}, "cri": {}})j",
       ": holds more than one stage (promtail rejects such an element)"},
      {R"j({"cri": {"max_partial_lines": -1.0}})j",
       ".cri.max_partial_lines: must be greater than 0"},
      {R"j({"cri": {"max_partial_line_size": 1000000.0}})j",
       ".cri.max_partial_line_size: not a size (digits and a unit such as KB or MiB)"},
      {R"j({"regex": {"expression": ""}})j", ".regex: expression is required"},
      {R"j({"json": {}})j", ".json: expressions is required"},
      {R"j({"json": {"expressions": {"a": ""}, "source": ""}})j",
       ".json.source: must not be empty"},
      {R"j({"logfmt": {"source": "x"}})j", ".logfmt: mapping is required"},
      {R"j({"replace": {}})j", ".replace: expression is required"},
      {R"j({"template": {"template": "x"}})j", ".template: source is required"},
      {R"j({"timestamp": {"source": "ts"}})j", ".timestamp: format is required"},
      {R"j({"timestamp": {"source": "ts", "format": "Unix", "action_on_failure": "retry"}})j",
       ".timestamp.action_on_failure: must be fudge or skip"},
      {R"j({"output": {}})j", ".output: source is required"},
      {R"j({"labels": {"bad-name": "x"}})j", ".labels: \"bad-name\" is not a label name"},
      {R"j({"static_labels": {"1x": "y"}})j", ".static_labels: \"1x\" is not a label name"},
      {R"j({"labeldrop": "a"})j", ".labeldrop: expected a list of strings"},
      {R"j({"limit": {"burst": 1.0}})j", ".limit.rate: must be greater than 0"},
      {R"j({"limit": {"rate": 1.0, "burst": 0.0}})j", ".limit.burst: must be greater than 0"},
      {R"j({"limit": {"rate": 1.0, "burst": 1.5}})j", ".limit.burst: expected an integer"},
      {R"j({"limit": {"rate": 1.0, "burst": 1.0, "by_label_name": "app"}})j",
       ".limit.by_label_name: requires drop: true"},
      {R"j({"multiline": {"max_wait_time": "3s"}})j", ".multiline: firstline is required"},
      {R"j({"multiline": {"firstline": "x", "max_wait_time": "0s"}})j",
       ".multiline.max_wait_time: must be greater than 0"},
      {R"j({"multiline": {"firstline": "x", "max_wait_time": "3 s"}})j",
       ".multiline.max_wait_time: not a Go duration"},
      {R"j({"tenant": {}})j", ".tenant: needs exactly one of label, source and value"},
      {R"j({"tenant": {"label": "a", "value": "b"}})j",
       ".tenant: needs exactly one of label, source and value"},
      {R"j({"drop": {}})j",
       ".drop: needs at least one of source, expression, older_than and longer_than"},
      {R"j({"drop": {"source": "a", "value": "v", "expression": "e"}})j",
       ".drop: value and expression cannot both be set"},
      {R"j({"drop": {"value": "v", "older_than": "1h"}})j", ".drop: value requires source"},
      {R"j({"drop": {"longer_than": "8 parsecs"}})j",
       ".drop.longer_than: not a size (digits and a unit such as KB or MiB)"},
      {R"j({"drop": {"older_than": "1d"}})j", ".drop.older_than: not a Go duration"},
      {R"j({"sampling": {}})j", ".sampling: rate is required"},
      {R"j({"match": {"selector": "{a=\"b\"}"}})j",
       ".match: a keep match needs at least one stage"},
      {R"j({"match": {"selector": "{a=\"b\"}", "stages": [{}]}})j",
       ".match: a keep match needs at least one stage"},
      {R"j({"match": {"selector": "{a=\"b\"}", "action": "drop", "stages": [{"docker": {}}]}})j",
       ".match: a drop match takes no stages"},
      {R"j({"match": {"stages": [{"docker": {}}]}})j", ".match: selector is required"},
      {R"j({"match": {"selector": "x", "action": "maybe", "stages": [{"docker": {}}]}})j",
       ".match.action: must be keep or drop"},
      {R"j({"match": {"selector": "x", "stages": [{"docker": {}}, {"json": {}}]}})j",
       ".match.stages[1].json: expressions is required"},
      {R"j({"metrics": {"m": {"type": "summary"}}})j",
       ".metrics.m.type: must be counter, gauge or histogram"},
      {R"j({"metrics": {"m": {"type": "counter"}}})j",
       ".metrics.m.config.action: must be inc or add"},
      {R"j({"metrics": {"m": {"type": "counter", "config": {"action": "inc", "match_all": true,
                                                             "value": "v"}}}})j",
       ".metrics.m.config: match_all and value cannot both be set"},
      {R"j({"metrics": {"m": {"type": "counter", "config": {"action": "inc", "match_all": true,
                                                             "count_entry_bytes": true}}}})j",
       ".metrics.m.config.count_entry_bytes: requires match_all: true and action: add"},
      {R"j({"metrics": {"m": {"type": "gauge", "config": {"action": "inc_by"}}}})j",
       ".metrics.m.config.action: must be set, inc, dec, add or sub"},
      {R"j({"metrics": {"m": {"type": "histogram", "max_idle_duration": "500ms"}}})j",
       ".metrics.m.max_idle_duration: must be at least 1s"},
      {R"j({"metrics": {"m": {"type": "histogram", "config": {"buckets": ["1"]}}}})j",
       ".metrics.m.config.buckets: expected a list of numbers"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.stage);
    // The bad job comes first; the good one after it keeps its pipeline and its label.
    const std::string tree = R"j({"job_name": "bad", "pipeline_stages": [)j" +
                             std::string(c.stage) + "]}, " +
                             job_with_stages(R"j([{"docker": {}}])j");
    AlloyConfig out;
    const auto files = translate_checked(one_job(tree), root_a(), &out);
    ASSERT_FALSE(out.problems.empty());
    const auto& p = out.problems[0];
    EXPECT_EQ(p.cls, ProblemClass::a);
    EXPECT_EQ(p.kind, "LogsInstance");
    EXPECT_EQ(p.ns + "/" + p.name, "ns/li");
    EXPECT_EQ(p.field, "spec.additionalScrapeConfigs[0]");
    EXPECT_EQ(p.message, "spec.additionalScrapeConfigs[0].pipeline_stages[0]" +
                             std::string(c.message) + " (skipped in the Alloy configuration)");
    for (const auto& q : out.problems) EXPECT_EQ(q.cls, ProblemClass::a) << q.message;
    ASSERT_EQ(files.size(), 3U);  // main, the client file, the good job
    EXPECT_EQ(files[2].key, kJob + ".alloy");
  }
}

// What Alloy cannot express fails the whole render (class B): nothing is applied.
TEST(LogsTranslation, UntranslatableConfigurationIsClassB) {
  const struct {
    value tree;
    const char* kind;
    const char* message;
  } cases[] = {
      {one_job(job_with_stages(R"j([{"geoip": {"db": "/g.mmdb", "source": "ip"}}])j")),
       "LogsInstance",
       "spec.additionalScrapeConfigs[0].pipeline_stages[0].geoip: pipeline stage geoip has no "
       "Alloy translation"},
      {one_job(job_with_stages(R"j([{"eventlogmessage": {}}])j")), "LogsInstance",
       "spec.additionalScrapeConfigs[0].pipeline_stages[0].eventlogmessage: pipeline stage "
       "eventlogmessage has no Alloy translation"},
      {one_job(job_with_stages(R"j([{"windowsevent": {}}])j")), "LogsInstance",
       "spec.additionalScrapeConfigs[0].pipeline_stages[0].windowsevent: pipeline stage "
       "windowsevent has no Alloy translation"},
      {one_job(job_with_stages(R"j([{"match": {"selector": "x", "stages": [{"nope": {}}]}}])j")),
       "LogsInstance",
       "spec.additionalScrapeConfigs[0].pipeline_stages[0].match.stages[0].nope: pipeline stage "
       "nope has no Alloy translation"},
      {one_job(job_with_stages(R"j([{"regex": {"expression": "x", "extra": 1.0}}])j")),
       "LogsInstance",
       "spec.additionalScrapeConfigs[0].pipeline_stages[0].regex.extra: has no Alloy "
       "translation"},
      {one_job(R"j({"job_name": "journal", "journal": {"max_age": "12h"}})j"), "LogsInstance",
       "spec.additionalScrapeConfigs[0].journal: has no Alloy translation"},
      {one_job(R"j({"job_name": "syslog", "syslog": {"listen_address": ":1514"}})j"),
       "LogsInstance", "spec.additionalScrapeConfigs[0].syslog: has no Alloy translation"},
      {one_job(R"j({"job_name": "files", "file_sd_configs": [{"files": ["/t.json"]}]})j"),
       "LogsInstance", "spec.additionalScrapeConfigs[0].file_sd_configs: no Alloy translation"},
      {one_job(job_with_stages("[]"),
               R"j([{"url": "http://l", "basic_auth": {"username": "u", "password": "p"},
                     "bearer_token": "t"}])j"),
       "LogsInstance", "spec.clients[0]: more than one authentication method is set"},
      {one_job(job_with_stages("[]"), R"j([{"url": "http://l", "batchwait": "1 s"}])j"),
       "LogsInstance", "spec.clients[0].batchwait: not a Go duration"},
      {one_job(job_with_stages("[]"), R"j([{"url": "http://l", "backoff_config":
           {"max_retries": 2.5}}])j"),
       "LogsInstance", "spec.clients[0].backoff_config.max_retries: expected an integer"},
      {one_job(job_with_stages("[]"), R"j([{"tenant_id": "t"}])j"), "LogsInstance",
       "spec.clients[0]: url is missing"},
      {one_job(job_with_stages("[]"), R"j([{"url": "u", "oauth2": {"client_id": "i",
           "client_secret_file": "/s", "token_url": ""}}])j"),
       "LogsInstance", "spec.clients[0].oauth2: token_url is missing"},
      {tree_of(R"j({"logs": {"configs": [{"name": "ns/li", "clients": [{"url": "u"}],
          "target_config": {"sync_period": "10"}}]}})j"),
       "LogsInstance", "spec.targetConfig.syncPeriod: not a Go duration"},
      {tree_of(R"j({"server": {"log_format": "yaml"}, "logs": {}})j"), "GrafanaAgent",
       "spec.logFormat: is not one of the values Alloy accepts"},
      {tree_of(R"j({"logs": {"configs": [{"name": "ns/li", "clients": [{"url": "u"}],
          "scrape_configs": [{"job_name": "podLogs/ns/p", "kubernetes_sd_configs": [
            {"role": "pod", "bearer_token": "x", "authorization": {"credentials": "y"}}]}]}]}})j"),
       "GrafanaAgent", "spec.apiServer: more than one authentication method is set"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(boost::json::serialize(c.tree));
    const AlloyConfig out = translate_logs(c.tree, root_a());
    EXPECT_TRUE(out.files.empty());
    EXPECT_TRUE(translation_failed(out.problems));
    const std::string want = std::string(c.message) + " (the Alloy configuration was not applied)";
    const bool found =
        std::any_of(out.problems.begin(), out.problems.end(), [&](const TranslationProblem& p) {
          return p.cls == ProblemClass::b && p.kind == c.kind && p.message == want;
        });
    EXPECT_TRUE(found) << problems_text(out.problems);
  }
}

// Clients inherited from the GrafanaAgent: their problems belong to the GrafanaAgent.
TEST(LogsTranslation, InheritedClientProblemsBelongToTheRoot) {
  LogsRoot root = root_a();
  root.agent_clients = {"ns/li"};
  const AlloyConfig out =
      translate_logs(one_job(job_with_stages("[]"), R"j([{"url": "u", "bearer_token": "t",
          "bearer_token_file": "/f"}])j"),
                     root);
  ASSERT_EQ(out.problems.size(), 1U) << problems_text(out.problems);
  EXPECT_EQ(out.problems[0].kind, "GrafanaAgent");
  EXPECT_EQ(out.problems[0].ns + "/" + out.problems[0].name, "ns/a");
  EXPECT_EQ(out.problems[0].field, "spec.logs.clients");
  EXPECT_EQ(out.problems[0].message,
            "spec.logs.clients[0]: more than one authentication method is set (the Alloy "
            "configuration was not applied)");
}

TEST(LogsTranslation, ClientMapping) {
  const auto files = translate_checked(one_job(job_with_stages("[]"), R"j([
        {"url": "https://a/push", "tenant_id": "t1", "batchwait": "2s", "batchsize": 1048576.0,
         "timeout": "20s", "backoff_config": {"min_period": "1s", "max_period": "1m",
                                              "max_retries": 5.0},
         "proxy_url": "http://proxy", "basic_auth": {"username": "u", "password": "p"},
         "tls_config": {"ca_file": "/ca", "insecure_skip_verify": true},
         "external_labels": {"cluster": "ns/a", "team": "x"}},
        {"url": "https://b/push", "bearer_token_file": "/var/lib/grafana-agent/secrets/t"},
        {"url": "https://c/push", "oauth2": {"client_id": "id", "client_secret_file": "/s",
                                             "token_url": "https://t", "scopes": ["a"]}}])j"),
                                       root_a());
  const std::string li = ident("li", "ns_li", "LogsInstance/ns/li");
  const std::string l1 = ident("loki", "ns_li_1", "LogsInstance/ns/li/1");
  const std::string l2 = ident("loki", "ns_li_2", "LogsInstance/ns/li/2");
  ASSERT_EQ(files.at(1).key, li + ".alloy");
  EXPECT_EQ(files[1].text,
            file_header("ns", "a") + "\nloki.write \"" + kLoki +
                "\" {\n"
                "  external_labels = {\n    cluster = \"ns/a\",\n    team = \"x\",\n  }\n"
                "  endpoint {\n"
                "    url = \"https://a/push\"\n    tenant_id = \"t1\"\n    batch_wait = \"2s\"\n"
                "    batch_size = \"1048576B\"\n    remote_timeout = \"20s\"\n"
                "    min_backoff_period = \"1s\"\n    max_backoff_period = \"1m\"\n"
                "    max_backoff_retries = 5\n    proxy_url = \"http://proxy\"\n"
                "    basic_auth {\n      username = \"u\"\n      password = \"p\"\n    }\n"
                "    tls_config {\n      ca_file = \"/ca\"\n      insecure_skip_verify = true\n"
                "    }\n  }\n}\n"
                "\nloki.write \"" +
                l1 +
                "\" {\n  endpoint {\n    url = \"https://b/push\"\n"
                "    bearer_token_file = \"/var/lib/grafana-agent/secrets/t\"\n  }\n}\n"
                "\nloki.write \"" +
                l2 +
                "\" {\n  endpoint {\n    url = \"https://c/push\"\n    oauth2 {\n"
                "      client_id = \"id\"\n      client_secret_file = \"/s\"\n"
                "      scopes = [\"a\"]\n      token_url = \"https://t\"\n    }\n  }\n}\n");
  // Every client receives the job's lines.
  EXPECT_NE(file(files, kJob + ".alloy")
                ->text.find("forward_to = [loki.write." + kLoki + ".receiver, loki.write." + l1 +
                            ".receiver, loki.write." + l2 + ".receiver]"),
            std::string::npos);
}

TEST(LogsTranslation, InstanceWithoutClientReadsAndDiscards) {
  AlloyConfig c;
  const auto files = translate_checked(one_job(job_with_stages("[]"), "[]"), root_a(), &c);
  EXPECT_EQ(problems_text(c.problems),
            "C LogsInstance ns/li spec.clients: no Loki client (the instance's logs are read and "
            "discarded)\n");
  ASSERT_EQ(files.size(), 2U);  // main and the job: no client file
  EXPECT_NE(files[1].text.find("loki.process \"" + kJob + "\" {\n  forward_to = []\n}\n"),
            std::string::npos)
      << files[1].text;
}

// The job pipeline: static targets carrying promtail's __path__, rules without a prelude,
// the sync period and the static agent's positions file.
TEST(LogsTranslation, StaticTargetsSyncPeriodAndLegacyPositions) {
  const auto files = translate_checked(tree_of(R"j({"logs": {
      "positions_directory": "/var/lib/grafana-agent/data", "configs": [{"name": "ns/li",
      "clients": [{"url": "u"}], "target_config": {"sync_period": "30s"},
      "scrape_configs": [{"job_name": "j", "static_configs": [
        {"targets": ["localhost"], "labels": {"__path__": "/var/log/*.log", "job": "varlogs"}}],
        "relabel_configs": [{"source_labels": ["__path__"], "regex": "(.*)", "action": "Replace",
                             "target_label": "path"}]}]}]}})j"),
                                       root_a());
  EXPECT_EQ(
      file(files, kJob + ".alloy")->text,
      file_header("ns", "a") + "\ndiscovery.relabel \"" + kJob +
          "\" {\n"
          "  targets = [\n    {\n      __address__ = \"localhost\",\n"
          "      __path__ = \"/var/log/*.log\",\n      job = \"varlogs\",\n    },\n  ]\n"
          "  rule {\n    source_labels = [\"__path__\"]\n    regex = \"(.*)\"\n"
          "    target_label = \"path\"\n    action = \"replace\"\n  }\n}\n"
          "\nlocal.file_match \"" +
          kJob + "\" {\n  path_targets = discovery.relabel." + kJob +
          ".output\n  sync_period = \"30s\"\n}\n"
          "\nloki.source.file \"" +
          kJob + "\" {\n  targets = local.file_match." + kJob +
          ".targets\n  forward_to = [loki.process." + kJob +
          ".receiver]\n  legacy_positions_file = \"/var/lib/grafana-agent/data/ns/li.yml\"\n}\n"
          "\nloki.process \"" +
          kJob + "\" {\n  forward_to = [loki.write." + kLoki + ".receiver]\n}\n");
}

// Pod discovery is node-local unless a pod selector is already there; other roles are not
// touched. The selector changes the component's identity.
TEST(LogsTranslation, NodeLocalPodDiscovery) {
  AlloyConfig c;
  const auto files = translate_checked(tree_of(R"j({"logs": {"configs": [{"name": "ns/li",
      "clients": [{"url": "u"}], "scrape_configs": [
        {"job_name": "pods", "kubernetes_sd_configs": [{"role": "pod",
          "namespaces": {"names": ["a", "b"]}}]},
        {"job_name": "same", "kubernetes_sd_configs": [{"role": "pod",
          "namespaces": {"names": ["a", "b"]}}]},
        {"job_name": "selected", "kubernetes_sd_configs": [{"role": "pod",
          "selectors": [{"role": "pod", "label": "app=x"}]}]},
        {"job_name": "other", "kubernetes_sd_configs": [{"role": "node",
          "selectors": [{"role": "node", "field": "metadata.name=n"}],
          "attach_metadata": {"node": true}}]}]}]}})j"),
                                       root_a(), &c);
  EXPECT_TRUE(c.problems.empty()) << problems_text(c.problems);
  const std::string pods = ident(
      "sd", "pod_a_b", "{\"namespaces\":{\"names\":[\"a\",\"b\"]},\"role\":\"pod\"}\nnode-local");
  const std::string selected = ident(
      "sd", "pod", "{\"role\":\"pod\",\"selectors\":[{\"label\":\"app=x\",\"role\":\"pod\"}]}");
  const std::string node =
      ident("sd", "node",
            "{\"attach_metadata\":{\"node\":true},\"role\":\"node\",\"selectors\":[{\"field\":"
            "\"metadata.name=n\",\"role\":\"node\"}]}");
  std::map<std::string, std::string> want = {
      {pods, "discovery.kubernetes \"" + pods +
                 "\" {\n  role = \"pod\"\n  namespaces {\n    names = [\"a\", \"b\"]\n  }\n"
                 "  selectors {\n    role = \"pod\"\n"
                 "    field = \"spec.nodeName=\" + sys.env(\"NODE_NAME\")\n  }\n}\n"},
      {selected, "discovery.kubernetes \"" + selected +
                     "\" {\n  role = \"pod\"\n  selectors {\n    role = \"pod\"\n"
                     "    label = \"app=x\"\n  }\n}\n"},
      {node, "discovery.kubernetes \"" + node +
                 "\" {\n  role = \"node\"\n  selectors {\n    role = \"node\"\n"
                 "    field = \"metadata.name=n\"\n  }\n  attach_metadata {\n    node = true\n"
                 "  }\n}\n"}};
  std::string expected = file_header("ns", "a");
  for (const auto& [label, text] : want) expected += "\n" + text;  // sorted by label
  EXPECT_EQ(file(files, "discovery.alloy")->text, expected);
  // Both pod jobs share one component.
  for (const char* job : {"pods", "same"}) {
    const auto* f = file(files, ident("logs", job, std::string("ns/li/") + job) + ".alloy");
    ASSERT_NE(f, nullptr);
    EXPECT_NE(f->text.find("targets = discovery.kubernetes." + pods + ".targets\n"),
              std::string::npos);
  }
}

TEST(LogsTranslation, WarningsNameTheFieldNeverTheValue) {
  AlloyConfig c;
  translate_checked(one_job(R"j({"job_name": "j", "static_configs": [{"targets": ["x"]}],
          "relabel_configs": [{"source_labels": ["__meta_node"], "target_label": "__host__"},
                              {"target_label": "t", "replacement": "${SECRET_TOKEN}"}],
          "pipeline_stages": [{"template": {"source": "s", "template": "$(HIDDEN_VALUE)"}}]})j",
                            R"j([{"url": "https://${LOKI_HOST}/push",
                    "basic_auth": {"username": "u", "password": "$PASSWORD_VALUE"}}])j"),
                    root_a(), &c);
  EXPECT_EQ(problems_text(c.problems),
            "C LogsInstance ns/li spec.clients[0].url: contains an environment reference that "
            "static mode expanded (Alloy keeps the text literally)\n"
            "C LogsInstance ns/li spec.clients[0].basic_auth.password: contains an environment "
            "reference that static mode expanded (Alloy keeps the text literally)\n"
            "C LogsInstance ns/li spec.additionalScrapeConfigs[0].relabel_configs[0].target_label: "
            "__host__ filtered targets by host in promtail; Alloy has no such filter\n"
            "C LogsInstance ns/li spec.additionalScrapeConfigs[0].relabel_configs[1].replacement: "
            "contains an environment reference that static mode expanded (Alloy keeps the text "
            "literally)\n"
            "C LogsInstance ns/li spec.additionalScrapeConfigs[0].pipeline_stages[0].template."
            "template: contains an environment reference that static mode expanded (Alloy keeps "
            "the text literally)\n");
  for (const auto& p : c.problems) {
    for (const char* secret : {"LOKI_HOST", "PASSWORD_VALUE", "SECRET_TOKEN", "HIDDEN_VALUE"}) {
      EXPECT_EQ(p.message.find(secret), std::string::npos) << p.message;
      EXPECT_EQ(p.field.find(secret), std::string::npos) << p.field;
    }
  }
}

TEST(LogsTranslation, SecretsNeverReachProblemRecords) {
  const AlloyConfig out =
      translate_logs(one_job(job_with_stages("[]"), R"j([{"url": "u", "bearer_token": "tok-s3cr3t",
          "basic_auth": {"username": "user-s3cr3t", "password": "pw-s3cr3t"}}])j"),
                     root_a());
  ASSERT_FALSE(out.problems.empty());
  for (const auto& p : out.problems) {
    EXPECT_EQ(p.message.find("s3cr3t"), std::string::npos) << p.message;
    EXPECT_EQ(p.field.find("s3cr3t"), std::string::npos) << p.field;
  }
}

TEST(LogsTranslation, JobNamesAndMembers) {
  AlloyConfig c;
  const auto files = translate_checked(tree_of(R"j({"logs": {"configs": [{"name": "ns/li",
      "clients": [{"url": "u"}], "scrape_configs": [
        {"job_name": "podLogs/ns/ok", "pipeline_stages": [{"docker": {}}]},
        {"job_name": "podLogs/ns/bad", "pipeline_stages": [{"cri": {}}, {"limit": {"rate": 1.0}}]},
        {"job_name": "extra"},
        {"job_name": "podLogs/ns/late", "pipeline_stages": [{"json": {}}]},
        {"job_name": "extra"},
        {"static_configs": []}]}]}})j"),
                                       root_a(), &c);
  EXPECT_EQ(problems_text(c.problems),
            "A PodLogs ns/bad spec.pipelineStages[1].limit.burst: must be greater than 0 "
            "(skipped in the Alloy configuration)\n"
            "A LogsInstance ns/li spec.additionalScrapeConfigs[1].pipeline_stages[0].json: "
            "expressions is required (skipped in the Alloy configuration)\n"
            "A LogsInstance ns/li spec.additionalScrapeConfigs[2]: job_name \"extra\" is used by "
            "an earlier job of this instance (skipped in the Alloy configuration)\n"
            "A LogsInstance ns/li spec.additionalScrapeConfigs[3].job_name: is missing (skipped "
            "in the Alloy configuration)\n");
  std::vector<std::string> keys;
  for (const auto& f : files) keys.push_back(f.key);
  EXPECT_EQ(keys, (std::vector<std::string>{
                      "main.alloy", ident("li", "ns_li", "LogsInstance/ns/li") + ".alloy",
                      ident("logs", "podLogs/ns/ok", "ns/li/podLogs/ns/ok") + ".alloy",
                      ident("logs", "extra", "ns/li/extra") + ".alloy"}));
}

TEST(LogsTranslation, HostileStringsSurviveTheWriterAndChecker) {
  const std::string hostile = "\"}\nevil \"x\" {\n\\d+\\.\\d+ \x01 \x7F \xFF ${1} $1 ü";
  boost::json::object stage{
      {"match",
       {{"selector", hostile},
        {"pipeline_name", hostile},
        {"stages", boost::json::array{{{"regex", {{"expression", hostile}, {"source", hostile}}}},
                                      {{"static_labels", {{"l", hostile}}}},
                                      {{"json", {{"expressions", {{hostile, hostile}}}}}}}}}}};
  boost::json::object rule{{"source_labels", boost::json::array{hostile}},
                           {"regex", hostile},
                           {"target_label", "t"},
                           {"replacement", hostile}};
  boost::json::object job{
      {"job_name", hostile},
      {"static_configs", boost::json::array{{{"targets", boost::json::array{hostile}},
                                             {"labels", {{hostile, hostile}}}}}},
      {"relabel_configs", boost::json::array{rule}},
      {"pipeline_stages", boost::json::array{stage}}};
  const value tree = {
      {"logs",
       {{"configs", boost::json::array{{{"name", "ns/li"},
                                        {"clients", boost::json::array{{{"url", hostile},
                                                                        {"tenant_id", hostile}}}},
                                        {"scrape_configs", boost::json::array{job}}}}}}}};
  AlloyConfig c;
  const auto files = translate_checked(tree, root_a(), &c);
  ASSERT_EQ(files.size(), 3U) << problems_text(c.problems);
  std::vector<check::Violation> v;
  const auto parsed = check::parse_file(files[2], v);
  ASSERT_TRUE(v.empty()) << check::to_string(v);
  const auto& relabel = parsed.blocks.at(0);
  const auto& target = relabel.attribute("targets")->value.items.at(0);
  EXPECT_EQ(target.keys, (std::vector<std::string>{hostile, "__address__"}));
  EXPECT_EQ(target.items[0].text, hostile);
  EXPECT_EQ(target.items[1].text, hostile);
  const auto* rule_block = relabel.children("rule").at(0);
  EXPECT_EQ(rule_block->attribute("source_labels")->value.items.at(0).text, hostile);
  EXPECT_EQ(rule_block->attribute("regex")->value.text, hostile);
  EXPECT_EQ(rule_block->attribute("replacement")->value.text, hostile);
  const auto& match = *parsed.blocks.at(3).children("stage.match").at(0);
  EXPECT_EQ(match.attribute("selector")->value.text, hostile);
  EXPECT_EQ(match.attribute("pipeline_name")->value.text, hostile);
  EXPECT_EQ(match.children("stage.regex").at(0)->attribute("expression")->value.text, hostile);
  EXPECT_EQ(
      match.children("stage.static_labels").at(0)->attribute("values")->value.items.at(0).text,
      hostile);
  EXPECT_EQ(match.children("stage.json").at(0)->attribute("expressions")->value.keys.at(0),
            hostile);
  const auto client = check::parse_file(files[1], v);
  ASSERT_TRUE(v.empty());
  const auto& endpoint = *client.blocks.at(0).children("endpoint").at(0);
  EXPECT_EQ(endpoint.attribute("url")->value.text, hostile);
  EXPECT_EQ(endpoint.attribute("tenant_id")->value.text, hostile);
}

TEST(LogsTranslation, SizeTexts) {
  const struct {
    const char* text;
    std::optional<std::uint64_t> bytes;
  } cases[] = {
      {"0", 0},
      {"512", 512},
      {"512b", 512},
      {"512 Bytes", std::nullopt},
      {"512byte", 512},
      {"8KB", 8192},
      {"8kb", 8192},
      {"8Kb", 8192},
      {"8k", 8192},
      {"8KiB", 8192},
      {"8 kilobytes", 8192},
      {"8kilobyte", 8192},
      {"2MB", 2097152},
      {"2mega", 2097152},
      {"1g", 1073741824},
      {"1GiB", 1073741824},
      {"1tb", 1099511627776ULL},
      {"1pb", 1125899906842624ULL},
      {"1eb", 1152921504606846976ULL},
      {"16eb", std::nullopt},
      {"99999999999999999999", std::nullopt},
      {"", std::nullopt},
      {"kb", std::nullopt},
      {" 8kb", std::nullopt},
      {"8.5kb", std::nullopt},
      {"-1", std::nullopt},
      {"8 bits", std::nullopt},
      {"1e+06", std::nullopt},
  };
  for (const auto& c : cases) EXPECT_EQ(parse_size(c.text), c.bytes) << c.text;
}
}  // namespace
}  // namespace aop::alloy
