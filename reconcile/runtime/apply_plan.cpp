#include "reconcile/runtime/apply_plan.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include <openssl/evp.h>

#include <boost/json.hpp>

namespace aop::runtime {

namespace json = boost::json;

namespace {

void write_canonical(const json::value& v, std::string& out) {
  switch (v.kind()) {
    case json::kind::object: {
      const auto& o = v.get_object();
      std::vector<const json::key_value_pair*> members;
      members.reserve(o.size());
      for (const auto& kv : o) members.push_back(&kv);
      std::sort(members.begin(), members.end(),
                [](const auto* a, const auto* b) { return a->key() < b->key(); });
      out.push_back('{');
      bool first = true;
      for (const auto* kv : members) {
        if (!first) out.push_back(',');
        first = false;
        out += json::serialize(json::string_view(kv->key()));
        out.push_back(':');
        write_canonical(kv->value(), out);
      }
      out.push_back('}');
      break;
    }
    case json::kind::array: {
      out.push_back('[');
      bool first = true;
      for (const auto& e : v.get_array()) {
        if (!first) out.push_back(',');
        first = false;
        write_canonical(e, out);
      }
      out.push_back(']');
      break;
    }
    default:
      out += json::serialize(v);
  }
}

std::string string_at(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

}  // namespace

void ApplyPlan::apply(json::object object, std::string hash) {
  ApplyStep step;
  step.action = ApplyStep::Action::apply;
  if (auto gvk = gvk_of(object)) step.kind = std::move(*gvk);
  if (const auto* md = object.if_contains("metadata"); md != nullptr && md->is_object()) {
    step.key = {string_at(md->get_object(), "namespace"), string_at(md->get_object(), "name")};
  }
  step.object = std::move(object);
  step.hash = std::move(hash);
  steps.push_back(std::move(step));
}

void ApplyPlan::delete_if_managed(k8s::GroupVersionKind kind, k8s::ObjectKey key) {
  ApplyStep step;
  step.action = ApplyStep::Action::delete_if_managed;
  step.kind = std::move(kind);
  step.key = std::move(key);
  steps.push_back(std::move(step));
}

void ApplyPlan::prune(PruneScope scope) {
  ApplyStep step;
  step.action = ApplyStep::Action::prune;
  step.prune = std::move(scope);
  steps.push_back(std::move(step));
}

const json::object* ApplyPlan::find(const GroupKind& kind, const k8s::ObjectKey& key) const {
  for (const auto& s : steps) {
    if (s.action == ApplyStep::Action::apply && GroupKind::of(s.kind) == kind && s.key == key) {
      return &s.object;
    }
  }
  return nullptr;
}

std::size_t ApplyPlan::applies() const {
  return static_cast<std::size_t>(std::count_if(steps.begin(), steps.end(), [](const auto& s) {
    return s.action == ApplyStep::Action::apply;
  }));
}

std::string sha256_hex(std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), md.data(), &len, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("SHA-256 is unavailable in this OpenSSL");  // start-up failure
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(static_cast<std::size_t>(len) * 2);
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(kHex[md[i] >> 4]);
    out.push_back(kHex[md[i] & 0xf]);
  }
  return out;
}

std::optional<k8s::GroupVersionKind> gvk_of(const json::object& obj) {
  const std::string api_version = string_at(obj, "apiVersion");
  const std::string kind = string_at(obj, "kind");
  if (api_version.empty() || kind.empty()) return std::nullopt;
  k8s::GroupVersionKind gvk;
  const auto slash = api_version.find('/');
  if (slash == std::string::npos) {
    gvk.version = api_version;
  } else {
    gvk.group = api_version.substr(0, slash);
    gvk.version = api_version.substr(slash + 1);
  }
  gvk.kind = kind;
  return gvk;
}

std::string canonical_json(const json::value& v) {
  std::string out;
  write_canonical(v, out);
  return out;
}

std::string content_hash(const json::object& desired, std::string_view hash_annotation) {
  json::object copy = desired;
  if (auto* md = copy.if_contains("metadata"); md != nullptr && md->is_object()) {
    auto& m = md->get_object();
    m.erase("resourceVersion");
    if (auto* a = m.if_contains("annotations"); a != nullptr && a->is_object()) {
      a->get_object().erase(hash_annotation);
      if (a->get_object().empty()) m.erase("annotations");
    }
  }
  copy.erase("status");
  return sha256_hex(canonical_json(copy));
}

}  // namespace aop::runtime
