#include "k8s/label_selector.hpp"

#include <gtest/gtest.h>
#include <boost/json.hpp>

namespace json = boost::json;
using namespace aop::k8s;

namespace {

using Labels = std::map<std::string, std::string, std::less<>>;

LabelSelector api(std::string_view text) {
  auto r = parse_label_selector(json::parse(text));
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? *r : LabelSelector::nothing();
}

LabelSelector str(std::string_view text) {
  auto r = parse_label_selector_string(text);
  EXPECT_TRUE(r.has_value()) << text << ": " << (r ? "" : r.error().message);
  return r ? *r : LabelSelector::nothing();
}

bool matches(const LabelSelector& s, const Labels& l) {
  return s.matches(MapLabels(l));
}

}  // namespace

TEST(LabelSelector, EmptyMatchesEverythingNothingMatchesNothing) {
  EXPECT_TRUE(matches(api("{}"), {}));
  EXPECT_TRUE(matches(api("{}"), {{"a", "b"}}));
  EXPECT_TRUE(api("{}").matches_everything());
  EXPECT_FALSE(matches(LabelSelector::nothing(), {}));
  EXPECT_FALSE(matches(LabelSelector::nothing(), {{"a", "b"}}));
  EXPECT_TRUE(matches(str(""), {{"x", "y"}}));
}

struct MatchCase {
  const char* selector;  // string form
  Labels labels;
  bool expected;
};

class StringSelectorTable : public ::testing::TestWithParam<MatchCase> {};

TEST_P(StringSelectorTable, Matches) {
  const auto& c = GetParam();
  EXPECT_EQ(matches(str(c.selector), c.labels), c.expected) << c.selector;
}

INSTANTIATE_TEST_SUITE_P(
    Table, StringSelectorTable,
    ::testing::Values(MatchCase{"app=web", {{"app", "web"}}, true},
                      MatchCase{"app==web", {{"app", "web"}}, true},
                      MatchCase{"app=web", {{"app", "db"}}, false}, MatchCase{"app=web", {}, false},
                      MatchCase{"app!=web", {}, true},  // absent satisfies !=
                      MatchCase{"app!=web", {{"app", "web"}}, false},
                      MatchCase{"app in (web, db)", {{"app", "db"}}, true},
                      MatchCase{"app in (web,db)", {{"app", "cache"}}, false},
                      MatchCase{"app notin (web)", {}, true},
                      MatchCase{"app notin (web)", {{"app", "web"}}, false},
                      MatchCase{"app", {{"app", ""}}, true}, MatchCase{"app", {}, false},
                      MatchCase{"!app", {}, true}, MatchCase{"!app", {{"app", "x"}}, false},
                      MatchCase{"a=1,b=2", {{"a", "1"}, {"b", "2"}}, true},
                      MatchCase{"a=1,b=2", {{"a", "1"}}, false}, MatchCase{"a=", {{"a", ""}}, true},
                      MatchCase{"  tier  in  ( a ) , !x ", {{"tier", "a"}}, true},
                      MatchCase{"example.com/team=x", {{"example.com/team", "x"}}, true}));

TEST(LabelSelector, ApiFormMatchLabelsAndExpressions) {
  const auto s = api(R"({"matchLabels":{"app":"web"},
    "matchExpressions":[{"key":"tier","operator":"In","values":["a","b"]},
                        {"key":"legacy","operator":"DoesNotExist"},
                        {"key":"env","operator":"NotIn","values":["dev"]},
                        {"key":"team","operator":"Exists"}]})");
  EXPECT_TRUE(matches(s, {{"app", "web"}, {"tier", "b"}, {"team", "x"}}));
  EXPECT_TRUE(matches(s, {{"app", "web"}, {"tier", "b"}, {"team", "x"}, {"env", "prod"}}));
  EXPECT_FALSE(matches(s, {{"app", "web"}, {"tier", "b"}, {"team", "x"}, {"env", "dev"}}));
  EXPECT_FALSE(matches(s, {{"app", "web"}, {"tier", "b"}, {"team", "x"}, {"legacy", "1"}}));
  EXPECT_FALSE(matches(s, {{"app", "web"}, {"tier", "c"}, {"team", "x"}}));
  EXPECT_FALSE(matches(s, {{"app", "web"}, {"tier", "a"}}));
  // Requirements keep matchLabels (sorted) first, then expressions in order.
  ASSERT_EQ(s.requirements().size(), 5u);
  EXPECT_EQ(s.requirements()[0].key, "app");
  EXPECT_EQ(s.requirements()[1].key, "tier");
  EXPECT_EQ(s.requirements()[4].key, "team");
}

TEST(LabelSelector, ApiFormValidationErrors) {
  auto bad_op = parse_label_selector(
      json::parse(R"({"matchExpressions":[{"key":"a","operator":"Foo","values":["x"]}]})"));
  ASSERT_FALSE(bad_op.has_value());
  EXPECT_EQ(bad_op.error().message, "\"Foo\" is not a valid label selector operator");

  auto empty_in = parse_label_selector(
      json::parse(R"({"matchExpressions":[{"key":"a","operator":"In","values":[]}]})"));
  ASSERT_FALSE(empty_in.has_value());
  EXPECT_NE(empty_in.error().message.find("values set can't be empty"), std::string::npos);

  auto exists_with_values = parse_label_selector(
      json::parse(R"({"matchExpressions":[{"key":"a","operator":"Exists","values":["x"]}]})"));
  ASSERT_FALSE(exists_with_values.has_value());
  EXPECT_NE(exists_with_values.error().message.find("must be empty"), std::string::npos);

  auto bad_key = parse_label_selector(json::parse(R"({"matchLabels":{"-bad":"x"}})"));
  ASSERT_FALSE(bad_key.has_value());
  EXPECT_NE(bad_key.error().message.find("name part must consist"), std::string::npos);

  auto bad_value = parse_label_selector(json::parse(R"({"matchLabels":{"ok":"white space"}})"));
  ASSERT_FALSE(bad_value.has_value());

  auto long_value = parse_label_selector(
      json::parse(R"({"matchLabels":{"ok":")" + std::string(64, 'a') + "\"}}"));
  ASSERT_FALSE(long_value.has_value());
  EXPECT_NE(long_value.error().message.find("63"), std::string::npos);

  EXPECT_FALSE(parse_label_selector(json::value(nullptr)).has_value());
}

TEST(LabelSelector, KeyValidation) {
  EXPECT_EQ(validate_label_key("app.kubernetes.io/name"), "");
  EXPECT_EQ(validate_label_key("a"), "");
  EXPECT_NE(validate_label_key("Upper.Case/x"), "");  // prefix must be lower-case DNS
  EXPECT_NE(validate_label_key("/x"), "");
  EXPECT_NE(validate_label_key("x/"), "");
  EXPECT_NE(validate_label_key(std::string(64, 'a')), "");
  EXPECT_EQ(validate_label_key(std::string(63, 'a')), "");
  EXPECT_EQ(validate_label_value(""), "");
}

TEST(LabelSelector, StringFormErrors) {
  for (const char* bad : {"a in (x", "a in x", "=x", "a b", "a=b c", "a in ()", "!a=b", "a,,b"}) {
    EXPECT_FALSE(parse_label_selector_string(bad).has_value()) << bad;
  }
}

TEST(LabelSelector, ToStringRoundTrips) {
  const auto s = api(R"({"matchLabels":{"b":"2","a":"1"},
    "matchExpressions":[{"key":"c","operator":"In","values":["y","x"]},
                        {"key":"d","operator":"DoesNotExist"},{"key":"e","operator":"Exists"},
                        {"key":"f","operator":"NotIn","values":["z"]}]})");
  EXPECT_EQ(s.to_string(), "a=1,b=2,c in (x,y),!d,e,f!=z");
  const auto back = str(s.to_string());
  for (const Labels& l : {Labels{{"a", "1"}, {"b", "2"}, {"c", "x"}, {"e", ""}},
                          Labels{{"a", "1"}, {"b", "2"}, {"c", "q"}, {"e", ""}},
                          Labels{{"a", "1"}, {"b", "2"}, {"c", "y"}, {"e", ""}, {"f", "z"}}}) {
    EXPECT_EQ(matches(s, l), matches(back, l));
  }
}

TEST(LabelSelector, JsonLabelsAdapter) {
  const auto obj = json::parse(R"({"app":"web","n":1})");
  const JsonLabels labels(&obj.as_object());
  EXPECT_TRUE(str("app=web").matches(labels));
  EXPECT_FALSE(str("n").matches(labels));  // non-string values are not labels
  EXPECT_TRUE(str("!app").matches(JsonLabels(nullptr)));
}
