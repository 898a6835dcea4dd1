// The RBAC rules follow Kubernetes' documented semantics (rbac/v1 PolicyRule):
// apiGroups, resources and verbs match exactly or by "*"; a resource "x/y" matches the
// subresource y of x and "*/y" the subresource y of anything; resourceNames, when
// present, match only requests that name an object (so never create, list or watch);
// nonResourceURLs match a path exactly or by a trailing "*" prefix.
#include "tools/kube-sim/auth.hpp"

#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>

#include <boost/json.hpp>

namespace aop::sim {

namespace json = boost::json;

namespace {

constexpr std::string_view kRbacGroup = "rbac.authorization.k8s.io";

const json::array* array_at(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_array() ? &v->get_array() : nullptr;
}
std::string str_at(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}
bool list_has(const json::array* a, std::string_view want) {
  if (a == nullptr) return false;
  return std::any_of(a->begin(), a->end(), [&](const json::value& v) {
    return v.is_string() && (v.get_string() == want || v.get_string() == "*");
  });
}

bool resource_matches(const json::array* resources, const RequestAttributes& a) {
  if (resources == nullptr) return false;
  const std::string combined =
      a.subresource.empty() ? a.resource : a.resource + "/" + a.subresource;
  for (const auto& v : *resources) {
    if (!v.is_string()) continue;
    const std::string_view r = v.get_string();
    if (r == "*" || r == combined) return true;
    if (!a.subresource.empty() && r == "*/" + a.subresource) return true;
  }
  return false;
}

bool rule_allows(const json::object& rule, const RequestAttributes& a) {
  if (!list_has(array_at(rule, "verbs"), a.verb)) return false;
  if (!a.resource_request) {
    const auto* urls = array_at(rule, "nonResourceURLs");
    if (urls == nullptr) return false;
    return std::any_of(urls->begin(), urls->end(), [&](const json::value& v) {
      if (!v.is_string()) return false;
      const std::string_view u = v.get_string();
      if (u == "*" || u == a.path) return true;
      return u.ends_with("*") && a.path.starts_with(u.substr(0, u.size() - 1));
    });
  }
  if (!list_has(array_at(rule, "apiGroups"), a.group)) return false;
  if (!resource_matches(array_at(rule, "resources"), a)) return false;
  const auto* names = array_at(rule, "resourceNames");
  if (names == nullptr || names->empty()) return true;
  if (a.name.empty()) return false;
  return std::any_of(names->begin(), names->end(), [&](const json::value& v) {
    return v.is_string() && v.get_string() == a.name;
  });
}

bool subject_matches(const json::object& s, const UserInfo& u) {
  const std::string kind = str_at(s, "kind");
  const std::string name = str_at(s, "name");
  if (kind == "User") return name == u.name;
  if (kind == "Group") return u.in_group(name);
  if (kind == "ServiceAccount") {
    return u.name == "system:serviceaccount:" + str_at(s, "namespace") + ":" + name;
  }
  return false;
}

const Collection* rbac_collection(const Store& store, std::string_view resource) {
  return store.find(std::string(resource) + "." + std::string(kRbacGroup));
}

// The rules of the role a binding refers to ({} when it does not exist).
std::vector<json::object> role_rules(const Store& store, const json::object& binding,
                                     std::string_view binding_ns) {
  std::vector<json::object> out;
  const auto* ref = binding.if_contains("roleRef");
  if (ref == nullptr || !ref->is_object()) return out;
  const std::string kind = str_at(ref->get_object(), "kind");
  const std::string name = str_at(ref->get_object(), "name");
  const Collection* c = nullptr;
  std::string key;
  if (kind == "ClusterRole") {
    c = rbac_collection(store, "clusterroles");
    key = StoredObject::make_key("", name);
  } else if (kind == "Role" && !binding_ns.empty()) {
    c = rbac_collection(store, "roles");
    key = StoredObject::make_key(binding_ns, name);
  }
  if (c == nullptr) return out;
  const auto role = c->get(key);
  if (!role) return out;
  const json::object o = role->parse();
  if (const auto* rules = array_at(o, "rules")) {
    for (const auto& r : *rules) {
      if (r.is_object()) out.push_back(r.get_object());
    }
  }
  return out;
}

bool binding_allows(const Store& store, const json::object& binding, std::string_view ns,
                    const RequestAttributes& a) {
  const auto* subjects = array_at(binding, "subjects");
  if (subjects == nullptr) return false;
  const bool bound = std::any_of(subjects->begin(), subjects->end(), [&](const json::value& s) {
    return s.is_object() && subject_matches(s.get_object(), a.user);
  });
  if (!bound) return false;
  for (const auto& rule : role_rules(store, binding, ns)) {
    if (rule_allows(rule, a)) return true;
  }
  return false;
}

}  // namespace

bool UserInfo::in_group(std::string_view g) const {
  return std::find(groups.begin(), groups.end(), g) != groups.end();
}

UserInfo UserInfo::anonymous() {
  return UserInfo{"system:anonymous", "", {"system:unauthenticated"}};
}

void Authenticator::set_admin_token(const std::string& token) {
  configured_ = true;
  tokens_[token] = UserInfo{"admin", "admin", {"system:masters", "system:authenticated"}};
}

Result<void> Authenticator::load_token_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("--token-file " + path + ": cannot read");
  std::stringstream ss;
  ss << in.rdbuf();
  return load_token_csv(ss.str(), "--token-file " + path);
}

Result<void> Authenticator::load_token_csv(std::string_view text, const std::string& origin) {
  configured_ = true;
  std::size_t line_no = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    // CSV fields; a quoted field may hold commas (the group list).
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (char c : line) {
      if (c == '"') {
        quoted = !quoted;
      } else if (c == ',' && !quoted) {
        fields.emplace_back();
      } else {
        fields.back() += c;
      }
    }
    if (quoted || fields.size() < 3 || fields[0].empty() || fields[1].empty()) {
      return make_error(origin + ": line " + std::to_string(line_no) +
                        ": expected token,user,uid[,\"group1,group2\"]");
    }
    UserInfo u{fields[1], fields[2], {}};
    if (fields.size() >= 4) {
      std::stringstream gs(fields[3]);
      std::string g;
      while (std::getline(gs, g, ',')) {
        if (!g.empty()) u.groups.push_back(g);
      }
    }
    u.groups.emplace_back("system:authenticated");
    tokens_[fields[0]] = std::move(u);
  }
  return {};
}

std::string Authenticator::issue_service_account_token(const std::string& ns,
                                                       const std::string& name,
                                                       const std::string& uid) {
  static constexpr char kAlphabet[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::random_device rd;
  std::uniform_int_distribution<std::size_t> d(0, sizeof kAlphabet - 2);
  std::string token = "kube-sim-sa-" + std::to_string(++issued_) + "-";
  for (int i = 0; i < 32; ++i) token += kAlphabet[d(rd)];
  tokens_[token] =
      UserInfo{"system:serviceaccount:" + ns + ":" + name,
               uid,
               {"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}};
  return token;
}

std::optional<UserInfo> Authenticator::authenticate(std::string_view authorization) const {
  constexpr std::string_view kBearer = "Bearer ";
  if (!authorization.starts_with(kBearer)) return std::nullopt;
  const auto it = tokens_.find(authorization.substr(kBearer.size()));
  if (it == tokens_.end()) return std::nullopt;
  return it->second;
}

bool authorize(const Store& store, const RequestAttributes& a) {
  if (a.user.in_group("system:masters")) return true;
  if (!a.resource_request) {
    // The bootstrap roles every cluster has: system:public-info-viewer (health, version:
    // everyone) and system:discovery (discovery and OpenAPI: authenticated users).
    const std::string_view p = a.path;
    if (a.verb == "get") {
      for (std::string_view pub : {"/healthz", "/livez", "/readyz", "/version"}) {
        if (p == pub || p.starts_with(std::string(pub) + "/")) return true;
      }
      if (a.user.in_group("system:authenticated") &&
          (p == "/api" || p.starts_with("/api/") || p == "/apis" || p.starts_with("/apis/") ||
           p.starts_with("/openapi/"))) {
        return true;
      }
    }
  }
  if (const Collection* crbs = rbac_collection(store, "clusterrolebindings")) {
    for (const auto& b : crbs->objects()) {
      if (binding_allows(store, b->parse(), "", a)) return true;
    }
  }
  if (!a.ns.empty() && a.resource_request) {
    if (const Collection* rbs = rbac_collection(store, "rolebindings")) {
      bool allowed = false;
      const std::string prefix = StoredObject::make_key(a.ns, "");
      (void)rbs->scan(prefix, "", 0, store.rv(), [&](const ObjectPtr& b) {
        allowed = binding_allows(store, b->parse(), a.ns, a);
        return !allowed;
      });
      if (allowed) return true;
    }
  }
  return false;
}

ApiError forbidden_error(const RequestAttributes& a) {
  ApiError e;
  e.code = 403;
  e.reason = "Forbidden";
  const std::string who = "User " + errors::quote(a.user.name);
  if (!a.resource_request) {
    e.message = "forbidden: " + who + " cannot " + a.verb + " path " + errors::quote(a.path);
    return e;
  }
  e.kind = a.resource;
  e.group = a.group;
  e.name = a.name;
  std::string gr = a.group.empty() ? a.resource : a.resource + "." + a.group;
  if (!a.name.empty()) gr += " " + errors::quote(a.name);
  const std::string combined =
      a.subresource.empty() ? a.resource : a.resource + "/" + a.subresource;
  e.message = gr + " is forbidden: " + who + " cannot " + a.verb + " resource " +
              errors::quote(combined) + " in API group " + errors::quote(a.group) +
              (a.ns.empty() ? std::string(" at the cluster scope")
                            : " in the namespace " + errors::quote(a.ns));
  return e;
}

}  // namespace aop::sim
