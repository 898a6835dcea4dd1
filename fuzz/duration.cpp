// Go durations (flags, CR fields such as scrapeInterval, telegraf intervals). Oracle:
// a parsed duration prints as Go prints it, and that text parses to the same value.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/check.hpp"
#include "k8s/duration.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto d = aop::k8s::parse_go_duration(text);
  if (!d) return 0;
  const std::string printed = aop::k8s::format_go_duration(*d);
  auto again = aop::k8s::parse_go_duration(printed);
  AOP_FUZZ_CHECK(again && *again == *d, "printed as \"" + printed + "\"");
  return 0;
}
