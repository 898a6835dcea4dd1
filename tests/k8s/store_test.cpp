#include "k8s/store.hpp"

#include <algorithm>
#include <atomic>
#include <thread>

#include <gtest/gtest.h>
#include <boost/json.hpp>

namespace json = boost::json;
using namespace aop::k8s;

namespace {

ObjectPtr obj(std::string ns, std::string name, std::string rv, json::object spec = {}) {
  json::object md{{"name", name}, {"resourceVersion", rv}};
  if (!ns.empty()) md["namespace"] = ns;
  return Object::from_json(json::value{{"metadata", md}, {"spec", spec}});
}

std::vector<std::string> names(const std::vector<ObjectPtr>& objects) {
  std::vector<std::string> out;
  for (const auto& o : objects) out.push_back(o->key().str());
  std::sort(out.begin(), out.end());
  return out;
}

// An index like the operator's "secrets referenced by": spec.secrets[*].
std::vector<std::string> referenced_secrets(const Object& o) {
  std::vector<std::string> out;
  if (auto v = o.at({"spec", "secrets"}); v && v->is_array()) {
    for (const auto& s : v->as_array()) out.emplace_back(s.as_string());
  }
  return out;
}

json::object refs(std::initializer_list<const char*> secrets) {
  json::array a;
  for (const char* s : secrets) a.emplace_back(s);
  return json::object{{"secrets", a}};
}

}  // namespace

TEST(Store, UpsertAddsUpdatesAndIgnoresSameResourceVersion) {
  Store s;
  auto c1 = s.upsert(obj("a", "x", "1"));
  ASSERT_TRUE(c1);
  EXPECT_EQ(c1->type, StoreChange::Type::added);
  EXPECT_EQ(c1->old_object, nullptr);

  EXPECT_FALSE(s.upsert(obj("a", "x", "1")));  // same RV: no change

  const auto v2 = obj("a", "x", "2");
  auto c2 = s.upsert(v2);
  ASSERT_TRUE(c2);
  EXPECT_EQ(c2->type, StoreChange::Type::updated);
  EXPECT_EQ(c2->old_object->resource_version(), "1");
  EXPECT_EQ(c2->new_object, v2);
  EXPECT_EQ(s.get({"a", "x"}), v2);
  EXPECT_EQ(s.get("a", "x"), v2);
  EXPECT_EQ(s.size(), 1u);
}

TEST(Store, RemoveReportsTheLastState) {
  Store s;
  s.upsert(obj("a", "x", "1"));
  s.upsert(obj("a", "x", "5"));
  auto c = s.remove({"a", "x"});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->type, StoreChange::Type::deleted);
  EXPECT_EQ(c->old_object->resource_version(), "5");
  EXPECT_FALSE(s.remove({"a", "x"}));
  EXPECT_EQ(s.get({"a", "x"}), nullptr);
  EXPECT_EQ(s.size(), 0u);
}

TEST(Store, NamespaceIndexIsAlwaysThere) {
  Store s;
  s.upsert(obj("b", "1", "1"));
  s.upsert(obj("a", "2", "1"));
  s.upsert(obj("ab", "3", "1"));
  s.upsert(obj("a", "1", "1"));
  s.upsert(obj("", "cluster", "1"));
  EXPECT_EQ(names(s.list_namespace("a")), (std::vector<std::string>{"a/1", "a/2"}));
  EXPECT_EQ(names(s.by_index("namespace", "a")), (std::vector<std::string>{"a/1", "a/2"}));
  EXPECT_EQ(names(s.list_namespace("")), (std::vector<std::string>{"cluster"}));
  EXPECT_TRUE(s.list_namespace("c").empty());
  EXPECT_EQ(s.list().size(), 5u);
  EXPECT_TRUE(s.by_index("no-such-index", "a").empty());
}

TEST(Store, CustomIndexFollowsUpdatesAndDeletes) {
  Store s;
  s.add_index("secret", referenced_secrets);
  s.upsert(obj("a", "m1", "1", refs({"s1", "s2"})));
  s.upsert(obj("a", "m2", "1", refs({"s2"})));
  EXPECT_EQ(names(s.by_index("secret", "s1")), (std::vector<std::string>{"a/m1"}));
  EXPECT_EQ(names(s.by_index("secret", "s2")), (std::vector<std::string>{"a/m1", "a/m2"}));

  // m1 stops referencing s1 and starts referencing s3.
  s.upsert(obj("a", "m1", "2", refs({"s2", "s3"})));
  EXPECT_TRUE(s.by_index("secret", "s1").empty());
  EXPECT_EQ(names(s.by_index("secret", "s3")), (std::vector<std::string>{"a/m1"}));
  EXPECT_EQ(s.by_index("secret", "s3")[0]->resource_version(), "2");

  s.remove({"a", "m2"});
  EXPECT_EQ(names(s.by_index("secret", "s2")), (std::vector<std::string>{"a/m1"}));
}

TEST(Store, IndexAddedLateIndexesExistingObjects) {
  Store s;
  s.upsert(obj("a", "m1", "1", refs({"s1"})));
  s.add_index("secret", referenced_secrets);
  EXPECT_EQ(names(s.by_index("secret", "s1")), (std::vector<std::string>{"a/m1"}));
}

TEST(Store, ReplaceReportsAddsUpdatesAndVanishedObjects) {
  Store s;
  s.add_index("secret", referenced_secrets);
  const auto keep = obj("a", "keep", "1", refs({"s1"}));
  s.upsert(keep);
  s.upsert(obj("a", "change", "1", refs({"s1"})));
  s.upsert(obj("a", "vanish", "1", refs({"s1"})));

  auto changes = s.replace({obj("a", "keep", "1", refs({"s1"})), obj("a", "change", "2"),
                            obj("b", "new", "7", refs({"s1"}))});
  std::map<std::string, StoreChange::Type> by_name;
  for (const auto& c : changes) {
    const auto& o = c.new_object ? c.new_object : c.old_object;
    by_name[o->key().str()] = c.type;
  }
  EXPECT_EQ(by_name.size(), 3u);
  EXPECT_EQ(by_name["a/change"], StoreChange::Type::updated);
  EXPECT_EQ(by_name["a/vanish"], StoreChange::Type::deleted);
  EXPECT_EQ(by_name["b/new"], StoreChange::Type::added);
  EXPECT_EQ(by_name.count("a/keep"), 0u);

  // Unchanged objects keep their identity; indexes are rebuilt for the new contents.
  EXPECT_EQ(s.get({"a", "keep"}), keep);
  EXPECT_EQ(names(s.list()), (std::vector<std::string>{"a/change", "a/keep", "b/new"}));
  EXPECT_EQ(names(s.by_index("secret", "s1")), (std::vector<std::string>{"a/keep", "b/new"}));

  // Replacing with nothing deletes everything.
  EXPECT_EQ(s.replace({}).size(), 3u);
  EXPECT_EQ(s.size(), 0u);
  EXPECT_TRUE(s.by_index("secret", "s1").empty());
}

TEST(Store, TransformIsAppliedBeforeStoring) {
  const json::value v = {
      {"metadata",
       {{"name", "x"},
        {"namespace", "a"},
        {"resourceVersion", "1"},
        {"managedFields", json::array{json::object{{"manager", "kubectl"}}}},
        {"annotations", {{"kubectl.kubernetes.io/last-applied-configuration", "{...}"}}}}},
      {"data", {{"password", "c2VjcmV0"}}}};
  Store s;
  s.upsert(Object::from_json(v, Transform{true, true, true}));
  const auto stored = s.get({"a", "x"})->to_json();
  EXPECT_FALSE(stored.as_object().contains("data"));
  EXPECT_FALSE(stored.at("metadata").as_object().contains("managedFields"));
  EXPECT_TRUE(stored.at("metadata").at("annotations").as_object().empty());
}

TEST(Store, ReadersSeeOldOrNewContentsDuringReplace) {
  Store s;
  std::vector<ObjectPtr> odd, even;
  for (int i = 0; i < 2000; ++i) {
    odd.push_back(obj("ns" + std::to_string(i % 10), "o" + std::to_string(i), "1"));
    even.push_back(obj("ns" + std::to_string(i % 10), "e" + std::to_string(i), "1"));
  }
  s.replace(odd);
  std::atomic<bool> done{false};
  std::atomic<int> torn{0};
  std::thread reader([&] {
    while (!done.load()) {
      const auto all = s.list();
      if (all.size() != 2000) ++torn;
      const char first = all.empty() ? '?' : all.front()->name()[0];
      for (const auto& o : all) {
        if (o->name()[0] != first) {
          ++torn;
          break;
        }
      }
    }
  });
  for (int round = 0; round < 20; ++round) s.replace(round % 2 == 0 ? even : odd);
  done = true;
  reader.join();
  EXPECT_EQ(torn.load(), 0);
}
