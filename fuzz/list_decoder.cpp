// k8s::ListDecoder (a LIST response body decoded straight into cached objects).
// Oracle: the items are exactly what Boost.JSON + Object::from_json give for the same
// body, whatever the piece boundaries; a body Boost.JSON accepts is accepted.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "fuzz/check.hpp"
#include "fuzz/same_object.hpp"
#include "k8s/object.hpp"
#include "k8s/object_stream.hpp"

namespace k8s = aop::k8s;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t control = data[0];
  std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  k8s::Transform transform;
  transform.metadata_only = (control & 0x80) != 0;
  transform.drop_managed_fields = (control & 0x40) != 0;
  const k8s::GroupVersionKind kind{"", "v1", "ConfigMap"};
  const std::size_t piece = 1 + control % 13;

  k8s::ListDecoder decoder(transform, kind);
  bool failed = false;
  for (std::string_view rest = body; !rest.empty() && !failed;) {
    const std::size_t n = std::min(piece, rest.size());
    failed = static_cast<bool>(decoder.feed(rest.substr(0, n)));
    rest.remove_prefix(n);
  }
  if (!failed) failed = static_cast<bool>(decoder.finish());
  if (failed) (void)decoder.error_message();

  boost::json::parse_options options;
  options.max_depth = k8s::kMaxObjectDepth;
  boost::system::error_code ec;
  const boost::json::value parsed = boost::json::parse(body, ec, {}, options);
  if (ec || !parsed.is_object()) return 0;
  AOP_FUZZ_CHECK(!failed,
                 "Boost.JSON accepts what the decoder refused: " + decoder.error_message());
  std::vector<k8s::ObjectPtr> expected;
  if (const auto* items = parsed.get_object().if_contains("items"); items && items->is_array()) {
    for (const auto& item : items->get_array()) {
      if (auto o = k8s::Object::from_json(item, transform, kind)) expected.push_back(std::move(o));
    }
  }
  const auto& got = decoder.items();
  AOP_FUZZ_CHECK(got.size() == expected.size(), std::to_string(got.size()) + " items, expected " +
                                                    std::to_string(expected.size()));
  for (std::size_t i = 0; i < got.size(); ++i) {
    AOP_FUZZ_CHECK(aop::fuzz::same_object(*got[i], *expected[i]),
                   "item " + std::to_string(i) + ": decoded " +
                       boost::json::serialize(got[i]->to_json()) + "\n  expected " +
                       boost::json::serialize(expected[i]->to_json()));
  }
  return 0;
}
