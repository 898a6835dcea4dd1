#include "net/json_stream.hpp"

#include <algorithm>

#include "net/error.hpp"

namespace aop::net {
namespace {

boost::json::parse_options make_parse_options(const JsonStreamOptions& options) {
  boost::json::parse_options opts;
  opts.max_depth = options.max_depth;
  return opts;
}

bool is_json_whitespace(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

}  // namespace

JsonStreamDecoder::JsonStreamDecoder(JsonStreamOptions options)
    : options_(options), parser_({}, make_parse_options(options)) {
  options_.max_value_bytes = std::max<std::size_t>(options_.max_value_bytes, 1);
}

void JsonStreamDecoder::reset() {
  parser_.reset();
  in_value_ = false;
  value_bytes_ = 0;
  offset_ = 0;
  error_.clear();
  error_detail_.clear();
  error_offset_ = 0;
}

boost::system::error_code JsonStreamDecoder::fail(boost::system::error_code ec, std::uint64_t at,
                                                  boost::system::error_code detail) {
  error_ = ec;
  error_detail_ = detail;
  error_offset_ = at;
  return ec;
}

boost::system::error_code JsonStreamDecoder::feed(std::string_view bytes,
                                                  std::vector<boost::json::value>& out) {
  if (error_) return error_;
  while (!bytes.empty()) {
    if (!in_value_) {
      // Whitespace between values is ours to skip: a fresh parser fed only whitespace
      // would later report "incomplete JSON" at the end of the stream.
      std::size_t skip = 0;
      while (skip < bytes.size() && is_json_whitespace(bytes[skip])) ++skip;
      offset_ += skip;
      bytes.remove_prefix(skip);
      if (bytes.empty()) break;
      in_value_ = true;
      value_bytes_ = 0;
    }
    // Never hand the parser more than the value may still grow by.
    const std::size_t allowed = options_.max_value_bytes - value_bytes_;
    const std::string_view piece = bytes.substr(0, allowed);
    boost::system::error_code ec;
    const std::size_t used = parser_.write_some(piece.data(), piece.size(), ec);
    if (ec) return fail(Errc::invalid_json, offset_ + used, ec);
    offset_ += used;
    value_bytes_ += used;
    bytes.remove_prefix(used);
    if (parser_.done()) {
      out.push_back(parser_.release());
      parser_.reset();
      in_value_ = false;
    } else if (value_bytes_ >= options_.max_value_bytes) {
      return fail(Errc::value_too_large, offset_);
    }
  }
  return {};
}

boost::system::error_code JsonStreamDecoder::finish(std::vector<boost::json::value>& out) {
  if (error_) return error_;
  if (!in_value_) return {};
  boost::system::error_code ec;
  parser_.finish(ec);
  if (ec || !parser_.done()) return fail(Errc::incomplete_json, offset_, ec);
  out.push_back(parser_.release());
  parser_.reset();
  in_value_ = false;
  return {};
}

std::string JsonStreamDecoder::error_message() const {
  if (!error_) return {};
  const std::string at = " at byte " + std::to_string(error_offset_) + " of the stream";
  std::string out;
  if (error_ == Errc::value_too_large) {
    out = "JSON value larger than " + std::to_string(options_.max_value_bytes) + " bytes" + at;
  } else if (error_ == Errc::incomplete_json) {
    out = "stream ended in the middle of a JSON value" + at;
  } else {
    out = "invalid JSON" + at;
  }
  if (error_detail_) out += ": " + error_detail_.message();
  return out;
}

}  // namespace aop::net
