// Random JSON objects shaped like Kubernetes objects (names, labels, annotations,
// managedFields, arbitrary specs with every number kind, escapes and UTF-8), and the
// reference Transform written independently of the encoder: for the compact-encoding
// and stream-decoder tests.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include <boost/json.hpp>

#include "k8s/object.hpp"

namespace aop::k8s::test_json {

namespace json = boost::json;

// The reference transform, written independently of the encoder.
inline json::value transformed(json::value v, const Transform& t) {
  auto& o = v.as_object();
  if (t.metadata_only) {
    json::object kept;
    for (const char* k : {"apiVersion", "kind", "metadata"}) {
      if (auto* f = o.if_contains(k)) kept[k] = *f;
    }
    o = std::move(kept);
  }
  if (auto* md = o.if_contains("metadata"); md && md->is_object()) {
    if (t.drop_managed_fields) md->as_object().erase("managedFields");
    if (auto* ann = md->as_object().if_contains("annotations"); ann && ann->is_object()) {
      if (t.drop_last_applied) {
        ann->as_object().erase("kubectl.kubernetes.io/last-applied-configuration");
      }
    }
  }
  return v;
}

inline std::string random_string(std::mt19937& rng) {
  static const std::string kAlphabet =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:\"\\ \n\t{}[]";
  std::size_t n = 0;
  switch (rng() % 4) {
    case 0:
      n = rng() % 8;
      break;
    case 1:
      n = rng() % 40;
      break;
    case 2:
      n = 120 + rng() % 20;
      break;  // around the short-string boundary (127)
    default:
      n = rng() % 2000;
      break;
  }
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s.push_back(kAlphabet[rng() % kAlphabet.size()]);
  if (rng() % 10 == 0) s += "\xc3\xa9\xe2\x82\xac";  // é€
  return s;
}

inline json::value random_value(std::mt19937& rng, int depth) {
  const int pick = static_cast<int>(rng() % (depth > 4 ? 9 : 11));
  switch (pick) {
    case 0:
      return nullptr;
    case 1:
      return rng() % 2 == 0;
    case 2:
      return static_cast<std::int64_t>(rng() % 64);
    case 3:
      return -static_cast<std::int64_t>(rng() % 100000) - 1;
    case 4: {
      const std::int64_t edges[] = {63, 64, 127, 128, INT64_MAX, INT64_MIN, -1, 1 << 20};
      return edges[rng() % 8];
    }
    case 5:
      return static_cast<std::uint64_t>(INT64_MAX) + 1 + rng();
    case 6:
      return std::uniform_real_distribution<double>(-1e9, 1e9)(rng);
    case 7:
    case 8:
      return json::string(random_string(rng));
    case 9: {
      json::array a;
      const int n = static_cast<int>(rng() % (rng() % 5 == 0 ? 200 : 6));
      for (int i = 0; i < n; ++i) a.push_back(random_value(rng, depth + 1));
      return a;
    }
    default: {
      json::object o;
      const int n = static_cast<int>(rng() % (rng() % 5 == 0 ? 150 : 6));
      for (int i = 0; i < n; ++i) {
        std::string key =
            rng() % 2 == 0 ? "field" + std::to_string(rng() % 30) : random_string(rng);
        o[key] = random_value(rng, depth + 1);
      }
      return o;
    }
  }
}

inline json::value random_object(std::mt19937& rng) {
  json::object o;
  for (int i = 0; i < 4; ++i) o["f" + std::to_string(rng() % 10)] = random_value(rng, 1);
  json::object md{{"name", random_string(rng)}};
  if (rng() % 2) md["namespace"] = random_string(rng);
  if (rng() % 2) md["managedFields"] = random_value(rng, 2);
  json::object labels;
  for (int i = 0; i < 3; ++i) labels[random_string(rng)] = random_string(rng);
  md["labels"] = labels;
  json::object ann;
  if (rng() % 2) ann["kubectl.kubernetes.io/last-applied-configuration"] = random_string(rng);
  ann[random_string(rng)] = random_string(rng);
  md["annotations"] = ann;
  o["metadata"] = md;
  if (rng() % 2) o["spec"] = random_value(rng, 1);
  return o;
}

}  // namespace aop::k8s::test_json
