// k8s::yaml (manifests for `render`, kubeconfigs, annotations, additional scrape
// configs). Oracle: what parses emits as YAML that parses back to the same value.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "fuzz/check.hpp"
#include "k8s/yaml.hpp"
#include "reconcile/telegraf/validation.hpp"

namespace yaml = aop::k8s::yaml;
namespace json = boost::json;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // Not yaml::parse_all: it calls YAML::LoadAll, which never returns for some inputs
  // (`,- a`; see FUZZING.md) until k8s/yaml.cpp stops using it.
  auto one = yaml::parse(text);
  if (!one) return 0;
  // Invalid UTF-8 is read as raw bytes and written back as \xFF escapes, which read as
  // U+00FF: not a round trip (go-yaml refuses such input; reported, see FUZZING.md).
  if (!aop::telegraf::is_valid_utf8(text)) return 0;
  // NUL bytes make yaml-cpp guess UTF-16 or UTF-32 (`00 00 00 2D` is UTF-32BE "-"), and
  // invalid code points then come out as invalid UTF-8 (reported, see FUZZING.md).
  if (text.find('\0') != std::string_view::npos) return 0;
  const std::string emitted = yaml::emit(*one);
  auto again = yaml::parse(emitted);
  AOP_FUZZ_CHECK(again, "the emitter wrote YAML its own reader refuses:\n" + emitted + "\n  " +
                            (again ? std::string() : again.error().message));
  AOP_FUZZ_CHECK(aop::fuzz::same(*again, *one), "read " + boost::json::serialize(*one) +
                                                    "\n  emitted\n" + emitted + "\n  read back " +
                                                    boost::json::serialize(*again));
  return 0;
}
