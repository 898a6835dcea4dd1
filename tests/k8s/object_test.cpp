#include "k8s/object.hpp"

#include <atomic>
#include <random>
#include <thread>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "k8s/base64.hpp"
#include "k8s/label_selector.hpp"
#include "tests/k8s/object_fixtures.hpp"
#include "tests/k8s/random_json.hpp"

namespace json = boost::json;
using namespace aop::k8s;
using aop::k8s::test_json::random_object;
using aop::k8s::test_json::random_string;
using aop::k8s::test_json::random_value;
using aop::k8s::test_json::transformed;

namespace {

ObjectPtr encode(const json::value& v, const Transform& t = {}) {
  auto obj = Object::from_json(v, t);
  EXPECT_NE(obj, nullptr);
  return obj;
}

}  // namespace

TEST(CompactObject, RandomJsonRoundTripsUnderEveryTransform) {
  std::mt19937 rng(20240301);
  const Transform transforms[] = {Transform{false, false, false}, Transform{},
                                  Transform{true, true, true}};
  for (int i = 0; i < 400; ++i) {
    const json::value v = random_object(rng);
    for (const auto& t : transforms) {
      const auto obj = encode(v, t);
      ASSERT_EQ(obj->to_json(), transformed(v, t))
          << "object " << i << ": " << json::serialize(v).substr(0, 400);
    }
  }
}

TEST(CompactObject, PreservesNumberKindsAndKeyOrder) {
  const json::value v =
      json::parse(R"({"metadata":{"name":"n"},"z":1,"a":-1,"m":18446744073709551615,"d":1.5,)"
                  R"("i":9223372036854775807,"j":-9223372036854775808,"small":63,"big":64})");
  const auto out = encode(v)->to_json();
  EXPECT_EQ(json::serialize(out), json::serialize(v));
  EXPECT_TRUE(out.at("m").is_uint64());
  EXPECT_TRUE(out.at("i").is_int64());
  EXPECT_TRUE(out.at("d").is_double());
}

TEST(CompactObject, RealisticObjectsRoundTrip) {
  std::mt19937 rng(7);
  for (int i = 0; i < 50; ++i) {
    for (const json::value& v :
         {fixtures::service_monitor(i, rng), fixtures::secret(i, rng), fixtures::pod(i, rng)}) {
      for (const auto& t :
           {Transform{false, false, false}, Transform{}, Transform{true, true, true}}) {
        ASSERT_EQ(encode(v, t)->to_json(), transformed(v, t));
      }
    }
  }
}

TEST(CompactObject, MetadataAccessors) {
  std::mt19937 rng(1);
  const json::value v = fixtures::pod(3, rng);
  const auto obj = encode(v);
  const auto& md = v.at("metadata").as_object();
  EXPECT_EQ(obj->api_version(), "v1");
  EXPECT_EQ(obj->kind(), "Pod");
  EXPECT_EQ(obj->ns(), md.at("namespace").as_string());
  EXPECT_EQ(obj->name(), md.at("name").as_string());
  EXPECT_EQ(obj->uid(), md.at("uid").as_string());
  EXPECT_EQ(obj->resource_version(), md.at("resourceVersion").as_string());
  EXPECT_EQ(obj->key(), (ObjectKey{"team-3", std::string(md.at("name").as_string())}));
  EXPECT_EQ(obj->generation(), 0);
  EXPECT_FALSE(obj->being_deleted());
  EXPECT_EQ(obj->label("app"), "web");
  EXPECT_EQ(obj->label("missing"), std::nullopt);
  EXPECT_EQ(obj->annotation("anything"), std::nullopt);

  const auto owners = obj->owner_references();
  ASSERT_EQ(owners.size(), 1u);
  EXPECT_EQ(owners[0].kind, "ReplicaSet");
  EXPECT_EQ(owners[0].name, "web-7d9f8c6b5");
  EXPECT_EQ(owners[0].api_version, "apps/v1");
  EXPECT_EQ(owners[0].uid, "aa11bb22-cc33");
  EXPECT_TRUE(owners[0].controller);
  EXPECT_TRUE(owners[0].block_owner_deletion);
}

TEST(CompactObject, GenerationDeletionAndLargeValues) {
  for (const std::int64_t g : {0LL, 1LL, 63LL, 64LL, 1000000LL, 9007199254740993LL}) {
    const auto obj = encode(json::value{
        {"metadata",
         {{"name", "x"}, {"generation", g}, {"deletionTimestamp", "2024-01-01T00:00:00Z"}}}});
    EXPECT_EQ(obj->generation(), g);
    EXPECT_TRUE(obj->being_deleted());
  }
  const auto nulldel =
      encode(json::value{{"metadata", {{"name", "x"}, {"deletionTimestamp", nullptr}}}});
  EXPECT_FALSE(nulldel->being_deleted());
  // A long name (over the short-string limit) is still read directly.
  const std::string long_name(300, 'n');
  EXPECT_EQ(encode(json::value{{"metadata", {{"name", long_name}}}})->name(), long_name);
}

TEST(CompactObject, LabelsWorkWithSelectors) {
  std::mt19937 rng(2);
  const auto obj = encode(fixtures::service_monitor(5, rng));
  auto sel = parse_label_selector_string("app.kubernetes.io/part-of=shop,instance in (primary)");
  ASSERT_TRUE(sel);
  EXPECT_TRUE(sel->matches(obj->labels()));
  auto other = parse_label_selector_string("instance notin (primary)");
  ASSERT_TRUE(other);
  EXPECT_FALSE(other->matches(obj->labels()));
  auto exists = parse_label_selector_string("!team");
  ASSERT_TRUE(exists);
  EXPECT_FALSE(exists->matches(obj->labels()));

  const auto unlabeled = encode(json::value{{"metadata", {{"name", "x"}}}});
  EXPECT_TRUE(parse_label_selector_string("!team")->matches(unlabeled->labels()));
  EXPECT_FALSE(parse_label_selector_string("team")->matches(unlabeled->labels()));
  // A non-string label value is absent, as in JsonLabels.
  const auto odd = encode(json::value{{"metadata", {{"name", "x"}, {"labels", {{"n", 5}}}}}});
  EXPECT_EQ(odd->label("n"), std::nullopt);
}

TEST(CompactObject, AtMaterializesOnlyThePath) {
  std::mt19937 rng(3);
  const json::value v = fixtures::service_monitor(1, rng);
  const auto obj = encode(v);
  EXPECT_EQ(obj->at({"spec", "endpoints"}), v.at("spec").at("endpoints"));
  EXPECT_EQ(obj->at({"spec", "namespaceSelector", "matchNames"}),
            v.at("spec").at("namespaceSelector").at("matchNames"));
  EXPECT_EQ(obj->at({"spec", "nope"}), std::nullopt);
  EXPECT_EQ(obj->at({"spec", "endpoints", "port"}), std::nullopt);  // an array, not an object
  EXPECT_EQ(obj->at({}), obj->to_json());
}

TEST(CompactObject, TransformsDropWhatTheyShould) {
  std::mt19937 rng(4);
  const json::value v = fixtures::service_monitor(2, rng);
  const auto full = encode(v, Transform{false, false, false});
  EXPECT_TRUE(full->annotation("kubectl.kubernetes.io/last-applied-configuration"));
  EXPECT_TRUE(full->at({"metadata", "managedFields"}));

  const auto def = encode(v);
  EXPECT_FALSE(def->annotation("kubectl.kubernetes.io/last-applied-configuration"));
  EXPECT_EQ(def->annotation("owner"), "platform@example.com");
  EXPECT_FALSE(def->at({"metadata", "managedFields"}));
  EXPECT_TRUE(def->at({"spec"}));

  const auto md = encode(v, Transform{true, true, true});
  EXPECT_FALSE(md->at({"spec"}));
  EXPECT_EQ(md->kind(), "ServiceMonitor");
  EXPECT_EQ(md->label("instance"), "primary");
  EXPECT_LT(md->memory_bytes(), def->memory_bytes());
}

TEST(CompactObject, FillsKindOfListItems) {
  const json::value item = {{"metadata", {{"name", "a"}, {"namespace", "b"}}},
                            {"data", {{"k", "v"}}}};
  const auto obj = Object::from_json(item, {}, GroupVersionKind{"", "v1", "ConfigMap"});
  EXPECT_EQ(obj->api_version(), "v1");
  EXPECT_EQ(obj->kind(), "ConfigMap");
  EXPECT_EQ(obj->to_json().at("data").at("k"), "v");
  // Present fields are kept.
  const json::value typed = {{"kind", "PartialObjectMetadata"}, {"metadata", {{"name", "a"}}}};
  EXPECT_EQ(Object::from_json(typed, {}, GroupVersionKind{"", "v1", "Secret"})->kind(),
            "PartialObjectMetadata");
  EXPECT_EQ(Object::from_json(json::value(3)), nullptr);
  EXPECT_EQ(Object::from_json(json::array{}), nullptr);
}

TEST(CompactObject, UserKeysDoNotGrowTheKeyTable) {
  std::mt19937 rng(5);
  // Warm the table with the kinds' own field names.
  for (int i = 0; i < 10; ++i) {
    encode(fixtures::service_monitor(i, rng));
    encode(fixtures::secret(i, rng));
    encode(fixtures::pod(i, rng));
  }
  const std::size_t before = interned_key_count();
  for (int i = 0; i < 5000; ++i) {
    json::value v = fixtures::secret(i, rng);
    auto& md = v.at("metadata").as_object();
    md["labels"].as_object()["user-label-" + std::to_string(i)] = "x";
    md["annotations"] = json::object{{"example.com/note-" + std::to_string(i), "y"}};
    v.at("data").as_object()["file" + std::to_string(i)] = "eA==";
    encode(v);
  }
  EXPECT_EQ(interned_key_count(), before);
}

TEST(CompactObject, KeyTableIsBoundedForArbitraryFieldNames) {
  // Field names a user controls outside the known maps (e.g. a CRD's free-form map)
  // fill the table up to its cap, then go inline; objects stay correct either way.
  for (int i = 0; i < 20000; ++i) {
    const json::value v = {{"metadata", {{"name", "x"}}}, {"spec", {{"k" + std::to_string(i), i}}}};
    ASSERT_EQ(encode(v)->to_json(), v);
  }
  EXPECT_LE(interned_key_count(), 8192u);
}

TEST(CompactObject, MemoryPerObjectWithinTargetForFullObjects) {
  // The cache's memory target: at most 1.5x the object's JSON size (as stored).
  std::mt19937 rng(6);
  std::size_t json_bytes = 0, memory = 0;
  for (int i = 0; i < 200; ++i) {
    for (const json::value& raw : {fixtures::service_monitor(i, rng), fixtures::pod(i, rng)}) {
      const json::value v = transformed(raw, Transform{});
      json_bytes += json::serialize(v).size();
      memory += encode(v)->memory_bytes();
    }
  }
  EXPECT_LE(static_cast<double>(memory), 1.5 * static_cast<double>(json_bytes));
}

TEST(CompactObject, ConcurrentEncodingAgrees) {
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &mismatches] {
      for (int i = 0; i < 300; ++i) {
        json::value v = {{"metadata", {{"name", "x"}}},
                         {"spec", {{"t" + std::to_string(t) + "f" + std::to_string(i % 50), i}}}};
        if (Object::from_json(v)->to_json() != v) ++mismatches;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(CompactObject, SecretDataIsKeptDecodedAndComesBackAsSent) {
  std::mt19937 rng(8);
  json::object data;
  std::size_t text_bytes = 0;
  for (int k = 0; k < 6; ++k) {
    std::string bytes(static_cast<std::size_t>(k * 97), '\0');  // 0 .. 485 bytes, all remainders
    for (auto& c : bytes) c = static_cast<char>(rng());
    const std::string text = base64_encode(bytes);
    text_bytes += text.size();
    data["file-" + std::to_string(k)] = text;
  }
  const json::value secret = {{"apiVersion", "v1"},
                              {"kind", "Secret"},
                              {"metadata", {{"name", "s"}, {"namespace", "n"}}},
                              {"type", "Opaque"},
                              {"data", data}};
  const auto obj = encode(secret);
  EXPECT_EQ(json::serialize(obj->to_json()), json::serialize(secret));
  EXPECT_EQ(obj->at({"data", "file-3"}), data.at("file-3"));
  // A quarter of the text is gone (base64's overhead), not counting the rest of the object.
  const auto as_strings = encode(json::value{{"apiVersion", "v1"},
                                             {"kind", "NotASecret"},
                                             {"metadata", {{"name", "s"}, {"namespace", "n"}}},
                                             {"type", "Opaque"},
                                             {"data", data}});
  EXPECT_EQ(as_strings->to_json().at("data"), secret.at("data"));
  EXPECT_LE(obj->encoded_bytes() + text_bytes / 4 - 12, as_strings->encoded_bytes());
}

TEST(CompactObject, OnlyCanonicalBase64IsDecoded) {
  // Whatever a Secret's data holds, the JSON out is the JSON in: text that would not
  // come back the same from its bytes (no padding, bits after the last byte, line
  // breaks, other alphabets, not a string) is kept as it is.
  const json::object data = {{"plain", "aGVsbG8="},
                             {"nopad", "aGVsbG8"},
                             {"dirty-bits", "aGVsbG9="},
                             {"newline", "aGVs\nbG8="},
                             {"url-alphabet", "-_-_"},
                             {"pad-inside", "aG==bG8="},
                             {"empty", ""},
                             {"number", 5},
                             {"object", {{"a", "aGVsbG8="}}}};
  const json::value secret = {
      {"apiVersion", "v1"}, {"kind", "Secret"}, {"metadata", {{"name", "s"}}}, {"data", data}};
  EXPECT_EQ(json::serialize(encode(secret)->to_json()), json::serialize(secret));
  // The same with the kind from the cache (LIST items carry none).
  json::value item = secret;
  item.as_object().erase("apiVersion");
  item.as_object().erase("kind");
  const auto listed = Object::from_json(item, {}, GroupVersionKind{"", "v1", "Secret"});
  EXPECT_EQ(listed->to_json().at("data"), secret.at("data"));
}

TEST(CompactObject, OnlyTheBase64FieldsOfSecretsAndConfigMapsAreDecoded) {
  const json::object base64 = {{"k", "aGVsbG8gd29ybGQh"}};  // 16 characters, 12 bytes
  // How much smaller the object is than the same one of a kind whose name has the same
  // length but is not a core Secret or ConfigMap: 3 when the field is kept decoded.
  const auto saved = [&](std::string_view api_version, std::string_view kind,
                         std::string_view field) {
    const auto size_of = [&](std::string_view k) {
      const json::value v = {
          {"apiVersion", api_version}, {"kind", k}, {"metadata", {{"name", "x"}}}, {field, base64}};
      const auto obj = encode(v);
      EXPECT_EQ(obj->to_json(), v);
      return static_cast<int>(obj->encoded_bytes());
    };
    std::string other(kind);
    other.back() = '_';
    return size_of(other) - size_of(kind);
  };
  EXPECT_EQ(saved("v1", "Secret", "data"), 3);
  EXPECT_EQ(saved("v1", "ConfigMap", "binaryData"), 3);
  // Kept as text: a Secret's stringData, a ConfigMap's data, other groups' kinds.
  EXPECT_EQ(saved("v1", "Secret", "stringData"), 0);
  EXPECT_EQ(saved("v1", "ConfigMap", "data"), 0);
  EXPECT_EQ(saved("v2", "Secret", "data"), 0);
  EXPECT_EQ(saved("example.com/v1", "Secret", "data"), 0);
}
