// Label selectors in their string form (--agent-selector, kube-sim's labelSelector
// parameter) and as JSON (metav1.LabelSelector in custom resources). Oracle: a parsed
// selector prints as a string that parses to a selector matching the same label sets.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include <boost/json/parse.hpp>

#include "fuzz/check.hpp"
#include "k8s/label_selector.hpp"

namespace k8s = aop::k8s;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  boost::system::error_code ec;
  const auto json = boost::json::parse(text, ec);
  if (!ec) (void)k8s::parse_label_selector(json);

  auto selector = k8s::parse_label_selector_string(text);
  if (!selector) return 0;
  const std::string printed = selector->to_string();
  auto again = k8s::parse_label_selector_string(printed);
  AOP_FUZZ_CHECK(again, "to_string wrote \"" + printed + "\", which the parser refuses");
  // Label sets made of the selector's own words, so that matches happen.
  std::map<std::string, std::string, std::less<>> labels;
  std::string word;
  int i = 0;
  for (const char c : text) {
    if (c == ',' || c == '=' || c == ' ' || c == '(' || c == ')' || c == '!') {
      if (!word.empty()) {
        if (i++ % 2 == 0) labels[word] = word;
        word.clear();
      }
    } else {
      word += c;
    }
  }
  const k8s::MapLabels view(labels);
  AOP_FUZZ_CHECK(selector->matches(view) == again->matches(view),
                 "\"" + printed + "\" matches differently");
  return 0;
}
