// --preload: YAML or JSON files (multi-document, `kind: List` expanded) or directories of
// them (recursively, in name order). CustomResourceDefinitions and Namespaces are created
// first so that the rest can refer to them whatever the file order; a namespace an object
// needs but no file defines is created (a fixture convenience a real server would not
// offer).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <boost/json.hpp>

#include "k8s/yaml.hpp"
#include "tools/kube-sim/api.hpp"
#include "tools/kube-sim/api_internal.hpp"

namespace aop::sim {

namespace json = boost::json;
namespace fs = std::filesystem;
using namespace detail;

namespace {

Result<void> read_documents(const fs::path& file,
                            std::vector<std::pair<std::string, json::value>>& out) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return make_error(file.string() + ": cannot read");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  std::vector<json::value> docs;
  if (file.extension() == ".json") {
    boost::system::error_code ec;
    json::value v = json::parse(text, ec);
    if (ec) return make_error(file.string() + ": invalid JSON: " + ec.message());
    docs.push_back(std::move(v));
  } else {
    // A preload file is a fixture chosen by whoever starts kube-sim, not input from a
    // client: the stream may be far larger than one object (a scale test's ten thousand
    // namespaces); each document keeps the usual bounds.
    k8s::yaml::ParseLimits limits;
    limits.max_input_bytes = std::size_t{1} << 30;
    limits.max_documents = 10'000'000;
    auto parsed = k8s::yaml::parse_all(text, limits);
    if (!parsed) return make_error(file.string() + ": " + parsed.error().message);
    docs = std::move(*parsed);
  }
  std::size_t i = 0;
  std::function<void(json::value &&)> add = [&](json::value&& v) {
    if (v.is_object() && str_field(v.as_object(), "kind").ends_with("List") &&
        v.as_object().contains("items") && v.as_object().at("items").is_array()) {
      for (auto& item : v.as_object()["items"].as_array()) add(std::move(item));
      return;
    }
    out.emplace_back(file.string() + " (document " + std::to_string(i) + ")", std::move(v));
  };
  for (auto& d : docs) {
    if (d.is_null()) continue;
    add(std::move(d));
    ++i;
  }
  return {};
}

}  // namespace

Result<std::size_t> ApiServer::preload(const std::string& path) {
  std::vector<fs::path> files;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (const auto& e : fs::recursive_directory_iterator(path, ec)) {
      const auto ext = e.path().extension();
      if (e.is_regular_file() && (ext == ".yaml" || ext == ".yml" || ext == ".json")) {
        files.push_back(e.path());
      }
    }
    std::sort(files.begin(), files.end());
  } else if (fs::exists(path, ec)) {
    files.emplace_back(path);
  } else {
    return make_error(path + ": no such file or directory");
  }
  std::vector<std::pair<std::string, json::value>> docs;
  for (const auto& f : files) {
    if (auto r = read_documents(f, docs); !r) return r.error();
  }
  auto rank = [](const json::value& v) {
    if (!v.is_object()) return 2;
    const auto kind = str_field(v.as_object(), "kind");
    if (kind == "CustomResourceDefinition") return 0;
    if (kind == "Namespace") return 1;
    return 2;
  };
  std::stable_sort(docs.begin(), docs.end(),
                   [&](const auto& a, const auto& b) { return rank(a.second) < rank(b.second); });
  std::size_t n = 0;
  for (auto& [where, doc] : docs) {
    if (!doc.is_object()) return make_error(where + ": not an object");
    auto& obj = doc.as_object();
    auto type = registry_.find_kind(str_field(obj, "apiVersion"), str_field(obj, "kind"));
    if (!type) {
      return make_error(where + ": no kind \"" + str_field(obj, "kind") +
                        "\" is registered for version \"" + str_field(obj, "apiVersion") + "\"");
    }
    if (type->namespaced) {
      std::string ns = str_field(metadata_of(obj), "namespace");
      if (ns.empty()) ns = "default";
      const Collection* nsc = store_.find("namespaces");
      if (nsc != nullptr && !nsc->get(ns)) {
        json::object nso{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}};
        if (auto r = create_object(std::move(nso), "kube-sim/preload"); !r) {
          std::string msg = where;
          msg += ": creating namespace " + ns + ": " + r.error().message;
          return make_error(std::move(msg));
        }
      }
    }
    // create_object() takes the document: read what the error paths need first (obj
    // refers into doc, which is empty after the move).
    const std::string kind = str_field(obj, "kind");
    const std::string name = str_field(metadata_of(obj), "name");
    const bool is_crd = kind == "CustomResourceDefinition";
    json::value spec;
    if (is_crd && obj.contains("spec")) spec = obj.at("spec");
    auto r = create_object(std::move(doc), "kube-sim/preload");
    if (!r) {
      if (r.error().reason != "AlreadyExists") return make_error(where + ": " + r.error().message);
      // The same Namespace or CRD in two preloaded trees (deploy/ and deploy/crds/, say)
      // is created once; a CRD given twice with different specs is an error, since
      // silently keeping either would hide which schema the fixture meant.
      if (kind == "Namespace") continue;
      if (is_crd) {
        const auto first = preloaded_crd_specs_.find(name);
        if (first != preloaded_crd_specs_.end() && first->second == spec) continue;
        if (first != preloaded_crd_specs_.end()) {
          return make_error(where + ": CustomResourceDefinition " + name +
                            " is preloaded twice with different specs");
        }
      }
      return make_error(where + ": " + r.error().message);
    }
    if (is_crd) preloaded_crd_specs_.emplace(name, std::move(spec));
    ++n;
  }
  run_background();
  return n;
}

}  // namespace aop::sim
