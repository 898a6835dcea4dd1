// What the metrics, logs and integrations translations share (internal to reconcile/alloy):
// reading values of a static config tree, the HTTP client blocks, relabel rules, shared
// Kubernetes discovery, the `prometheus.remote_write` of a MetricsInstance and the
// `loki.write` components of a LogsInstance, and the problem records.
//
// A translation reads the static tree of one config Secret (null-trimmed JSON, numbers as
// doubles) and collects findings in a Sink while it converts one part (a job, a client,
// an exporter); the caller then classifies them by owner: what Alloy would refuse skips a
// member (class A) or fails the render (class B, root- and instance-level settings), a key
// Alloy cannot express fails the render, documented differences are warnings (class C).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "reconcile/alloy/labels.hpp"
#include "reconcile/alloy/metrics.hpp"
#include "reconcile/alloy/problems.hpp"
#include "reconcile/alloy/syntax.hpp"

namespace aop::alloy::detail {

inline constexpr std::string_view kSkipped = "skipped in the Alloy configuration";
inline constexpr std::string_view kNotApplied = "the Alloy configuration was not applied";
inline constexpr std::uint64_t kDefaultInterval = 60000;  // Prometheus: 1m
inline constexpr std::uint64_t kDefaultTimeout = 10000;   // Prometheus: 10s

// Findings while translating one part of the tree, classified by the caller.
struct Sink {
  std::vector<std::string> rejected;     // Alloy would refuse it: A for a member, B otherwise
  std::vector<std::string> unsupported;  // no Alloy translation: always B
  std::vector<std::string> warnings;     // C
  bool failed_elsewhere = false;         // reported against another object already

  void reject(const std::string& path, const std::string& what) {
    rejected.push_back(path + ": " + what);
  }
  bool clean() const { return rejected.empty() && unsupported.empty() && !failed_elsewhere; }
  void merge(const Sink& other);
};

// `<path>.<key>`.
std::string dotted(std::string_view path, std::string_view key);

// Who a problem belongs to.
struct Owner {
  std::string kind;
  std::string ns;
  std::string name;
  std::string field;
};

// Reading the static tree. Numbers that reach string fields read as the text the static
// config file held: Go's float64 formatting, or an integer for integral values when the
// static config was written that way.
class StaticReader {
 public:
  explicit StaticReader(bool integers) : integers_(integers) {}

  // Value types of static keys.
  enum class T {
    text,  // a scalar read as a string
    boolean,
    integer,
    number,
    prom_duration,  // a Prometheus duration, written as Go duration text
    go_duration,    // a Go duration, copied
    strings,        // a list of scalars read as strings
    string_map,     // an object of scalars read as strings
    list_map,       // an object of lists of strings
  };

  // A static key mapped to an Alloy attribute.
  struct Field {
    std::string_view from;
    std::string_view to;
    T type = T::text;
  };

  // Text of a scalar, as a YAML scalar decoded into a Go string field reads.
  std::optional<std::string> scalar_text(const boost::json::value& v) const;
  std::optional<Expr> convert(const boost::json::value& v, T t, const std::string& path,
                              Sink& s) const;
  static const boost::json::object* as_object(const boost::json::value& v, const std::string& path,
                                              Sink& s);
  std::optional<std::string> text_of(const boost::json::object& o, std::string_view key) const;
  void put(Block& b, const boost::json::object& src, const Field& f, const std::string& path,
           Sink& s) const;
  // Every key of `src` must be a field or one of `nested` (handled by the caller).
  static void unknown_keys(const boost::json::object& src, const std::vector<Field>& fields,
                           std::initializer_list<std::string_view> nested, const std::string& path,
                           Sink& s);
  Block mapped(std::string name, const boost::json::object& src, const std::vector<Field>& fields,
               const std::string& path, Sink& s,
               std::initializer_list<std::string_view> nested = {}) const;
  // A copy of `b` carrying `label`.
  static Block labelled(const Block& b, const std::string& label);

  // ---- HTTP client blocks -------------------------------------------------------------
  std::optional<Block> tls_block(const boost::json::value& v, const std::string& path,
                                 Sink& s) const;
  std::optional<Block> basic_auth_block(const boost::json::value& v, const std::string& path,
                                        Sink& s) const;
  std::optional<Block> authorization_block(const boost::json::value& v, const std::string& path,
                                           Sink& s) const;
  std::optional<Block> oauth2_block(const boost::json::value& v, const std::string& path,
                                    Sink& s) const;
  std::optional<Block> sigv4_block(const boost::json::value& v, const std::string& path,
                                   Sink& s) const;
  // At most one authentication method per HTTP client.
  static void auth_exclusive(const boost::json::object& o, const std::string& path, Sink& s);
  // The nested client blocks of `o` present in `names`, in that order.
  void client_blocks(const boost::json::object& o, std::initializer_list<std::string_view> names,
                     const std::string& path, Block& b, Sink& s) const;

  // ---- Relabel rules ------------------------------------------------------------------
  static bool label_name(std::string_view s);
  // Prometheus's pattern for a `replace` target with `$` references and for `labelmap`
  // replacements.
  static bool relabel_target(std::string_view s);
  // One static relabel entry as a `rule` (or `write_relabel_config`) block, with the
  // validation Prometheus and Alloy apply.
  std::optional<Block> rule_block(const boost::json::value& v, const std::string& name,
                                  const std::string& path, Sink& s) const;
  std::vector<Block> rule_blocks(const boost::json::value* list, const std::string& name,
                                 const std::string& path, Sink& s) const;
  // The blocks `convert(element, "<path>[i]", s)` makes of a static list (absent: none).
  template <class Convert>
  static std::vector<Block> list_blocks(const boost::json::value* list, const std::string& path,
                                        Sink& s, Convert&& convert) {
    std::vector<Block> out;
    if (list == nullptr) return out;
    if (!list->is_array()) {
      s.reject(path, "expected a list");
      return out;
    }
    const auto& a = list->get_array();
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (auto b = convert(a[i], path + "[" + std::to_string(i) + "]", s)) {
        out.push_back(std::move(*b));
      }
    }
    return out;
  }
  // In a constant relabel replacement, `$` is written `$$` (Go's regexp expansion turns
  // `$$` back into `$`), so that the value reaches the label literally.
  static std::string literal_replacement(std::string_view v);
  // `rule { target_label = "<label>"  replacement = <value> }`.
  static Block constant_rule(const std::string& label, Expr value);

  // Scrape interval and timeout of a job (`scrape_interval`, `scrape_timeout` of `o`) in
  // milliseconds, defaulted as the static agent did (Alloy has no global section): the
  // timeout is the global one capped at the interval; an explicit timeout above the
  // interval is rejected.
  struct Timing {
    std::uint64_t interval = 0;
    std::uint64_t timeout = 0;
  };
  Timing scrape_timing(const boost::json::object& o, const std::string& path,
                       std::uint64_t global_interval, std::uint64_t global_timeout, Sink& s) const;

  // ---- Environment references ---------------------------------------------------------
  // Static mode expanded `$VAR`, `${VAR}` and `$(VAR)` in its configuration; Alloy keeps
  // the text. `$1`, `${1}` (regex references) are not environment references.
  static bool env_reference(std::string_view s);
  // A class-C warning for every string under `v` holding one, naming its path only.
  static void env_warnings(const boost::json::value& v, const std::string& path, Sink& s);

 private:
  bool integers_;
};

// One `kubernetes_sd_configs` entry converted, before its label is assigned.
struct SdEntry {
  std::string key;       // canonical JSON of the static entry: the identity of the component
  std::string readable;  // role + `_<namespace>` for each listed namespace
  Block block;           // unlabelled
};

// Where a job's targets come from.
struct TargetSources {
  std::vector<SdEntry> sds;
  std::optional<Expr> inline_targets;
};

// The state of one configuration's translation: its labels, its shared discovery
// components and its problems.
class Translator : protected StaticReader {
 protected:
  Translator(std::string ns, std::string name, bool integers)
      : StaticReader(integers), ns_(std::move(ns)), name_(std::move(name)) {}

  // The skeleton of the metrics and logs translations over the static tree's `key` section
  // (class B when it is not a mapping): main.alloy, then what `instances(section, files,
  // jobs)` adds (each instance's own files to `files`, its jobs to `jobs`), discovery.alloy,
  // then the jobs.
  template <class Instances>
  AlloyConfig translate_section(const boost::json::value& tree, const std::string& key,
                                Instances&& instances) {
    AlloyConfig out;
    const boost::json::object* top = tree.if_object();
    const boost::json::value* sv = top != nullptr ? top->if_contains(key) : nullptr;
    const boost::json::object* section = sv != nullptr ? sv->if_object() : nullptr;
    if (section == nullptr) {
      root_problem("spec." + key, "the static " + key + " configuration is not a mapping");
      out.problems = std::move(problems_);
      return out;
    }
    const boost::json::value* server = top->if_contains("server");
    out.files.push_back({"main.alloy", {logging(server ? server->if_object() : nullptr)}});
    std::vector<File> jobs;
    instances(*section, out.files, jobs);
    if (auto d = discovery_file()) out.files.push_back(std::move(*d));
    for (auto& j : jobs) out.files.push_back(std::move(j));
    out.problems = std::move(problems_);
    if (translation_failed(out.problems)) out.files.clear();
    return out;
  }
  // The instance entries (objects) of a section's `configs`, in order.
  static std::vector<const boost::json::object*> instances_of(const boost::json::object& section);

  void add(ProblemClass cls, const Owner& o, const std::string& message);
  void root_problem(const std::string& field, const std::string& what);
  // Root- or instance-level findings: everything Alloy would refuse is class B.
  void root_findings(const Owner& o, const Sink& s);
  // A member's findings: unsupported keys fail the render, rejections skip the member.
  void member_findings(const Owner& o, const Sink& s);

  // `logging` from the static `server` block.
  Block logging(const boost::json::object* server);
  // The Prometheus durations of `metrics.global` (class B when unparsable).
  std::uint64_t global_duration(const boost::json::object& global, std::string_view key,
                                std::uint64_t fallback);

  // `kubernetes_sd_configs` and `static_configs` of a job. `generated`: the job comes from
  // a custom resource and its discovery settings are the GrafanaAgent's spec.apiServer,
  // whose violations belong to the root. `node_local`: pod discovery watches this node's
  // pods only.
  void read_targets(const boost::json::object& o, TargetSources& out, const std::string& path,
                    bool generated, bool node_local, Sink& s);
  // The `targets` expression of a job whose sources were read; labels its discovery
  // components and registers them for discovery.alloy.
  Expr target_expr(TargetSources& sources);
  // discovery.alloy: every shared discovery.kubernetes, sorted by label.
  std::optional<File> discovery_file();

  // `prometheus.remote_write` of MetricsInstance config `c` (the static metrics instance
  // entry). `global` is `metrics.global`; `replica_label` names the external label whose
  // value becomes `"replica-" + sys.env("REPLICA_GROUP")` (empty: none).
  Block remote_write(const boost::json::object& c, const boost::json::object& global,
                     const std::string& label, const Owner& owner,
                     const std::string& replica_label);

  // forward_to of the prometheus.scrape labelled `label` that sends to MetricsInstance
  // label `mi`: its remote write, or with metric relabel rules (`split`) the two
  // prometheus.relabel components of relabel_split().
  static Expr scrape_forward_to(const std::string& label, const std::string& mi, bool split);
  // The components applying a job's metric relabel `rules`: `<label>` (report series
  // dropped, then the rules) and `<label>_report` (report series only), both sending to
  // the remote write of `mi`.
  static std::vector<Block> relabel_split(const std::string& label, const std::string& mi,
                                          std::vector<Block> rules);

  // `loki.write` per client of LogsInstance config `c` (the static logs instance entry),
  // in client order; `receivers` gets their receiver references. `agent_clients`: the
  // clients are the GrafanaAgent's spec.logs.clients (problems belong to the root).
  std::vector<Block> loki_writes(const boost::json::object& c, bool agent_clients,
                                 std::vector<Expr>& receivers);
  // The instance name `<ns>/<name>` of a static instance entry, split.
  std::pair<std::string, std::string> instance_name(const boost::json::object& c) const;

  const std::string ns_;    // the GrafanaAgent's namespace
  const std::string name_;  // the GrafanaAgent's name
  LabelSet labels_;
  std::vector<TranslationProblem> problems_;

 private:
  std::optional<SdEntry> discovery(const boost::json::value& v, const std::string& path,
                                   bool node_local, Sink& s);
  std::optional<Block> endpoint(const boost::json::value& v, const std::string& path, Sink& s);
  Block wal(const boost::json::object& c, const Owner& owner);
  std::optional<Block> loki_endpoint(const boost::json::object& client, const std::string& path,
                                     Sink& s);

  std::map<std::string, Block> discovery_;  // by label: discovery.alloy is sorted by label
};

}  // namespace aop::alloy::detail
