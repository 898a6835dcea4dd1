#include "tests/k8s/cluster.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <stdexcept>

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "k8s/yaml.hpp"
#include "tests/k8s/control_plane.hpp"
#include "tests/k8s/http_request.hpp"
#include "tests/k8s/sim_fixture.hpp"

namespace aop::testing {

namespace json = boost::json;

std::string_view backend_name(Backend b) {
  return b == Backend::kube_sim ? "kube-sim" : "kube-apiserver";
}

Backend selected_backend() {
  // Read on the main thread before the tests start threads; nothing sets the environment.
  const char* v = std::getenv("AOP_TEST_BACKEND");  // NOLINT(concurrency-mt-unsafe)
  const std::string_view s = v == nullptr ? std::string_view() : std::string_view(v);
  if (s.empty() || s == "kube-sim") return Backend::kube_sim;
  if (s == "kube-apiserver") return Backend::kube_apiserver;
  throw std::runtime_error("AOP_TEST_BACKEND=" + std::string(s) +
                           ": expected kube-sim or kube-apiserver");
}

std::string AccessRecord::verb_and_resource() const {
  std::string out = verb + " ";
  if (!group.empty()) out += group + "/";
  out += resource;
  if (!subresource.empty()) out += "/" + subresource;
  return out;
}

k8s::ClientConfig Cluster::client_config_with_token(std::string token) const {
  k8s::ClientConfig c = client_config();
  c.token = k8s::make_static_token_source(std::move(token));
  c.username.clear();
  c.password.clear();
  c.client_cert_pem.clear();
  c.client_key_pem.clear();
  return c;
}

std::uint64_t Cluster::writes_by(std::string_view user_agent) const {
  std::uint64_t n = 0;
  for (const auto& r : requests(user_agent)) n += is_write_verb(r.verb) ? 1 : 0;
  return n;
}

std::string Cluster::service_account_token(const std::string& ns, const std::string& name,
                                           std::chrono::seconds expiry) const {
  const json::object body{{"apiVersion", "authentication.k8s.io/v1"},
                          {"kind", "TokenRequest"},
                          {"spec", json::object{{"expirationSeconds", expiry.count()}}}};
  const std::string path = "/api/v1/namespaces/" + ns + "/serviceaccounts/" + name + "/token";
  const auto r = request("POST", path, json::serialize(body));
  if (r.status != 201 && r.status != 200) {
    throw std::runtime_error("POST " + path + ": HTTP " + std::to_string(r.status) + ": " + r.body);
  }
  return std::string(json::parse(r.body).at("status").at("token").as_string());
}

std::string Cluster::collection_path(const json::value& object) const {
  const auto& o = object.as_object();
  const std::string api_version(o.at("apiVersion").as_string());
  const std::string kind(o.at("kind").as_string());
  const std::string prefix =
      api_version.find('/') == std::string::npos ? "/api/" + api_version : "/apis/" + api_version;
  const auto r = request("GET", prefix);
  if (r.status != 200) {
    throw std::runtime_error("GET " + prefix + ": HTTP " + std::to_string(r.status) + ": " +
                             r.body);
  }
  const auto list = json::parse(r.body);
  // kube-apiserver answers "resources": null for a group version still being set up.
  const auto* resources = list.as_object().if_contains("resources");
  const json::array none;
  for (const auto& res :
       resources != nullptr && resources->is_array() ? resources->as_array() : none) {
    const auto& ro = res.as_object();
    const std::string plural(ro.at("name").as_string());
    if (ro.at("kind").as_string() != kind || plural.find('/') != std::string::npos) continue;
    std::string path = prefix;
    if (ro.at("namespaced").as_bool()) {
      const auto* md = o.if_contains("metadata");
      const auto* ns = md != nullptr ? md->as_object().if_contains("namespace") : nullptr;
      path += "/namespaces/";
      path += ns != nullptr ? std::string(ns->as_string()) : std::string("default");
    }
    path += "/";
    path += plural;
    return path;
  }
  throw std::runtime_error("the server does not serve " + kind + " in " + api_version);
}

json::value Cluster::create(const json::value& object) const {
  const std::string path = collection_path(object);
  const auto r = request("POST", path, json::serialize(object));
  if (r.status != 201) {
    throw std::runtime_error("POST " + path + ": HTTP " + std::to_string(r.status) + ": " + r.body);
  }
  return json::parse(r.body);
}

std::vector<json::value> Cluster::create_yaml(std::string_view yaml) const {
  auto docs = k8s::yaml::parse_all(yaml);
  if (!docs) throw std::runtime_error("create_yaml: " + docs.error().message);
  std::vector<json::value> out;
  for (const auto& d : *docs) {
    if (!d.is_null()) out.push_back(create(d));
  }
  return out;
}

void Cluster::empty_namespace(const std::string& ns) const {
  std::vector<std::string> group_versions = {"/api/v1"};
  const auto groups = request("GET", "/apis");
  if (groups.status != 200) {
    throw std::runtime_error("GET /apis: HTTP " + std::to_string(groups.status));
  }
  const json::value group_list = json::parse(groups.body);
  for (const auto& g : group_list.at("groups").as_array()) {
    const auto& pv = g.at("preferredVersion").as_object();
    group_versions.push_back("/apis/" + std::string(pv.at("groupVersion").as_string()));
  }
  for (const auto& gv : group_versions) {
    const auto r = request("GET", gv);
    if (r.status != 200) continue;
    const json::value list = json::parse(r.body);
    const auto* resources = list.as_object().if_contains("resources");
    if (resources == nullptr || !resources->is_array()) continue;  // null while set up
    for (const auto& res : resources->as_array()) {
      const auto& o = res.as_object();
      const std::string name(o.at("name").as_string());
      if (name.find('/') != std::string::npos || !o.at("namespaced").as_bool()) continue;
      bool deletable = false;
      for (const auto& v : o.at("verbs").as_array())
        deletable |= v.as_string() == "deletecollection";
      if (!deletable) continue;
      std::string path = gv;
      path.append("/namespaces/").append(ns).append("/").append(name);
      const auto d = request("DELETE", path);
      if (d.status != 200 && d.status != 404) {
        throw std::runtime_error("DELETE " + path + ": HTTP " + std::to_string(d.status) + ": " +
                                 d.body);
      }
    }
  }
}

json::value Cluster::create_or_reset_namespace(const json::value& object) const {
  const std::string name(object.at("metadata").at("name").as_string());
  const auto r = request("POST", "/api/v1/namespaces", json::serialize(object));
  if (r.status == 201) return json::parse(r.body);
  if (r.status != 409) {
    throw std::runtime_error("POST /api/v1/namespaces: HTTP " + std::to_string(r.status) + ": " +
                             r.body);
  }
  const auto got = request("GET", "/api/v1/namespaces/" + name);
  if (got.status != 200) throw std::runtime_error("GET namespace " + name + ": " + got.body);
  json::value live = json::parse(got.body);
  auto& md = live.as_object()["metadata"].as_object();
  const auto& want = object.at("metadata").as_object();
  for (const char* field : {"labels", "annotations"}) {
    if (const auto* v = want.if_contains(field)) {
      md[field] = *v;
    } else {
      md.erase(field);
    }
  }
  const auto put = request("PUT", "/api/v1/namespaces/" + name, json::serialize(live));
  if (put.status != 200) throw std::runtime_error("PUT namespace " + name + ": " + put.body);
  return json::parse(put.body);
}

KubeSim& require_kube_sim(Cluster& cluster) {
  if (auto* sim = dynamic_cast<KubeSim*>(&cluster)) return *sim;
  throw std::runtime_error(
      "this test needs kube-sim's own features (fault injection, admin endpoints) and "
      "cannot run on " +
      std::string(backend_name(cluster.backend())) + " (its suite name should end in KubeSimOnly)");
}

TestObjects::~TestObjects() {
  try {
    clean_up();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "clean-up after the test: " << e.what();
  }
}

void TestObjects::note_created(const json::value& object) {
  const auto& md = object.at("metadata").as_object();
  const std::string kind(object.at("kind").as_string());
  const std::string name(md.at("name").as_string());
  if (kind == "Namespace") {
    if (std::find(namespaces_.begin(), namespaces_.end(), name) == namespaces_.end()) {
      namespaces_.push_back(name);
    }
  } else if (!md.contains("namespace") && kind != "CustomResourceDefinition") {
    cluster_scoped_.push_back(json::object{{"apiVersion", object.at("apiVersion")},
                                           {"kind", kind},
                                           {"metadata", json::object{{"name", name}}}});
  }
}

json::value TestObjects::create(const json::value& object) {
  json::value created = object.at("kind").as_string() == "Namespace"
                            ? cluster_.create_or_reset_namespace(object)
                            : cluster_.create(object);
  note_created(created);
  return created;
}

void TestObjects::create_yaml(std::string_view yaml) {
  auto docs = k8s::yaml::parse_all(yaml);
  if (!docs) throw std::runtime_error("create_yaml: " + docs.error().message);
  auto rank = [](const json::value& v) {
    const auto kind = v.at("kind").as_string();
    return kind == "CustomResourceDefinition" ? 0 : kind == "Namespace" ? 1 : 2;
  };
  std::vector<json::value> objects;
  for (auto& d : *docs) {
    if (!d.is_null()) objects.push_back(std::move(d));
  }
  std::stable_sort(objects.begin(), objects.end(),
                   [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
  for (const auto& o : objects) create(o);
}

std::string TestObjects::test_namespace(std::string_view prefix) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name(prefix);
  name += "-";
  name += info != nullptr ? info->name() : "test";
  std::string out;
  for (char c : name) {
    const char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out += std::isalnum(static_cast<unsigned char>(l)) ? l : '-';
  }
  if (out.size() > 63) out.resize(63);
  while (!out.empty() && out.back() == '-') out.pop_back();
  create(json::object{
      {"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", json::object{{"name", out}}}});
  return out;
}

void TestObjects::clean_up() {
  if (cluster_.is_kube_sim()) return;
  for (const auto& ns : namespaces_) {
    cluster_.empty_namespace(ns);
    // Nothing the test set on the Namespace (a telegraf annotation, a selector's label)
    // may reach the next test's controllers.
    const auto r = cluster_.request("PATCH", "/api/v1/namespaces/" + ns,
                                    R"({"metadata": {"labels": null, "annotations": null}})",
                                    "application/merge-patch+json");
    if (r.status != 200) {
      throw std::runtime_error("resetting namespace " + ns + ": HTTP " + std::to_string(r.status) +
                               ": " + r.body);
    }
  }
  namespaces_.clear();
  for (auto it = cluster_scoped_.rbegin(); it != cluster_scoped_.rend(); ++it) {
    const std::string path = cluster_.collection_path(*it) + "/" +
                             std::string(it->at("metadata").at("name").as_string());
    const auto r = cluster_.request("DELETE", path);
    if (r.status != 200 && r.status != 202 && r.status != 404) {
      throw std::runtime_error("DELETE " + path + ": HTTP " + std::to_string(r.status) + ": " +
                               r.body);
    }
  }
  cluster_scoped_.clear();
}

std::unique_ptr<Cluster> start_cluster(ClusterOptions options) {
  if (selected_backend() == Backend::kube_apiserver) return attach_control_plane(options);
  std::vector<std::string> args;
  for (const auto& p : options.preload) {
    args.push_back("--preload");
    args.push_back(p);
  }
  if (options.rbac) args.push_back("--rbac");
  args.insert(args.end(), options.sim_args.begin(), options.sim_args.end());
  return std::make_unique<KubeSim>(std::move(args));
}

}  // namespace aop::testing
