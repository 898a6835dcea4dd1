// Routing, discovery, admin endpoints and the read verbs (get, list, watch).
#include "tools/kube-sim/api.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <ctime>

#include <boost/json.hpp>

#include "tools/kube-sim/api_internal.hpp"
#include "tools/kube-sim/table.hpp"

namespace aop::sim {

namespace json = boost::json;
using namespace detail;

namespace detail {

Response json_response(int status, std::string body) {
  Response r;
  r.status = status;
  r.body.push_back(piece(std::move(body)));
  return r;
}

Response error_response(const ApiError& e) {
  Response r = json_response(e.code, e.to_json());
  if (e.retry_after_seconds > 0) {
    r.headers.emplace_back("Retry-After", std::to_string(e.retry_after_seconds));
  }
  return r;
}

std::string percent_decode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
    } else if (s[i] == '+' && plus_is_space) {
      out += ' ';
    } else {
      out += s[i];
    }
  }
  return out;
}

std::map<std::string, std::string, std::less<>> parse_query(std::string_view q) {
  std::map<std::string, std::string, std::less<>> out;
  while (!q.empty()) {
    const std::size_t amp = q.find('&');
    const std::string_view part = q.substr(0, amp);
    q = amp == std::string_view::npos ? std::string_view() : q.substr(amp + 1);
    if (part.empty()) continue;
    const std::size_t eq = part.find('=');
    std::string key = percent_decode(part.substr(0, eq), true);
    std::string value =
        eq == std::string_view::npos ? std::string() : percent_decode(part.substr(eq + 1), true);
    out.emplace(std::move(key), std::move(value));
  }
  return out;
}

AcceptChoice parse_accept(std::string_view accept) {
  AcceptChoice c;
  if (accept.empty()) return c;
  bool any_known = false;
  std::size_t start = 0;
  while (start <= accept.size()) {
    std::size_t comma = accept.find(',', start);
    if (comma == std::string_view::npos) comma = accept.size();
    std::string_view range = accept.substr(start, comma - start);
    start = comma + 1;
    // media type and parameters
    std::string type;
    std::map<std::string, std::string> params;
    std::size_t p = 0;
    bool first = true;
    while (p <= range.size()) {
      std::size_t semi = range.find(';', p);
      if (semi == std::string_view::npos) semi = range.size();
      std::string_view part = range.substr(p, semi - p);
      while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
      while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
      if (first) {
        type = std::string(part);
        first = false;
      } else if (auto eq = part.find('='); eq != std::string_view::npos) {
        params[std::string(part.substr(0, eq))] = std::string(part.substr(eq + 1));
      }
      p = semi + 1;
    }
    if (type != "application/json" && type != "*/*" && type != "application/*") continue;
    any_known = true;
    const std::string as = params.count("as") ? params["as"] : "";
    if (as.empty()) {
      return c;
    }
    if ((as == "PartialObjectMetadataList" || as == "PartialObjectMetadata") &&
        params["g"] == "meta.k8s.io" && (params["v"] == "v1" || params["v"] == "v1beta1")) {
      c.metadata_only = true;
      return c;
    }
    if (as == "Table" && params["g"] == "meta.k8s.io" &&
        (params["v"] == "v1" || params["v"] == "v1beta1")) {
      c.table = true;
      c.table_version = params["v"];
      return c;
    }
    // Other representations are not served: try the next range.
  }
  c.ok = false;
  (void)any_known;
  return c;
}

namespace {
constexpr std::string_view kB64 =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr std::string_view kB64Url =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
}  // namespace

std::string base64_encode(std::string_view in, bool url) {
  const std::string_view alphabet = url ? kB64Url : kB64;
  std::string out;
  std::size_t i = 0;
  while (i + 2 < in.size()) {
    const std::uint32_t n = (static_cast<unsigned char>(in[i]) << 16) |
                            (static_cast<unsigned char>(in[i + 1]) << 8) |
                            static_cast<unsigned char>(in[i + 2]);
    out += alphabet[(n >> 18) & 63];
    out += alphabet[(n >> 12) & 63];
    out += alphabet[(n >> 6) & 63];
    out += alphabet[n & 63];
    i += 3;
  }
  if (i + 1 == in.size()) {
    const std::uint32_t n = static_cast<unsigned char>(in[i]) << 16;
    out += alphabet[(n >> 18) & 63];
    out += alphabet[(n >> 12) & 63];
    if (!url) out += "==";
  } else if (i + 2 == in.size()) {
    const std::uint32_t n =
        (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8);
    out += alphabet[(n >> 18) & 63];
    out += alphabet[(n >> 12) & 63];
    out += alphabet[(n >> 6) & 63];
    if (!url) out += '=';
  }
  return out;
}

Result<std::string> base64_decode(std::string_view in) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
  };
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  std::size_t i = 0;
  for (; i < in.size(); ++i) {
    if (in[i] == '=') break;
    const int v = val(in[i]);
    if (v < 0) return make_error("illegal base64 data at input byte " + std::to_string(i));
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  for (; i < in.size(); ++i) {
    if (in[i] != '=') return make_error("illegal base64 data at input byte " + std::to_string(i));
  }
  return out;
}

json::object& metadata_of(json::object& obj) {
  auto& md = obj["metadata"];
  if (!md.is_object()) md = json::object();
  return md.as_object();
}

std::string str_field(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

std::string rfc3339(std::chrono::system_clock::time_point t) {
  const std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace detail

// ---------------------------------------------------------------------------------------

ApiServer::ApiServer(ServerOptions options)
    : options_(std::move(options)),
      store_(options_.watch_history),
      faults_(
          std::make_shared<Faults>(options_.seed == 0 ? std::random_device{}() : options_.seed)),
      rng_(options_.seed == 0 ? std::random_device{}() : options_.seed + 1) {
  if (!options_.token.empty()) auth_.set_admin_token(options_.token);
  for (const auto& t : registry_.all()) store_.ensure(t);
  for (const char* ns : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
    json::object o{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}};
    (void)create_object(std::move(o), "kube-sim");
  }
}

std::string ApiServer::now_rfc3339() const {
  return rfc3339(options_.clock.wall());
}

std::string ApiServer::new_uid() {
  std::uniform_int_distribution<int> d(0, 15);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string u(36, '-');
  for (std::size_t i = 0; i < 36; ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) continue;
    u[i] = kHex[d(rng_)];
  }
  u[14] = '4';
  u[19] = kHex[8 + (d(rng_) & 3)];
  return u;
}

std::string ApiServer::random_suffix() {
  // apimachinery's utilrand.String alphabet: no vowels, no confusable characters.
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  std::uniform_int_distribution<std::size_t> d(0, kAlphabet.size() - 1);
  std::string s;
  for (int i = 0; i < 5; ++i) s += kAlphabet[d(rng_)];
  return s;
}

TypePtr ApiServer::storage_type_of(const TypePtr& t) const {
  if (t->storage_version) return t;
  auto s = registry_.find_group_kind(t->group, t->kind);
  return s ? s : t;
}

// ---------------------------------------------------------------------------------------
// Entry point

Response ApiServer::handle(const Request& req) {
  ++requests_total_;
  const std::string_view target = req.target;
  const std::size_t qpos = target.find('?');
  const std::string_view path = target.substr(0, qpos);
  const std::string_view query =
      qpos == std::string_view::npos ? std::string_view() : target.substr(qpos + 1);

  if (path.starts_with("/admin/") || path == "/admin") {
    if (!req.from_loopback && !options_.token.empty() &&
        req.authorization != "Bearer " + options_.token) {
      return error_response(errors::unauthorized());
    }
    return handle_admin(req, path, query);
  }
  if (path == "/healthz" || path == "/livez" || path == "/readyz" ||
      path.starts_with("/healthz/") || path.starts_with("/livez/") ||
      path.starts_with("/readyz/")) {
    Response r;
    r.content_type = "text/plain; charset=utf-8";
    r.body.push_back(piece_static("ok"));
    return r;
  }
  // Authentication: a known token names the user; an unknown one is refused; none at all
  // is system:anonymous, refused unless authorization decides (--rbac) or no credential
  // is configured.
  std::optional<UserInfo> user = auth_.authenticate(req.authorization);
  if (!user) {
    const bool bearer = req.authorization.starts_with("Bearer ");
    if (auth_.required() && (bearer || !options_.rbac)) {
      return error_response(errors::unauthorized());
    }
    user = UserInfo::anonymous();
  }
  if (options_.rbac) {
    RequestAttributes a;
    a.user = *user;
    a.resource_request = false;
    a.verb = req.method == "GET" || req.method == "HEAD" ? "get" : "post";
    a.path = std::string(path);
    const bool resource_path =
        (path.starts_with("/api/") && std::count(path.begin(), path.end(), '/') >= 3) ||
        (path.starts_with("/apis/") && std::count(path.begin(), path.end(), '/') >= 4);
    if (!resource_path && !authorize(store_, a)) return error_response(forbidden_error(a));
  }

  std::vector<std::string> segs;
  {
    std::size_t start = 1;
    while (start <= path.size()) {
      std::size_t slash = path.find('/', start);
      if (slash == std::string_view::npos) slash = path.size();
      if (slash > start) segs.push_back(percent_decode(path.substr(start, slash - start), false));
      start = slash + 1;
    }
  }
  bool handled = false;
  Response d = handle_discovery(req, segs, handled);
  if (handled) {
    ++requests_by_verb_["discovery"];
    return d;
  }

  Target t;
  t.user = std::move(*user);
  t.path = std::string(path);
  t.query = parse_query(query);
  // /api/v1/... or /apis/<group>/<version>/...
  std::string group;
  std::string version;
  std::size_t i = 0;
  if (segs.size() >= 2 && segs[0] == "api") {
    version = segs[1];
    i = 2;
  } else if (segs.size() >= 3 && segs[0] == "apis") {
    group = segs[1];
    version = segs[2];
    i = 3;
  } else {
    ApiError e;
    e.code = 404;
    e.reason = "NotFound";
    e.message = "the server could not find the requested resource";
    return error_response(e);
  }
  std::vector<std::string> rest(segs.begin() + static_cast<std::ptrdiff_t>(i), segs.end());
  if (!rest.empty() && rest[0] == "watch") {
    t.watch_path = true;
    rest.erase(rest.begin());
  }
  if (rest.size() >= 3 && rest[0] == "namespaces" && rest[2] != "status" && rest[2] != "finalize") {
    t.ns = rest[1];
    rest.erase(rest.begin(), rest.begin() + 2);
  }
  auto not_found_path = [] {
    ApiError e;
    e.code = 404;
    e.reason = "NotFound";
    e.message = "the server could not find the requested resource";
    return error_response(e);
  };
  if (rest.empty() || rest.size() > 3) return not_found_path();
  t.type = registry_.find(group, version, rest[0]);
  if (!t.type) return not_found_path();
  if (rest.size() >= 2) t.name = rest[1];
  if (rest.size() == 3) t.subresource = rest[2];
  if (!t.type->namespaced && !t.ns.empty()) return not_found_path();
  if (!t.subresource.empty() && !(t.subresource == "status" && t.type->status_subresource) &&
      !(t.subresource == "scale" && !t.type->scale_spec_path.empty()) &&
      !(t.subresource == "token" && t.type->token_subresource)) {
    return not_found_path();
  }
  return route(req, t);
}

Response ApiServer::route(const Request& req, Target& t) {
  const std::string& m = req.method;
  if (m == "GET" || m == "HEAD") {
    if (t.watch_path || t.flag("watch")) {
      t.verb = "watch";
    } else {
      t.verb = t.name.empty() ? "list" : "get";
    }
  } else if (m == "POST") {
    t.verb = "create";
  } else if (m == "PUT") {
    t.verb = "update";
  } else if (m == "PATCH") {
    t.verb = "patch";
  } else if (m == "DELETE") {
    t.verb = t.name.empty() ? "deletecollection" : "delete";
  } else {
    return error_response(errors::method_not_allowed());
  }
  ++requests_by_verb_[t.verb];
  const bool write = t.verb == "create" || t.verb == "update" || t.verb == "patch" ||
                     t.verb == "delete" || t.verb == "deletecollection";

  if (options_.rbac) {
    RequestAttributes a;
    a.user = t.user;
    a.verb = t.verb;
    a.group = t.type->group;
    a.resource = t.type->resource;
    a.subresource = t.subresource;
    a.ns = t.ns;
    a.name = t.name;
    if (!authorize(store_, a)) {
      if (write) record_write(req, t.verb, t, 403);
      record_access(req, t, 403, true);
      return error_response(forbidden_error(a));
    }
  }

  // Injected faults apply to resource requests only (not discovery or admin), and of
  // those to the ones in the faults' scope.
  const bool in_scope = faults_->in_scope(req.user_agent, t.type->resource, t.subresource);
  std::chrono::milliseconds delay =
      in_scope ? faults_->settings.latency : std::chrono::milliseconds(0);
  if (delay.count() > 0) faults_->count("latency");
  const auto& fs = faults_->settings;
  const double total = in_scope ? fs.http_500 + fs.http_503 + fs.http_429 : 0.0;
  if (total > 0) {
    const double r = faults_->draw();
    std::optional<ApiError> err;
    if (r < fs.http_500) {
      faults_->count("http_500");
      err = errors::internal_error("injected fault");
    } else if (r < fs.http_500 + fs.http_503) {
      faults_->count("http_503");
      err = errors::service_unavailable(
          "injected fault: the server is currently unable to handle the request",
          fs.retry_after_seconds);
    } else if (r < total) {
      faults_->count("http_429");
      err = errors::too_many_requests(fs.retry_after_seconds);
    }
    if (err) {
      if (write) record_write(req, t.verb, t, err->code);
      record_access(req, t, err->code);
      Response resp = error_response(*err);
      if (err->code == 503 && fs.retry_after_seconds > 0) {
        // error_response already added it from the Status details.
      }
      resp.delay = delay;
      return resp;
    }
  }
  Response resp = handle_resource(req, t);
  if (write) record_write(req, t.verb, t, resp.status);
  record_access(req, t, resp.status);
  resp.delay = delay;
  return resp;
}

Response ApiServer::handle_resource(const Request& req, Target& t) {
  if (t.type->namespaced && t.ns.empty() && !t.name.empty()) {
    ApiError e;
    e.code = 404;
    e.reason = "NotFound";
    e.message = "the server could not find the requested resource";
    return error_response(e);
  }
  if (t.subresource == "token") {
    if (t.verb != "create" || t.name.empty()) return error_response(errors::method_not_allowed());
    return do_token_request(req, t);
  }
  if (t.subresource == "scale" && !t.name.empty() &&
      (t.verb == "get" || t.verb == "update" || t.verb == "patch")) {
    return do_scale(req, t);
  }
  if (t.verb == "get") return do_get(req, t);
  if (t.verb == "list") return do_list(req, t);
  if (t.verb == "watch") return do_watch(req, t);
  if (t.type->namespaced && t.ns.empty() && t.verb != "deletecollection") {
    return error_response(errors::method_not_allowed());
  }
  if (t.verb == "create") {
    if (!t.name.empty()) return error_response(errors::method_not_allowed());
    return do_create(req, t);
  }
  if (t.name.empty() && t.verb != "deletecollection") {
    return error_response(errors::method_not_allowed());
  }
  if (t.verb == "update") return do_update(req, t);
  if (t.verb == "patch") return do_patch(req, t);
  if (t.verb == "delete") return do_delete(req, t);
  if (t.verb == "deletecollection") {
    if (t.type->namespaced && t.ns.empty()) return error_response(errors::method_not_allowed());
    return do_delete_collection(req, t);
  }
  return error_response(errors::method_not_allowed());
}

// ---------------------------------------------------------------------------------------
// Discovery

namespace {

constexpr std::array<std::string_view, 8> kVerbs = {
    "create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"};

template <class Strings>
json::array string_array(const Strings& v) {
  json::array a;
  for (const auto& s : v) a.emplace_back(s);
  return a;
}

std::string version_hash(const ResourceType& t) {
  // A stable opaque value, like the API server's storageVersionHash.
  std::uint64_t h = 1469598103934665603ull;
  for (char c : t.group + "/" + t.version + "/" + t.kind) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return base64_encode(std::string_view(reinterpret_cast<const char*>(&h), 8), false)
             .substr(0, 11) +
         "=";
}

json::object resource_list(std::string_view group_version, const std::vector<TypePtr>& types) {
  json::array resources;
  for (const auto& t : types) {
    json::object r;
    r["name"] = t->resource;
    r["singularName"] = t->singular;
    r["namespaced"] = t->namespaced;
    r["kind"] = t->kind;
    r["verbs"] = string_array(kVerbs);
    if (!t->short_names.empty()) r["shortNames"] = string_array(t->short_names);
    if (!t->categories.empty()) r["categories"] = string_array(t->categories);
    r["storageVersionHash"] = version_hash(*t);
    resources.push_back(std::move(r));
    if (!t->scale_spec_path.empty()) {
      resources.push_back(json::object{{"name", t->resource + "/scale"},
                                       {"singularName", ""},
                                       {"namespaced", t->namespaced},
                                       {"group", "autoscaling"},
                                       {"version", "v1"},
                                       {"kind", "Scale"},
                                       {"verbs", json::array{"get", "patch", "update"}}});
    }
    if (t->token_subresource) {
      resources.push_back(json::object{{"name", t->resource + "/token"},
                                       {"singularName", ""},
                                       {"namespaced", t->namespaced},
                                       {"group", "authentication.k8s.io"},
                                       {"version", "v1"},
                                       {"kind", "TokenRequest"},
                                       {"verbs", json::array{"create"}}});
    }
    if (t->status_subresource) {
      json::object s;
      s["name"] = t->resource + "/status";
      s["singularName"] = "";
      s["namespaced"] = t->namespaced;
      s["kind"] = t->kind;
      s["verbs"] = json::array{"get", "patch", "update"};
      resources.push_back(std::move(s));
    }
  }
  json::object o;
  o["kind"] = "APIResourceList";
  o["apiVersion"] = "v1";
  o["groupVersion"] = group_version;
  o["resources"] = std::move(resources);
  return o;
}

json::object group_entry(const GroupVersions& g) {
  json::array versions;
  for (const auto& v : g.versions) {
    versions.push_back(json::object{{"groupVersion", g.group + "/" + v}, {"version", v}});
  }
  json::object o;
  o["name"] = g.group;
  o["versions"] = std::move(versions);
  o["preferredVersion"] = json::object{{"groupVersion", g.group + "/" + g.versions.front()},
                                       {"version", g.versions.front()}};
  return o;
}

json::object discovery_resource(const ResourceType& t) {
  json::object r;
  r["resource"] = t.resource;
  r["responseKind"] = json::object{{"group", t.group}, {"version", t.version}, {"kind", t.kind}};
  r["scope"] = t.namespaced ? "Namespaced" : "Cluster";
  r["singularResource"] = t.singular;
  r["verbs"] = string_array(kVerbs);
  if (!t.short_names.empty()) r["shortNames"] = string_array(t.short_names);
  if (!t.categories.empty()) r["categories"] = string_array(t.categories);
  json::array subs;
  if (t.status_subresource) {
    subs.push_back(
        json::object{{"subresource", "status"},
                     {"responseKind",
                      json::object{{"group", t.group}, {"version", t.version}, {"kind", t.kind}}},
                     {"verbs", json::array{"get", "patch", "update"}}});
  }
  if (!t.scale_spec_path.empty()) {
    subs.push_back(
        json::object{{"subresource", "scale"},
                     {"responseKind",
                      json::object{{"group", "autoscaling"}, {"version", "v1"}, {"kind", "Scale"}}},
                     {"verbs", json::array{"get", "patch", "update"}}});
  }
  if (t.token_subresource) {
    subs.push_back(json::object{{"subresource", "token"},
                                {"responseKind", json::object{{"group", "authentication.k8s.io"},
                                                              {"version", "v1"},
                                                              {"kind", "TokenRequest"}}},
                                {"verbs", json::array{"create"}}});
  }
  if (!subs.empty()) r["subresources"] = std::move(subs);
  return r;
}

// "v2", "v2beta1" or "" when the client did not ask for aggregated discovery.
std::string aggregated_version(std::string_view accept) {
  std::size_t start = 0;
  while (start <= accept.size()) {
    std::size_t comma = accept.find(',', start);
    if (comma == std::string_view::npos) comma = accept.size();
    const std::string_view range = accept.substr(start, comma - start);
    start = comma + 1;
    if (range.find("as=APIGroupDiscoveryList") == std::string_view::npos) continue;
    if (range.find("g=apidiscovery.k8s.io") == std::string_view::npos) continue;
    if (range.find("v=v2beta1") != std::string_view::npos) return "v2beta1";
    if (range.find("v=v2") != std::string_view::npos) return "v2";
  }
  return "";
}

}  // namespace

// kubectl (1.27+) reads /openapi/v3 to learn whether the server validates fields itself
// (a PATCH operation of the kind with a `fieldValidation` query parameter). These
// documents carry exactly that and no schemas: kubectl then leaves validation to the
// server (fieldValidation=Strict) and builds apply patches from its compiled-in type
// information (built-in kinds) or as JSON merge patches (custom resources), never
// needing /openapi/v2, which answers 404.
Response ApiServer::openapi(const std::vector<std::string>& segs) {
  auto not_found = [] {
    ApiError e;
    e.code = 404;
    e.reason = "NotFound";
    e.message = "the server could not find the requested resource";
    return error_response(e);
  };
  if (segs.size() < 2 || segs[1] != "v3") return not_found();
  auto gv_doc = [&](const std::string& group, const std::string& version) {
    json::object paths;
    for (const auto& t : registry_.types(group, version)) {
      std::string base = group.empty() ? "/api/" : "/apis/" + group + "/";
      base += version;
      const std::string coll = t->namespaced ? base + "/namespaces/{namespace}/" + t->resource
                                             : base + "/" + t->resource;
      json::object gvk{{"group", group}, {"version", version}, {"kind", t->kind}};
      json::array params{
          json::object{
              {"name", "dryRun"}, {"in", "query"}, {"schema", json::object{{"type", "string"}}}},
          json::object{{"name", "fieldManager"},
                       {"in", "query"},
                       {"schema", json::object{{"type", "string"}}}},
          json::object{{"name", "fieldValidation"},
                       {"in", "query"},
                       {"schema", json::object{{"type", "string"}}}}};
      json::object op{{"operationId", "patch" + t->kind},
                      {"parameters", params},
                      {"responses", json::object{{"200", json::object{{"description", "OK"}}}}},
                      {"x-kubernetes-action", "patch"},
                      {"x-kubernetes-group-version-kind", gvk}};
      paths[coll + "/{name}"] = json::object{{"patch", op}};
      if (t->status_subresource) paths[coll + "/{name}/status"] = json::object{{"patch", op}};
    }
    return json::object{
        {"openapi", "3.0.0"},
        {"info", json::object{{"title", "Kubernetes (kube-sim)"}, {"version", "v1.32.0"}}},
        {"paths", std::move(paths)},
        {"components", json::object()}};
  };
  auto hash = [](const std::string& s) {
    std::uint64_t h = 1469598103934665603ull;
    for (char c : s) {
      h ^= static_cast<unsigned char>(c);
      h *= 1099511628211ull;
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llX", static_cast<unsigned long long>(h));
    return std::string(buf);
  };
  if (segs.size() == 2) {
    json::object paths;
    for (const auto& g : registry_.groups()) {
      for (const auto& v : g.versions) {
        const std::string key = g.group.empty() ? "api/" + v : "apis/" + g.group + "/" + v;
        paths[key] = json::object{
            {"serverRelativeURL",
             "/openapi/v3/" + key + "?hash=" + hash(json::serialize(gv_doc(g.group, v)))}};
      }
    }
    return json_response(200, json::serialize(json::object{{"paths", std::move(paths)}}));
  }
  std::string group;
  std::string version;
  if (segs.size() == 4 && segs[2] == "api") {
    version = segs[3];
  } else if (segs.size() == 5 && segs[2] == "apis") {
    group = segs[3];
    version = segs[4];
  } else {
    return not_found();
  }
  if (registry_.types(group, version).empty()) return not_found();
  return json_response(200, json::serialize(gv_doc(group, version)));
}

Response ApiServer::handle_discovery(const Request& req, const std::vector<std::string>& segs,
                                     bool& handled) {
  handled = true;
  if (req.method != "GET" && req.method != "HEAD") {
    handled = segs.size() <= 1 || (segs[0] != "api" && segs[0] != "apis") ||
              (segs[0] == "api" && segs.size() <= 2) || (segs[0] == "apis" && segs.size() <= 3);
    if (handled) return error_response(errors::method_not_allowed());
    return {};
  }
  if (segs.size() == 1 && segs[0] == "version") {
    json::object v{{"major", "1"},
                   {"minor", "32"},
                   {"gitVersion", "v1.32.0"},
                   {"gitCommit", "kube-sim"},
                   {"gitTreeState", "clean"},
                   {"buildDate", "2024-12-11T00:00:00Z"},
                   {"goVersion", "go1.23.3"},
                   {"compiler", "gc"},
                   {"platform", "linux/amd64"}};
    return json_response(200, json::serialize(v));
  }
  if (!segs.empty() && segs[0] == "openapi") return openapi(segs);
  const std::string agg = aggregated_version(req.accept);
  if (segs.size() == 1 && (segs[0] == "api" || segs[0] == "apis")) {
    const bool core = segs[0] == "api";
    if (!agg.empty()) {
      json::array items;
      for (const auto& g : registry_.groups()) {
        if (core != g.group.empty()) continue;
        json::array versions;
        for (const auto& v : g.versions) {
          json::array resources;
          for (const auto& t : registry_.types(g.group, v))
            resources.push_back(discovery_resource(*t));
          versions.push_back(json::object{
              {"version", v}, {"resources", std::move(resources)}, {"freshness", "Current"}});
        }
        json::object md{{"creationTimestamp", nullptr}};
        if (!core) md["name"] = g.group;
        items.push_back(
            json::object{{"metadata", std::move(md)}, {"versions", std::move(versions)}});
      }
      json::object o{{"kind", "APIGroupDiscoveryList"},
                     {"apiVersion", "apidiscovery.k8s.io/" + agg},
                     {"metadata", json::object()},
                     {"items", std::move(items)}};
      Response r = json_response(200, json::serialize(o));
      r.content_type =
          "application/json;g=apidiscovery.k8s.io;v=" + agg + ";as=APIGroupDiscoveryList";
      return r;
    }
    if (core) {
      json::object o{{"kind", "APIVersions"},
                     {"versions", json::array{"v1"}},
                     {"serverAddressByClientCIDRs",
                      json::array{json::object{{"clientCIDR", "0.0.0.0/0"},
                                               {"serverAddress", options_.server_address}}}}};
      return json_response(200, json::serialize(o));
    }
    json::array groups;
    for (const auto& g : registry_.groups()) {
      if (g.group.empty()) continue;
      groups.push_back(group_entry(g));
    }
    json::object o{{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", std::move(groups)}};
    return json_response(200, json::serialize(o));
  }
  if (segs.size() == 2 && segs[0] == "api") {
    auto types = registry_.types("", segs[1]);
    if (types.empty()) {
      handled = false;
      return {};
    }
    auto o = resource_list(segs[1], types);
    o.erase("apiVersion");
    return json_response(200, json::serialize(o));
  }
  if (segs.size() == 2 && segs[0] == "apis") {
    for (const auto& g : registry_.groups()) {
      if (g.group != segs[1] || g.group.empty()) continue;
      json::object o = group_entry(g);
      json::object out{{"kind", "APIGroup"}, {"apiVersion", "v1"}};
      for (auto& [k, v] : o) out[k] = v;
      return json_response(200, json::serialize(out));
    }
    handled = false;
    return {};
  }
  if (segs.size() == 3 && segs[0] == "apis") {
    auto types = registry_.types(segs[1], segs[2]);
    if (types.empty()) {
      handled = false;
      return {};
    }
    return json_response(200, json::serialize(resource_list(segs[1] + "/" + segs[2], types)));
  }
  handled = false;
  return {};
}

// ---------------------------------------------------------------------------------------
// Admin

json::object ApiServer::stats_json() const {
  json::object o;
  o["objects"] = store_.object_count();
  json::object by_res;
  for (const auto& [k, c] : store_.collections()) {
    if (c->size() > 0) by_res[k] = c->size();
  }
  o["objects_by_resource"] = std::move(by_res);
  o["resource_version"] = store_.rv();
  json::object reqs;
  reqs["total"] = requests_total_;
  json::object rv;
  for (const auto& [k, v] : requests_by_verb_) rv[k] = v;
  reqs["by_verb"] = std::move(rv);
  o["requests"] = std::move(reqs);
  json::object w;
  w["total"] = writes_total_;
  auto to_obj = [](const std::map<std::string, std::uint64_t>& m) {
    json::object x;
    for (const auto& [k, v] : m) x[k] = v;
    return x;
  };
  w["by_verb"] = to_obj(writes_by_verb_);
  w["by_resource"] = to_obj(writes_by_resource_);
  w["by_user_agent"] = to_obj(writes_by_user_agent_);
  o["writes"] = std::move(w);
  std::size_t open = 0;
  for (const auto& wp : watchers_) {
    if (!wp->closed()) ++open;
  }
  o["watches"] = open;
  o["watches_started"] = watches_started_;
  o["faults"] = faults_->counts_json();
  o["fault_settings"] = faults_->settings_json();
  return o;
}

void ApiServer::reset_stats() {
  requests_total_ = 0;
  requests_by_verb_.clear();
  writes_total_ = 0;
  writes_by_verb_.clear();
  writes_by_resource_.clear();
  writes_by_user_agent_.clear();
  watches_started_ = 0;
  write_log_.clear();
  access_.clear();
  faults_->reset_counts();
}

void ApiServer::record_write(const Request& req, std::string verb, const Target& t, int code) {
  ++writes_total_;
  ++writes_by_verb_[verb];
  std::string resource = t.type->storage_key();
  if (!t.subresource.empty()) resource += "/" + t.subresource;
  ++writes_by_resource_[resource];
  ++writes_by_user_agent_[req.user_agent];
  WriteRecord w;
  w.seq = ++write_seq_;
  w.time = now_rfc3339();
  w.verb = std::move(verb);
  w.resource = std::move(resource);
  w.ns = t.ns;
  w.name = t.name;
  w.user_agent = req.user_agent;
  w.code = code;
  w.resource_version = store_.rv();
  write_log_.push_back(std::move(w));
  constexpr std::size_t kWriteLogLimit = 10'000;
  while (write_log_.size() > kWriteLogLimit) write_log_.pop_front();
}

void ApiServer::record_access(const Request& req, const Target& t, int code, bool denied) {
  const bool read = t.verb == "get" || t.verb == "list" || t.verb == "watch";
  if (read && t.user.in_group("system:masters")) return;
  ++access_[AccessKey{t.user.name, req.user_agent, t.verb, t.type->group, t.type->resource,
                      t.subresource, t.ns, code, denied}];
}

Response ApiServer::handle_admin(const Request& req, std::string_view path,
                                 std::string_view query) {
  if (path == "/admin/stats" && req.method == "GET") {
    return json_response(200, json::serialize(stats_json()));
  }
  if (path == "/admin/reset-stats" && req.method == "POST") {
    reset_stats();
    return json_response(200, json::serialize(stats_json()));
  }
  if (path == "/admin/faults") {
    if (req.method == "GET") {
      return json_response(200, json::serialize(json::object{{"settings", faults_->settings_json()},
                                                             {"faults", faults_->counts_json()}}));
    }
    if (req.method == "POST" || req.method == "PUT") {
      boost::system::error_code ec;
      auto body = json::parse(req.body.empty() ? std::string_view("{}") : req.body, ec);
      if (ec || !body.is_object()) {
        return error_response(errors::bad_request("the fault settings must be a JSON object"));
      }
      bool expire = false;
      if (auto r = faults_->apply(body.as_object(), expire); !r) {
        return error_response(errors::bad_request(r.error().message));
      }
      if (expire) {
        for (auto& w : watchers_) {
          if (w->closed()) continue;
          faults_->count("expire_watches");
          w->send_error(errors::expired("too old resource version: injected fault"));
        }
      }
      return json_response(200, json::serialize(json::object{{"settings", faults_->settings_json()},
                                                             {"faults", faults_->counts_json()}}));
    }
  }
  if (path == "/admin/access" && req.method == "GET") {
    json::array items;
    for (const auto& [k, n] : access_) {
      items.push_back(json::object{{"user", k.user},
                                   {"user_agent", k.user_agent},
                                   {"verb", k.verb},
                                   {"group", k.group},
                                   {"resource", k.resource},
                                   {"subresource", k.subresource},
                                   {"namespace", k.ns},
                                   {"code", k.code},
                                   {"denied", k.denied},
                                   {"count", n}});
    }
    return json_response(200, json::serialize(json::object{{"items", std::move(items)}}));
  }
  if (path == "/admin/writes" && req.method == "GET") {
    auto q = parse_query(query);
    std::size_t limit = write_log_.size();
    if (auto it = q.find("limit"); it != q.end()) {
      limit = std::min<std::size_t>(limit, std::strtoull(it->second.c_str(), nullptr, 10));
    }
    const std::string ua = q.count("user_agent") ? q["user_agent"] : "";
    json::array items;
    std::vector<const WriteRecord*> picked;
    for (auto it = write_log_.rbegin(); it != write_log_.rend() && picked.size() < limit; ++it) {
      if (!ua.empty() && it->user_agent.find(ua) == std::string::npos) continue;
      picked.push_back(&*it);
    }
    std::reverse(picked.begin(), picked.end());
    for (const auto* w : picked) {
      items.push_back(json::object{{"seq", w->seq},
                                   {"time", w->time},
                                   {"verb", w->verb},
                                   {"resource", w->resource},
                                   {"namespace", w->ns},
                                   {"name", w->name},
                                   {"user_agent", w->user_agent},
                                   {"code", w->code},
                                   {"resource_version", w->resource_version}});
    }
    return json_response(200, json::serialize(json::object{{"items", std::move(items)}}));
  }
  ApiError e;
  e.code = 404;
  e.reason = "NotFound";
  e.message = "unknown admin endpoint " + std::string(path) +
              " (GET /admin/stats, POST /admin/faults, POST /admin/reset-stats, GET /admin/writes, "
              "GET /admin/access)";
  return error_response(e);
}

// ---------------------------------------------------------------------------------------
// Reads

namespace {

std::string render_object(const StoredObject& o, const TypePtr& type, bool metadata_only) {
  if (metadata_only) return render_partial_metadata(o);
  if (type->api_version() == o.api_version()) return std::string(o.json());
  return o.with_api_version(type->api_version());
}

TableObjects table_objects(const ApiServer::Target& t) {
  const auto v = t.param("includeObject");
  if (v == "None") return TableObjects::none;
  if (v == "Object") return TableObjects::object;
  return TableObjects::metadata;
}

struct ListParams {
  k8s::LabelSelector labels;
  FieldSelector fields;
};

ApiResult<ListParams> list_params(const ApiServer::Target& t) {
  ListParams p;
  if (auto ls = t.param("labelSelector"); !ls.empty()) {
    auto sel = k8s::parse_label_selector_string(ls);
    if (!sel) return errors::bad_request("unable to parse requirement: " + sel.error().message);
    p.labels = std::move(*sel);
  }
  if (auto fs = t.param("fieldSelector"); !fs.empty()) {
    auto sel = parse_field_selector(fs);
    if (!sel) return errors::bad_request(sel.error().message);
    for (const auto& r : sel->requirements()) {
      const bool known = r.field == "metadata.name" || r.field == "metadata.namespace" ||
                         std::find(t.type->field_labels.begin(), t.type->field_labels.end(),
                                   r.field) != t.type->field_labels.end();
      if (!known) {
        // Built-in kinds without field conversions word it as kube-apiserver's generic
        // registry does; the others (pods, secrets, events, custom resources...) as their
        // conversion functions do.
        if (t.type->builtin && t.type->field_labels.empty()) {
          return errors::bad_request(errors::quote(r.field) +
                                     " is not a known field selector: only \"metadata.name\", "
                                     "\"metadata.namespace\"");
        }
        return errors::bad_request("field label not supported: " + r.field);
      }
    }
    p.fields = std::move(*sel);
  }
  return p;
}

Result<std::uint64_t> parse_rv(std::string_view s) {
  std::uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) {
    return make_error("invalid resource version: " + std::string(s));
  }
  return v;
}

ApiError too_large_rv(std::uint64_t asked, std::uint64_t current) {
  ApiError e = errors::timeout("Too large resource version: " + std::to_string(asked) +
                               ", current: " + std::to_string(current));
  e.causes.push_back(StatusCause{"ResourceVersionTooLarge", "Too large resource version", ""});
  e.retry_after_seconds = 1;
  return e;
}

constexpr std::string_view kContinueExpired =
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this "
    "response to retrieve the remainder of the results. Continuing with the provided token "
    "results in an inconsistent list - objects that were created, modified, or deleted between "
    "the time the first chunk was returned and now may show up in the list.";

}  // namespace

Response ApiServer::do_get(const Request& req, Target& t) {
  const auto accept = parse_accept(req.accept);
  if (!accept.ok) {
    return error_response(
        errors::not_acceptable("only the following media types are accepted: application/json, "
                               "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"));
  }
  const Collection* c = store_.find(t.type->storage_key());
  ObjectPtr o = c ? c->get(StoredObject::make_key(t.ns, t.name)) : nullptr;
  if (!o) return error_response(errors::not_found(t.type->group_resource(), t.name));
  if (accept.table) {
    TablePrinter printer(*t.type, options_.clock.wall(), table_objects(t));
    return json_response(
        200, printer.render({o}, json::object{{"resourceVersion", std::to_string(o->rv())}}));
  }
  return json_response(200, render_object(*o, t.type, accept.metadata_only));
}

Response ApiServer::do_list(const Request& req, Target& t) {
  const auto accept = parse_accept(req.accept);
  if (!accept.ok) {
    return error_response(
        errors::not_acceptable("only the following media types are accepted: application/json, "
                               "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"));
  }
  auto params = list_params(t);
  if (!params) return error_response(params.error());
  const Collection* c = store_.find(t.type->storage_key());
  if (c == nullptr) return error_response(errors::not_found(t.type->group_resource(), ""));
  const std::uint64_t current = store_.rv();

  std::int64_t limit = 0;
  if (auto l = t.param("limit"); !l.empty()) {
    auto [ptr, ec] = std::from_chars(l.data(), l.data() + l.size(), limit);
    if (ec != std::errc() || limit < 0) limit = 0;
  }
  const std::string_view rv_param = t.param("resourceVersion");
  const std::string_view match = t.param("resourceVersionMatch");
  std::uint64_t at_rv = current;
  std::string after;
  if (auto cont = t.param("continue"); !cont.empty()) {
    if (!rv_param.empty()) {
      return error_response(
          errors::bad_request("specifying resource version is not allowed when using continue"));
    }
    auto raw = base64_decode(cont);
    boost::system::error_code ec;
    json::value tok;
    if (raw) tok = json::parse(*raw, ec);
    if (!raw || ec || !tok.is_object() || !tok.as_object().contains("rv") ||
        !tok.as_object().contains("start") || !tok.as_object().at("start").is_string() ||
        !tok.as_object().at("rv").is_number()) {
      return error_response(
          errors::bad_request("continue key is not valid: incorrect encoded start resourceVersion "
                              "(version meta.k8s.io/v1)"));
    }
    at_rv = tok.as_object().at("rv").to_number<std::uint64_t>();
    after = std::string(tok.as_object().at("start").as_string());
    if (!after.empty() && after.back() == '\0') after.pop_back();
    if (at_rv < c->history_floor() && at_rv < current) {
      return error_response(errors::expired(std::string(kContinueExpired)));
    }
  } else if (!match.empty()) {
    if (match != "Exact" && match != "NotOlderThan") {
      return error_response(errors::invalid(
          "meta.k8s.io", "ListOptions", "",
          {errors::field_not_supported("resourceVersionMatch", errors::quote(match),
                                       {"\"Exact\"", "\"NotOlderThan\"", "\"\""})}));
    }
    auto rv = parse_rv(rv_param);
    if (rv_param.empty() || !rv || (match == "Exact" && *rv == 0)) {
      return error_response(errors::invalid(
          "meta.k8s.io", "ListOptions", "",
          {errors::field_forbidden(
              "resourceVersionMatch",
              "resourceVersionMatch is forbidden unless resourceVersion is provided")}));
    }
    if (*rv > current) return error_response(too_large_rv(*rv, current));
    if (match == "Exact") {
      at_rv = *rv;
      if (at_rv < c->history_floor()) {
        return error_response(
            errors::expired("The resourceVersion for the provided list is too old."));
      }
    }
  } else if (!rv_param.empty()) {
    auto rv = parse_rv(rv_param);
    if (!rv) return error_response(errors::bad_request(rv.error().message));
    if (*rv == 0) {
      limit = 0;  // served from the watch cache, which does not paginate
    } else if (*rv > current) {
      return error_response(too_large_rv(*rv, current));
    }
  }

  const bool selecting = !params->labels.matches_everything() || !params->fields.empty();
  const std::string prefix = t.type->namespaced && !t.ns.empty() ? t.ns + "/" : "";
  std::vector<ObjectPtr> items;
  bool more = false;
  auto matches = [&](const StoredObject& o) {
    if (!params->labels.matches_everything() && !params->labels.matches(StoredLabels(o)))
      return false;
    if (!params->fields.empty() &&
        !params->fields.matches([&](std::string_view f) { return field_value(o, f); })) {
      return false;
    }
    return true;
  };
  auto scanned = c->scan(prefix, after, at_rv, current, [&](const ObjectPtr& o) {
    if (!matches(*o)) return true;
    if (limit > 0 && static_cast<std::int64_t>(items.size()) >= limit) {
      more = true;
      return false;
    }
    items.push_back(o);
    return true;
  });
  if (!scanned) {
    return error_response(t.has("continue") ? errors::expired(std::string(kContinueExpired))
                                            : scanned.error());
  }

  if (accept.table) {
    json::object md{{"resourceVersion", std::to_string(at_rv)}};
    if (more) {
      json::object tok{{"v", "meta.k8s.io/v1"},
                       {"rv", at_rv},
                       {"start", std::string(items.back()->key()) + std::string(1, '\0')}};
      md["continue"] = base64_encode(json::serialize(tok), true);
    }
    TablePrinter printer(*t.type, options_.clock.wall(), table_objects(t));
    return json_response(200, printer.render(items, std::move(md)));
  }
  std::string head;
  if (accept.metadata_only) {
    head =
        R"({"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":")";
  } else {
    head = R"({"kind":)" + json::serialize(json::value(t.type->list_kind())) + R"(,"apiVersion":)" +
           json::serialize(json::value(t.type->api_version())) +
           R"(,"metadata":{"resourceVersion":")";
  }
  head += std::to_string(at_rv);
  head += '"';
  if (more) {
    const std::string last(items.back()->key());
    json::object tok{
        {"v", "meta.k8s.io/v1"}, {"rv", at_rv}, {"start", last + std::string(1, '\0')}};
    head += R"(,"continue":")" + base64_encode(json::serialize(tok), true) + '"';
    if (!selecting) {
      auto remaining = c->count_after(prefix, last, at_rv, current);
      if (remaining) head += R"(,"remainingItemCount":)" + std::to_string(*remaining);
    }
  }
  head += R"(},"items":[)";
  Response r;
  r.body.reserve(items.size() * 3 + 2);
  r.body.push_back(piece(std::move(head)));
  const bool same_version = !items.empty() && t.type->api_version() == items.front()->api_version();
  static constexpr std::string_view kMetaHead =
      R"({"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":)";
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto& o = items[i];
    if (i > 0) r.body.push_back(piece_static(","));
    if (accept.metadata_only) {
      r.body.push_back(piece_static(kMetaHead));
      r.body.push_back(Piece{o, o->metadata_json()});
      r.body.push_back(piece_static("}"));
    } else if (same_version || o->api_version() == t.type->api_version()) {
      r.body.push_back(Piece{o, o->json()});
    } else {
      r.body.push_back(piece(o->with_api_version(t.type->api_version())));
    }
  }
  r.body.push_back(piece_static("]}"));
  return r;
}

Response ApiServer::do_watch(const Request& req, Target& t) {
  const auto accept = parse_accept(req.accept);
  if (!accept.ok) {
    return error_response(
        errors::not_acceptable("only the following media types are accepted: application/json, "
                               "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"));
  }
  if (!t.name.empty()) {
    // The legacy /watch/namespaces/<ns>/<resource>/<name> form.
    auto& fs = t.query["fieldSelector"];
    fs = fs.empty() ? "metadata.name=" + t.name : "metadata.name=" + t.name + "," + fs;
  }
  auto params = list_params(t);
  if (!params) return error_response(params.error());
  Collection* c = store_.find(t.type->storage_key());
  if (c == nullptr) return error_response(errors::not_found(t.type->group_resource(), ""));
  const std::uint64_t current = store_.rv();
  const auto now = options_.clock.mono();

  WatchOptions wo;
  wo.ns = t.type->namespaced ? t.ns : "";
  wo.labels = std::move(params->labels);
  wo.fields = std::move(params->fields);
  wo.metadata_only = accept.metadata_only;
  if (accept.table) {
    auto type = t.type;
    auto clock = options_.clock.wall;
    auto include = table_objects(t);
    wo.transform = [type, clock, include](const StoredObject& o) {
      TablePrinter printer(*type, clock(), include);
      return printer.render_one(o, json::object{{"resourceVersion", std::to_string(o.rv())}});
    };
  }
  wo.bookmarks = t.flag("allowWatchBookmarks");
  wo.api_version = t.type->api_version();
  wo.kind = t.type->kind;
  wo.builtin = t.type->builtin;
  wo.bookmark_interval = options_.bookmark_interval;
  std::chrono::seconds timeout = options_.default_watch_timeout;
  if (auto ts = t.param("timeoutSeconds"); !ts.empty()) {
    std::int64_t s = 0;
    auto [ptr, ec] = std::from_chars(ts.data(), ts.data() + ts.size(), s);
    if (ec == std::errc() && s > 0) timeout = std::chrono::seconds(s);
  }
  wo.deadline = now + timeout;

  const bool send_initial = t.flag("sendInitialEvents");
  const std::string_view rv_param = t.param("resourceVersion");
  const std::string_view match = t.param("resourceVersionMatch");
  if (send_initial) {
    std::vector<StatusCause> causes;
    if (match != "NotOlderThan") {
      causes.push_back(errors::field_forbidden(
          "resourceVersionMatch",
          "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"));
    }
    if (!wo.bookmarks) {
      causes.push_back(errors::field_forbidden(
          "allowWatchBookmarks", "sendInitialEvents requires setting allowWatchBookmarks to true"));
    }
    if (!causes.empty())
      return error_response(errors::invalid("meta.k8s.io", "ListOptions", "", causes));
  } else if (!match.empty()) {
    return error_response(
        errors::invalid("meta.k8s.io", "ListOptions", "",
                        {errors::field_forbidden("resourceVersionMatch",
                                                 "resourceVersionMatch is forbidden for watch")}));
  }

  std::uint64_t from = 0;
  bool initial = send_initial || rv_param.empty() || rv_param == "0";
  if (!rv_param.empty()) {
    auto rv = parse_rv(rv_param);
    if (!rv) return error_response(errors::bad_request(rv.error().message));
    if (*rv > current) return error_response(too_large_rv(*rv, current));
    from = *rv;
  }

  auto& fs = faults_->settings;
  if (fs.gone_next_watch > 0) {
    --fs.gone_next_watch;
    faults_->count("gone_next_watch");
    return error_response(errors::expired("too old resource version: " + std::string(rv_param) +
                                          " (" + std::to_string(current) + ")"));
  }
  auto w = std::make_shared<Watcher>(std::move(wo), faults_, now);
  ++watches_started_;
  Response r;
  r.watch = w;
  if (fs.gone_in_stream_next_watch > 0) {
    --fs.gone_in_stream_next_watch;
    faults_->count("gone_in_stream_next_watch");
    w->send_error(errors::expired("too old resource version: " + std::string(rv_param) + " (" +
                                  std::to_string(current) + ")"));
    return r;
  }
  if (initial) {
    const std::string prefix = t.type->namespaced && !t.ns.empty() ? t.ns + "/" : "";
    (void)c->scan(prefix, "", 0, current, [&](const ObjectPtr& o) {
      if (w->matches(*o)) w->send_initial(o);
      return true;
    });
    if (send_initial) w->send_bookmark(current, true);
  } else {
    auto events = c->events_since(from);
    if (!events) {
      if (options_.gone_as_event) {
        w->send_error(events.error());
        return r;
      }
      return error_response(events.error());
    }
    for (const auto& e : *events) w->deliver(*e);
  }
  if (!w->closed()) c->add_watcher(w);
  watchers_.push_back(w);
  return r;
}

void ApiServer::end_watch(const WatcherPtr& w) {
  w->close();
  for (const auto& [k, c] : store_.collections()) c->remove_watcher(w.get());
  std::erase(watchers_, w);
}

void ApiServer::tick() {
  const auto now = options_.clock.mono();
  const auto rv = store_.rv();
  for (auto& w : watchers_) w->tick(now, rv);
}

}  // namespace aop::sim
