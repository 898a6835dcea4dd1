// The telegraf annotation (user YAML on Namespaces and Applications). Oracle: what is
// accepted satisfies the rules the parser promises: valid, unique endpoint names and
// URLs that pass check_http_url (so no credential ever reaches the ConfigMap).
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "fuzz/check.hpp"
#include "reconcile/telegraf/annotation.hpp"
#include "reconcile/telegraf/validation.hpp"

namespace telegraf = aop::telegraf;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto parsed = telegraf::parse_annotation(text);
  if (!parsed.errors.empty()) {
    AOP_FUZZ_CHECK(parsed.endpoints.empty(), "an invalid annotation yielded endpoints");
    return 0;
  }
  std::set<std::string> names;
  for (const auto& ep : parsed.endpoints) {
    AOP_FUZZ_CHECK(!telegraf::check_endpoint_name(ep.name), "accepted name " + ep.name);
    AOP_FUZZ_CHECK(names.insert(ep.name).second, "duplicate name " + ep.name);
    AOP_FUZZ_CHECK(!telegraf::check_http_url(ep.url), "accepted url " + ep.url);
  }
  return 0;
}
