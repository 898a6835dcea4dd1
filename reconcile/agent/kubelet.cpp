// Kubelet Service/Endpoints (spec 3.13). Port numbers and names are the kubelet's
// well-known ones: 10250 (authenticated HTTPS metrics), 10255 (read-only HTTP, often
// disabled) and 4194 (standalone cAdvisor on old kubelets); upstream lists all three.
#include "reconcile/agent/kubelet.hpp"

#include <algorithm>

#include <boost/json/array.hpp>

#include "k8s/decode.hpp"
#include "k8s/endpoint_ip.hpp"

namespace aop::agent {
namespace {

using boost::json::array;
using boost::json::object;
using boost::json::value;

struct KubeletPort {
  std::string_view name;
  std::int64_t port;
};
constexpr KubeletPort kPorts[] = {
    {"https-metrics", 10250},
    {"http-metrics", 10255},
    {"cadvisor", 4194},
};

array ports_json() {
  array a;
  for (const auto& p : kPorts) a.emplace_back(object{{"name", p.name}, {"port", p.port}});
  return a;
}

object labels_json() {
  return object{{"app.kubernetes.io/managed-by", "grafana-agent-operator"},
                {"k8s-app", "kubelet"},
                {"app.kubernetes.io/name", "kubelet"}};
}

object metadata_json(const k8s::ObjectKey& target) {
  return object{{"name", target.name}, {"namespace", target.ns}, {"labels", labels_json()}};
}

const value* member(const object& o, std::string_view key) {
  return o.if_contains(key);
}

const object* object_member(const object& o, std::string_view key) {
  const value* v = member(o, key);
  return (v != nullptr && v->is_object()) ? &v->get_object() : nullptr;
}

const array* array_member(const object& o, std::string_view key) {
  const value* v = member(o, key);
  return (v != nullptr && v->is_array()) ? &v->get_array() : nullptr;
}

std::string_view string_member(const object* o, std::string_view key) {
  if (o == nullptr) return {};
  const value* v = member(*o, key);
  return (v != nullptr && v->is_string()) ? std::string_view(v->get_string()) : std::string_view();
}

std::int64_t int_member(const object& o, std::string_view key) {
  const value* v = member(o, key);
  if (v == nullptr) return 0;
  if (v->is_int64()) return v->get_int64();
  if (v->is_uint64()) return static_cast<std::int64_t>(v->get_uint64());
  if (v->is_double()) return static_cast<std::int64_t>(v->get_double());
  return 0;
}

// The list `key` of `o` has the same length as `want` and element i matches want[i] on
// every field compared by `same`.
template <class Same>
bool same_list(const object& o, std::string_view key, const array& want, Same&& same) {
  const array* have = array_member(o, key);
  const std::size_t n = have == nullptr ? 0 : have->size();
  if (n != want.size()) return false;
  for (std::size_t i = 0; i < n; ++i) {
    if (!(*have)[i].is_object() || !same((*have)[i].get_object(), want[i].get_object())) {
      return false;
    }
  }
  return true;
}

bool same_port(const object& have, const object& want) {
  return string_member(&have, "name") == string_member(&want, "name") &&
         int_member(have, "port") == int_member(want, "port");
}

bool same_address(const object& have, const object& want) {
  if (string_member(&have, "ip") != string_member(&want, "ip")) return false;
  const object* ht = object_member(have, "targetRef");
  const object* wt = object_member(want, "targetRef");
  for (const char* k : {"kind", "apiVersion", "name", "uid"}) {
    if (string_member(ht, k) != string_member(wt, k)) return false;
  }
  return true;
}

bool same_subset(const object& have, const object& want) {
  static const array kNone;
  const array* not_ready = array_member(have, "notReadyAddresses");
  if (not_ready != nullptr && !not_ready->empty()) return false;
  const array* want_addresses = array_member(want, "addresses");
  return same_list(have, "addresses", want_addresses ? *want_addresses : kNone, same_address) &&
         same_list(have, "ports", want.at("ports").get_array(), same_port);
}

}  // namespace

Result<KubeletNode> decode_kubelet_node(const value& node) {
  if (!node.is_object()) {
    return make_error("Node: expected object, got " + std::string(k8s::json_kind_name(node)));
  }
  const object& root = node.get_object();
  k8s::Decoder d;
  KubeletNode n;
  if (const object* md = d.object(root, "metadata")) {
    const auto scope = d.field("metadata");
    n.name = d.string(*md, "name");
    n.uid = d.string(*md, "uid");
  }
  if (const object* status = d.object(root, "status")) {
    const auto scope = d.field("status");
    n.addresses = d.list(*status, "addresses", [&](const object& a) {
      return KubeletNode::Address{d.string(a, "type"), d.string(a, "address")};
    });
  }
  if (!d.ok()) return make_error("Node " + n.name + ": " + d.message());
  return n;
}

Result<KubeletAddress> kubelet_node_address(const KubeletNode& node) {
  KubeletAddress out;
  bool any = false;
  for (const char* type : {"InternalIP", "ExternalIP"}) {
    for (const auto& a : node.addresses) {
      if (a.type != type) continue;
      any = true;
      if (auto why = k8s::endpoint_ip_problem(a.address)) {
        out.refused.push_back(RefusedAddress{node.name, node.uid, a.type, a.address, *why});
        continue;
      }
      out.ip = a.address;
      return out;
    }
  }
  if (!any) {
    return make_error("Node " + node.name +
                      ": status.addresses has neither an InternalIP nor an ExternalIP, so the "
                      "kubelet Endpoints cannot list it; retrying until the node reports one");
  }
  return out;
}

Result<KubeletObjects> kubelet_objects(const k8s::ObjectKey& target,
                                       const std::vector<KubeletNode>& nodes) {
  struct Entry {
    std::string ip;
    const KubeletNode* node;
  };
  std::vector<Entry> entries;
  entries.reserve(nodes.size());
  std::vector<RefusedAddress> refused;
  for (const auto& n : nodes) {
    auto address = kubelet_node_address(n);
    if (!address) return address.error();
    for (auto& r : address->refused) refused.push_back(std::move(r));
    if (address->ip) entries.push_back(Entry{std::move(*address->ip), &n});
  }
  // Sorted by IP as plain strings (upstream), node name breaking ties for determinism.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (a.ip != b.ip) return a.ip < b.ip;
    return a.node->name < b.node->name;
  });

  array addresses;
  addresses.reserve(entries.size());
  for (const auto& e : entries) {
    addresses.emplace_back(object{{"ip", e.ip},
                                  {"targetRef", object{{"kind", "Node"},
                                                       {"apiVersion", "v1"},
                                                       {"name", e.node->name},
                                                       {"uid", e.node->uid}}}});
  }
  array subsets;
  if (!addresses.empty()) {
    subsets.emplace_back(object{{"addresses", std::move(addresses)}, {"ports", ports_json()}});
  }

  KubeletObjects out;
  out.service = object{
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata", metadata_json(target)},
      {"spec", object{{"type", "ClusterIP"}, {"clusterIP", "None"}, {"ports", ports_json()}}}};
  out.endpoints = object{{"apiVersion", "v1"},
                         {"kind", "Endpoints"},
                         {"metadata", metadata_json(target)},
                         {"subsets", std::move(subsets)}};
  out.refused = std::move(refused);
  return out;
}

bool kubelet_object_changed(const object& live, const object& desired) {
  const object* live_md = object_member(live, "metadata");
  const object* live_labels = live_md ? object_member(*live_md, "labels") : nullptr;
  const object* want_md = object_member(desired, "metadata");
  const object* want_labels = want_md ? object_member(*want_md, "labels") : nullptr;
  if (want_labels != nullptr) {
    for (const auto& kv : *want_labels) {
      const value* have = live_labels ? live_labels->if_contains(kv.key()) : nullptr;
      if (have == nullptr || *have != kv.value()) return true;
    }
  }

  if (const object* want_spec = object_member(desired, "spec")) {  // Service
    const object* have_spec = object_member(live, "spec");
    if (have_spec == nullptr) return true;
    if (string_member(have_spec, "type") != string_member(want_spec, "type") ||
        string_member(have_spec, "clusterIP") != string_member(want_spec, "clusterIP")) {
      return true;
    }
    // A selector would hand the Endpoints to the endpoints controller; ours has none.
    if (const object* sel = object_member(*have_spec, "selector"); sel && !sel->empty()) {
      return true;
    }
    return !same_list(*have_spec, "ports", want_spec->at("ports").get_array(), same_port);
  }
  // Endpoints
  const array* want_subsets = array_member(desired, "subsets");
  static const array kNone;
  return !same_list(live, "subsets", want_subsets ? *want_subsets : kNone, same_subset);
}

}  // namespace aop::agent
