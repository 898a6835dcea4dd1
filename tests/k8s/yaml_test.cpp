// YAML parsing follows sigs.k8s.io/yaml (go-yaml v2 resolution); emitting follows go-yaml
// v3 Marshal. Expected texts below are written from those libraries' documented rules
// (indentation algorithm, quoting, natural key order, Go float formatting).
#include "k8s/yaml.hpp"

#include <gtest/gtest.h>
#include <boost/json.hpp>

namespace json = boost::json;
using aop::k8s::yaml::emit;
using aop::k8s::yaml::EmitOptions;
using aop::k8s::yaml::format_go_float;
using aop::k8s::yaml::NumberStyle;
using aop::k8s::yaml::parse;
using aop::k8s::yaml::parse_all;

namespace {

json::value must_parse(std::string_view text) {
  auto r = parse(text);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? *r : json::value();
}

std::string emit_config(const json::value& v) {
  return emit(v, EmitOptions{.indent = 4, .numbers = NumberStyle::go_float64});
}

}  // namespace

TEST(YamlParse, Yaml11ScalarsResolveLikeKubernetes) {
  const auto v = must_parse(
      "a: yes\nb: off\nc: ~\nd: 012\ne: 0x1F\nf: 1_000\ng: 1.5e3\nh: '123'\ni: \"true\"\n"
      "j: hello\nk: .inf\nl: 2026-11-20\nm: y\nbig: 9223372036854775808\no: -12\np: 08\n");
  const auto& o = v.as_object();
  EXPECT_EQ(o.at("a"), json::value(true));
  EXPECT_EQ(o.at("b"), json::value(false));
  EXPECT_TRUE(o.at("c").is_null());
  EXPECT_EQ(o.at("d"), json::value(10));  // Go base-0: leading zero is octal
  EXPECT_EQ(o.at("e"), json::value(31));
  EXPECT_EQ(o.at("f"), json::value(1000));
  EXPECT_EQ(o.at("g"), json::value(1500.0));
  EXPECT_EQ(o.at("h"), json::value("123"));  // quoted scalars stay strings
  EXPECT_EQ(o.at("i"), json::value("true"));
  EXPECT_EQ(o.at("j"), json::value("hello"));
  EXPECT_TRUE(o.at("k").is_double());
  EXPECT_EQ(o.at("l"), json::value("2026-11-20"));  // timestamps stay strings
  EXPECT_EQ(o.at("m"), json::value(true));
  EXPECT_EQ(o.at("big"), json::value(9223372036854775808ULL));
  EXPECT_EQ(o.at("o"), json::value(-12));
  EXPECT_EQ(o.at("p"), json::value(8.0));  // invalid octal falls back to float, as Go does
}

TEST(YamlParse, NelAndNbspEscapesReadAsTheirCodePoints) {
  // yaml-cpp decodes \N and \_ into lone bytes that are not UTF-8; they are read as
  // U+0085 and U+00A0, as Go reads them, and what the emitter writes for them reads back
  // the same (found by fuzzing: "e<U+0085>" emitted as "e\N" read back differently).
  const auto v = must_parse("a: \"x\\N\\_y\"\nb: \"\u00e9\\N\"\n");
  EXPECT_EQ(v.at("a").as_string(), "x\u0085\u00a0y");
  EXPECT_EQ(v.at("b").as_string(), "\u00e9\u0085");
  const json::value nel = json::string("e\u0085");
  EXPECT_EQ(must_parse(emit(nel)), nel);
}

TEST(YamlParse, AnchorsAliasesAndMergeKeys) {
  const auto v = must_parse("base: &b {p: 1, q: 2}\nderived:\n  <<: *b\n  q: 3\nlist: [*b]\n");
  EXPECT_EQ(v.at("derived"), json::parse(R"({"p":1,"q":3})"));
  EXPECT_EQ(v.at("list"), json::parse(R"([{"p":1,"q":2}])"));
}

TEST(YamlParse, MultiDocumentSkipsEmptyDocuments) {
  auto docs = parse_all("---\na: 1\n---\n---\n# only a comment\n---\nb: 2\n");
  ASSERT_TRUE(docs.has_value());
  ASSERT_EQ(docs->size(), 2u);
  EXPECT_EQ((*docs)[1], json::parse(R"({"b":2})"));
}

TEST(YamlParse, InvalidYamlIsAnErrorWithPosition) {
  auto r = parse("a: [1, 2\nb: 3\n");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("invalid YAML"), std::string::npos);
  EXPECT_NE(r.error().message.find("line"), std::string::npos);
}

TEST(YamlParse, BoolKeysBecomeStrings) {
  // As with sigs.k8s.io/yaml: an unquoted YAML 1.1 boolean key (even `y`) becomes "true".
  const auto v = must_parse("on: 1\n'yes': 2\nn: 3\n");
  EXPECT_TRUE(v.as_object().contains("true"));
  EXPECT_TRUE(v.as_object().contains("yes"));
  EXPECT_TRUE(v.as_object().contains("false"));
}

TEST(GoFloat, MatchesStrconvFormatFloatG) {
  EXPECT_EQ(format_go_float(100000), "100000");
  EXPECT_EQ(format_go_float(1000000), "1e+06");
  EXPECT_EQ(format_go_float(1048576), "1.048576e+06");
  EXPECT_EQ(format_go_float(0.00001), "1e-05");
  EXPECT_EQ(format_go_float(0.0001), "0.0001");
  EXPECT_EQ(format_go_float(2.5), "2.5");
  EXPECT_EQ(format_go_float(-3), "-3");
  EXPECT_EQ(format_go_float(123456), "123456");
  EXPECT_EQ(format_go_float(1234567), "1.234567e+06");
  EXPECT_EQ(format_go_float(0.1), "0.1");
  EXPECT_EQ(format_go_float(1e21), "1e+21");
  EXPECT_EQ(format_go_float(1.5e-7), "1.5e-07");
  EXPECT_EQ(format_go_float(0), "0");
  EXPECT_EQ(format_go_float(10), "10");
  EXPECT_EQ(format_go_float(120.5), "120.5");
}

TEST(YamlEmit, NestedIndentationFollowsGoYamlV3) {
  const auto v = json::parse(R"({
    "server": {},
    "metrics": {
      "wal_directory": "/var/lib/grafana-agent/data",
      "configs": [
        {"name": "ns/a",
         "scrape_configs": [
           {"job_name": "x",
            "relabel_configs": [{"source_labels": ["job"], "target_label": "t"}],
            "tls_config": {"insecure_skip_verify": true}}]}
      ],
      "global": {"external_labels": {"cluster": "ns/agent"}}
    }
  })");
  const std::string expected =
      "metrics:\n"
      "    configs:\n"
      "        - name: ns/a\n"
      "          scrape_configs:\n"
      "            - job_name: x\n"
      "              relabel_configs:\n"
      "                - source_labels:\n"
      "                    - job\n"
      "                  target_label: t\n"
      "              tls_config:\n"
      "                insecure_skip_verify: true\n"
      "    global:\n"
      "        external_labels:\n"
      "            cluster: ns/agent\n"
      "    wal_directory: /var/lib/grafana-agent/data\n"
      "server: {}\n";
  EXPECT_EQ(emit_config(v), expected);
}

TEST(YamlEmit, QuotesStringsThatReadAsOtherTypes) {
  const auto v = json::parse(R"J({"a":"true","b":"1","c":"","d":"null","e":"yes","f":"on",
    "g":"1:20","h":"1e3","i":"0x10","j":"2026-11-20","k":"~","l":"plain text","m":"$(SHARD)",
    "n":"Node;(.*)","o":";","p":"$1://$2$3","q":"(Failed|Succeeded)","r":"1_000","s":".5",
    "t":"-","u":"- x","v":"a: b","w":"#x","x":" lead","y":"trail ","z":"it's","aa":"tab\there",
    "ab":"*star","ac":"a #b","ad":"a#b","ae":"True","af":"<<","ag":"+1","ah":"a,b","ai":"[x]"})J");
  const std::string expected =
      "a: \"true\"\n"
      "aa: \"tab\\there\"\n"
      "ab: '*star'\n"
      "ac: 'a #b'\n"
      "ad: a#b\n"
      "ae: \"True\"\n"
      "af: \"<<\"\n"
      "ag: \"+1\"\n"
      "ah: a,b\n"
      "ai: '[x]'\n"
      "b: \"1\"\n"
      "c: \"\"\n"
      "d: \"null\"\n"
      "e: \"yes\"\n"
      "f: \"on\"\n"
      "g: \"1:20\"\n"
      "h: \"1e3\"\n"
      "i: \"0x10\"\n"
      "j: \"2026-11-20\"\n"
      "k: \"~\"\n"
      "l: plain text\n"
      "m: $(SHARD)\n"
      "\"n\": Node;(.*)\n"  // YAML 1.1 boolean spellings are quoted, keys too
      "o: ;\n"
      "p: $1://$2$3\n"
      "q: (Failed|Succeeded)\n"
      "r: \"1_000\"\n"
      "s: \".5\"\n"
      "t: '-'\n"
      "u: '- x'\n"
      "v: 'a: b'\n"
      "w: '#x'\n"
      "x: ' lead'\n"
      "\"y\": 'trail '\n"
      "z: it's\n";
  EXPECT_EQ(emit_config(v), expected);
}

// Identifier-shaped strings (a letter or '_' first, then letters, digits and "_./-")
// take a short path to plain style; the keywords among them must still be quoted.
TEST(YamlEmit, IdentifierShapedStringsArePlainExceptKeywords) {
  const auto v = json::parse(R"J({"a":"NULL","b":"Null","c":"FALSE","d":"False","e":"Y",
    "f":"n","g":"Off","h":"NO","i":"NULLS","j":"Falsey","k":"yes-no","l":"on.off",
    "m":"__meta_kubernetes_pod_label_app","n":"a/b.c-d_e","o":"x1","p":"_","q":"Yes",
    "r":"ON","s":"trueish"})J");
  const std::string expected =
      "a: \"NULL\"\n"
      "b: \"Null\"\n"
      "c: \"FALSE\"\n"
      "d: \"False\"\n"
      "e: \"Y\"\n"
      "f: \"n\"\n"
      "g: \"Off\"\n"
      "h: \"NO\"\n"
      "i: NULLS\n"
      "j: Falsey\n"
      "k: yes-no\n"
      "l: on.off\n"
      "m: __meta_kubernetes_pod_label_app\n"
      "\"n\": a/b.c-d_e\n"
      "o: x1\n"
      "p: _\n"
      "q: \"Yes\"\n"
      "r: \"ON\"\n"
      "s: trueish\n";
  EXPECT_EQ(emit_config(v), expected);
}

TEST(YamlEmit, MultiLineStringsAreLiteralBlocks) {
  const auto v = json::parse(R"({"a":"line1\nline2","b":"ends\n","c":["x\ny"],"d":"keep\n\n"})");
  const std::string expected =
      "a: |-\n"
      "    line1\n"
      "    line2\n"
      "b: |\n"
      "    ends\n"
      "c:\n"
      "    - |-\n"
      "      x\n"
      "      y\n"
      "d: |+\n"
      "    keep\n"
      "\n";
  EXPECT_EQ(emit_config(v), expected);
}

// A top-level string that ends in two line breaks is a keep-chomped block whose last
// break is its own: the document adds none, or the value would read back with three.
TEST(YamlEmit, TopLevelKeepBlockReadsBackUnchanged) {
  const json::value v = "singl.n'\n\n";
  const std::string text = emit(v);
  EXPECT_EQ(text, "|+\n    singl.n'\n\n");
  const auto again = parse(text);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(*again, v);
  // The same for a clipped and a stripped block.
  for (const char* w : {"ends\n", "a\nb"}) {
    const json::value expected = w;
    const auto back = parse(emit(expected));
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(*back, expected);
  }
}

TEST(YamlEmit, NumbersAsGoFloat64InConfigMode) {
  const auto v = json::parse(R"({"a":100000,"b":1000000,"c":1048576,"d":0.00001,"e":2.5})");
  EXPECT_EQ(emit_config(v), "a: 100000\nb: 1e+06\nc: 1.048576e+06\nd: 1e-05\ne: 2.5\n");
  // Kubernetes objects keep integers exact.
  EXPECT_EQ(emit(json::parse(R"({"replicas":1000000})")), "replicas: 1000000\n");
}

TEST(YamlEmit, MapKeysInGoYamlNaturalOrder) {
  const auto v = json::parse(R"({"b":1,"a10":1,"a2":1,"A":1,"_x":1,"1":1,"a":1})");
  // Non-letters sort before letters; digit runs compare numerically.
  EXPECT_EQ(emit(v), "_x: 1\n\"1\": 1\nA: 1\na: 1\na2: 1\na10: 1\nb: 1\n");
}

TEST(YamlEmit, LongDigitRunsWrapAsGoIntegersDo) {
  // go-yaml compares digit runs as Go ints, which wrap: 20 threes are
  // -3560154814085769899, less than 4 (a signed overflow in C++ until fuzzing found it).
  const auto v = json::parse(R"({"a4":1,"a33333333333333333333":2})");
  EXPECT_EQ(emit(v), "a33333333333333333333: 2\na4: 1\n");
  // With a333 too the order is a cycle (a333 < a3333... < a4 < a333): any order is
  // go-yaml's for some sort algorithm; sorting must only stay safe and deterministic.
  std::string keys;
  for (int i = 0; i < 200; ++i)
    keys += R"("a)" + std::string(1 + i % 25, '3') + R"(":0,"a4)" + std::to_string(i) + R"(":1,)";
  const auto many = json::parse("{" + keys + R"("z":2})");
  EXPECT_EQ(emit(many), emit(many));
  EXPECT_EQ(parse(emit(many)).value(), many);
}

TEST(YamlEmit, NonAsciiKeysSortByRunes) {
  // "é" (U+00E9) is a letter to go-yaml and sorts after ASCII letters by code point;
  // digit runs still compare numerically next to multi-byte runes.
  const auto v = json::parse(R"({"é":1,"z":1,"é10":1,"é9":1,"_":1})");
  EXPECT_EQ(emit(v), "_: 1\nz: 1\né: 1\né9: 1\né10: 1\n");
}

TEST(YamlEmit, EmptyCollectionsAndNullsInline) {
  const auto v = json::parse(R"({"a":[],"b":{},"c":null,"d":[{},[],null,false]})");
  EXPECT_EQ(emit_config(v),
            "a: []\nb: {}\nc: null\nd:\n    - {}\n    - []\n    - null\n    - false\n");
}

TEST(YamlEmit, TwoSpaceIndentForManifests) {
  const auto v = json::parse(R"({"spec":{"ports":[{"name":"http","port":8080}]}})");
  EXPECT_EQ(emit(v, EmitOptions{.indent = 2}),
            "spec:\n  ports:\n    - name: http\n      port: 8080\n");
}

TEST(YamlRoundTrip, EmittedYamlParsesBackToTheSameValue) {
  const auto v = json::parse(R"({"s":["yes","1.0","multi\nline\n","x: y","  pad",""],
    "n":{"deep":{"deeper":[1,2.5,{"k":"v"}]}},"b":true})");
  auto back = parse(emit(v));
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(*back, v);
}

namespace {

// The agent's -config.expand-env over a whole file, as drone/envsubst 1.0.3 (the
// agent's) behaves, measured with its Go package: `$$` → `$`, `\\` → `\`, `\/` → `/`,
// `${NAME}` (and `${NAME...}` forms) → the environment value (here: "ENV"); `$NAME`,
// `$1`, a lone `$` or `\` are kept.
std::string expand_env(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    if (s[i] == '$' && i + 1 < s.size() && s[i + 1] == '$') {
      out += '$';
      i += 2;
    } else if (s[i] == '\\' && i + 1 < s.size() && (s[i + 1] == '\\' || s[i + 1] == '/')) {
      out += s[i + 1];
      i += 2;
    } else if (s[i] == '$' && i + 1 < s.size() && s[i + 1] == '{') {
      const auto close = s.find('}', i);
      out += "ENV";
      i = close == std::string_view::npos ? s.size() : close + 1;
    } else {
      out += s[i++];
    }
  }
  return out;
}

}  // namespace

TEST(YamlEmit, EnvExpansionEscapingIsUndoneExactlyByTheAgent) {
  const std::vector<std::string> values = {"${1}",
                                           "$${1}",
                                           "${HOME}",
                                           "a$$b",
                                           "C:\\\\Windows",
                                           "a\\/b",
                                           "\\d+\\.\\d+",
                                           "$1",
                                           "(.*)$",
                                           "$(SHARD)",
                                           "x\\\\",
                                           "\\",
                                           "tab\there\\\\",
                                           "\"q\" ${x}",
                                           "line\n${x}\n",
                                           "$",
                                           "${",
                                           "yes ${x}",
                                           "'${x}'",
                                           "#${x}",
                                           "- ${x}",
                                           ": ${x}",
                                           "${x}: y",
                                           "\\x24"};
  for (const auto& v : values) {
    SCOPED_TRACE(v);
    json::object o;
    o["value"] = v;
    o[v] = "key";
    const std::string text =
        emit(json::value(o), EmitOptions{.indent = 4, .escape_env_expansion = true});
    auto back = parse(expand_env(text));
    ASSERT_TRUE(back.has_value()) << back.error().message << "\n" << text;
    EXPECT_EQ(back->at("value"), json::value(v)) << text;
    EXPECT_TRUE(back->as_object().contains(v)) << text;
  }
}

TEST(YamlEmit, EnvExpansionEscapingLeavesOtherValuesAsUpstreamWritesThem) {
  // Replacement `$1`, regexes and the reloader's `$(SHARD)` are written unchanged.
  const auto v = json::parse(
      R"x({"replacement":"$1","regex":"(\\d+)\\.x","keep":"$(SHARD)","label":"replica-$(STATEFULSET_ORDINAL_NUMBER)"})x");
  EXPECT_EQ(emit(v, EmitOptions{.indent = 4, .escape_env_expansion = true}), emit(v));
  // And a value the expansion would change is doubled.
  EXPECT_EQ(
      emit(json::parse(R"({"r":"${1}"})"), EmitOptions{.indent = 4, .escape_env_expansion = true}),
      "r: $${1}\n");
}

TEST(YamlEmit, WithoutEscapingTheExpansionWouldChangeValues) {
  // What upstream writes: the agent would read a different value.
  const std::string text = emit(json::parse(R"({"r":"${1}","p":"C:\\\\x"})"));
  auto back = parse(expand_env(text));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->at("r"), json::value("ENV"));
  EXPECT_EQ(back->at("p"), json::value("C:\\x"));
}

// A splice is text emit_items() wrote for a column: emit_spliced() leaves it out and says
// where it goes, and put there, the document is the one with the items in the tree.
TEST(YamlEmit, ASplicedDocumentWithItsSplicesIsTheDocumentWithTheItems) {
  using aop::k8s::yaml::emit_spliced;
  using aop::k8s::yaml::kSpliceKey;
  using aop::k8s::yaml::SplicePoint;
  const auto first = json::parse(R"([{"job":"a","relabel":[{"replacement":"one\ntwo\n"}]},
                                     {"job":"b","limit":1000000}])");
  const auto second = json::parse(R"([{"job":"d","path":"${x}"}])");
  EmitOptions o{.indent = 4, .numbers = NumberStyle::go_float64, .escape_env_expansion = true};
  const std::string first_text = aop::k8s::yaml::emit_items(first.as_array(), 8, o);
  EXPECT_EQ(first_text,
            "        - job: a\n          relabel:\n            - replacement: |\n"
            "                one\n                two\n        - job: b\n"
            "          limit: 1e+06\n");
  const std::string second_text = aop::k8s::yaml::emit_items(second.as_array(), 8, o);
  EXPECT_EQ(second_text, "        - job: d\n          path: $${x}\n");

  const std::vector<int> columns{8, 8};
  EmitOptions with = o;
  with.splice_columns = &columns;
  const json::value spliced = json::object{
      {"configs",
       json::array{json::object{
           {"name", "x"},
           {"scrape", json::array{json::object{{kSpliceKey, 0}}, json::object{{"job", "c"}},
                                  json::object{{kSpliceKey, 1}}}}}}},
      {"z", "end"}};
  const auto out = emit_spliced(spliced, with);
  ASSERT_EQ(out.points.size(), 2u);
  EXPECT_EQ(out.points[0].splice, 0u);
  EXPECT_EQ(out.points[1].splice, 1u);
  std::string whole = out.text;
  whole.insert(out.points[1].offset, second_text);
  whole.insert(out.points[0].offset, first_text);

  json::value expected = json::object{
      {"configs", json::array{json::object{{"name", "x"}, {"scrape", first}}}}, {"z", "end"}};
  auto& scrape = expected.at("configs").at(0).at("scrape").as_array();
  scrape.push_back(json::object{{"job", "c"}});
  scrape.push_back(second.at(0));
  EXPECT_EQ(whole, emit(expected, o));
  EXPECT_EQ(out.text.substr(0, out.points[0].offset), "configs:\n    - name: x\n      scrape:\n");

  // Anywhere else, or outside emit_spliced(), it is a programming error, not wrong text.
  const json::value misplaced =
      json::object{{"scrape", json::array{json::object{{kSpliceKey, 0}}}}};
  EXPECT_THROW(emit_spliced(misplaced, with), std::logic_error);
  EXPECT_THROW(emit(spliced, with), std::logic_error);
  EXPECT_THROW(emit_spliced(spliced, o), std::logic_error);
  const json::value out_of_range = json::object{
      {"configs",
       json::array{json::object{{"scrape", json::array{json::object{{kSpliceKey, 2}}}}}}}};
  EXPECT_THROW(emit_spliced(out_of_range, with), std::logic_error);
}
