// k8s::WatchDecoder (a watch response body decoded straight into cached objects).
// Oracle: the events are what net::JsonStreamDecoder + Object::from_json give for the
// same bytes, whatever the piece boundaries.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "fuzz/check.hpp"
#include "fuzz/same_object.hpp"
#include "k8s/object.hpp"
#include "k8s/object_stream.hpp"
#include "net/json_stream.hpp"

namespace k8s = aop::k8s;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t control = data[0];
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  k8s::Transform transform;
  transform.metadata_only = (control & 0x80) != 0;
  const k8s::GroupVersionKind kind{"apps", "v1", "Deployment"};
  const std::size_t piece = 1 + control % 11;
  constexpr std::size_t kMaxEvent = 8192;

  k8s::WatchDecoder decoder(transform, kind, kMaxEvent);
  std::vector<k8s::DecodedWatchEvent> events;
  bool failed = false;
  for (std::string_view rest = bytes; !rest.empty() && !failed;) {
    const std::size_t n = std::min(piece, rest.size());
    failed = static_cast<bool>(decoder.feed(rest.substr(0, n), events));
    rest.remove_prefix(n);
  }
  if (!failed) failed = static_cast<bool>(decoder.finish(events));
  if (failed) (void)decoder.error_message();

  // The reference: the framer (same limits) and the tree decoder.
  aop::net::JsonStreamOptions options;
  options.max_value_bytes = kMaxEvent;
  options.max_depth = k8s::kMaxObjectDepth;
  aop::net::JsonStreamDecoder framer(options);
  std::vector<boost::json::value> values;
  bool framer_failed = static_cast<bool>(framer.feed(bytes, values));
  if (!framer_failed) framer_failed = static_cast<bool>(framer.finish(values));
  AOP_FUZZ_CHECK(failed == framer_failed,
                 "decoder: " + decoder.error_message() + "\n  framer: " + framer.error_message());
  AOP_FUZZ_CHECK(
      events.size() == values.size(),
      std::to_string(events.size()) + " events, the framer found " + std::to_string(values.size()));
  for (std::size_t i = 0; i < events.size(); ++i) {
    const auto& e = events[i];
    const auto* o = values[i].if_object();
    const auto* type = o ? o->if_contains("type") : nullptr;
    const auto* object = o ? o->if_contains("object") : nullptr;
    const std::string want_type = type && type->is_string() ? std::string(type->get_string()) : "";
    const std::string which =
        "event " + std::to_string(i) + " " + boost::json::serialize(values[i]);
    AOP_FUZZ_CHECK(e.type == want_type && e.has_object == (object != nullptr),
                   which + ": type \"" + e.type + "\"");
    if (want_type == "ERROR") {
      const bool status_ok =
          object == nullptr || (object->is_object() ? e.status == *object : e.status.is_null());
      AOP_FUZZ_CHECK(status_ok, which + ": status " + boost::json::serialize(e.status));
      continue;
    }
    const auto want = object ? k8s::Object::from_json(*object, transform, kind) : nullptr;
    AOP_FUZZ_CHECK((want == nullptr) == (e.object == nullptr), which + ": object presence");
    AOP_FUZZ_CHECK(!want || aop::fuzz::same_object(*want, *e.object),
                   which + ": decoded " + boost::json::serialize(e.object->to_json()) +
                       "\n  expected " + boost::json::serialize(want->to_json()));
  }
  return 0;
}
