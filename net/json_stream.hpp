// Framing a byte stream of concatenated JSON values (a Kubernetes watch response:
// one event object after another, separated by newlines) into complete values,
// whatever the read boundaries are: a value split across many reads, several values
// in one read, whitespace and blank lines between values.
//
// Pure and synchronous: the HTTP layer feeds it whatever read_some() returned.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/stream_parser.hpp>
#include <boost/json/value.hpp>
#include <boost/system/error_code.hpp>

namespace aop::net {

struct JsonStreamOptions {
  // Largest accepted value (bytes of JSON text). A watch event carries one object;
  // the API server's own request limit is 3 MiB, so 64 MiB is generous without
  // letting a broken stream exhaust memory.
  std::size_t max_value_bytes = 64u << 20;
  // Nesting limit. CRD objects embed deep OpenAPI schemas; Boost.JSON's default of 32
  // is too small for them.
  std::size_t max_depth = 512;
};

class JsonStreamDecoder {
 public:
  explicit JsonStreamDecoder(JsonStreamOptions options = {});

  // Parses the next bytes of the stream and appends each completed value to `out`, in
  // order. On invalid JSON or an oversize value returns the error (Errc::invalid_json,
  // Errc::value_too_large) and stays failed: every later call returns it again.
  // Values completed before the error are still appended.
  boost::system::error_code feed(std::string_view bytes, std::vector<boost::json::value>& out);

  // The stream ended. Completes a trailing top-level number; returns
  // Errc::incomplete_json if a value was cut off.
  boost::system::error_code finish(std::vector<boost::json::value>& out);

  // Starts over on a new stream (clears any error).
  void reset();

  // Bytes of the stream consumed so far (offsets count from 0 across all feeds).
  std::uint64_t offset() const { return offset_; }
  // True while part of a value has been seen but not its end.
  bool in_value() const { return in_value_; }

  // The last error, its byte offset in the stream, and a sentence for humans:
  // "invalid JSON at byte 1234 of the stream: syntax error".
  boost::system::error_code error() const { return error_; }
  std::uint64_t error_offset() const { return error_offset_; }
  std::string error_message() const;

 private:
  boost::system::error_code fail(boost::system::error_code ec, std::uint64_t at,
                                 boost::system::error_code detail = {});

  JsonStreamOptions options_;
  boost::json::stream_parser parser_;
  bool in_value_ = false;
  std::size_t value_bytes_ = 0;  // bytes of the current value fed so far
  std::uint64_t offset_ = 0;
  boost::system::error_code error_;
  boost::system::error_code error_detail_;  // the JSON parser's own error, if any
  std::uint64_t error_offset_ = 0;
};

}  // namespace aop::net
