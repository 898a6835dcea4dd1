// The single-value rules: endpoint names, scrape URLs, Go durations, tag text.
#include "reconcile/telegraf/validation.hpp"

#include <gtest/gtest.h>

namespace aop::telegraf {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::nanoseconds;
using std::chrono::seconds;

TEST(EndpointName, AcceptsTheSpecPattern) {
  for (std::string_view ok : {"a", "_", "0", "repo_server", "kafka-exporter", "api.v2", "A.b-c_d",
                              "x123456789012345678901234567890123456789012345678901234567890AB"}) {
    EXPECT_EQ(check_endpoint_name(ok), std::nullopt) << ok;
  }
}

TEST(EndpointName, RejectsEverythingElse) {
  EXPECT_NE(check_endpoint_name(""), std::nullopt);
  for (std::string_view bad :
       {"-a", ".a", "a b", "a\"b", "a]]", "[outputs.file]", "caf\xC3\xA9", "a/b", "a:b", "a\n"}) {
    auto c = check_endpoint_name(bad);
    ASSERT_NE(c, std::nullopt) << bad;
    EXPECT_NE(c->find("^[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}$"), std::string::npos) << *c;
  }
  const std::string too_long(64, 'a');
  auto c = check_endpoint_name(too_long);
  ASSERT_NE(c, std::nullopt);
  EXPECT_NE(c->find("64 characters"), std::string::npos) << *c;
  EXPECT_EQ(check_endpoint_name(std::string(63, 'a')), std::nullopt);
}

TEST(HttpUrl, AcceptsAbsoluteHttpAndHttps) {
  for (std::string_view ok :
       {"http://a", "https://example.com/metrics", "http://svc.ns.svc:8082/metrics",
        "http://10.0.0.1:9090/m?x=1&y=2", "http://[::1]:8080/", "HTTP://upper.case/",
        "http://host:65535/", "https://h/p#frag", "http://h/m?format=text&keyword=x"}) {
    EXPECT_EQ(check_http_url(ok), std::nullopt) << ok;
  }
}

TEST(HttpUrl, NamesTheRuleThatFailed) {
  auto rule = [](std::string_view url) { return check_http_url(url).value_or("<accepted>"); };
  EXPECT_NE(rule("").find("empty"), std::string::npos);
  EXPECT_NE(rule("ftp://host/x").find("scheme \"ftp\" is not allowed"), std::string::npos);
  EXPECT_NE(rule("file:///etc/passwd").find("scheme \"file\""), std::string::npos);
  EXPECT_NE(rule("/metrics").find("not an absolute URL"), std::string::npos);
  EXPECT_NE(rule("host:8080/metrics").find("scheme"), std::string::npos);
  EXPECT_NE(rule("http:///metrics").find("no host"), std::string::npos);
  EXPECT_NE(rule("http:metrics").find("no host"), std::string::npos);
  EXPECT_NE(rule("http://user:pw@host/").find("the URL contains a password"), std::string::npos);
  EXPECT_NE(rule("http://user:@host/").find("password"), std::string::npos);
  EXPECT_NE(rule("http://user@host/metrics").find("the URL contains a user"), std::string::npos);
  EXPECT_NE(rule("http://h/m?page=1&access_token=abc")
                .find("query parameter \"access_token\" "
                      "looks like a credential"),
            std::string::npos);
  EXPECT_NE(rule("http://h/m?X-Amz-Signature=abc").find("X-Amz-Signature"), std::string::npos);
  EXPECT_NE(rule("http://h/m#token=abc").find("fragment parameter \"token\""), std::string::npos);
  // The rule never quotes the credential itself.
  for (std::string_view bad :
       {"http://user:hunter2@host/", "http://h/?token=hunter2", "http://h/#sig=hunter2"}) {
    EXPECT_EQ(rule(bad).find("hunter2"), std::string::npos) << rule(bad);
    EXPECT_NE(rule(bad).find("not accepted in scrape URLs"), std::string::npos) << bad;
  }
  EXPECT_NE(rule("http://host:0/").find("port 0"), std::string::npos);
  EXPECT_NE(rule("http://host:70000/").find("port 70000"), std::string::npos);
  EXPECT_NE(rule("http://host:/").find("empty port"), std::string::npos);
  EXPECT_NE(rule("http://host/${INFLUX_TOKEN}").find("`$`"), std::string::npos);
  EXPECT_NE(rule("http://host/?t=$INFLUX_TOKEN").find("%24"), std::string::npos);
  for (std::string_view bad : {"http://host/a b", "http://host/\"]]", "http://host/\n[x]",
                               "http://h\xC3\xA9st/", "http://host/'''\"\"\"", " http://host/"}) {
    EXPECT_NE(rule(bad).find("not an absolute URL"), std::string::npos) << bad;
  }
}

TEST(GoDuration, PositiveCheck) {
  EXPECT_EQ(check_positive_duration("30s"), std::nullopt);
  EXPECT_NE(check_positive_duration("0s").value_or("").find("must be positive"), std::string::npos);
  EXPECT_NE(check_positive_duration("-1m").value_or("").find("must be positive"),
            std::string::npos);
  EXPECT_NE(check_positive_duration("thirty").value_or("").find("such as 30s"), std::string::npos);
}

TEST(Utf8, ValidatesStrictly) {
  EXPECT_TRUE(is_valid_utf8("plain"));
  EXPECT_TRUE(is_valid_utf8("caf\xC3\xA9 \xF0\x9F\x9A\x80 \xE2\x80\xAE"));
  EXPECT_FALSE(is_valid_utf8("\xFF"));
  EXPECT_FALSE(is_valid_utf8("\xC3"));              // truncated
  EXPECT_FALSE(is_valid_utf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xE0\x80\xAF"));      // overlong
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));      // surrogate U+D800
  EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
}

TEST(TagText, RulesAndReasons) {
  EXPECT_EQ(check_tag_text("frontend"), std::nullopt);
  EXPECT_EQ(check_tag_text("quote \" ]] \"\"\" [outputs.file] caf\xC3\xA9"), std::nullopt);
  EXPECT_NE(check_tag_text("").value_or("").find("empty"), std::string::npos);
  EXPECT_NE(check_tag_text("a\nb").value_or("").find("control character"), std::string::npos);
  EXPECT_NE(check_tag_text("a\tb").value_or("").find("control character"), std::string::npos);
  EXPECT_NE(check_tag_text(std::string("a\0b", 3)).value_or("").find("control"), std::string::npos);
  EXPECT_NE(check_tag_text("a\x7F").value_or("").find("control"), std::string::npos);
  EXPECT_NE(check_tag_text("a\xC2\x85").value_or("").find("control"), std::string::npos);
  EXPECT_NE(check_tag_text("\xFF").value_or("").find("UTF-8"), std::string::npos);
  EXPECT_NE(check_tag_text("${INFLUX_TOKEN}").value_or("").find("`$`"), std::string::npos);
}

TEST(DnsLabel, Namespaces) {
  EXPECT_TRUE(is_dns_label("argocd"));
  EXPECT_TRUE(is_dns_label("a-1"));
  EXPECT_FALSE(is_dns_label(""));
  EXPECT_FALSE(is_dns_label("-a"));
  EXPECT_FALSE(is_dns_label("a-"));
  EXPECT_FALSE(is_dns_label("A"));
  EXPECT_FALSE(is_dns_label("a_b"));
  EXPECT_FALSE(is_dns_label(std::string(64, 'a')));
}

TEST(Describe, QuotesEscapesAndCuts) {
  EXPECT_EQ(describe("a\"b\n"), "\"a\\\"b\\n\"");
  EXPECT_EQ(describe(std::string("\x01", 1)), "\"\\x01\"");
  const std::string cut = describe(std::string(200, 'x'));
  EXPECT_EQ(cut.size(), 1 + 80 + 3 + 1);
  // Never cuts inside a character: 79 ASCII bytes then a 2-byte character.
  const std::string mixed = describe(std::string(79, 'x') + "\xC3\xA9\xC3\xA9");
  EXPECT_TRUE(is_valid_utf8(mixed));
  EXPECT_EQ(describe("\xFF"), "\"\\xff\"");
  // URL credentials are redacted before the cut, which could leave half a URL that no
  // longer looks like one.
  const std::string long_url = "http://user:" + std::string(100, 'p') + "@host/";
  EXPECT_EQ(describe(long_url), "\"http://REDACTED@host/\"");
}

}  // namespace
}  // namespace aop::telegraf
