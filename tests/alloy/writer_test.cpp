// The Alloy syntax writer and its companions: string escapes (checked by unquoting with
// Go's strconv.Unquote rules, written here independently of the writer), numbers,
// layout, component labels against hash values computed by hand with sha256sum,
// canonical JSON, duration conversion and the packing of files into Secrets.
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "reconcile/alloy/duration.hpp"
#include "reconcile/alloy/labels.hpp"
#include "reconcile/alloy/pack.hpp"
#include "reconcile/alloy/syntax.hpp"

namespace aop::alloy {
namespace {

// ---------------------------------------------------------------------------------------
// Reference unquoter: Go's strconv.Unquote for a double-quoted literal. Returns nullopt
// where Go returns ErrSyntax. Stricter than Go in one place: raw bytes that are not UTF-8
// are rejected, because Alloy's scanner rejects them in the source.

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(std::string& out, std::uint32_t r) {
  if (r < 0x80) {
    out += static_cast<char>(r);
  } else if (r < 0x800) {
    out += static_cast<char>(0xC0 | (r >> 6));
    out += static_cast<char>(0x80 | (r & 0x3F));
  } else if (r < 0x10000) {
    out += static_cast<char>(0xE0 | (r >> 12));
    out += static_cast<char>(0x80 | ((r >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (r & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (r >> 18));
    out += static_cast<char>(0x80 | ((r >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((r >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (r & 0x3F));
  }
}

// Length of a valid UTF-8 sequence at s[i], 0 if invalid (decoded independently of the
// writer: by re-encoding the decoded rune and comparing, which rejects overlong forms).
std::size_t valid_utf8_at(const std::string& s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t n = 0;
  std::uint32_t r = 0;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    r = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    r = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    r = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    r = (r << 6) | (cc & 0x3F);
  }
  if (r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF)) return 0;
  std::string again;
  append_utf8(again, r);
  return again == s.substr(i, n) ? n : 0;
}

std::optional<std::string> go_unquote(const std::string& lit) {
  if (lit.size() < 2 || lit.front() != '"' || lit.back() != '"') return std::nullopt;
  const std::string in = lit.substr(1, lit.size() - 2);
  std::string out;
  std::size_t i = 0;
  while (i < in.size()) {
    const char c = in[i];
    if (c == '\n' || c == '"') return std::nullopt;
    if (c != '\\') {
      const std::size_t n = valid_utf8_at(in, i);
      if (n == 0) return std::nullopt;
      out.append(in, i, n);
      i += n;
      continue;
    }
    if (i + 1 >= in.size()) return std::nullopt;
    const char e = in[i + 1];
    i += 2;
    switch (e) {
      case 'a':
        out += '\a';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'v':
        out += '\v';
        break;
      case '\\':
        out += '\\';
        break;
      case '"':
        out += '"';
        break;
      case 'x':
      case 'u':
      case 'U': {
        const std::size_t digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        if (i + digits > in.size()) return std::nullopt;
        std::uint32_t v = 0;
        for (std::size_t k = 0; k < digits; ++k) {
          const int h = hex_value(in[i + k]);
          if (h < 0) return std::nullopt;
          v = v * 16 + static_cast<std::uint32_t>(h);
        }
        i += digits;
        if (e == 'x') {
          out += static_cast<char>(v);
        } else {
          if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return std::nullopt;
          append_utf8(out, v);
        }
        break;
      }
      case '0':
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7': {
        if (i + 2 > in.size()) return std::nullopt;
        std::uint32_t v = static_cast<std::uint32_t>(e - '0');
        for (std::size_t k = 0; k < 2; ++k) {
          const char d = in[i + k];
          if (d < '0' || d > '7') return std::nullopt;
          v = v * 8 + static_cast<std::uint32_t>(d - '0');
        }
        if (v > 255) return std::nullopt;
        i += 2;
        out += static_cast<char>(v);
        break;
      }
      default:  // `\'` included: Go accepts it only in single-quoted literals
        return std::nullopt;
    }
  }
  return out;
}

TEST(ReferenceUnquoter, FollowsGoRules) {
  EXPECT_EQ(go_unquote(R"("a\tb")"), "a\tb");
  EXPECT_EQ(go_unquote(R"("\u00e9\x41\101")"),
            "\xC3\xA9"
            "AA");
  EXPECT_EQ(go_unquote(R"("\U0001F600")"), "\xF0\x9F\x98\x80");
  EXPECT_EQ(go_unquote(R"("\xff")"), std::string(1, '\xFF'));
  EXPECT_EQ(go_unquote(R"("\'")"), std::nullopt);
  EXPECT_EQ(go_unquote("\"a\nb\""), std::nullopt);
  EXPECT_EQ(go_unquote(R"("\ud800")"), std::nullopt);
  EXPECT_EQ(go_unquote(R"("a"b")"), std::nullopt);
  EXPECT_EQ(go_unquote(R"("\q")"), std::nullopt);
  EXPECT_EQ(go_unquote(R"("\400")"), std::nullopt);
}

// ---------------------------------------------------------------------------------------
// Strings

void expect_round_trip(const std::string& bytes) {
  const std::string lit = quote(bytes);
  EXPECT_EQ(lit.find('\n'), std::string::npos) << "raw newline in " << lit;
  EXPECT_EQ(go_unquote(lit), bytes) << "literal " << lit;
}

TEST(Quote, HostileStringsRoundTrip) {
  for (const std::string& s : {
           std::string(R"(say "hi")"),
           std::string(R"(C:\path\to\file)"),
           std::string("line1\nline2\r\n"),
           std::string("a\tb"),
           std::string("$"),
           std::string("${1}"),
           std::string("$1 $$ $(SHARD) ${HOSTNAME}"),
           std::string("ünïcödé ✓ 日本語 😀"),
           std::string("\xFF\xFE"),
           std::string("\xC3"),              // truncated two-byte sequence
           std::string("\xED\xA0\x80"),      // a UTF-16 surrogate encoded as UTF-8
           std::string("\xC0\xAF"),          // overlong '/'
           std::string("\xF4\x90\x80\x80"),  // above U+10FFFF
           std::string("ok\xE2\x82"),        // cut in the middle of '€'
           std::string("\xEF\xBB\xBF BOM"),
           std::string("\"}\n}\nevil \"x\" {\n"),
       }) {
    expect_round_trip(s);
  }
  std::string controls;
  for (int c = 0; c < 0x20; ++c) controls += static_cast<char>(c);
  controls += '\x7F';
  expect_round_trip(controls);
}

TEST(Quote, EveryByteAndRandomBytesRoundTrip) {
  for (int c = 0; c < 256; ++c) expect_round_trip(std::string(1, static_cast<char>(c)));
  std::mt19937 rng(20);  // fixed seed: the same inputs every run
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> length(0, 40);
  for (int n = 0; n < 2000; ++n) {
    std::string s;
    for (int k = length(rng); k > 0; --k) s += static_cast<char>(byte(rng));
    expect_round_trip(s);
  }
}

TEST(Quote, ExactEscapes) {
  EXPECT_EQ(quote(R"(\d+\.\d+)"), R"("\\d+\\.\\d+")");
  EXPECT_EQ(quote("q\"b\\n\nr\rt\ta\ab\bf\fv\v"), R"("q\"b\\n\nr\rt\ta\ab\bf\fv\v")");
  EXPECT_EQ(quote(std::string("\x00\x01\x1B\x7F", 4)), R"("\u0000\u0001\u001B\u007F")");
  EXPECT_EQ(quote("\xFF"), R"("\xFF")");
  EXPECT_EQ(quote("\xC3\xA9"), "\"\xC3\xA9\"");  // é stays UTF-8
  EXPECT_EQ(quote("${1}$1"), R"("${1}$1")");     // no interpolation in Alloy strings
  EXPECT_EQ(quote("'"), R"("'")");               // never the `\'` escape
}

// ---------------------------------------------------------------------------------------
// Numbers, identifiers, expressions

TEST(Numbers, IntegersBelowTwoPow53ElseShortestRoundTrip) {
  EXPECT_EQ(format_number(2000), "2000");
  EXPECT_EQ(format_number(0), "0");
  EXPECT_EQ(format_number(-0.0), "0");
  EXPECT_EQ(format_number(-5), "-5");
  EXPECT_EQ(format_number(1048576), "1048576");
  EXPECT_EQ(format_number(9007199254740991.0), "9007199254740991");
  EXPECT_EQ(format_number(0.005), "0.005");
  EXPECT_EQ(format_number(2.5), "2.5");
  EXPECT_EQ(format_number(0.00001), "1e-05");
  EXPECT_EQ(format_number(1e20), "1e+20");
  EXPECT_EQ(format_number(0.1), "0.1");
  EXPECT_THROW(Expr::number(std::nan("")), std::invalid_argument);
  EXPECT_THROW(format_number(HUGE_VAL), std::invalid_argument);
}

TEST(Identifiers, AsciiIdentifiersExceptKeywords) {
  EXPECT_TRUE(is_identifier("_x1"));
  EXPECT_TRUE(is_identifier("nulls"));
  EXPECT_FALSE(is_identifier("1x"));
  EXPECT_FALSE(is_identifier("a-b"));
  EXPECT_FALSE(is_identifier(""));
  EXPECT_FALSE(is_identifier("true"));
  EXPECT_FALSE(is_identifier("false"));
  EXPECT_FALSE(is_identifier("null"));
  EXPECT_THROW(Block("prometheus.scrape", "bad-label"), std::invalid_argument);
  EXPECT_THROW(Block("a..b"), std::invalid_argument);
  EXPECT_THROW(Block("x").attr("null", Expr::boolean(true)), std::invalid_argument);
}

TEST(Expressions, ScalarsListsReferencesCalls) {
  EXPECT_EQ(write_expr(Expr::strings({"a", "b"})), R"(["a", "b"])");
  EXPECT_EQ(write_expr(Expr::list({})), "[]");
  EXPECT_EQ(write_expr(Expr::object({})), "{}");
  EXPECT_EQ(write_expr(Expr::list({Expr::number(0.005), Expr::number(1), Expr::boolean(false)})),
            "[0.005, 1, false]");
  EXPECT_EQ(write_expr(Expr::ref("prometheus.remote_write", "mi_a_1", "receiver")),
            "prometheus.remote_write.mi_a_1.receiver");
  EXPECT_EQ(write_expr(Expr::concat({Expr::string("replica-"), Expr::env("REPLICA_GROUP")})),
            R"("replica-" + sys.env("REPLICA_GROUP"))");
  EXPECT_EQ(write_expr(Expr::concat({Expr::call("coalesce", {Expr::env("HOSTNAME"),
                                                             Expr::constant("constants.hostname")}),
                                     Expr::string(":8080")})),
            R"(coalesce(sys.env("HOSTNAME"), constants.hostname) + ":8080")");
  EXPECT_EQ(write_expr(
                Expr::call("array.concat", {Expr::ref("discovery.kubernetes", "sd_a", "targets"),
                                            Expr::ref("discovery.kubernetes", "sd_b", "targets")})),
            "array.concat(discovery.kubernetes.sd_a.targets, discovery.kubernetes.sd_b.targets)");
  EXPECT_THROW(Expr::object({{"a", Expr::boolean(true)}, {"a", Expr::boolean(false)}}),
               std::invalid_argument);
}

TEST(Expressions, ObjectsSortedQuotedKeysTrailingCommas) {
  const auto o = Expr::object({{"zeta", Expr::string("z")},
                               {"app.kubernetes.io/name", Expr::string("web")},
                               {"__replica__", Expr::string("r")},
                               {"true", Expr::string("keyword")},
                               {"Upper", Expr::string("u")}});
  EXPECT_EQ(write_expr(o, 1),
            "{\n"
            "    Upper = \"u\",\n"
            "    __replica__ = \"r\",\n"
            "    \"app.kubernetes.io/name\" = \"web\",\n"
            "    \"true\" = \"keyword\",\n"
            "    zeta = \"z\",\n"
            "  }");
}

TEST(Expressions, ListOfObjectsIsMultiLine) {
  const auto targets = Expr::list(
      {Expr::object({{"__address__", Expr::string("a:9100")}}),
       Expr::object({{"__address__", Expr::string("b:9100")}, {"env", Expr::string("p")}})});
  Block b("discovery.relabel", "x");
  b.attr("targets", targets);
  EXPECT_EQ(write_block(b),
            "discovery.relabel \"x\" {\n"
            "  targets = [\n"
            "    {\n"
            "      __address__ = \"a:9100\",\n"
            "    },\n"
            "    {\n"
            "      __address__ = \"b:9100\",\n"
            "      env = \"p\",\n"
            "    },\n"
            "  ]\n"
            "}\n");
}

// ---------------------------------------------------------------------------------------
// Blocks and files: the remote write component of the specification's worked example,
// built through the API and compared with the text printed there.

Block remote_write_example() {
  Block b("prometheus.remote_write", "mi_monitoring_primary_7f26355a");
  b.attr("external_labels",
         Expr::object({{"cluster", Expr::string("monitoring/agent")},
                       {"__replica__",
                        Expr::concat({Expr::string("replica-"), Expr::env("REPLICA_GROUP")})}}));
  b.block(
      Block("endpoint")
          .attr("url", Expr::string("https://mimir.example.com/api/v1/push"))
          .block(Block("basic_auth")
                     .attr("username", Expr::string("12345"))
                     .attr("password_file", Expr::string("/var/lib/grafana-agent/secrets/"
                                                         "_secrets_monitoring_rw_auth_password"))));
  b.block(Block("wal")
              .attr("truncate_frequency", Expr::string("60m"))
              .attr("min_keepalive_time", Expr::string("5m"))
              .attr("max_keepalive_time", Expr::string("4h")));
  return b;
}

TEST(Files, WorkedExampleRemoteWrite) {
  EXPECT_EQ(write_file("monitoring", "agent", {remote_write_example()}),
            "// Generated by agent-operator for GrafanaAgent monitoring/agent. DO NOT EDIT.\n"
            "\n"
            "prometheus.remote_write \"mi_monitoring_primary_7f26355a\" {\n"
            "  external_labels = {\n"
            "    __replica__ = \"replica-\" + sys.env(\"REPLICA_GROUP\"),\n"
            "    cluster = \"monitoring/agent\",\n"
            "  }\n"
            "  endpoint {\n"
            "    url = \"https://mimir.example.com/api/v1/push\"\n"
            "    basic_auth {\n"
            "      username = \"12345\"\n"
            "      password_file = "
            "\"/var/lib/grafana-agent/secrets/_secrets_monitoring_rw_auth_password\"\n"
            "    }\n"
            "  }\n"
            "  wal {\n"
            "    truncate_frequency = \"60m\"\n"
            "    min_keepalive_time = \"5m\"\n"
            "    max_keepalive_time = \"4h\"\n"
            "  }\n"
            "}\n");
}

TEST(Files, EmptyBodiesBlankLinesAndAttributesBeforeBlocks) {
  Block process("loki.process", "p");
  process.block(Block("stage.cri"));
  process.attr("forward_to", Expr::list({}));  // added after a block, still written first
  EXPECT_EQ(write_file("ns", "a", {Block("logging"), process}),
            "// Generated by agent-operator for GrafanaAgent ns/a. DO NOT EDIT.\n"
            "\n"
            "logging {}\n"
            "\n"
            "loki.process \"p\" {\n"
            "  forward_to = []\n"
            "  stage.cri {}\n"
            "}\n");
  EXPECT_THROW(write_file("ns", "a", {}), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------
// Component labels. The expected hashes were computed by hand, e.g.
//   printf %s 'MetricsInstance/monitoring/primary' | sha256sum | cut -c1-8
// (the discovery keys with `printf '%s\n%s' '<json>' node-local` for the node-local one).

TEST(Labels, WorkedExampleLabels) {
  EXPECT_EQ(ident("mi", "monitoring_primary", "MetricsInstance/monitoring/primary"),
            "mi_monitoring_primary_7f26355a");
  EXPECT_EQ(ident("scrape", "serviceMonitor/monitoring/web/0",
                  "monitoring/primary/serviceMonitor/monitoring/web/0"),
            "scrape_serviceMonitor_monitoring_web_0_c5aaffd2");
  EXPECT_EQ(ident("sd", "endpoints_monitoring",
                  R"({"namespaces":{"names":["monitoring"]},"role":"endpoints"})"),
            "sd_endpoints_monitoring_f7258a06");
  EXPECT_EQ(ident("loki", "monitoring_logs_0", "LogsInstance/monitoring/logs/0"),
            "loki_monitoring_logs_0_ac7adbe7");
  EXPECT_EQ(ident("li", "monitoring_logs", "LogsInstance/monitoring/logs"),
            "li_monitoring_logs_af352d97");
  EXPECT_EQ(ident("sd", "pod_monitoring",
                  "{\"namespaces\":{\"names\":[\"monitoring\"]},\"role\":\"pod\"}\nnode-local"),
            "sd_pod_monitoring_99bc56b8");
  EXPECT_EQ(ident("logs", "podLogs/monitoring/web", "monitoring/logs/podLogs/monitoring/web"),
            "logs_podLogs_monitoring_web_b96d73cb");
  EXPECT_EQ(ident("integration", "monitoring_node", "Integration/monitoring/node"),
            "integration_monitoring_node_92957cb5");
}

TEST(Labels, SanitizedAndCut) {
  // printf %s k | sha256sum → 8254c329…; `ü` is two bytes, so two `_`.
  EXPECT_EQ(ident("scrape", "a-b.c/d ü", "k"), "scrape_a_b_c_d____8254c329");
  const std::string long_name(150, 'x');
  const std::string label = ident("scrape", long_name, "k");
  EXPECT_EQ(label, "scrape_" + std::string(100, 'x') + "_8254c329");
  EXPECT_TRUE(is_identifier(label));
}

TEST(Labels, SameKeySameLabel) {
  LabelSet set;
  // printf %s k | sha256sum → 8254c329…
  const auto first = set.label("scrape", "job", "k");
  EXPECT_EQ(first, "scrape_job_8254c329");
  EXPECT_EQ(set.label("scrape", "job", "k"), first);
  EXPECT_EQ(set.label("scrape", "j-b", "k"), first);  // identity is (prefix, key)
  EXPECT_EQ(set.label("sd", "job", "k"), "sd_job_8254c329");
}

TEST(Labels, CollisionsNumberedInRequestOrder) {
  // `key-8337` and `key-15029` share the first 8 hex digits of their SHA-256 (7152ff1c;
  // found offline by a birthday search, checked with sha256sum). With the same readable
  // text they give the same label, so the later one is numbered.
  LabelSet set;
  EXPECT_EQ(set.label("scrape", "job", "key-8337"), "scrape_job_7152ff1c");
  EXPECT_EQ(set.label("scrape", "job", "key-15029"), "scrape_job_7152ff1c_2");
  EXPECT_EQ(set.label("scrape", "job", "key-8337"), "scrape_job_7152ff1c");
  EXPECT_EQ(set.label("scrape", "job", "key-15029"), "scrape_job_7152ff1c_2");
  // Three keys sharing 6a0e9d4f (also found offline, checked with sha256sum).
  EXPECT_EQ(set.label("logs", "j", "key-3292195"), "logs_j_6a0e9d4f");
  EXPECT_EQ(set.label("logs", "j", "key-749293"), "logs_j_6a0e9d4f_2");
  EXPECT_EQ(set.label("logs", "j", "key-3848755"), "logs_j_6a0e9d4f_3");
  // Different readable text: no collision although the hashes match.
  EXPECT_EQ(set.label("logs", "k", "key-3848755"), "logs_j_6a0e9d4f_3");  // same identity
  EXPECT_EQ(set.label("logz", "k", "key-3848755"), "logz_k_6a0e9d4f");
}

TEST(CanonicalJson, SortedCompactEscaped) {
  const auto v = boost::json::parse(
      R"({"role":"endpoints","namespaces":{"names":["monitoring"]},"n":2000.0,"f":0.5,)"
      R"("s":"a\"b\\c\u0001\u00e9","b":true,"z":null,"l":[1,"x"]})");
  EXPECT_EQ(canonical_json(v),
            R"({"b":true,"f":0.5,"l":[1,"x"],"n":2000,"namespaces":{"names":["monitoring"]},)"
            R"("role":"endpoints","s":"a\"b\\c\u0001)"
            "\xC3\xA9"
            R"(","z":null})");
  EXPECT_EQ(canonical_json(boost::json::parse(
                R"({"namespaces":{"names":["monitoring"]},"role":"endpoints"})")),
            R"({"namespaces":{"names":["monitoring"]},"role":"endpoints"})");
}

// ---------------------------------------------------------------------------------------
// Durations

TEST(Durations, PrometheusParse) {
  EXPECT_EQ(parse_prometheus_duration("0"), 0U);
  EXPECT_EQ(parse_prometheus_duration("30s"), 30000U);
  EXPECT_EQ(parse_prometheus_duration("1m30s"), 90000U);
  EXPECT_EQ(parse_prometheus_duration("5ms"), 5U);
  EXPECT_EQ(parse_prometheus_duration("1y1w1d1h1m1s1ms"),
            (365ULL + 7ULL + 1ULL) * 86400000ULL + 3600000ULL + 60000ULL + 1000ULL + 1ULL);
  for (const char* bad : {"", "1", "s", "1s1m", "1m1m", "1.5s", "-1s", "1us", "1 s", "1sms",
                          "99999999999999999999d", "300y"}) {
    EXPECT_EQ(parse_prometheus_duration(bad), std::nullopt) << bad;
  }
}

TEST(Durations, GoText) {
  EXPECT_EQ(go_duration("30s"), "30s");
  EXPECT_EQ(go_duration("1h5m"), "1h5m");
  EXPECT_EQ(go_duration("0"), "0");
  EXPECT_EQ(go_duration("1d"), "24h");
  EXPECT_EQ(go_duration("1w1d"), "192h");
  EXPECT_EQ(go_duration("1d1m1ms"), "24h1m1ms");
  EXPECT_EQ(go_duration("0d"), "0s");
  EXPECT_EQ(go_duration("1y"), "8760h");
  EXPECT_EQ(go_duration("x"), std::nullopt);
}

TEST(Durations, PrometheusText) {
  EXPECT_EQ(prometheus_duration_text(0), "0s");
  EXPECT_EQ(prometheus_duration_text(30000), "30s");
  EXPECT_EQ(prometheus_duration_text(60000), "1m");
  EXPECT_EQ(prometheus_duration_text(90000), "1m30s");
  EXPECT_EQ(prometheus_duration_text(7 * 86400000ULL), "1w");
  EXPECT_EQ(prometheus_duration_text(8 * 86400000ULL), "8d");
  EXPECT_EQ(prometheus_duration_text(365 * 86400000ULL), "1y");
  EXPECT_EQ(prometheus_duration_text(1500), "1s500ms");
}

// ---------------------------------------------------------------------------------------
// Packing

// A file of `blocks` blocks whose written size is close to `bytes_each`.
File synthetic_file(const std::string& key, std::size_t blocks, std::size_t bytes_each) {
  File f{key, {}};
  for (std::size_t i = 0; i < blocks; ++i) {
    f.blocks.push_back(
        Block("loki.process", "b" + std::to_string(i))
            .attr("forward_to", Expr::list({}))
            .block(Block("stage.static_labels")
                       .attr("values",
                             Expr::object({{"pad", Expr::string(std::string(bytes_each, 'x'))}}))));
  }
  return f;
}

std::size_t total_bytes(const std::vector<ConfigSecret>& secrets) {
  std::size_t n = 0;
  for (const auto& s : secrets) {
    for (const auto& e : s.entries) n += e.text.size();
  }
  return n;
}

// `fraction` × B of configuration text (at least), in files of exactly ⌈B/10⌉ bytes.
constexpr std::size_t kFileBytes = (kSecretBudget + 9) / 10;

std::vector<File> synthetic_config(double fraction) {
  const std::size_t overhead =
      write_file("monitoring", "agent", synthetic_file("x.alloy", 1, 0).blocks).size();
  std::vector<File> files;
  const auto n = static_cast<std::size_t>(std::lround(fraction * 10));
  for (std::size_t i = 0; i < n; ++i) {
    files.push_back(synthetic_file("f" + std::to_string(i) + ".alloy", 1, kFileBytes - overhead));
  }
  return files;
}

void expect_within_budget(const std::vector<ConfigSecret>& secrets) {
  std::set<std::string> keys;
  for (const auto& s : secrets) {
    std::size_t used = 0;
    for (const auto& e : s.entries) {
      used += e.key.size() + e.text.size();
      EXPECT_TRUE(keys.insert(e.key).second) << "duplicate key " << e.key;
    }
    EXPECT_LE(used, kSecretBudget) << s.name;
  }
}

TEST(Pack, HalfOneAndTwoAndAHalfBudgets) {
  const std::vector<std::pair<double, std::vector<std::string>>> cases = {
      {0.5, {"agent-alloy-config"}},
      {1.0, {"agent-alloy-config", "agent-alloy-config-1"}},
      {2.5, {"agent-alloy-config", "agent-alloy-config-1", "agent-alloy-config-2"}},
  };
  for (const auto& [fraction, names] : cases) {
    const auto files = synthetic_config(fraction);
    auto secrets = pack_config("monitoring", "agent", "agent-alloy-config", files);
    ASSERT_TRUE(secrets.has_value()) << secrets.error().message;
    std::vector<std::string> got;
    for (const auto& s : *secrets) got.push_back(s.name);
    EXPECT_EQ(got, names) << fraction << " × B";
    expect_within_budget(*secrets);
    EXPECT_EQ(total_bytes(*secrets), files.size() * kFileBytes);
    EXPECT_GE(static_cast<double>(total_bytes(*secrets)),
              fraction * static_cast<double>(kSecretBudget));
    // Order kept: the files come out in the order given.
    std::vector<std::string> keys;
    for (const auto& s : *secrets) {
      for (const auto& e : s.entries) keys.push_back(e.key);
    }
    ASSERT_EQ(keys.size(), files.size());
    for (std::size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(keys[i], files[i].key);
  }
}

TEST(Pack, OversizeFileCutAtBlockBoundaries) {
  // One file of 25 blocks of about B/10: too large for one Secret.
  const std::vector<File> files = {
      File{"main.alloy", {Block("logging")}},
      synthetic_file("scrape_x_12345678.alloy", 25, kSecretBudget / 10)};
  auto secrets = pack_config("ns", "a", "a-alloy-config", files);
  ASSERT_TRUE(secrets.has_value()) << secrets.error().message;
  expect_within_budget(*secrets);
  std::vector<std::string> keys;
  std::size_t blocks = 0;
  for (const auto& s : *secrets) {
    for (const auto& e : s.entries) {
      keys.push_back(e.key);
      EXPECT_EQ(e.text.rfind(file_header("ns", "a") + "\n", 0), 0U) << e.key;
      EXPECT_EQ(e.text.back(), '\n');
      for (std::size_t p = e.text.find("\nloki.process "); p != std::string::npos;
           p = e.text.find("\nloki.process ", p + 1)) {
        ++blocks;
      }
    }
  }
  EXPECT_EQ(blocks, 25U);
  ASSERT_GE(keys.size(), 4U);
  EXPECT_EQ(keys[0], "main.alloy");
  EXPECT_EQ(keys[1], "scrape_x_12345678.alloy");
  EXPECT_EQ(keys[2], "scrape_x_12345678-1.alloy");
  EXPECT_EQ(keys[3], "scrape_x_12345678-2.alloy");
}

TEST(Pack, OversizeBlockFails) {
  const std::vector<File> files = {synthetic_file("big.alloy", 1, kSecretBudget)};
  auto secrets = pack_config("ns", "a", "a-alloy-config", files);
  ASSERT_FALSE(secrets.has_value());
  EXPECT_EQ(secrets.error().message.rfind("big.alloy: block loki.process \"b0\" is ", 0), 0U)
      << secrets.error().message;
  EXPECT_NE(secrets.error().message.find("bytes, above the 786432-byte limit of one config object"),
            std::string::npos)
      << secrets.error().message;
}

TEST(Pack, EmptyConfigHasNoSecret) {
  auto secrets = pack_config("ns", "a", "a-alloy-config", {});
  ASSERT_TRUE(secrets.has_value());
  EXPECT_TRUE(secrets->empty());
  EXPECT_EQ(config_secret_name("b", 0), "b");
  EXPECT_EQ(config_secret_name("b", 3), "b-3");
}

}  // namespace
}  // namespace aop::alloy
