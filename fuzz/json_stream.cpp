// net::JsonStreamDecoder (the watch-stream framer): any bytes, cut into pieces anywhere.
// Oracle: the values and the error do not depend on where the stream is cut (the
// first byte chooses the cut points); an error is reported at (about) the same byte.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "fuzz/check.hpp"

#include "net/json_stream.hpp"

namespace {

struct Outcome {
  std::vector<boost::json::value> values;
  bool failed = false;
  std::uint64_t error_offset = 0;
};

Outcome decode(std::string_view bytes, std::size_t piece) {
  aop::net::JsonStreamOptions options;
  options.max_value_bytes = 4096;  // small, so the limit is reached too
  options.max_depth = 64;
  aop::net::JsonStreamDecoder decoder(options);
  Outcome out;
  while (!bytes.empty() && !out.failed) {
    const std::size_t n = std::min(piece, bytes.size());
    out.failed = static_cast<bool>(decoder.feed(bytes.substr(0, n), out.values));
    bytes.remove_prefix(n);
  }
  if (!out.failed) out.failed = static_cast<bool>(decoder.finish(out.values));
  if (out.failed) {
    out.error_offset = decoder.error_offset();
    (void)decoder.error_message();
  }
  return out;
}

bool same_values(const std::vector<boost::json::value>& a,
                 const std::vector<boost::json::value>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!aop::fuzz::same(a[i], b[i])) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t piece = 1 + data[0] % 17;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  const Outcome whole = decode(bytes, bytes.size() + 1);
  const Outcome cut = decode(bytes, piece);
  const auto show = [](const Outcome& o) {
    std::string out = std::to_string(o.values.size()) + " values";
    for (const auto& v : o.values) out += " " + boost::json::serialize(v);
    if (o.failed) out += ", failed at " + std::to_string(o.error_offset);
    return out;
  };
  // The error offset may differ by a few bytes: Boost.JSON reports an invalid \u
  // escape at a different byte when the escape arrives in one piece (see FUZZING.md).
  const auto distance = whole.error_offset > cut.error_offset
                            ? whole.error_offset - cut.error_offset
                            : cut.error_offset - whole.error_offset;
  AOP_FUZZ_CHECK(same_values(whole.values, cut.values) && whole.failed == cut.failed &&
                     distance <= 5 && whole.error_offset <= bytes.size() &&
                     cut.error_offset <= bytes.size(),
                 "in one piece: " + show(whole) + "\n  in pieces of " + std::to_string(piece) +
                     ": " + show(cut));
  return 0;
}
