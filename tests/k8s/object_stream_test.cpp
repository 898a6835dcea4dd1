// The stream decoders (k8s/object_stream.hpp) against the reference path they replace:
// Boost.JSON's parse, then Object::from_json per object. Same encodings byte for byte,
// whatever the read boundaries, under every Transform.
#include "k8s/object_stream.hpp"

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "tests/k8s/object_fixtures.hpp"
#include "tests/k8s/random_json.hpp"

namespace json = boost::json;
using namespace aop::k8s;

namespace {

const GroupVersionKind kSecretKind{"", "v1", "Secret"};

const Transform kTransforms[] = {Transform{false, false, false}, Transform{},
                                 Transform{true, true, true}};

// Splits `text` into pieces: every size from 1 up, then random sizes.
std::vector<std::string_view> pieces(std::string_view text, std::mt19937& rng, int mode) {
  std::vector<std::string_view> out;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t n = 0;
    switch (mode) {
      case 0:
        n = text.size();
        break;
      case 1:
        n = 1;
        break;
      case 2:
        n = 1 + rng() % 7;
        break;
      default:
        n = 1 + rng() % 4096;
        break;
    }
    out.push_back(text.substr(at, n));
    at += n;
  }
  return out;
}

// A LIST body of `items` (as the API server sends it: items without apiVersion/kind).
std::string list_body(const std::vector<json::value>& items, const std::string& rv,
                      const std::string& cont, bool metadata_first) {
  json::array a;
  for (const auto& v : items) a.push_back(v);
  json::object md{{"resourceVersion", rv}};
  if (!cont.empty()) md["continue"] = cont;
  json::object body;
  body["kind"] = "SecretList";
  body["apiVersion"] = "v1";
  if (metadata_first) {
    body["metadata"] = md;
    body["items"] = std::move(a);
  } else {
    body["items"] = std::move(a);
    body["metadata"] = md;
  }
  return json::serialize(body);
}

std::vector<json::value> sample_objects(std::mt19937& rng, int n) {
  std::vector<json::value> out;
  for (int i = 0; i < n; ++i) {
    json::value v;
    switch (i % 4) {
      case 0:
        v = test_json::random_object(rng);
        break;
      case 1:
        v = fixtures::service_monitor(i, rng);
        break;
      case 2:
        v = fixtures::secret(i, rng);
        break;
      default:
        v = fixtures::pod(i, rng);
        break;
    }
    // LIST items carry no apiVersion/kind; some here keep them.
    if (i % 3 != 0) {
      v.as_object().erase("apiVersion");
      v.as_object().erase("kind");
    }
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace

TEST(ListDecoder, SameEncodingsAsFromJsonWhateverTheReadBoundaries) {
  std::mt19937 rng(42);
  const auto items = sample_objects(rng, 40);
  for (const bool metadata_first : {true, false}) {
    const std::string body =
        list_body(items, "12345", metadata_first ? "token/x" : "", metadata_first);
    for (const auto& t : kTransforms) {
      for (int mode = 0; mode < 4; ++mode) {
        if (mode == 1 && &t != &kTransforms[0]) continue;  // byte by byte once is enough
        ListDecoder d(t, kSecretKind);
        for (auto piece : pieces(body, rng, mode)) ASSERT_FALSE(d.feed(piece)) << d.error_message();
        ASSERT_FALSE(d.finish()) << d.error_message();
        ASSERT_EQ(d.items().size(), items.size());
        for (std::size_t i = 0; i < items.size(); ++i) {
          // The reference parses the same text (doubles round-trip through it).
          const auto expected =
              Object::from_json(json::parse(json::serialize(items[i])), t, kSecretKind);
          ASSERT_EQ(d.items()[i]->encoding(), expected->encoding())
              << "item " << i << ", mode " << mode << ": "
              << json::serialize(items[i]).substr(0, 300);
          // And the accessors work on it.
          EXPECT_EQ(d.items()[i]->name(), expected->name());
          EXPECT_EQ(d.items()[i]->kind(), expected->kind());
        }
        EXPECT_EQ(d.resource_version(), "12345");
        EXPECT_EQ(d.continue_token(), metadata_first ? "token/x" : "");
      }
    }
  }
}

TEST(ListDecoder, SkipsItemsThatAreNotObjectsAndUnknownFields) {
  const std::string body =
      R"({"kind":"List","extra":{"a":[1,{"b":"c"}],"items":[{"metadata":{"name":"ghost"}}]},)"
      R"("items":[1,"two",null,[{"metadata":{"name":"nested"}}],{"metadata":{"name":"a"}},)"
      R"({"metadata":{"name":"b","namespace":"ns"}}],)"
      R"("metadata":{"resourceVersion":"7","remainingItemCount":3,"continue":"c1","x":{"continue":"no"}}})";
  ListDecoder d(Transform{}, kSecretKind);
  ASSERT_FALSE(d.feed(body));
  ASSERT_FALSE(d.finish());
  ASSERT_EQ(d.items().size(), 2u);
  EXPECT_EQ(d.items()[0]->name(), "a");
  EXPECT_EQ(d.items()[1]->key(), (ObjectKey{"ns", "b"}));
  EXPECT_EQ(d.items()[1]->kind(), "Secret");
  EXPECT_EQ(d.resource_version(), "7");
  EXPECT_EQ(d.continue_token(), "c1");
}

// A member repeated in one object (no API server sends it, but JSON allows it): the
// decoders keep every member, and every lookup sees the last one, as Go and Boost.JSON
// do. Found by fuzzing (fuzz/corpus/list_decoder/regression-duplicate-keys).
TEST(ListDecoder, ARepeatedKeyResolvesToItsLastValue) {
  const std::string item =
      R"({"metadata":{"name":"a","uid":"first","labels":{"x":"1"},"uid":"last",)"
      R"("labels":{"y":"2"},"ownerReferences":[{"kind":"A","name":"o","kind":7}],)"
      R"("annotations":{"k":"v"},"annotations":null},"data":{"k":"v"},"data":"text"})";
  ListDecoder d(Transform{}, kSecretKind);
  ASSERT_FALSE(d.feed(R"({"items":[)" + item + "]}"));
  ASSERT_FALSE(d.finish());
  ASSERT_EQ(d.items().size(), 1u);
  const auto& o = *d.items()[0];
  EXPECT_EQ(o.uid(), "last");
  EXPECT_EQ(o.label("y"), "2");
  EXPECT_EQ(o.label("x"), std::nullopt);
  EXPECT_EQ(o.annotation("k"), std::nullopt);
  ASSERT_EQ(o.owner_references().size(), 1u);
  EXPECT_EQ(o.owner_references()[0].kind, "");
  EXPECT_EQ(o.at({"data"}), json::value("text"));
  // The same object as Boost.JSON reads it (which keeps the last of each key).
  const auto reference = Object::from_json(json::parse(item), Transform{}, kSecretKind);
  EXPECT_EQ(o.to_json(), reference->to_json());
  EXPECT_EQ(o.uid(), reference->uid());
}

TEST(ListDecoder, ReportsBadBodies) {
  {
    ListDecoder d(Transform{}, kSecretKind);
    ASSERT_FALSE(d.feed(R"({"items":[{"metadata":{"name":"a"}})"));
    EXPECT_EQ(d.finish(), json::error::incomplete);
    EXPECT_NE(d.error_message().find("ended in the middle"), std::string::npos)
        << d.error_message();
  }
  {
    ListDecoder d(Transform{}, kSecretKind);
    const auto ec = d.feed(R"({"items":[{"metadata":{"name":"a"}},]})");
    EXPECT_TRUE(ec);
    EXPECT_NE(d.error_message().find("invalid JSON at byte 36"), std::string::npos)
        << d.error_message();
    EXPECT_EQ(d.feed("{}"), ec);  // stays failed
    EXPECT_EQ(d.finish(), ec);
  }
  {
    ListDecoder d(Transform{}, kSecretKind);
    ASSERT_FALSE(d.feed("[1,2]"));
    EXPECT_EQ(d.finish(), boost::system::errc::invalid_argument);
    EXPECT_NE(d.error_message().find("not a JSON object"), std::string::npos);
  }
  {
    ListDecoder d(Transform{}, kSecretKind);
    ASSERT_FALSE(d.feed("{\"items\":[]} \n"));
    EXPECT_TRUE(d.feed("x"));  // data after the document
  }
}

TEST(ListDecoder, ResetStartsOver) {
  ListDecoder d(Transform{}, kSecretKind);
  ASSERT_FALSE(
      d.feed(R"({"metadata":{"resourceVersion":"1"},"items":[{"metadata":{"name":"a"}},{"meta)"));
  ASSERT_EQ(d.items().size(), 1u);
  d.reset();
  EXPECT_TRUE(d.items().empty());
  EXPECT_EQ(d.resource_version(), "");
  ASSERT_FALSE(
      d.feed(R"({"metadata":{"resourceVersion":"2"},"items":[{"metadata":{"name":"b"}}]})"));
  ASSERT_FALSE(d.finish());
  ASSERT_EQ(d.items().size(), 1u);
  EXPECT_EQ(d.items()[0]->name(), "b");
  EXPECT_EQ(d.resource_version(), "2");
}

TEST(WatchDecoder, EventsDecodeLikeFromJsonWhateverTheReadBoundaries) {
  std::mt19937 rng(9);
  const auto objects = sample_objects(rng, 40);
  const char* types[] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK"};
  std::string stream;
  for (std::size_t i = 0; i < objects.size(); ++i) {
    json::object ev;
    if (i % 5 == 4) {
      // The object before the type: still transformed correctly.
      ev["object"] = objects[i];
      ev["type"] = types[i % 4];
    } else {
      ev["type"] = types[i % 4];
      ev["object"] = objects[i];
    }
    stream += json::serialize(ev);
    stream += i % 2 == 0 ? "\n" : " \r\n\t";
  }
  for (const auto& t : kTransforms) {
    for (int mode = 0; mode < 4; ++mode) {
      if (mode == 1 && &t != &kTransforms[0]) continue;  // byte by byte once is enough
      WatchDecoder d(t, kSecretKind);
      std::vector<DecodedWatchEvent> out;
      for (auto piece : pieces(stream, rng, mode))
        ASSERT_FALSE(d.feed(piece, out)) << d.error_message();
      ASSERT_FALSE(d.finish(out));
      ASSERT_EQ(out.size(), objects.size());
      for (std::size_t i = 0; i < objects.size(); ++i) {
        EXPECT_EQ(out[i].type, types[i % 4]);
        EXPECT_TRUE(out[i].has_object);
        ASSERT_NE(out[i].object, nullptr);
        const auto expected =
            Object::from_json(json::parse(json::serialize(objects[i])), t, kSecretKind);
        ASSERT_EQ(out[i].object->encoding(), expected->encoding()) << "event " << i;
      }
    }
  }
}

TEST(WatchDecoder, ErrorEventsCarryTheWholeStatus) {
  // A metadata-only transform must not strip the Status of an ERROR event.
  const json::value status = json::parse(
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
      R"json("message":"too old resource version: 1 (5)","reason":"Expired","code":410})json");
  for (const bool type_first : {true, false}) {
    const std::string text =
        type_first ? R"({"type":"ERROR","object":)" + json::serialize(status) + "}"
                   : R"({"object":)" + json::serialize(status) + R"(,"type":"ERROR"})";
    WatchDecoder d(Transform{true, true, true}, kSecretKind);
    std::vector<DecodedWatchEvent> out;
    ASSERT_FALSE(d.feed(text, out));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].type, "ERROR");
    EXPECT_EQ(out[0].object, nullptr);
    EXPECT_EQ(out[0].status, status);
  }
  // Untouched also when it lacks kind and apiVersion: they are not filled in from the
  // watched kind (found by fuzzing: fuzz/corpus/watch_decoder/regression-status-kind).
  const json::value bare = json::parse(R"({"code":500,"message":"etcd leader changed"})");
  for (const bool type_first : {true, false}) {
    const std::string text = type_first
                                 ? R"({"type":"ERROR","object":)" + json::serialize(bare) + "}"
                                 : R"({"object":)" + json::serialize(bare) + R"(,"type":"ERROR"})";
    WatchDecoder d(Transform{}, kSecretKind);
    std::vector<DecodedWatchEvent> out;
    ASSERT_FALSE(d.feed(text, out));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].status, bare);
  }
  // A Status that is not a JSON object is no Status: null, whatever the order (found by
  // fuzzing: regression-error-status-not-an-object).
  for (const bool type_first : {true, false}) {
    const std::string text =
        type_first ? R"({"type":"ERROR","object":"v0"})" : R"({"object":"v0","type":"ERROR"})";
    WatchDecoder d(Transform{}, kSecretKind);
    std::vector<DecodedWatchEvent> out;
    ASSERT_FALSE(d.feed(text, out));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].type, "ERROR");
    EXPECT_TRUE(out[0].has_object);
    EXPECT_TRUE(out[0].status.is_null());
  }
  // An object whose type comes after it still gets them, once it is known to be one.
  WatchDecoder d(Transform{}, kSecretKind);
  std::vector<DecodedWatchEvent> out;
  ASSERT_FALSE(d.feed(R"({"object":{"metadata":{"name":"s"}},"type":"ADDED"})", out));
  ASSERT_EQ(out.size(), 1u);
  ASSERT_NE(out[0].object, nullptr);
  EXPECT_EQ(out[0].object->kind(), "Secret");
  EXPECT_EQ(out[0].object->api_version(), "v1");
}

TEST(WatchDecoder, MalformedEventsAreReportedAsSuch) {
  WatchDecoder d(Transform{}, kSecretKind);
  std::vector<DecodedWatchEvent> out;
  ASSERT_FALSE(d.feed(R"({"object":{"metadata":{"name":"a"}}} [1] "x" {"type":5,"object":null})"
                      R"( {"type":"ADDED","object":"str"} {"type":"ADDED"})",
                      out));
  ASSERT_EQ(out.size(), 6u);
  EXPECT_EQ(out[0].type, "");
  EXPECT_NE(out[0].object, nullptr);
  EXPECT_EQ(out[1].type, "");
  EXPECT_FALSE(out[1].has_object);
  EXPECT_EQ(out[2].type, "");
  EXPECT_EQ(out[3].type, "");
  EXPECT_TRUE(out[3].has_object);
  EXPECT_EQ(out[3].object, nullptr);
  EXPECT_EQ(out[4].type, "ADDED");
  EXPECT_TRUE(out[4].has_object);
  EXPECT_EQ(out[4].object, nullptr);
  EXPECT_FALSE(out[5].has_object);
}

TEST(WatchDecoder, ARepeatedKeyWinsOverTheEarlierOne) {
  // As Go and Boost.JSON read an object with a repeated key: the last value counts. A
  // type that is not a string clears the type; an object that is not one clears the
  // object (found by fuzzing: fuzz/corpus/watch_decoder/regression-repeated-type).
  WatchDecoder d(Transform{}, kSecretKind);
  std::vector<DecodedWatchEvent> out;
  ASSERT_FALSE(d.feed(R"({"type":"MODIFIED","type":1,"object":[]})"
                      R"( {"type":"ADDED","object":{"metadata":{"name":"a"}},"object":null})"
                      R"( {"type":"ADDED","type":{"x":1},"object":{"metadata":{"name":"b"}}})"
                      R"( {"type":"ADDED","type":"DELETED","object":{"metadata":{"name":"c"}}})",
                      out));
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].type, "");
  EXPECT_TRUE(out[0].has_object);
  EXPECT_EQ(out[0].object, nullptr);
  EXPECT_EQ(out[1].type, "ADDED");
  EXPECT_EQ(out[1].object, nullptr);
  EXPECT_EQ(out[2].type, "");
  ASSERT_NE(out[2].object, nullptr);
  EXPECT_EQ(out[3].type, "DELETED");
  ASSERT_NE(out[3].object, nullptr);
  EXPECT_EQ(out[3].object->name(), "c");
}

TEST(WatchDecoder, LimitsAndErrors) {
  {
    WatchDecoder d(Transform{}, kSecretKind, 100);
    std::vector<DecodedWatchEvent> out;
    const std::string big =
        R"({"type":"ADDED","object":{"metadata":{"name":")" + std::string(200, 'a') + "\"}}}";
    EXPECT_EQ(d.feed(big, out), boost::system::errc::value_too_large);
    EXPECT_NE(d.error_message().find("larger than 100 bytes"), std::string::npos)
        << d.error_message();
    EXPECT_TRUE(out.empty());
  }
  {
    WatchDecoder d(Transform{}, kSecretKind);
    std::vector<DecodedWatchEvent> out;
    ASSERT_FALSE(d.feed(R"({"type":"ADDED","object":{"metadata":{"name":"a"}}}{"type":"AD)", out));
    EXPECT_EQ(out.size(), 1u);
    EXPECT_EQ(d.finish(out), json::error::incomplete);
    EXPECT_NE(d.error_message().find("stream ended in the middle"), std::string::npos)
        << d.error_message();
  }
  {
    WatchDecoder d(Transform{}, kSecretKind);
    std::vector<DecodedWatchEvent> out;
    EXPECT_TRUE(d.feed(R"({"type":"ADDED","object":{"metadata":{"name":"a"}}} {"type":})", out));
    EXPECT_EQ(out.size(), 1u);  // events before the error are kept
    EXPECT_NE(d.error_message().find("invalid JSON at byte"), std::string::npos);
  }
  {
    WatchDecoder d(Transform{}, kSecretKind);
    std::vector<DecodedWatchEvent> out;
    ASSERT_FALSE(d.feed("  \n ", out));
    EXPECT_FALSE(d.finish(out));  // only whitespace: a clean end
    EXPECT_TRUE(out.empty());
  }
}
