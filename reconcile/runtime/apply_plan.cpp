#include "reconcile/runtime/apply_plan.hpp"
#include "reconcile/runtime/json_fields.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <stdexcept>

#include <openssl/evp.h>

#include <boost/json.hpp>

namespace aop::runtime {

namespace json = boost::json;

namespace {

// What write_canonical() leaves out of an object: a member `skip` says to skip, and the
// filter of each nested object (null: write it whole).
struct Filter {
  std::function<bool(std::string_view key, const json::value& value)> skip;
  std::function<const Filter*(std::string_view key)> nested;
};

void write_canonical(const json::value& v, std::string& out, const Filter* filter = nullptr) {
  switch (v.kind()) {
    case json::kind::object: {
      const auto& o = v.get_object();
      std::vector<const json::key_value_pair*> members;
      members.reserve(o.size());
      for (const auto& kv : o) {
        if (filter == nullptr || !filter->skip || !filter->skip(kv.key(), kv.value())) {
          members.push_back(&kv);
        }
      }
      std::sort(members.begin(), members.end(),
                [](const auto* a, const auto* b) { return a->key() < b->key(); });
      out.push_back('{');
      bool first = true;
      for (const auto* kv : members) {
        if (!first) out.push_back(',');
        first = false;
        out += json::serialize(json::string_view(kv->key()));
        out.push_back(':');
        write_canonical(kv->value(), out,
                        filter != nullptr && filter->nested ? filter->nested(kv->key()) : nullptr);
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

using detail::string_at;

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
  // The object as written, without what the server or the engine sets (status,
  // metadata.resourceVersion, the hash annotation; annotations left empty by that go
  // too). Filtered while writing: a config Secret is hundreds of kilobytes, not copied.
  const Filter annotations{
      [&](std::string_view key, const json::value&) { return key == hash_annotation; }, {}};
  const Filter metadata{
      [&](std::string_view key, const json::value& value) {
        if (key == "resourceVersion") return true;
        if (key != "annotations" || !value.is_object()) return false;
        const auto& a = value.get_object();
        return a.empty() || (a.size() == 1 && a.contains(hash_annotation));
      },
      [&](std::string_view key) { return key == "annotations" ? &annotations : nullptr; }};
  const Filter top{[](std::string_view key, const json::value&) { return key == "status"; },
                   [&](std::string_view key) { return key == "metadata" ? &metadata : nullptr; }};
  std::string out;
  write_canonical(desired, out, &top);
  return sha256_hex(out);
}

}  // namespace aop::runtime
