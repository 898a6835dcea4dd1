#include "tools/kube-sim/protobuf.hpp"

#include <ctime>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "tools/kube-sim/api_internal.hpp"

namespace aop::sim {

namespace json = boost::json;

namespace {

enum class Type {
  string,
  bytes,  // JSON base64
  int64,
  int32,
  boolean,
  message,
  map_string,    // map<string, string>
  map_bytes,     // map<string, bytes>
  map_quantity,  // map<string, Quantity>
  time,          // meta/v1 Time -> RFC 3339
  int_or_string,
  quantity,
};

struct Message;

struct Field {
  int number;
  const char* name;
  Type type;
  const Message* message = nullptr;
  bool repeated = false;
  // Pointer fields in the Go types: present means set, even when zero. Other zero
  // values are left out, as `omitempty` leaves them out of JSON.
  bool keep_zero = false;
};

struct Message {
  std::vector<Field> fields;
  const Field* find(int n) const {
    for (const auto& f : fields) {
      if (f.number == n) return &f;
    }
    return nullptr;
  }
};

// Field tables (k8s.io/api and k8s.io/apimachinery generated.proto).
const Message kEmpty{};
const Message kOwnerReference{{{5, "apiVersion", Type::string},
                               {1, "kind", Type::string},
                               {3, "name", Type::string},
                               {4, "uid", Type::string},
                               {6, "controller", Type::boolean, nullptr, false, true},
                               {7, "blockOwnerDeletion", Type::boolean, nullptr, false, true}}};
const Message kObjectMeta{{{1, "name", Type::string},
                           {2, "generateName", Type::string},
                           {3, "namespace", Type::string},
                           {5, "uid", Type::string},
                           {6, "resourceVersion", Type::string},
                           {7, "generation", Type::int64},
                           {8, "creationTimestamp", Type::time},
                           {9, "deletionTimestamp", Type::time},
                           {10, "deletionGracePeriodSeconds", Type::int64, nullptr, false, true},
                           {11, "labels", Type::map_string},
                           {12, "annotations", Type::map_string},
                           {13, "ownerReferences", Type::message, &kOwnerReference, true},
                           {14, "finalizers", Type::string, nullptr, true}}};
const Message kLabelSelectorRequirement{{{1, "key", Type::string},
                                         {2, "operator", Type::string},
                                         {3, "values", Type::string, nullptr, true}}};
const Message kLabelSelector{
    {{1, "matchLabels", Type::map_string},
     {2, "matchExpressions", Type::message, &kLabelSelectorRequirement, true}}};
const Message kLocalObjectReference{{{1, "name", Type::string}}};
const Message kObjectReference{{{1, "kind", Type::string},
                                {2, "namespace", Type::string},
                                {3, "name", Type::string},
                                {4, "uid", Type::string},
                                {5, "apiVersion", Type::string},
                                {6, "resourceVersion", Type::string},
                                {7, "fieldPath", Type::string}}};
const Message kContainerPort{{{1, "name", Type::string},
                              {2, "hostPort", Type::int32},
                              {3, "containerPort", Type::int32},
                              {4, "protocol", Type::string},
                              {5, "hostIP", Type::string}}};
const Message kEnvVar{{{1, "name", Type::string}, {2, "value", Type::string}}};
const Message kResourceRequirements{
    {{1, "limits", Type::map_quantity}, {2, "requests", Type::map_quantity}}};
const Message kVolumeMount{{{1, "name", Type::string},
                            {2, "readOnly", Type::boolean},
                            {3, "mountPath", Type::string},
                            {4, "subPath", Type::string}}};
const Message kContainer{{{1, "name", Type::string},
                          {2, "image", Type::string},
                          {3, "command", Type::string, nullptr, true},
                          {4, "args", Type::string, nullptr, true},
                          {5, "workingDir", Type::string},
                          {6, "ports", Type::message, &kContainerPort, true},
                          {7, "env", Type::message, &kEnvVar, true},
                          {8, "resources", Type::message, &kResourceRequirements},
                          {9, "volumeMounts", Type::message, &kVolumeMount, true},
                          {13, "terminationMessagePath", Type::string},
                          {14, "imagePullPolicy", Type::string},
                          {20, "terminationMessagePolicy", Type::string}}};
const Message kPodSpec{{{2, "containers", Type::message, &kContainer, true},
                        {20, "initContainers", Type::message, &kContainer, true},
                        {3, "restartPolicy", Type::string},
                        {4, "terminationGracePeriodSeconds", Type::int64, nullptr, false, true},
                        {5, "activeDeadlineSeconds", Type::int64, nullptr, false, true},
                        {6, "dnsPolicy", Type::string},
                        {7, "nodeSelector", Type::map_string},
                        {8, "serviceAccountName", Type::string},
                        {9, "serviceAccount", Type::string},
                        {10, "nodeName", Type::string},
                        {11, "hostNetwork", Type::boolean},
                        {14, "securityContext", Type::message, &kEmpty},
                        {15, "imagePullSecrets", Type::message, &kLocalObjectReference, true},
                        {19, "schedulerName", Type::string},
                        {24, "priorityClassName", Type::string}}};
const Message kPodTemplateSpec{
    {{1, "metadata", Type::message, &kObjectMeta}, {2, "spec", Type::message, &kPodSpec}}};
const Message kRollingUpdateDeployment{
    {{1, "maxUnavailable", Type::int_or_string}, {2, "maxSurge", Type::int_or_string}}};
const Message kDeploymentStrategy{
    {{1, "type", Type::string}, {2, "rollingUpdate", Type::message, &kRollingUpdateDeployment}}};
const Message kDeploymentSpec{{{1, "replicas", Type::int32, nullptr, false, true},
                               {2, "selector", Type::message, &kLabelSelector},
                               {3, "template", Type::message, &kPodTemplateSpec},
                               {4, "strategy", Type::message, &kDeploymentStrategy},
                               {5, "minReadySeconds", Type::int32},
                               {6, "revisionHistoryLimit", Type::int32, nullptr, false, true},
                               {7, "paused", Type::boolean},
                               {9, "progressDeadlineSeconds", Type::int32, nullptr, false, true}}};
const Message kDeployment{{{1, "metadata", Type::message, &kObjectMeta},
                           {2, "spec", Type::message, &kDeploymentSpec},
                           {3, "status", Type::message, &kEmpty}}};
const Message kConfigMap{{{1, "metadata", Type::message, &kObjectMeta},
                          {2, "data", Type::map_string},
                          {3, "binaryData", Type::map_bytes},
                          {4, "immutable", Type::boolean, nullptr, false, true}}};
const Message kSecret{{{1, "metadata", Type::message, &kObjectMeta},
                       {2, "data", Type::map_bytes},
                       {3, "type", Type::string},
                       {4, "stringData", Type::map_string},
                       {5, "immutable", Type::boolean, nullptr, false, true}}};
const Message kNamespaceSpec{{{1, "finalizers", Type::string, nullptr, true}}};
const Message kNamespaceStatus{{{1, "phase", Type::string}}};
const Message kNamespace{{{1, "metadata", Type::message, &kObjectMeta},
                          {2, "spec", Type::message, &kNamespaceSpec},
                          {3, "status", Type::message, &kNamespaceStatus}}};
const Message kServiceAccount{
    {{1, "metadata", Type::message, &kObjectMeta},
     {2, "secrets", Type::message, &kObjectReference, true},
     {3, "imagePullSecrets", Type::message, &kLocalObjectReference, true},
     {4, "automountServiceAccountToken", Type::boolean, nullptr, false, true}}};
const Message kServicePort{{{1, "name", Type::string},
                            {2, "protocol", Type::string},
                            {3, "port", Type::int32},
                            {4, "targetPort", Type::int_or_string},
                            {5, "nodePort", Type::int32}}};
const Message kServiceSpec{{{1, "ports", Type::message, &kServicePort, true},
                            {2, "selector", Type::map_string},
                            {3, "clusterIP", Type::string},
                            {4, "type", Type::string},
                            {7, "sessionAffinity", Type::string}}};
const Message kService{{{1, "metadata", Type::message, &kObjectMeta},
                        {2, "spec", Type::message, &kServiceSpec},
                        {3, "status", Type::message, &kEmpty}}};

const Message* message_for(std::string_view api_version, std::string_view kind) {
  if (api_version == "v1") {
    if (kind == "Namespace") return &kNamespace;
    if (kind == "ConfigMap") return &kConfigMap;
    if (kind == "Secret") return &kSecret;
    if (kind == "ServiceAccount") return &kServiceAccount;
    if (kind == "Service") return &kService;
  }
  if (api_version == "apps/v1" && kind == "Deployment") return &kDeployment;
  return nullptr;
}

class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool done() const { return pos_ >= data_.size(); }

  bool varint(std::uint64_t& out) {
    out = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) return false;
      const auto b = static_cast<unsigned char>(data_[pos_++]);
      out |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }
  bool bytes(std::string_view& out) {
    std::uint64_t n = 0;
    if (!varint(n) || n > data_.size() - pos_) return false;
    out = data_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  bool skip(int wire) {
    std::uint64_t v = 0;
    std::string_view s;
    switch (wire) {
      case 0:
        return varint(v);
      case 1:
        pos_ += 8;
        return pos_ <= data_.size();
      case 2:
        return bytes(s);
      case 5:
        pos_ += 4;
        return pos_ <= data_.size();
      default:
        return false;
    }
  }

 private:
  std::string_view data_;
  std::size_t pos_ = 0;
};

Result<json::object> decode(const Message& m, std::string_view data);

Result<json::value> decode_scalar_message(Type type, std::string_view data) {
  Reader r(data);
  std::int64_t seconds = 0;
  std::int64_t ioskind = 0;
  std::int64_t ival = 0;
  std::string sval;
  while (!r.done()) {
    std::uint64_t key = 0;
    if (!r.varint(key)) return make_error("truncated message");
    const int field = static_cast<int>(key >> 3);
    const int wire = static_cast<int>(key & 7);
    std::uint64_t v = 0;
    std::string_view s;
    if (wire == 0) {
      if (!r.varint(v)) return make_error("truncated varint");
      if (field == 1) (type == Type::time ? seconds : ioskind) = static_cast<std::int64_t>(v);
      if (field == 2 && type == Type::int_or_string) ival = static_cast<std::int32_t>(v);
    } else if (wire == 2) {
      if (!r.bytes(s)) return make_error("truncated bytes");
      if ((type == Type::quantity && field == 1) || (type == Type::int_or_string && field == 3)) {
        sval = std::string(s);
      }
    } else if (!r.skip(wire)) {
      return make_error("bad wire type");
    }
  }
  if (type == Type::time) {
    if (seconds == 0) return json::value(nullptr);
    return json::value(
        detail::rfc3339(std::chrono::system_clock::from_time_t(static_cast<std::time_t>(seconds))));
  }
  if (type == Type::int_or_string) {
    if (ioskind == 1) return json::value(sval);
    return json::value(ival);
  }
  return json::value(sval);
}

Result<std::pair<std::string, json::value>> decode_entry(Type type, std::string_view data) {
  Reader r(data);
  std::string key;
  json::value value = type == Type::map_bytes ? json::value("") : json::value("");
  while (!r.done()) {
    std::uint64_t k = 0;
    if (!r.varint(k)) return make_error("truncated map entry");
    const int field = static_cast<int>(k >> 3);
    const int wire = static_cast<int>(k & 7);
    std::string_view s;
    if (wire != 2) {
      if (!r.skip(wire)) return make_error("bad wire type in map entry");
      continue;
    }
    if (!r.bytes(s)) return make_error("truncated map entry");
    if (field == 1) {
      key = std::string(s);
    } else if (field == 2) {
      if (type == Type::map_string) value = json::value(std::string(s));
      if (type == Type::map_bytes) value = json::value(detail::base64_encode(s, false));
      if (type == Type::map_quantity) {
        auto q = decode_scalar_message(Type::quantity, s);
        if (!q) return q.error();
        value = std::move(*q);
      }
    }
  }
  return std::make_pair(std::move(key), std::move(value));
}

Result<json::object> decode(const Message& m, std::string_view data) {
  json::object out;
  Reader r(data);
  while (!r.done()) {
    std::uint64_t key = 0;
    if (!r.varint(key)) return make_error("truncated message");
    const int number = static_cast<int>(key >> 3);
    const int wire = static_cast<int>(key & 7);
    const Field* f = m.find(number);
    if (f == nullptr) {
      if (!r.skip(wire)) return make_error("bad wire type");
      continue;
    }
    json::value v;
    if (wire == 0) {
      std::uint64_t raw = 0;
      if (!r.varint(raw)) return make_error("truncated varint");
      switch (f->type) {
        case Type::boolean:
          v = raw != 0;
          break;
        case Type::int32:
          v = static_cast<std::int64_t>(static_cast<std::int32_t>(raw));
          break;
        default:
          v = static_cast<std::int64_t>(raw);
          break;
      }
    } else if (wire == 2) {
      std::string_view s;
      if (!r.bytes(s)) return make_error("truncated field " + std::string(f->name));
      switch (f->type) {
        case Type::string:
          v = std::string(s);
          break;
        case Type::bytes:
          v = detail::base64_encode(s, false);
          break;
        case Type::message: {
          auto sub = decode(*f->message, s);
          if (!sub) return sub.error();
          v = std::move(*sub);
          break;
        }
        case Type::map_string:
        case Type::map_bytes:
        case Type::map_quantity: {
          auto entry = decode_entry(f->type, s);
          if (!entry) return entry.error();
          auto& map = out[f->name];
          if (!map.is_object()) map = json::object();
          map.as_object()[entry->first] = std::move(entry->second);
          continue;
        }
        case Type::time:
        case Type::int_or_string:
        case Type::quantity: {
          auto sv = decode_scalar_message(f->type, s);
          if (!sv) return sv.error();
          v = std::move(*sv);
          break;
        }
        default:
          continue;  // packed numbers do not occur in these kinds
      }
    } else {
      if (!r.skip(wire)) return make_error("bad wire type");
      continue;
    }
    if (f->repeated) {
      auto& arr = out[f->name];
      if (!arr.is_array()) arr = json::array();
      arr.as_array().push_back(std::move(v));
      continue;
    }
    const bool zero = v.is_null() || (v.is_string() && v.as_string().empty()) ||
                      (v.is_int64() && v.as_int64() == 0) || (v.is_bool() && !v.as_bool());
    if (zero && !f->keep_zero) continue;
    if (v.is_null()) continue;
    out[f->name] = std::move(v);
  }
  return out;
}

}  // namespace

Result<json::object> decode_k8s_protobuf(std::string_view body) {
  static constexpr std::string_view kMagic("k8s\0", 4);
  if (!body.starts_with(kMagic))
    return make_error("the protobuf body does not start with the k8s magic");
  Reader r(body.substr(4));
  std::string api_version;
  std::string kind;
  std::string_view raw;
  std::string content_encoding;
  while (!r.done()) {
    std::uint64_t key = 0;
    if (!r.varint(key)) return make_error("truncated envelope");
    const int field = static_cast<int>(key >> 3);
    const int wire = static_cast<int>(key & 7);
    if (wire != 2) {
      if (!r.skip(wire)) return make_error("bad wire type in envelope");
      continue;
    }
    std::string_view s;
    if (!r.bytes(s)) return make_error("truncated envelope");
    if (field == 1) {
      Reader tm(s);
      while (!tm.done()) {
        std::uint64_t k = 0;
        std::string_view v;
        if (!tm.varint(k) || (k & 7) != 2 || !tm.bytes(v)) return make_error("bad TypeMeta");
        if ((k >> 3) == 1) api_version = std::string(v);
        if ((k >> 3) == 2) kind = std::string(v);
      }
    } else if (field == 2) {
      raw = s;
    } else if (field == 3) {
      content_encoding = std::string(s);
    }
  }
  if (!content_encoding.empty())
    return make_error("unsupported protobuf content encoding " + content_encoding);
  const Message* m = message_for(api_version, kind);
  if (m == nullptr) {
    return make_error("kube-sim cannot decode protobuf for " + api_version + ", Kind=" + kind +
                      "; send JSON (kubectl apply -f / create -f)");
  }
  auto obj = decode(*m, raw);
  if (!obj) return make_error("invalid protobuf " + kind + ": " + obj.error().message);
  (*obj)["apiVersion"] = api_version;
  (*obj)["kind"] = kind;
  return obj;
}

}  // namespace aop::sim
