#include "reconcile/validation/kubernetes.hpp"

#include <array>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>

#include <boost/json.hpp>

#include "reconcile/validation/text.hpp"

namespace aop::validation {

namespace json = boost::json;

namespace {

constexpr std::size_t kLabelMax = 63;
constexpr std::size_t kSubdomainMax = 253;
constexpr std::size_t kAnnotationsMax = std::size_t{256} * 1024;

bool lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}
bool alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool is_qualified_part(std::string_view s) {
  if (s.empty() || !alnum(s.front()) || !alnum(s.back())) return false;
  for (const char c : s) {
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

const json::object* object_of(const json::value& v) {
  return v.is_object() ? &v.get_object() : nullptr;
}

std::string_view string_at(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

bool has(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && !v->is_null();
}

std::optional<std::int64_t> int_at(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  if (v->is_int64()) return v->get_int64();
  if (v->is_uint64()) {
    return v->get_uint64() > static_cast<std::uint64_t>(INT64_MAX)
               ? INT64_MAX
               : static_cast<std::int64_t>(v->get_uint64());
  }
  if (v->is_double() && std::trunc(v->get_double()) == v->get_double()) {
    return static_cast<std::int64_t>(v->get_double());
  }
  return std::nullopt;
}

// A string member: reported when present and not a string.
bool expect_string(Checker& c, const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  if (v == nullptr || v->is_null() || v->is_string()) return true;
  c.check(key, "must be a string");
  return false;
}

bool expect_object(Checker& c, const json::value& v) {
  if (v.is_object()) return true;
  c.check(std::string_view(), "must be an object");
  return false;
}

}  // namespace

// ---- names -------------------------------------------------------------------------------

bool is_dns_label(std::string_view s) {
  if (s.empty() || s.size() > kLabelMax) return false;
  if (!lower_alnum(s.front()) || !lower_alnum(s.back())) return false;
  for (const char c : s) {
    if (!lower_alnum(c) && c != '-') return false;
  }
  return true;
}

Complaint check_dns_label(std::string_view s) {
  if (s.empty()) return "must not be empty";
  if (s.size() > kLabelMax) {
    return describe(s) + " must be no more than 63 characters (it has " + std::to_string(s.size()) +
           ")";
  }
  if (!is_dns_label(s)) {
    return describe(s) +
           " must be a lowercase RFC 1123 label: lower-case letters, digits and '-', starting "
           "and ending with a letter or digit";
  }
  return std::nullopt;
}

Complaint check_dns_subdomain(std::string_view s) {
  if (s.empty()) return "must not be empty";
  if (s.size() > kSubdomainMax) {
    return describe(s) + " must be no more than 253 characters";
  }
  std::size_t start = 0;
  for (;;) {
    const auto dot = s.find('.', start);
    const auto part = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (part.empty() || !lower_alnum(part.front()) || !lower_alnum(part.back()) ||
        part.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string_view::npos) {
      return describe(s) +
             " must be a lowercase RFC 1123 subdomain: lower-case letters, digits, '-' and "
             "'.', each part starting and ending with a letter or digit";
    }
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return std::nullopt;
}

Complaint check_qualified_name(std::string_view s) {
  if (s.empty()) return "the key must not be empty";
  std::string_view name = s;
  if (const auto slash = s.find('/'); slash != std::string_view::npos) {
    const auto prefix = s.substr(0, slash);
    name = s.substr(slash + 1);
    if (prefix.empty()) return "the key " + describe(s) + " has an empty prefix before '/'";
    if (auto c = check_dns_subdomain(prefix)) return "the prefix of key " + describe(s) + ": " + *c;
  }
  if (name.empty() || name.size() > kLabelMax || !is_qualified_part(name)) {
    return "the key " + describe(s) +
           " is not a qualified name: an optional DNS-subdomain prefix and '/', then at most 63 "
           "letters, digits, '-', '_' or '.', starting and ending with a letter or digit";
  }
  return std::nullopt;
}

Complaint check_label_value_k8s(std::string_view s) {
  if (s.empty()) return std::nullopt;
  if (s.size() > kLabelMax || !is_qualified_part(s)) {
    return "the value " + describe(s) +
           " is not a valid label value: at most 63 letters, digits, '-', '_' or '.', starting "
           "and ending with a letter or digit";
  }
  return std::nullopt;
}

Complaint check_port_name(std::string_view s) {
  const auto bad = [&](const char* why) {
    return Complaint(describe(s) + " is not a valid port name: " + why +
                     " (an IANA service name: at most 15 lower-case letters, digits and '-')");
  };
  if (s.empty()) return bad("it is empty");
  if (s.size() > 15) return bad("it is longer than 15 characters");
  bool letter = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c >= 'a' && c <= 'z') letter = true;
    if (!lower_alnum(c) && c != '-') return bad("it has characters other than a-z, 0-9 and '-'");
    if (c == '-' && (i == 0 || i + 1 == s.size())) return bad("it starts or ends with '-'");
    if (c == '-' && s[i - 1] == '-') return bad("it has '--'");
  }
  if (!letter) return bad("it has no letter");
  return std::nullopt;
}

Complaint check_env_var_name(std::string_view s) {
  bool ok = !s.empty();
  for (std::size_t i = 0; ok && i < s.size(); ++i) {
    const char c = s[i];
    ok = alnum(c) || c == '-' || c == '.' || c == '_';
    if (i == 0 && c >= '0' && c <= '9') ok = false;
  }
  if (!ok) {
    return describe(s) +
           " is not a valid environment variable name: letters, digits, '_', '-' and '.', not "
           "starting with a digit";
  }
  return std::nullopt;
}

Complaint check_image_tag(std::string_view s) {
  bool ok = !s.empty() && s.size() <= 128 && (alnum(s.front()) || s.front() == '_');
  for (const char c : s) ok = ok && (alnum(c) || c == '_' || c == '.' || c == '-');
  if (!ok) {
    return "the tag " + describe(s) +
           " is not a valid image tag: at most 128 letters, digits, '_', '.' and '-', not "
           "starting with '.' or '-'";
  }
  return std::nullopt;
}

Complaint check_image(std::string_view s) {
  if (s.empty()) return "the image must not be empty";
  if (std::isspace(static_cast<unsigned char>(s.front())) ||
      std::isspace(static_cast<unsigned char>(s.back()))) {
    return "the image " + describe(s) + " must not have leading or trailing whitespace";
  }
  const auto bad = [&](const std::string& why) {
    return Complaint("the image " + describe(s) + " is not a valid image reference (" + why +
                     "); expected [registry[:port]/]path[:tag][@sha256:digest]");
  };
  std::string_view rest = s;
  // Digest.
  if (const auto at = rest.find('@'); at != std::string_view::npos) {
    const auto digest = rest.substr(at + 1);
    rest = rest.substr(0, at);
    const auto colon = digest.find(':');
    if (colon == std::string_view::npos || colon == 0)
      return bad("the digest is not algorithm:hex");
    const auto hex = digest.substr(colon + 1);
    if (hex.size() < 32 ||
        hex.find_first_not_of("0123456789abcdefABCDEF") != std::string_view::npos) {
      return bad("the digest is not algorithm:hex with at least 32 hex digits");
    }
  }
  // Tag: after the last ':' that follows the last '/'.
  const auto slash = rest.rfind('/');
  const auto colon = rest.rfind(':');
  if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) {
    if (auto c = check_image_tag(rest.substr(colon + 1))) return bad(*c);
    rest = rest.substr(0, colon);
  }
  if (rest.empty()) return bad("the name is empty");
  if (rest.size() > 255) return bad("the name is longer than 255 characters");
  // Registry: the first component when it has '.' or ':' or is localhost.
  std::size_t start = 0;
  const auto first_slash = rest.find('/');
  if (first_slash != std::string_view::npos) {
    const auto first = rest.substr(0, first_slash);
    if (first.find_first_of(".:") != std::string_view::npos || first == "localhost" ||
        first.find_first_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ") != std::string_view::npos) {
      std::string_view host = first;
      if (const auto pc = first.find(':'); pc != std::string_view::npos) {
        const auto port = first.substr(pc + 1);
        if (port.empty() || port.find_first_not_of("0123456789") != std::string_view::npos) {
          return bad("the registry port is not a number");
        }
        host = first.substr(0, pc);
      }
      if (host.empty() || host.front() == '-' || host.back() == '-' ||
          host.find_first_not_of(
              "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.") !=
              std::string_view::npos) {
        return bad("the registry host is not a host name");
      }
      start = first_slash + 1;
    }
  }
  // Path components: [a-z0-9]+ separated by '.', '_', '__' or runs of '-'.
  std::size_t i = start;
  while (i <= rest.size()) {
    const auto end = rest.find('/', i);
    const auto comp = rest.substr(i, end == std::string_view::npos ? rest.npos : end - i);
    if (comp.empty() || !lower_alnum(comp.front()) || !lower_alnum(comp.back())) {
      return bad("each path component must start and end with a lower-case letter or digit");
    }
    for (std::size_t k = 0; k < comp.size(); ++k) {
      const char c = comp[k];
      if (lower_alnum(c) || c == '-') continue;
      if (c == '.' && lower_alnum(comp[k + 1])) continue;
      if (c == '_' && (lower_alnum(comp[k + 1]) ||
                       (comp[k + 1] == '_' && k + 2 < comp.size() && lower_alnum(comp[k + 2])))) {
        if (comp[k + 1] == '_') ++k;
        continue;
      }
      return bad("the path has characters other than lower-case letters, digits and . _ -");
    }
    if (end == std::string_view::npos) break;
    i = end + 1;
  }
  return std::nullopt;
}

// ---- quantities ----------------------------------------------------------------------------

std::optional<long double> quantity_value(std::string_view s) {
  std::size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    negative = s[i] == '-';
    ++i;
  }
  const std::size_t number_start = i;
  bool digits = false;
  bool dot = false;
  while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) {
    if (s[i] == '.') {
      if (dot) return std::nullopt;
      dot = true;
    } else {
      digits = true;
    }
    ++i;
  }
  if (!digits) return std::nullopt;
  long double value =
      std::strtold(std::string(s.substr(number_start, i - number_start)).c_str(), nullptr);
  const std::string_view suffix = s.substr(i);
  static const std::pair<std::string_view, long double> kSuffixes[] = {
      {"", 1.0L},
      {"n", 1e-9L},
      {"u", 1e-6L},
      {"m", 1e-3L},
      {"k", 1e3L},
      {"M", 1e6L},
      {"G", 1e9L},
      {"T", 1e12L},
      {"P", 1e15L},
      {"E", 1e18L},
      {"Ki", 1024.0L},
      {"Mi", 1048576.0L},
      {"Gi", 1073741824.0L},
      {"Ti", 1099511627776.0L},
      {"Pi", 1125899906842624.0L},
      {"Ei", 1152921504606846976.0L}};
  bool known = false;
  for (const auto& [name, factor] : kSuffixes) {
    if (suffix == name) {
      value *= factor;
      known = true;
      break;
    }
  }
  if (!known) {
    // Decimal exponent: e or E and a signed integer.
    if (suffix.size() < 2 || (suffix[0] != 'e' && suffix[0] != 'E')) return std::nullopt;
    std::size_t k = 1;
    if (suffix[k] == '+' || suffix[k] == '-') ++k;
    if (k >= suffix.size() ||
        suffix.substr(k).find_first_not_of("0123456789") != std::string_view::npos) {
      return std::nullopt;
    }
    value *= std::pow(10.0L, std::strtold(std::string(suffix.substr(1)).c_str(), nullptr));
  }
  return negative ? -value : value;
}

Complaint check_quantity(std::string_view s) {
  if (!quantity_value(s)) {
    return "quantity " + describe(s) +
           " must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' "
           "(e.g. 100m, 0.5, 128Mi, 1Gi)";
  }
  return std::nullopt;
}

// ---- objects -----------------------------------------------------------------------------

void check_labels(Checker& c, const json::value& labels) {
  const auto* o = object_of(labels);
  if (o == nullptr) {
    if (!labels.is_null()) c.check(std::string_view(), "must be a map of strings");
    return;
  }
  for (const auto& kv : *o) {
    const auto k = c.key(kv.key());
    c.check(check_qualified_name(kv.key()));
    if (!kv.value().is_string()) {
      c.check("must be a string");
      continue;
    }
    c.check(check_label_value_k8s(kv.value().get_string()));
  }
}

void check_annotations(Checker& c, const json::value& annotations) {
  const auto* o = object_of(annotations);
  if (o == nullptr) {
    if (!annotations.is_null()) c.check(std::string_view(), "must be a map of strings");
    return;
  }
  std::size_t total = 0;
  for (const auto& kv : *o) {
    const std::string lower = ascii_lower(kv.key());
    {
      const auto k = c.key(kv.key());
      c.check(check_qualified_name(lower));
      if (!kv.value().is_string()) c.check("must be a string");
    }
    total += kv.key().size() + (kv.value().is_string() ? kv.value().get_string().size() : 0);
  }
  if (total > kAnnotationsMax) {
    c.check(std::string_view(), "annotations are " + std::to_string(total) +
                                    " bytes in total; at most 262144 (256 KiB) are allowed");
  }
}

void check_node_selector(Checker& c, const json::value& selector) {
  check_labels(c, selector);
}

void check_toleration(Checker& c, const json::value& toleration) {
  if (!expect_object(c, toleration)) return;
  const auto& t = toleration.get_object();
  for (const char* k : {"key", "operator", "value", "effect"}) {
    if (!expect_string(c, t, k)) return;
  }
  const auto key = string_at(t, "key");
  const auto op = string_at(t, "operator");
  const auto value = string_at(t, "value");
  const auto effect = string_at(t, "effect");
  if (!key.empty()) c.check("key", check_qualified_name(key));
  if (!is_one_of(op, {"", "Exists", "Equal"})) {
    c.check("operator", "Unsupported value: " + describe(op) +
                            ": supported values: \"Equal\", "
                            "\"Exists\"");
  }
  if (key.empty() && op != "Exists") {
    c.check("operator",
            "must be Exists when `key` is empty, which means \"match all values and "
            "all keys\"");
  }
  if (op == "Exists" && !value.empty()) {
    c.check("value", "value must be empty when `operator` is 'Exists'");
  }
  if (op != "Exists") c.check("value", check_label_value_k8s(value));
  if (!is_one_of(effect, {"", "NoSchedule", "PreferNoSchedule", "NoExecute"})) {
    c.check("effect", "Unsupported value: " + describe(effect) +
                          ": supported values: \"NoSchedule\", \"PreferNoSchedule\", "
                          "\"NoExecute\"");
  }
  if (has(t, "tolerationSeconds")) {
    if (!int_at(t, "tolerationSeconds")) c.check("tolerationSeconds", "must be an integer");
    if (effect != "NoExecute") {
      c.check("effect", "effect must be 'NoExecute' when `tolerationSeconds` is set");
    }
  }
}

void check_resources(Checker& c, const json::value& resources) {
  if (!expect_object(c, resources)) return;
  const auto& r = resources.get_object();
  std::map<std::string, long double, std::less<>> limits;
  for (const char* part : {"limits", "requests"}) {
    const auto* v = r.if_contains(part);
    if (v == nullptr || v->is_null()) continue;
    const auto f = c.field(part);
    if (!v->is_object()) {
      c.check("must be a map of resource names to quantities");
      continue;
    }
    for (const auto& kv : v->get_object()) {
      const auto k = c.key(kv.key());
      const std::string_view name = kv.key();
      const bool standard = is_one_of(name, {"cpu", "memory", "ephemeral-storage", "storage"}) ||
                            name.substr(0, 10) == "hugepages-";
      if (!standard && name.find('/') == std::string_view::npos) {
        c.check(describe(name) +
                " is not a resource name: use cpu, memory, ephemeral-storage, "
                "hugepages-<size>, or a domain-qualified extended resource");
        continue;
      }
      if (!standard) {
        if (c.check(check_qualified_name(name))) continue;
      }
      std::string text;
      if (kv.value().is_string()) {
        text = std::string(kv.value().get_string());
      } else if (kv.value().is_number()) {
        text = json::serialize(kv.value());
      } else {
        c.check("must be a quantity such as 500m or 1Gi");
        continue;
      }
      if (c.check(check_quantity(text))) continue;
      const long double q = *quantity_value(text);
      if (q < 0) {
        c.check("must be greater than or equal to 0");
        continue;
      }
      if (std::string_view(part) == "limits") {
        limits.emplace(std::string(name), q);
      } else if (const auto it = limits.find(name); it != limits.end() && q > it->second) {
        c.check("must be less than or equal to " + std::string(name) + " limit");
      }
    }
  }
}

namespace {

constexpr std::array<std::string_view, 29> kVolumeSources = {"hostPath",
                                                             "emptyDir",
                                                             "gcePersistentDisk",
                                                             "awsElasticBlockStore",
                                                             "gitRepo",
                                                             "secret",
                                                             "nfs",
                                                             "iscsi",
                                                             "glusterfs",
                                                             "persistentVolumeClaim",
                                                             "rbd",
                                                             "flexVolume",
                                                             "cinder",
                                                             "cephfs",
                                                             "flocker",
                                                             "downwardAPI",
                                                             "fc",
                                                             "azureFile",
                                                             "configMap",
                                                             "vsphereVolume",
                                                             "quobyte",
                                                             "azureDisk",
                                                             "photonPersistentDisk",
                                                             "projected",
                                                             "portworxVolume",
                                                             "scaleIO",
                                                             "storageos",
                                                             "csi",
                                                             "ephemeral"};

void require_string(Checker& c, const json::object& o, std::string_view key,
                    Complaint (*rule)(std::string_view)) {
  if (!expect_string(c, o, key)) return;
  const auto v = string_at(o, key);
  if (v.empty()) {
    c.check(key, "Required value");
    return;
  }
  if (rule != nullptr) c.check(key, rule(v));
}

}  // namespace

void check_volume(Checker& c, const json::value& volume) {
  if (!expect_object(c, volume)) return;
  const auto& v = volume.get_object();
  if (!expect_string(c, v, "name")) return;
  c.check("name", check_dns_label(string_at(v, "name")));
  std::vector<std::string_view> sources;
  for (const auto s : kVolumeSources) {
    if (has(v, s)) sources.push_back(s);
  }
  if (sources.empty()) {
    // The API server defaults a volume without a source to an emptyDir.
    c.warn(std::string_view(), "has no volume source; Kubernetes makes it an emptyDir");
    return;
  }
  if (sources.size() > 1) {
    c.check(sources[1], "may not specify more than 1 volume type");
    return;
  }
  const auto source = sources.front();
  const auto f = c.field(source);
  const auto& sv = v.at(source);
  if (!sv.is_object()) {
    c.check("must be an object");
    return;
  }
  const auto& s = sv.get_object();
  if (source == "secret") {
    require_string(c, s, "secretName", nullptr);
  } else if (source == "configMap") {
    require_string(c, s, "name", nullptr);
  } else if (source == "persistentVolumeClaim") {
    require_string(c, s, "claimName", nullptr);
  } else if (source == "hostPath") {
    require_string(c, s, "path", nullptr);
  } else if (source == "emptyDir") {
    if (const auto* size = s.if_contains("sizeLimit"); size != nullptr && size->is_string()) {
      c.check("sizeLimit", check_quantity(size->get_string()));
    }
    if (!expect_string(c, s, "medium")) return;
    if (!is_one_of(string_at(s, "medium"), {"", "Memory", "HugePages"}) &&
        string_at(s, "medium").substr(0, 10) != "HugePages-") {
      c.check("medium", "Unsupported value: " + describe(string_at(s, "medium")) +
                            ": supported values: \"\", \"Memory\", \"HugePages\"");
    }
  }
}

void check_volume_mount(Checker& c, const json::value& mount,
                        const std::set<std::string, std::less<>>& volumes,
                        std::set<std::string, std::less<>>& taken_paths) {
  if (!expect_object(c, mount)) return;
  const auto& m = mount.get_object();
  for (const char* k : {"name", "mountPath", "subPath", "mountPropagation"}) {
    if (!expect_string(c, m, k)) return;
  }
  const auto name = string_at(m, "name");
  if (name.empty()) {
    c.check("name", "Required value");
  } else if (!volumes.contains(name)) {
    c.check("name", "Not found: " + describe(name) + " (no volume of that name in the pod)");
  }
  const auto path = string_at(m, "mountPath");
  if (path.empty()) {
    c.check("mountPath", "Required value");
  } else if (!taken_paths.insert(std::string(path)).second) {
    c.check("mountPath", "Invalid value: " + describe(path) + ": must be unique");
  }
  const auto sub = string_at(m, "subPath");
  if (!sub.empty()) {
    if (sub.front() == '/') c.check("subPath", "must be a relative path");
    if (sub == ".." || sub.substr(0, 3) == "../" || sub.find("/../") != std::string_view::npos ||
        (sub.size() >= 3 && sub.substr(sub.size() - 3) == "/..")) {
      c.check("subPath", "must not contain '..'");
    }
  }
  const auto prop = string_at(m, "mountPropagation");
  if (!prop.empty() && !is_one_of(prop, {"None", "HostToContainer", "Bidirectional"})) {
    c.check("mountPropagation", "Unsupported value: " + describe(prop) +
                                    ": supported values: \"Bidirectional\", \"HostToContainer\", "
                                    "\"None\"");
  }
}

void check_container(Checker& c, const json::value& container, bool image_required,
                     const std::set<std::string, std::less<>>& volumes,
                     std::set<std::string, std::less<>> taken_paths) {
  if (!expect_object(c, container)) return;
  const auto& o = container.get_object();
  for (const char* k : {"name", "image", "imagePullPolicy"}) {
    if (!expect_string(c, o, k)) return;
  }
  c.check("name", check_dns_label(string_at(o, "name")));
  if (has(o, "image") || image_required) c.check("image", check_image(string_at(o, "image")));
  if (const auto p = string_at(o, "imagePullPolicy");
      !p.empty() && !is_one_of(p, {"Always", "IfNotPresent", "Never"})) {
    c.check("imagePullPolicy", "Unsupported value: " + describe(p) +
                                   ": supported values: \"Always\", \"IfNotPresent\", \"Never\"");
  }
  if (const auto* ports = o.if_contains("ports"); ports != nullptr && ports->is_array()) {
    const auto f = c.field("ports");
    std::set<std::string, std::less<>> names;
    for (std::size_t i = 0; i < ports->get_array().size(); ++i) {
      const auto is = c.index(i);
      const auto& pv = ports->get_array()[i];
      if (!expect_object(c, pv)) continue;
      const auto& p = pv.get_object();
      const auto port = int_at(p, "containerPort");
      if (!port || *port < 1 || *port > 65535) {
        c.check("containerPort", "must be between 1 and 65535, inclusive");
      }
      if (has(p, "hostPort")) {
        const auto hp = int_at(p, "hostPort");
        if (!hp || *hp < 0 || *hp > 65535)
          c.check("hostPort", "must be between 1 and 65535, inclusive");
      }
      if (!expect_string(c, p, "name") || !expect_string(c, p, "protocol")) continue;
      if (const auto n = string_at(p, "name"); !n.empty()) {
        if (!c.check("name", check_port_name(n)) && !names.insert(std::string(n)).second) {
          c.check("name", "Duplicate value: " + describe(n));
        }
      }
      if (const auto proto = string_at(p, "protocol");
          !proto.empty() && !is_one_of(proto, {"TCP", "UDP", "SCTP"})) {
        c.check("protocol", "Unsupported value: " + describe(proto) +
                                ": supported values: \"SCTP\", \"TCP\", \"UDP\"");
      }
    }
  }
  if (const auto* env = o.if_contains("env"); env != nullptr && env->is_array()) {
    const auto f = c.field("env");
    for (std::size_t i = 0; i < env->get_array().size(); ++i) {
      const auto is = c.index(i);
      const auto& ev = env->get_array()[i];
      if (!expect_object(c, ev) || !expect_string(c, ev.get_object(), "name")) continue;
      c.check("name", check_env_var_name(string_at(ev.get_object(), "name")));
    }
  }
  if (const auto* r = o.if_contains("resources"); r != nullptr && !r->is_null()) {
    const auto f = c.field("resources");
    check_resources(c, *r);
  }
  if (const auto* mounts = o.if_contains("volumeMounts"); mounts != nullptr && mounts->is_array()) {
    const auto f = c.field("volumeMounts");
    for (std::size_t i = 0; i < mounts->get_array().size(); ++i) {
      const auto is = c.index(i);
      check_volume_mount(c, mounts->get_array()[i], volumes, taken_paths);
    }
  }
}

namespace {

void check_node_selector_requirement(Checker& c, const json::value& req) {
  if (!expect_object(c, req)) return;
  const auto& r = req.get_object();
  if (!expect_string(c, r, "key") || !expect_string(c, r, "operator")) return;
  c.check("key", check_qualified_name(string_at(r, "key")));
  const auto op = string_at(r, "operator");
  const auto* values = r.if_contains("values");
  const std::size_t n = values != nullptr && values->is_array() ? values->get_array().size() : 0;
  if (op == "In" || op == "NotIn") {
    if (n == 0) c.check("values", "must be specified when `operator` is 'In' or 'NotIn'");
  } else if (op == "Exists" || op == "DoesNotExist") {
    if (n != 0)
      c.check("values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
  } else if (op == "Gt" || op == "Lt") {
    if (n != 1) c.check("values", "must be specified single value when `operator` is 'Lt' or 'Gt'");
  } else {
    c.check("operator", "Unsupported value: " + describe(op) +
                            ": supported values: \"In\", \"NotIn\", \"Exists\", "
                            "\"DoesNotExist\", \"Gt\", \"Lt\"");
  }
}

void check_node_selector_term(Checker& c, const json::value& term) {
  if (!expect_object(c, term)) return;
  for (const char* part : {"matchExpressions", "matchFields"}) {
    const auto* list = term.get_object().if_contains(part);
    if (list == nullptr || !list->is_array()) continue;
    const auto f = c.field(part);
    for (std::size_t i = 0; i < list->get_array().size(); ++i) {
      const auto is = c.index(i);
      check_node_selector_requirement(c, list->get_array()[i]);
    }
  }
}

void check_pod_affinity_term(Checker& c, const json::value& term) {
  if (!expect_object(c, term)) return;
  const auto& t = term.get_object();
  if (!expect_string(c, t, "topologyKey")) return;
  const auto key = string_at(t, "topologyKey");
  if (key.empty()) {
    c.check("topologyKey", "can not be empty");
  } else {
    c.check("topologyKey", check_qualified_name(key));
  }
  if (const auto* sel = t.if_contains("labelSelector"); sel != nullptr && !sel->is_null()) {
    const auto f = c.field("labelSelector");
    check_label_selector(c, *sel);
  }
}

template <class Fn>
void each(Checker& c, const json::object& o, std::string_view key, Fn&& fn) {
  const auto* list = o.if_contains(key);
  if (list == nullptr || list->is_null()) return;
  const auto f = c.field(key);
  if (!list->is_array()) {
    c.check("must be a list");
    return;
  }
  for (std::size_t i = 0; i < list->get_array().size(); ++i) {
    const auto is = c.index(i);
    fn(list->get_array()[i]);
  }
}

void check_weighted(Checker& c, const json::value& w, std::string_view term_key, bool pod) {
  if (!expect_object(c, w)) return;
  const auto& o = w.get_object();
  const auto weight = int_at(o, "weight");
  if (!weight || *weight < 1 || *weight > 100) c.check("weight", "must be in the range 1-100");
  const auto* term = o.if_contains(term_key);
  if (term == nullptr || term->is_null()) {
    c.check(term_key, "Required value");
    return;
  }
  const auto f = c.field(term_key);
  if (pod) {
    check_pod_affinity_term(c, *term);
  } else {
    check_node_selector_term(c, *term);
  }
}

}  // namespace

void check_affinity(Checker& c, const json::value& affinity) {
  if (!expect_object(c, affinity)) return;
  const auto& a = affinity.get_object();
  if (const auto* node = a.if_contains("nodeAffinity"); node != nullptr && node->is_object()) {
    const auto f = c.field("nodeAffinity");
    const auto& n = node->get_object();
    if (const auto* req = n.if_contains("requiredDuringSchedulingIgnoredDuringExecution");
        req != nullptr && req->is_object()) {
      const auto r = c.field("requiredDuringSchedulingIgnoredDuringExecution");
      const auto* terms = req->get_object().if_contains("nodeSelectorTerms");
      if (terms == nullptr || !terms->is_array() || terms->get_array().empty()) {
        c.check("nodeSelectorTerms", "must have at least one node selector term");
      } else {
        each(c, req->get_object(), "nodeSelectorTerms",
             [&](const json::value& t) { check_node_selector_term(c, t); });
      }
    }
    each(c, n, "preferredDuringSchedulingIgnoredDuringExecution",
         [&](const json::value& w) { check_weighted(c, w, "preference", false); });
  }
  for (const char* kind : {"podAffinity", "podAntiAffinity"}) {
    const auto* pa = a.if_contains(kind);
    if (pa == nullptr || !pa->is_object()) continue;
    const auto f = c.field(kind);
    each(c, pa->get_object(), "requiredDuringSchedulingIgnoredDuringExecution",
         [&](const json::value& t) { check_pod_affinity_term(c, t); });
    each(c, pa->get_object(), "preferredDuringSchedulingIgnoredDuringExecution",
         [&](const json::value& w) { check_weighted(c, w, "podAffinityTerm", true); });
  }
}

void check_topology_spread_constraint(Checker& c, const json::value& constraint) {
  if (!expect_object(c, constraint)) return;
  const auto& t = constraint.get_object();
  const auto skew = int_at(t, "maxSkew");
  if (!skew || *skew <= 0) c.check("maxSkew", "must be greater than zero");
  if (!expect_string(c, t, "topologyKey") || !expect_string(c, t, "whenUnsatisfiable")) return;
  if (string_at(t, "topologyKey").empty()) {
    c.check("topologyKey", "can not be empty");
  } else {
    c.check("topologyKey", check_qualified_name(string_at(t, "topologyKey")));
  }
  if (!is_one_of(string_at(t, "whenUnsatisfiable"), {"DoNotSchedule", "ScheduleAnyway"})) {
    c.check("whenUnsatisfiable",
            "Unsupported value: " + describe(string_at(t, "whenUnsatisfiable")) +
                ": supported values: \"DoNotSchedule\", \"ScheduleAnyway\"");
  }
  if (const auto* sel = t.if_contains("labelSelector"); sel != nullptr && !sel->is_null()) {
    const auto f = c.field("labelSelector");
    check_label_selector(c, *sel);
  }
}

void check_pod_security_context(Checker& c, const json::value& context) {
  if (!expect_object(c, context)) return;
  const auto& s = context.get_object();
  for (const char* id : {"runAsUser", "runAsGroup", "fsGroup"}) {
    if (!has(s, id)) continue;
    const auto v = int_at(s, id);
    if (!v || *v < 0 || *v > 2147483647) c.check(id, "must be between 0 and 2147483647, inclusive");
  }
  if (const auto* groups = s.if_contains("supplementalGroups");
      groups != nullptr && groups->is_array()) {
    for (std::size_t i = 0; i < groups->get_array().size(); ++i) {
      const auto& g = groups->get_array()[i];
      if (!g.is_number() || g.to_number<double>() < 0 || g.to_number<double>() > 2147483647) {
        c.check("supplementalGroups[" + std::to_string(i) + "]",
                "must be between 0 and 2147483647, inclusive");
      }
    }
  }
  if (!expect_string(c, s, "fsGroupChangePolicy")) return;
  if (const auto p = string_at(s, "fsGroupChangePolicy");
      !p.empty() && !is_one_of(p, {"OnRootMismatch", "Always"})) {
    c.check("fsGroupChangePolicy", "Unsupported value: " + describe(p) +
                                       ": supported values: \"OnRootMismatch\", \"Always\"");
  }
}

void check_pvc_template(Checker& c, const json::value& pvc) {
  if (!expect_object(c, pvc)) return;
  const auto& p = pvc.get_object();
  if (const auto* md = p.if_contains("metadata"); md != nullptr && md->is_object()) {
    const auto f = c.field("metadata");
    const auto& m = md->get_object();
    if (expect_string(c, m, "name") && !string_at(m, "name").empty()) {
      c.check("name", check_dns_label(string_at(m, "name")));
    }
    if (const auto* l = m.if_contains("labels")) {
      const auto lf = c.field("labels");
      check_labels(c, *l);
    }
    if (const auto* a = m.if_contains("annotations")) {
      const auto af = c.field("annotations");
      check_annotations(c, *a);
    }
  }
  const auto* spec = p.if_contains("spec");
  if (spec == nullptr || !spec->is_object()) {
    c.check("spec.resources.requests.storage", "Required value: the claim needs a storage size");
    return;
  }
  const auto f = c.field("spec");
  const auto& s = spec->get_object();
  if (const auto* modes = s.if_contains("accessModes"); modes != nullptr && modes->is_array()) {
    for (std::size_t i = 0; i < modes->get_array().size(); ++i) {
      const auto& m = modes->get_array()[i];
      if (!m.is_string() || !is_one_of(m.get_string(), {"ReadWriteOnce", "ReadOnlyMany",
                                                        "ReadWriteMany", "ReadWriteOncePod"})) {
        c.check("accessModes[" + std::to_string(i) + "]",
                "Unsupported value: supported values: \"ReadOnlyMany\", \"ReadWriteMany\", "
                "\"ReadWriteOnce\", \"ReadWriteOncePod\"");
      }
    }
  }
  if (expect_string(c, s, "storageClassName") && !string_at(s, "storageClassName").empty()) {
    c.check("storageClassName", check_dns_subdomain(string_at(s, "storageClassName")));
  }
  const json::value* storage = nullptr;
  if (const auto* r = s.if_contains("resources"); r != nullptr && r->is_object()) {
    const auto rf = c.field("resources");
    check_resources(c, *r);
    if (const auto* req = r->get_object().if_contains("requests");
        req != nullptr && req->is_object()) {
      storage = req->get_object().if_contains("storage");
    }
  }
  if (storage == nullptr || storage->is_null()) {
    c.check("resources.requests.storage", "Required value: the claim needs a storage size");
  } else {
    const std::string text =
        storage->is_string() ? std::string(storage->get_string()) : json::serialize(*storage);
    const auto q = quantity_value(text);
    if (q && *q <= 0) c.check("resources.requests.storage", "must be greater than zero");
  }
}

void check_label_selector(Checker& c, const json::value& selector) {
  if (!expect_object(c, selector)) return;
  const auto& s = selector.get_object();
  if (const auto* ml = s.if_contains("matchLabels")) {
    const auto f = c.field("matchLabels");
    check_labels(c, *ml);
  }
  each(c, s, "matchExpressions", [&](const json::value& e) {
    if (!expect_object(c, e)) return;
    const auto& r = e.get_object();
    if (!expect_string(c, r, "key") || !expect_string(c, r, "operator")) return;
    c.check("key", check_qualified_name(string_at(r, "key")));
    const auto op = string_at(r, "operator");
    const auto* values = r.if_contains("values");
    const std::size_t n = values != nullptr && values->is_array() ? values->get_array().size() : 0;
    if (op == "In" || op == "NotIn") {
      if (n == 0) c.check("values", "must be specified when `operator` is 'In' or 'NotIn'");
    } else if (op == "Exists" || op == "DoesNotExist") {
      if (n != 0) {
        c.check("values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
      }
    } else {
      c.check("operator", "not a valid selector operator: " + describe(op) +
                              "; use In, NotIn, Exists or DoesNotExist");
    }
    if (values != nullptr && values->is_array()) {
      for (std::size_t i = 0; i < n; ++i) {
        const auto& v = values->get_array()[i];
        if (!v.is_string()) continue;
        c.check("values[" + std::to_string(i) + "]", check_label_value_k8s(v.get_string()));
      }
    }
  });
}

}  // namespace aop::validation
