#include "tests/k8s/operator_rbac.hpp"

#include <algorithm>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <tuple>

#include <boost/json.hpp>

#include "k8s/yaml.hpp"
#include "tests/k8s/child_process.hpp"

namespace aop::testing {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

std::string str(const json::value& v, std::string_view key) {
  const auto* o = v.if_object();
  const auto* s = o != nullptr ? o->if_contains(key) : nullptr;
  return s != nullptr && s->is_string() ? std::string(s->get_string()) : std::string();
}

std::string metadata_str(const json::value& v, std::string_view key) {
  const auto* o = v.if_object();
  const auto* md = o != nullptr ? o->if_contains("metadata") : nullptr;
  return md != nullptr ? str(*md, key) : std::string();
}

}  // namespace

std::vector<json::value> deploy_rbac_objects(const std::string& source_dir) {
  static const std::set<std::string> kKinds = {
      "Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"};
  const fs::path deploy = fs::path(source_dir) / "deploy";
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(deploy); it != fs::recursive_directory_iterator();
       ++it) {
    const auto name = it->path().filename().string();
    if (it->is_directory() && (name == "examples" || name == "crds")) {
      it.disable_recursion_pending();
      continue;
    }
    const auto ext = it->path().extension();
    if (it->is_regular_file() && (ext == ".yaml" || ext == ".yml")) files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  std::vector<json::value> out;
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  for (const auto& f : files) {
    auto docs = k8s::yaml::parse_all(read_file(f.string()));
    if (!docs) throw std::runtime_error(f.string() + ": " + docs.error().message);
    for (auto& d : *docs) {
      const std::string kind = str(d, "kind");
      if (!kKinds.contains(kind)) continue;
      if (!seen.emplace(kind, metadata_str(d, "namespace"), metadata_str(d, "name")).second) {
        continue;
      }
      out.push_back(std::move(d));
    }
  }
  return out;
}

OperatorIdentity install_operator_rbac(const Cluster& cluster, const std::string& source_dir) {
  OperatorIdentity id;
  auto objects = deploy_rbac_objects(source_dir);
  // Namespaces first, then ServiceAccounts, then roles, then bindings.
  auto rank = [](const json::value& v) {
    const std::string k = str(v, "kind");
    return k == "Namespace" ? 0 : k == "ServiceAccount" ? 1 : k.ends_with("Binding") ? 3 : 2;
  };
  std::stable_sort(objects.begin(), objects.end(),
                   [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
  for (const auto& o : objects) {
    if (str(o, "kind") == "ServiceAccount") {
      if (!id.service_account.empty()) {
        throw std::runtime_error(
            "deploy/ defines more than one ServiceAccount; which one "
            "does the operator run as?");
      }
      id.ns = metadata_str(o, "namespace");
      id.service_account = metadata_str(o, "name");
    }
    const std::string path = cluster.collection_path(o);
    const auto r = cluster.request("POST", path, json::serialize(o));
    if (r.status != 201 && r.status != 409) {
      throw std::runtime_error("installing deploy/ RBAC: POST " + path + ": HTTP " +
                               std::to_string(r.status) + ": " + r.body);
    }
  }
  if (id.service_account.empty()) {
    throw std::runtime_error("deploy/ defines no ServiceAccount for the operator");
  }
  id.user = "system:serviceaccount:" + id.ns + ":" + id.service_account;
  id.token = cluster.service_account_token(id.ns, id.service_account);
  id.config = cluster.client_config_with_token(id.token);
  return id;
}

}  // namespace aop::testing
