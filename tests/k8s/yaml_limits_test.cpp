// The parser's limits (k8s/yaml.hpp ParseLimits): hostile input fails with an error that
// says what was exceeded and where, instead of expanding; ordinary input with anchors,
// merge keys and long values still parses. The CPU time and memory each poison input
// costs are measured by bench/k8s/yaml_poison_bench.cpp (bench/RESULTS.md).
#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "k8s/yaml.hpp"
#include "tests/k8s/yaml_poison.hpp"

namespace json = boost::json;
using aop::k8s::yaml::parse;
using aop::k8s::yaml::parse_all;
using aop::k8s::yaml::ParseLimits;

namespace {

std::string error_of(std::string_view text, const ParseLimits& limits = {}) {
  auto r = parse_all(text, limits);
  if (r) return "(parsed)";
  return r.error().message;
}

}  // namespace

TEST(YamlLimits, EveryPoisonInputFailsWithItsReason) {
  for (const auto& p : aop::test::poison_yaml()) {
    SCOPED_TRACE(p.name);
    const std::string message = error_of(p.text, p.limits);
    EXPECT_NE(message.find(p.error), std::string::npos) << message;
  }
}

TEST(YamlLimits, AliasBombNamesThePositionOfTheAliasThatCrossedTheLimit) {
  const std::string message = error_of(aop::test::laughs(9));
  EXPECT_NE(message.find("more than 100000 nodes at line 5"), std::string::npos) << message;
  EXPECT_NE(message.find("write repeated parts out"), std::string::npos) << message;
}

TEST(YamlLimits, AliasesWithinTheBudgetExpand) {
  // Three levels copy 12,330 nodes through aliases (a1: 10 x 11, a2: 10 x 111, a3:
  // 10 x 1,111), within the default budget of 100,000; a fourth level (111,110 more)
  // would not be.
  auto v = parse(aop::test::laughs(3));
  ASSERT_TRUE(v.has_value()) << v.error().message;
  const auto& a3 = v->at("a3").as_array();
  ASSERT_EQ(a3.size(), 10u);
  EXPECT_EQ(a3[9].as_array()[9].as_array()[9].as_array()[9], json::value("lol"));
  EXPECT_NE(error_of(aop::test::laughs(4)).find("aliases expand to more than 100000 nodes"),
            std::string::npos);
}

TEST(YamlLimits, TheAliasBudgetIsPerDocument) {
  // Each document copies 12,330 nodes through aliases; 20 documents in one stream are fine.
  std::string stream;
  for (int i = 0; i < 20; ++i) stream += "---\n" + aop::test::laughs(3);
  auto docs = parse_all(stream);
  ASSERT_TRUE(docs.has_value()) << docs.error().message;
  EXPECT_EQ(docs->size(), 20u);
}

TEST(YamlLimits, MergeKeysStillWork) {
  auto v = parse("base: &b {p: 1, q: 2}\nderived: {<<: *b, q: 3}\n");
  ASSERT_TRUE(v.has_value()) << v.error().message;
  EXPECT_EQ(v->at("derived"), json::parse(R"({"p":1,"q":3})"));
}

TEST(YamlLimits, DepthLimitIsConfigurableAndCountsAliasedValues) {
  ParseLimits limits;
  limits.max_depth = 3;
  EXPECT_TRUE(parse("a: {b: [1]}\n", limits).has_value());
  EXPECT_NE(error_of("a: {b: [[1]]}\n", limits).find("deeper than 3 levels"), std::string::npos);
  // An alias of a two-level value placed two levels down is four levels deep.
  EXPECT_NE(error_of("x: &x {b: [1]}\ny: {c: *x}\n", limits).find("deeper than 3 levels"),
            std::string::npos);
}

TEST(YamlLimits, LongScalarsStopTheReaderEarly) {
  // With a large input limit (as `render` reads whole files), a 10 MiB scalar is refused
  // by the scalar limit, while the reader has consumed little more than the limit.
  ParseLimits limits;
  limits.max_input_bytes = 64u << 20;
  limits.max_scalar_bytes = 1u << 20;
  const std::string plain = "a: b\nc: " + std::string(10u << 20, 'x') + "\n";
  const std::string message = error_of(plain, limits);
  EXPECT_NE(message.find("following line 2, column 1 is longer than 1048576 bytes"),
            std::string::npos)
      << message;
  const std::string literal = "a: |\n  " + std::string(10u << 20, 'x') + "\n";
  EXPECT_NE(error_of(literal, limits).find("is longer than 1048576 bytes"), std::string::npos);
  const std::string comment = "a: 1\n#" + std::string(10u << 20, 'x') + "\n";
  EXPECT_NE(error_of(comment, limits).find("is longer than 1048576 bytes"), std::string::npos);
  // Just below the limit parses.
  const std::string fits = "a: " + std::string((1u << 20) - 1, 'x') + "\n";
  auto v = parse(fits, limits);
  ASSERT_TRUE(v.has_value()) << v.error().message;
  EXPECT_EQ(v->at("a").as_string().size(), (1u << 20) - 1);
}

TEST(YamlLimits, DocumentBytesCountExpandedAliases) {
  ParseLimits limits;
  limits.max_document_bytes = 1000;
  const std::string s = "a: &a " + std::string(300, 'x') + "\nb: [*a, *a, *a]\n";
  EXPECT_NE(error_of(s, limits).find("add up to more than 1000 bytes"), std::string::npos);
}

TEST(YamlLimits, EncodingErrorsNameWhatToDo) {
  EXPECT_NE(error_of(std::string("\xFE\xFF\0a", 4)).find("save it as UTF-8"), std::string::npos);
  // A UTF-8 byte order mark is fine.
  auto v = parse(
      "\xEF\xBB\xBF"
      "a: 1\n");
  ASSERT_TRUE(v.has_value()) << v.error().message;
  EXPECT_EQ(v->at("a"), json::value(1));
  // Tabs, CR and non-ASCII text are fine.
  v = parse("a:\t\"x\\ty\"\r\nb: \xC3\xA9t\xC3\xA9\n");
  ASSERT_TRUE(v.has_value()) << v.error().message;
  EXPECT_EQ(v->at("b"), json::value("\xC3\xA9t\xC3\xA9"));
  // Surrogates and overlong forms are not UTF-8.
  EXPECT_NE(error_of("a: \xED\xA0\x80\n").find("not valid UTF-8"), std::string::npos);
  EXPECT_NE(error_of("a: \xC0\xAF\n").find("not valid UTF-8"), std::string::npos);
  // A C1 control character (U+0085 NEL is allowed, U+0080 is not).
  EXPECT_TRUE(parse("a: \"x\xC2\x85y\"\n").has_value());
  EXPECT_NE(error_of("a: x\xC2\x80y\n").find("U+0080"), std::string::npos);
}

TEST(YamlLimits, InputSizeLimitIsChecked) {
  ParseLimits limits;
  limits.max_input_bytes = 10;
  EXPECT_NE(error_of("a: 12345678\n", limits).find("12 bytes long; at most 10"), std::string::npos);
}

TEST(YamlLimits, NonScalarKeysAreRefused) {
  EXPECT_NE(error_of("? [a]\n: 1\n").find("only scalar keys"), std::string::npos);
  EXPECT_NE(error_of("? {a: 1}\n: 1\n").find("only scalar keys"), std::string::npos);
}
