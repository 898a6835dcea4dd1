// Translation of the static logs tree into Alloy components; see logs.hpp.
//
// PodLogs jobs and additional scrape config entries are members: a stage or rule that
// Alloy (and promtail before it) rejects skips that job only (class A); a stage type or
// key Alloy cannot express fails the whole render (class B). Clients belong to the
// instance or the root, so their violations are class B.
#include "reconcile/alloy/logs.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <boost/json.hpp>

#include "reconcile/alloy/duration.hpp"
#include "reconcile/alloy/translator.hpp"

namespace aop::alloy {

std::optional<std::uint64_t> parse_size(std::string_view text) {
  std::size_t i = 0;
  std::uint64_t n = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    const auto d = static_cast<std::uint64_t>(text[i] - '0');
    if (n > (std::numeric_limits<std::uint64_t>::max() - d) / 10) return std::nullopt;
    n = n * 10 + d;
    ++i;
  }
  if (i == 0) return std::nullopt;
  std::string_view rest = text.substr(i);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  while (!rest.empty() && rest.back() == ' ') rest.remove_suffix(1);
  std::string unit(rest);
  std::transform(unit.begin(), unit.end(), unit.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (unit.empty() || unit == "b" || unit == "byte") return n;
  struct Scale {
    char letter;
    std::string_view word;
  };
  static constexpr std::array<Scale, 6> kScales = {
      {{'k', "kilo"}, {'m', "mega"}, {'g', "giga"}, {'t', "tera"}, {'p', "peta"}, {'e', "exa"}}};
  for (std::size_t power = 0; power < kScales.size(); ++power) {
    const auto& sc = kScales[power];
    const std::string letter(1, sc.letter);
    const std::string word(sc.word);
    if (unit != letter && unit != letter + "b" && unit != letter + "ib" && unit != word &&
        unit != word + "byte" && unit != word + "bytes") {
      continue;
    }
    std::uint64_t out = n;
    for (std::size_t k = 0; k <= power; ++k) {
      if (out > std::numeric_limits<std::uint64_t>::max() / 1024) return std::nullopt;
      out *= 1024;
    }
    return out;
  }
  return std::nullopt;
}

namespace {

using boost::json::object;
using boost::json::value;
using namespace detail;

// Promtail's defaults that Alloy does not share.
constexpr std::string_view kMetricPrefix = "promtail_custom_";
constexpr std::array<double, 11> kDefaultBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                    0.5,   1,    2.5,   5,    10};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// A logs job validated and converted, before labels are assigned.
struct LogsJob {
  std::string name;
  TargetSources targets;
  std::vector<Block> rules;
  std::vector<Block> stages;
};

class LogsTranslator : Translator {
 public:
  explicit LogsTranslator(const LogsRoot& root)
      : Translator(root.ns, root.name, root.integer_numbers), root_(root) {}

  AlloyConfig run(const value& tree) {
    return translate_section(
        tree, "logs", [&](const object& logs, std::vector<File>& files, std::vector<File>& jobs) {
          positions_ = text_of(logs, "positions_directory").value_or("/var/lib/grafana-agent/data");
          for (const object* c : instances_of(logs)) instance(*c, files, jobs);
        });
  }

 private:
  // One LogsInstance: its client file, then its jobs.
  void instance(const object& c, std::vector<File>& files, std::vector<File>& jobs) {
    const auto [ins, iname] = instance_name(c);
    const std::string full = ins + "/" + iname;
    std::vector<Expr> receivers;
    std::vector<Block> writes = loki_writes(c, root_.agent_clients.count(full) != 0, receivers);
    if (writes.empty()) {
      add(ProblemClass::c, {"LogsInstance", ins, iname, "spec.clients"},
          "spec.clients: no Loki client (the instance's logs are read and discarded)");
    } else {
      const std::string li = labels_.label("li", ins + "_" + iname, "LogsInstance/" + full);
      files.push_back({li + ".alloy", std::move(writes)});
    }

    std::optional<std::string> sync_period;
    if (const value* tc = c.if_contains("target_config"); tc && tc->is_object()) {
      Sink s;
      const std::string path = "spec.targetConfig";
      unknown_keys(tc->get_object(), {{"sync_period"}}, {}, path, s);
      if (const value* sp = tc->get_object().if_contains("sync_period")) {
        const auto text = scalar_text(*sp);
        if (text && parse_go_duration(*text)) {
          sync_period = *text;
        } else {
          s.reject(path + ".syncPeriod", "not a Go duration");
        }
      }
      root_findings({"LogsInstance", ins, iname, path}, s);
    }

    std::set<std::string> job_names;
    std::size_t additional = 0;
    bool pod_logs = true;  // PodLogs jobs come first, additional entries after them
    const value* list = c.if_contains("scrape_configs");
    if (list == nullptr || !list->is_array()) return;
    for (const auto& jv : list->get_array()) {
      const std::string job_name =
          jv.is_object() ? text_of(jv.get_object(), "job_name").value_or("") : "";
      const Owner member = member_of(job_name, ins, iname, pod_logs, additional);
      const bool generated = member.kind == "PodLogs";
      Sink s;
      std::optional<LogsJob> job =
          translate_job(jv, member.field, generated ? "spec.pipelineStages" : "", generated, s);
      if (job && !job->name.empty() && !job_names.insert(job->name).second) {
        s.reject(member.field,
                 "job_name \"" + job->name + "\" is used by an earlier job of this instance");
      }
      member_findings(member, s);
      if (job && s.clean()) jobs.push_back(assemble(std::move(*job), full, receivers, sync_period));
    }
  }

  // A PodLogs job by its generated name, as long as only PodLogs jobs came before; the
  // rest are entries of the instance's additional scrape configs.
  static Owner member_of(const std::string& job, const std::string& ins, const std::string& iname,
                         bool& pod_logs, std::size_t& additional) {
    if (pod_logs && job.rfind("podLogs/", 0) == 0) {
      const std::string rest = job.substr(8);
      const auto slash = rest.find('/');
      if (slash != std::string::npos && slash > 0 && slash + 1 < rest.size() &&
          rest.find('/', slash + 1) == std::string::npos) {
        return {"PodLogs", rest.substr(0, slash), rest.substr(slash + 1), "spec"};
      }
    }
    pod_logs = false;
    return {"LogsInstance", ins, iname,
            "spec.additionalScrapeConfigs[" + std::to_string(additional++) + "]"};
  }

  // `stages_path`: where the job's pipeline stages are in the member ("" → the job's own
  // pipeline_stages key).
  std::optional<LogsJob> translate_job(const value& jv, const std::string& path,
                                       std::string stages_path, bool generated, Sink& s) {
    static const std::set<std::string, std::less<>> kKeys = {"job_name", "kubernetes_sd_configs",
                                                             "static_configs", "relabel_configs",
                                                             "pipeline_stages"};
    const object* o = as_object(jv, path, s);
    if (o == nullptr) return std::nullopt;
    for (const auto& kv : *o) {
      const std::string_view k = kv.key();
      const bool sd = k.size() > 11 && k.substr(k.size() - 11) == "_sd_configs";
      if (kKeys.count(k) == 0 && !sd) {
        s.unsupported.push_back(path + "." + std::string(k) + ": has no Alloy translation");
      }
    }
    if (stages_path.empty()) stages_path = path + ".pipeline_stages";
    LogsJob job;
    job.name = text_of(*o, "job_name").value_or("");
    if (job.name.empty()) s.reject(path + ".job_name", "is missing");
    read_targets(*o, job.targets, path, generated, true, s);

    const value* rl = o->if_contains("relabel_configs");
    job.rules = rule_blocks(rl, "rule", path + ".relabel_configs", s);
    if (rl != nullptr && rl->is_array()) {
      const auto& a = rl->get_array();
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i].is_object() && text_of(a[i].get_object(), "target_label") == "__host__") {
          s.warnings.push_back(path + ".relabel_configs[" + std::to_string(i) +
                               "].target_label: __host__ filtered targets by host in promtail; "
                               "Alloy has no such filter");
        }
      }
    }
    const value* stages = o->if_contains("pipeline_stages");
    job.stages = stage_blocks(stages, stages_path, s);

    object rest = *o;
    rest.erase("pipeline_stages");
    env_warnings(rest, path, s);
    if (stages != nullptr) env_warnings(*stages, stages_path, s);
    return job;
  }

  File assemble(LogsJob job, const std::string& instance, const std::vector<Expr>& receivers,
                const std::optional<std::string>& sync_period) {
    const std::string label = labels_.label("logs", job.name, instance + "/" + job.name);
    File f{label + ".alloy", {}};
    Block relabel("discovery.relabel", label);
    relabel.attr("targets", target_expr(job.targets));
    for (auto& r : job.rules) relabel.block(std::move(r));
    f.blocks.push_back(std::move(relabel));

    Block match("local.file_match", label);
    match.attr("path_targets", Expr::ref("discovery.relabel", label, "output"));
    if (sync_period) match.attr("sync_period", Expr::string(*sync_period));
    f.blocks.push_back(std::move(match));

    // The static agent's promtail positions of this instance: Alloy imports them when it
    // has no positions of its own, so a switched node resumes where the static agent was.
    Block source("loki.source.file", label);
    source.attr("targets", Expr::ref("local.file_match", label, "targets"));
    source.attr("forward_to", Expr::list({Expr::ref("loki.process", label, "receiver")}));
    source.attr("legacy_positions_file", Expr::string(positions_ + "/" + instance + ".yml"));
    f.blocks.push_back(std::move(source));

    Block process("loki.process", label);
    process.attr("forward_to", Expr::list(receivers));
    for (auto& st : job.stages) process.block(std::move(st));
    f.blocks.push_back(std::move(process));
    return f;
  }

  // ---- Pipeline stages ------------------------------------------------------------------

  std::vector<Block> stage_blocks(const value* list, const std::string& path, Sink& s) const {
    return list_blocks(list, path, s, [&](const value& v, const std::string& p, Sink& sink) {
      return stage_block(v, p, sink);
    });
  }

  // One element of a pipeline_stages list: a map with one stage.
  std::optional<Block> stage_block(const value& v, const std::string& path, Sink& s) const {
    const object* o = as_object(v, path, s);
    if (o == nullptr || o->empty()) return std::nullopt;  // promtail skips an empty element
    if (o->size() > 1) {
      s.reject(path, "holds more than one stage (promtail rejects such an element)");
      return std::nullopt;
    }
    const std::string key(o->begin()->key());
    const value& sv = o->begin()->value();
    const std::string p = path + "." + key;
    using Stage =
        std::optional<Block> (LogsTranslator::*)(const value&, const std::string&, Sink&) const;
    static const std::map<std::string, Stage, std::less<>> kStages = {
        {"cri", &LogsTranslator::cri},
        {"docker", &LogsTranslator::docker},
        {"regex", &LogsTranslator::regex},
        {"json", &LogsTranslator::json},
        {"logfmt", &LogsTranslator::logfmt},
        {"replace", &LogsTranslator::replace},
        {"template", &LogsTranslator::templ},
        {"pack", &LogsTranslator::pack},
        {"timestamp", &LogsTranslator::timestamp},
        {"output", &LogsTranslator::output},
        {"labeldrop", &LogsTranslator::label_drop},
        {"labelallow", &LogsTranslator::label_keep},
        {"labels", &LogsTranslator::labels},
        {"static_labels", &LogsTranslator::static_labels},
        {"structured_metadata", &LogsTranslator::structured_metadata},
        {"limit", &LogsTranslator::limit},
        {"multiline", &LogsTranslator::multiline},
        {"tenant", &LogsTranslator::tenant},
        {"drop", &LogsTranslator::drop},
        {"sampling", &LogsTranslator::sampling},
        {"decolorize", &LogsTranslator::decolorize},
        {"match", &LogsTranslator::match},
        {"metrics", &LogsTranslator::metrics},
    };
    const auto it = kStages.find(key);
    if (it == kStages.end()) {
      s.unsupported.push_back(p + ": pipeline stage " + key + " has no Alloy translation");
      return std::nullopt;
    }
    return (this->*(it->second))(sv, p, s);
  }

  // A required string attribute: present and non-empty.
  void require_text(const object& o, std::string_view key, const std::string& path, Sink& s) const {
    if (text_of(o, key).value_or("").empty()) s.reject(path, std::string(key) + " is required");
  }

  // A stage whose static keys all map one-to-one to attributes.
  std::optional<Block> simple(const value& v, const std::string& path, Sink& s, std::string name,
                              const std::vector<Field>& fields) const {
    const object* o = as_object(v, path, s);
    if (o == nullptr) return std::nullopt;
    return mapped(std::move(name), *o, fields, path, s);
  }

  // An object of label names to extracted keys; a null value names the key of the same
  // name, which Alloy writes as "".
  std::optional<Expr> label_map(const value& v, const std::string& path, bool check_names,
                                Sink& s) const {
    const object* o = as_object(v, path, s);
    if (o == nullptr) return std::nullopt;
    std::vector<std::pair<std::string, Expr>> entries;
    for (const auto& [k, e] : *o) {
      const std::string name(k);
      if (check_names && !label_name(name)) s.reject(path, "\"" + name + "\" is not a label name");
      if (e.is_null()) {
        entries.emplace_back(name, Expr::string(""));
      } else if (auto x = convert(e, T::text, dotted(path, name), s)) {
        entries.emplace_back(name, std::move(*x));
      }
    }
    return Expr::object(std::move(entries));
  }

  // A size text converted to its bytes.
  std::optional<std::uint64_t> size_of(const object& o, std::string_view key,
                                       const std::string& path, Sink& s) const {
    const value* v = o.if_contains(key);
    if (v == nullptr) return std::nullopt;
    const auto text = scalar_text(*v);
    const auto n = text ? parse_size(*text) : std::nullopt;
    if (!n || static_cast<double>(*n) >= kTwoPow53) {
      s.reject(path + "." + std::string(key), "not a size (digits and a unit such as KB or MiB)");
      return std::nullopt;
    }
    return n;
  }

  std::optional<Block> cri(const value& v, const std::string& path, Sink& s) const {
    const object* o = as_object(v, path, s);
    if (o == nullptr) return std::nullopt;
    Block b("stage.cri");
    unknown_keys(
        *o, {{"max_partial_lines"}, {"max_partial_line_size"}, {"max_partial_line_size_truncate"}},
        {}, path, s);
    if (const value* n = o->if_contains("max_partial_lines")) {
      const std::string np = path + ".max_partial_lines";
      if (auto x = convert(*n, T::integer, np, s)) {
        // 0 is promtail's "use the default"; Alloy wants the default spelled out or omitted.
        if (x->number_value() < 0) s.reject(np, "must be greater than 0");
        if (x->number_value() > 0) b.attr("max_partial_lines", std::move(*x));
      }
    }
    if (auto n = size_of(*o, "max_partial_line_size", path, s)) {
      b.attr("max_partial_line_size", Expr::number(static_cast<double>(*n)));
    }
    put(b, *o, {"max_partial_line_size_truncate", "max_partial_line_size_truncate", T::boolean},
        path, s);
    return b;
  }

  std::optional<Block> docker(const value& v, const std::string& path, Sink& s) const {
    return simple(v, path, s, "stage.docker", {});
  }

  std::optional<Block> decolorize(const value& v, const std::string& path, Sink& s) const {
    return simple(v, path, s, "stage.decolorize", {});
  }

  std::optional<Block> regex(const value& v, const std::string& path, Sink& s) const {
    auto b =
        simple(v, path, s, "stage.regex", {{"expression", "expression"}, {"source", "source"}});
    if (b) require_text(v.get_object(), "expression", path, s);
    return b;
  }

  std::optional<Block> json(const value& v, const std::string& path, Sink& s) const {
    auto b = simple(v, path, s, "stage.json",
                    {{"expressions", "expressions", T::string_map},
                     {"source", "source"},
                     {"drop_malformed", "drop_malformed", T::boolean}});
    if (!b) return b;
    const object& o = v.get_object();
    const value* e = o.if_contains("expressions");
    if (e == nullptr || !e->is_object() || e->get_object().empty()) {
      s.reject(path, "expressions is required");
    }
    if (o.contains("source") && text_of(o, "source").value_or("").empty()) {
      s.reject(path + ".source", "must not be empty");
    }
    return b;
  }

  std::optional<Block> logfmt(const value& v, const std::string& path, Sink& s) const {
    auto b = simple(v, path, s, "stage.logfmt",
                    {{"mapping", "mapping", T::string_map}, {"source", "source"}});
    if (!b) return b;
    const value* m = v.get_object().if_contains("mapping");
    if (m == nullptr || !m->is_object() || m->get_object().empty()) {
      s.reject(path, "mapping is required");
    }
    return b;
  }

  std::optional<Block> replace(const value& v, const std::string& path, Sink& s) const {
    auto b = simple(v, path, s, "stage.replace",
                    {{"expression", "expression"}, {"source", "source"}, {"replace", "replace"}});
    if (b) require_text(v.get_object(), "expression", path, s);
    return b;
  }

  std::optional<Block> templ(const value& v, const std::string& path, Sink& s) const {
    auto b = simple(v, path, s, "stage.template", {{"source", "source"}, {"template", "template"}});
    if (!b) return b;
    require_text(v.get_object(), "source", path, s);
    // Alloy requires the attribute; promtail read an absent template as empty.
    if (!v.get_object().contains("template")) b->attr("template", Expr::string(""));
    return b;
  }

  std::optional<Block> pack(const value& v, const std::string& path, Sink& s) const {
    const object* o = as_object(v, path, s);
    if (o == nullptr) return std::nullopt;
    unknown_keys(*o, {{"labels"}, {"ingest_timestamp"}}, {}, path, s);
    Block b("stage.pack");
    // Required by Alloy; an absent list is promtail's empty one.
    const value* l = o->if_contains("labels");
    auto labels = l ? convert(*l, T::strings, path + ".labels", s) : Expr::list({});
    b.attr("labels", labels ? std::move(*labels) : Expr::list({}));
    put(b, *o, {"ingest_timestamp", "ingest_timestamp", T::boolean}, path, s);
    return b;
  }

  std::optional<Block> timestamp(const value& v, const std::string& path, Sink& s) const {
    auto b = simple(v, path, s, "stage.timestamp",
                    {{"source", "source"},
                     {"format", "format"},
                     {"fallback_formats", "fallback_formats", T::strings},
                     {"location", "location"},
                     {"action_on_failure", "action_on_failure"}});
    if (!b) return b;
    const object& o = v.get_object();
    require_text(o, "source", path, s);
    require_text(o, "format", path, s);
    if (const auto a = text_of(o, "action_on_failure"); a && *a != "fudge" && *a != "skip") {
      s.reject(path + ".action_on_failure", "must be fudge or skip");
    }
    return b;
  }

  std::optional<Block> output(const value& v, const std::string& path, Sink& s) const {
    auto b = simple(v, path, s, "stage.output", {{"source", "source"}});
    if (b) require_text(v.get_object(), "source", path, s);
    return b;
  }

  std::optional<Block> label_list(const value& v, const std::string& path, Sink& s,
                                  std::string name) const {
    auto values = convert(v, T::strings, path, s);
    if (!values) return std::nullopt;
    return Block(std::move(name)).attr("values", std::move(*values));
  }

  std::optional<Block> label_drop(const value& v, const std::string& path, Sink& s) const {
    return label_list(v, path, s, "stage.label_drop");
  }

  std::optional<Block> label_keep(const value& v, const std::string& path, Sink& s) const {
    return label_list(v, path, s, "stage.label_keep");
  }

  std::optional<Block> labels(const value& v, const std::string& path, Sink& s) const {
    auto values = label_map(v, path, true, s);
    if (!values) return std::nullopt;
    return Block("stage.labels").attr("values", std::move(*values));
  }

  std::optional<Block> structured_metadata(const value& v, const std::string& path, Sink& s) const {
    auto values = label_map(v, path, false, s);
    if (!values) return std::nullopt;
    return Block("stage.structured_metadata").attr("values", std::move(*values));
  }

  std::optional<Block> static_labels(const value& v, const std::string& path, Sink& s) const {
    auto values = convert(v, T::string_map, path, s);
    if (!values) return std::nullopt;
    for (const auto& k : values->keys()) {
      if (!label_name(k)) s.reject(path, "\"" + k + "\" is not a label name");
    }
    return Block("stage.static_labels").attr("values", std::move(*values));
  }

  std::optional<Block> limit(const value& v, const std::string& path, Sink& s) const {
    const object* o = as_object(v, path, s);
    if (o == nullptr) return std::nullopt;
    unknown_keys(*o, {{"rate"}, {"burst"}, {"drop"}, {"by_label_name"}, {"max_distinct_labels"}},
                 {}, path, s);
    Block b("stage.limit");
    // rate and burst are required and positive in both engines; drop defaults to false.
    for (const auto& [key, type] : {std::pair{"rate", T::number}, std::pair{"burst", T::integer}}) {
      const value* n = o->if_contains(key);
      auto x = n ? convert(*n, type, path + "." + key, s) : std::nullopt;
      if (!x || x->number_value() <= 0) {
        if (n == nullptr || x) s.reject(path + "." + key, "must be greater than 0");
        continue;
      }
      b.attr(key, std::move(*x));
    }
    const value* d = o->if_contains("drop");
    auto drop = d ? convert(*d, T::boolean, path + ".drop", s) : Expr::boolean(false);
    const bool dropping = drop && drop->bool_value();
    b.attr("drop", drop ? std::move(*drop) : Expr::boolean(false));
    put(b, *o, {"by_label_name", "by_label_name"}, path, s);
    put(b, *o, {"max_distinct_labels", "max_distinct_labels", T::integer}, path, s);
    if (o->contains("by_label_name") && !dropping) {
      s.reject(path + ".by_label_name", "requires drop: true");
    }
    return b;
  }

  std::optional<Block> multiline(const value& v, const std::string& path, Sink& s) const {
    auto b = simple(v, path, s, "stage.multiline",
                    {{"firstline", "firstline"},
                     {"max_wait_time", "max_wait_time", T::go_duration},
                     {"max_lines", "max_lines", T::integer}});
    if (!b) return b;
    const object& o = v.get_object();
    require_text(o, "firstline", path, s);
    if (const auto t = text_of(o, "max_wait_time")) {
      if (const auto ns = parse_go_duration(*t); ns && *ns <= 0) {
        s.reject(path + ".max_wait_time", "must be greater than 0");
      }
    }
    return b;
  }

  std::optional<Block> tenant(const value& v, const std::string& path, Sink& s) const {
    const object* o = as_object(v, path, s);
    if (o == nullptr) return std::nullopt;
    unknown_keys(*o, {{"label"}, {"source"}, {"value"}}, {}, path, s);
    Block b("stage.tenant");
    int set = 0;
    for (const char* key : {"label", "source", "value"}) {
      const auto t = text_of(*o, key);
      if (!t || t->empty()) continue;
      ++set;
      b.attr(key, Expr::string(*t));
    }
    if (set != 1) s.reject(path, "needs exactly one of label, source and value");
    return b;
  }

  std::optional<Block> drop(const value& v, const std::string& path, Sink& s) const {
    const object* o = as_object(v, path, s);
    if (o == nullptr) return std::nullopt;
    unknown_keys(*o,
                 {{"source"},
                  {"separator"},
                  {"expression"},
                  {"value"},
                  {"older_than"},
                  {"longer_than"},
                  {"drop_counter_reason"}},
                 {}, path, s);
    Block b("stage.drop");
    if (const value* src = o->if_contains("source")) {
      // Promtail accepts one name or a list; Alloy takes the names joined with commas.
      if (src->is_array()) {
        if (auto names = convert(*src, T::strings, path + ".source", s)) {
          std::string joined;
          for (const auto& n : names->items()) joined += (joined.empty() ? "" : ",") + n.text();
          b.attr("source", Expr::string(joined));
        }
      } else {
        put(b, *o, {"source", "source"}, path, s);
      }
    }
    for (const Field& f :
         {Field{"separator", "separator"}, Field{"expression", "expression"},
          Field{"value", "value"}, Field{"older_than", "older_than", T::go_duration}}) {
      put(b, *o, f, path, s);
    }
    if (auto n = size_of(*o, "longer_than", path, s)) {
      b.attr("longer_than", Expr::string(std::to_string(*n) + "B"));
    }
    put(b, *o, {"drop_counter_reason", "drop_counter_reason"}, path, s);
    if (!o->contains("source") && !o->contains("expression") && !o->contains("older_than") &&
        !o->contains("longer_than")) {
      s.reject(path, "needs at least one of source, expression, older_than and longer_than");
    }
    if (o->contains("value") && o->contains("expression")) {
      s.reject(path, "value and expression cannot both be set");
    }
    if (o->contains("value") && !o->contains("source")) s.reject(path, "value requires source");
    return b;
  }

  std::optional<Block> sampling(const value& v, const std::string& path, Sink& s) const {
    auto b = simple(v, path, s, "stage.sampling",
                    {{"rate", "rate", T::number}, {"drop_counter_reason", "drop_counter_reason"}});
    if (b && !v.get_object().contains("rate")) s.reject(path, "rate is required");
    return b;
  }

  std::optional<Block> match(const value& v, const std::string& path, Sink& s) const {
    const object* o = as_object(v, path, s);
    if (o == nullptr) return std::nullopt;
    Block b = mapped("stage.match", *o,
                     {{"selector", "selector"},
                      {"pipeline_name", "pipeline_name"},
                      {"drop_counter_reason", "drop_counter_reason"}},
                     path, s, {"action", "stages"});
    require_text(*o, "selector", path, s);
    // An empty action is promtail's default, keep; Alloy accepts only the two names.
    const std::string action = text_of(*o, "action").value_or("");
    if (!action.empty()) {
      if (action != "keep" && action != "drop") s.reject(path + ".action", "must be keep or drop");
      // Alloy's order: selector, pipeline_name, action, drop_counter_reason.
      Block ordered("stage.match");
      for (const auto& [n, x] : b.attributes()) {
        if (n == "drop_counter_reason") ordered.attr("action", Expr::string(action));
        ordered.attr(n, x);
      }
      if (!o->contains("drop_counter_reason")) ordered.attr("action", Expr::string(action));
      b = std::move(ordered);
    }
    const auto nested = stage_blocks(o->if_contains("stages"), path + ".stages", s);
    if (action == "drop" && !nested.empty()) s.reject(path, "a drop match takes no stages");
    if (action != "drop" && nested.empty()) s.reject(path, "a keep match needs at least one stage");
    for (const auto& n : nested) b.block(n);
    return b;
  }

  std::optional<Block> metrics(const value& v, const std::string& path, Sink& s) const {
    const object* o = as_object(v, path, s);
    if (o == nullptr) return std::nullopt;
    std::vector<std::string> names;
    for (const auto& kv : *o) names.emplace_back(kv.key());
    std::sort(names.begin(), names.end());
    Block b("stage.metrics");
    for (const auto& name : names) {
      if (auto m = metric(name, o->at(name), dotted(path, name), s)) b.block(std::move(*m));
    }
    return b;
  }

  std::optional<Block> metric(const std::string& name, const value& v, const std::string& path,
                              Sink& s) const {
    const object* o = as_object(v, path, s);
    if (o == nullptr) return std::nullopt;
    unknown_keys(*o, {{"type"}, {"description"}, {"prefix"}, {"source"}, {"max_idle_duration"}},
                 {"config"}, path, s);
    const std::string type = lower(text_of(*o, "type").value_or(""));
    if (type != "counter" && type != "gauge" && type != "histogram") {
      s.reject(path + ".type", "must be counter, gauge or histogram");
      return std::nullopt;
    }
    object config;
    if (const value* c = o->if_contains("config")) {
      if (const object* co = as_object(*c, path + ".config", s)) config = *co;
    }
    const std::string cp = path + ".config";
    unknown_keys(config, {{"match_all"}, {"count_entry_bytes"}, {"value"}, {"action"}, {"buckets"}},
                 {}, cp, s);

    Block m("metric." + type);
    m.attr("name", Expr::string(name));
    put(m, *o, {"description", "description"}, path, s);
    put(m, *o, {"source", "source"}, path, s);
    // Promtail's prefix, where Alloy's own default is loki_process_custom_.
    const std::string prefix = text_of(*o, "prefix").value_or("");
    m.attr("prefix", Expr::string(prefix.empty() ? std::string(kMetricPrefix) : prefix));
    put(m, *o, {"max_idle_duration", "max_idle_duration", T::go_duration}, path, s);
    if (const auto t = text_of(*o, "max_idle_duration")) {
      if (const auto ns = parse_go_duration(*t); ns && *ns < 1000000000) {
        s.reject(path + ".max_idle_duration", "must be at least 1s");
      }
    }
    put(m, config, {"value", "value"}, cp, s);
    const std::string action = lower(text_of(config, "action").value_or(""));
    if (type == "counter") {
      if (action != "inc" && action != "add") s.reject(cp + ".action", "must be inc or add");
      m.attr("action", Expr::string(action));
      put(m, config, {"match_all", "match_all", T::boolean}, cp, s);
      put(m, config, {"count_entry_bytes", "count_entry_bytes", T::boolean}, cp, s);
      const auto flag = [&](const char* key) {
        const value* f = config.if_contains(key);
        return f != nullptr && f->is_bool() && f->get_bool();
      };
      if (flag("match_all") && config.contains("value")) {
        s.reject(cp, "match_all and value cannot both be set");
      }
      if (flag("count_entry_bytes") && (!flag("match_all") || action != "add")) {
        s.reject(cp + ".count_entry_bytes", "requires match_all: true and action: add");
      }
    } else if (type == "gauge") {
      if (action != "set" && action != "inc" && action != "dec" && action != "add" &&
          action != "sub") {
        s.reject(cp + ".action", "must be set, inc, dec, add or sub");
      }
      m.attr("action", Expr::string(action));
    } else {
      // The client library's default buckets, which promtail used when none are given.
      std::vector<Expr> buckets;
      const value* bv = config.if_contains("buckets");
      if (bv != nullptr &&
          (!bv->is_array() || !std::all_of(bv->get_array().begin(), bv->get_array().end(),
                                           [](const value& x) { return x.is_number(); }))) {
        s.reject(cp + ".buckets", "expected a list of numbers");
      } else if (bv != nullptr && !bv->get_array().empty()) {
        for (const auto& x : bv->get_array())
          buckets.push_back(Expr::number(x.to_number<double>()));
      } else {
        for (const double d : kDefaultBuckets) buckets.push_back(Expr::number(d));
      }
      m.attr("buckets", Expr::list(std::move(buckets)));
    }
    return m;
  }

  const LogsRoot& root_;
  std::string positions_;
};

}  // namespace

AlloyConfig translate_logs(const value& static_tree, const LogsRoot& root) {
  return LogsTranslator(root).run(static_tree);
}

}  // namespace aop::alloy
