// Shared by the equivalence tests: a static configuration (the JSON tree the static backend
// renders into agent.yml) against the parsed Alloy graph translated from it. The expected
// side is always the static tree read through the mapping tables of the backend
// specification, which the tests spell out themselves; nothing is taken from the
// translation code.
#pragma once

#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "tests/alloy/checker/checker.hpp"

namespace aop::alloy::test {

// The parsed files of one configuration and its components by `<name>.<label>`. Building
// it asserts that the files pass the checker.
class Graph {
 public:
  Graph(const std::vector<check::SourceFile>& files, const std::string& ns,
        const std::string& name);
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // The component a reference (`discovery.relabel.x.output`) points to, or null.
  const check::Block* at(const std::string& reference) const;
  // The component `name` labelled `label`, or null.
  const check::Block* component(std::string_view name, const std::string& label) const;
  // Every top-level block named `name`, in file order.
  std::vector<const check::Block*> all(std::string_view name) const;
  const std::vector<check::ParsedFile>& files() const { return files_; }

 private:
  std::vector<check::ParsedFile> files_;
  std::map<std::string, const check::Block*> components_;
};

// The references of an expression (a reference, or a call, list or concatenation of them).
std::vector<std::string> references(const check::Value& v);

// Text of a static scalar.
std::string text(const boost::json::value& v);

// A static value against a parsed Alloy value: strings, booleans and numbers equal,
// lists element by element, objects entry by entry (Alloy sorts them; order is free).
void expect_same_value(const boost::json::value& want, const check::Value& got,
                       const std::string& where);

// A static key and the Alloy attribute (or nested block, for `handled` keys) it maps to.
struct Key {
  std::string_view from;
  std::string_view to;
};

// Every key of `want` is in `keys` (the static input holds nothing the table misses) and
// becomes the attribute `to` with the same value; `got` has no other attribute but
// `extra` ones the caller compares. Keys in `nested` are compared by the caller.
void expect_fields(const boost::json::object& want, const check::Block& got,
                   std::initializer_list<Key> keys, const std::string& where,
                   std::initializer_list<std::string_view> nested = {}, std::size_t extra = 0);

// The HTTP client blocks of the specification's tables: tls_config (ca → ca_pem, cert →
// cert_pem, key → key_pem), basic_auth, authorization, oauth2 (with its tls_config),
// sigv4. For each of `names`: one block with the static object's fields when `want` has
// the key, none otherwise.
void expect_client_blocks(const boost::json::object& want, const check::Block& got,
                          std::initializer_list<std::string_view> names, const std::string& where);

// One static relabel entry against one `rule` (or `write_relabel_config`) block: the same
// keys with the same values, the action lower-cased, nothing else.
void expect_same_rule(const boost::json::object& want, const check::Block& got,
                      const std::string& where);
// The static `relabel_configs` list (null: none) against the rule blocks, in order.
void expect_same_rules(const boost::json::value* want, const std::vector<const check::Block*>& got,
                       const std::string& where);

// One static `kubernetes_sd_configs` entry against its discovery.kubernetes component.
// `node_local`: a logs job, whose pod discovery without a pod selector must add
// `selectors { role = "pod"  field = "spec.nodeName=" + sys.env("NODE_NAME") }`.
void expect_same_discovery(const boost::json::object& want, const check::Block& got,
                           bool node_local, const std::string& where);

// A job's `targets` expression against its static `kubernetes_sd_configs` (one
// discovery.kubernetes per entry, in order) and `static_configs` (one object per target:
// the group's labels and `__address__`), in that order. Returns the number of targets
// sources compared.
std::size_t expect_same_targets(const boost::json::object& job, const check::Value& targets,
                                const Graph& g, bool node_local, const std::string& where);

// A Prometheus duration of the static tree and a Go duration of Alloy name the same time.
void expect_same_duration(const boost::json::value& prometheus, const check::Value& go,
                          const std::string& where);

// One static remote write entry against its `endpoint` block: url, name, timeout,
// headers, proxy, the auth and TLS blocks, queue and metadata settings, and the write
// relabel rules in order (`max_retries`, which Alloy has no argument for, aside).
// Returns the number of write relabel rules compared.
std::size_t expect_same_endpoint(const boost::json::object& want, const check::Block& got,
                                 const std::string& where);

}  // namespace aop::alloy::test
