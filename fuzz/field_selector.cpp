// kube-sim's field selectors (`?fieldSelector=metadata.name=a,type!=Opaque`), parsed
// from any query a client sends. Oracle: a selector of `=` requirements only, each
// field required once, matches a lookup returning the required values. (An empty field
// name parses, as apimachinery's does; the server then refuses the field as
// unsupported.)
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/check.hpp"
#include "tools/kube-sim/field_selector.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto selector = aop::sim::parse_field_selector(text);
  if (!selector) return 0;
  (void)selector->metadata_only();
  (void)selector->required_name();
  bool any_not_equal = false;
  for (const auto& r : selector->requirements()) {
    any_not_equal = any_not_equal || !r.equals;
  }
  // Each field looks up the value of its first requirement.
  const auto lookup = [&](std::string_view field) -> std::string {
    for (const auto& r : selector->requirements()) {
      if (r.field == field) return r.value;
    }
    return "";
  };
  bool consistent = true;  // the same field is not required to have two values
  for (const auto& r : selector->requirements()) {
    if (r.equals && lookup(r.field) != r.value) consistent = false;
  }
  AOP_FUZZ_CHECK(any_not_equal || !consistent || selector->matches(lookup),
                 "the selector does not match its own values");
  return 0;
}
