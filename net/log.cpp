#include "net/log.hpp"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <mutex>

#include "net/redact.hpp"

namespace aop::net::log {
namespace {

std::atomic<int> g_level{static_cast<int>(Level::info)};
std::atomic<int> g_format{static_cast<int>(Format::text)};
std::atomic<std::FILE*> g_out{nullptr};
std::mutex g_write_mutex;  // owns g_out writes, so records never interleave

std::string_view level_name(Level level) {
  switch (level) {
    case Level::debug:
      return "debug";
    case Level::info:
      return "info";
    case Level::warn:
      return "warn";
    case Level::error:
      return "error";
  }
  return "info";
}

std::string now_rfc3339() {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const auto secs = time_point_cast<seconds>(now);
  const auto millis = duration_cast<milliseconds>(now - secs).count();
  const std::time_t t = system_clock::to_time_t(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(millis));
  return buf;
}

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

bool logfmt_needs_quotes(std::string_view s) {
  if (s.empty()) return true;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c <= ' ' || c == '"' || c == '=' || c == '\\' || c == 0x7f) return true;
  }
  return false;
}

void append_logfmt_string(std::string& out, std::string_view s) {
  if (logfmt_needs_quotes(s)) {
    append_json_string(out, s);
  } else {
    out += s;
  }
}

void append_number(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += std::isnan(v) ? "NaN" : (v > 0 ? "+Inf" : "-Inf");
    return;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  // Prefer the shortest representation that round-trips.
  for (int precision = 1; precision <= 17; ++precision) {
    char shorter[32];
    std::snprintf(shorter, sizeof shorter, "%.*g", precision, v);
    if (std::strtod(shorter, nullptr) == v) {
      out += shorter;
      return;
    }
  }
  out += buf;
}

// Text as it is written: credentials in URLs redacted (net/redact.hpp), so an error
// message quoting a URL cannot put a password in the log.
void append_text(std::string& out, Format format, std::string_view text) {
  std::string redacted;
  if (text.find("://") != std::string_view::npos) {
    redacted = redact(text);
    text = redacted;
  }
  if (format == Format::json) {
    append_json_string(out, text);
  } else {
    append_logfmt_string(out, text);
  }
}

void append_value(std::string& out, Format format, const Field::Value& value) {
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string_view>) {
          append_text(out, format, v);
        } else if constexpr (std::is_same_v<T, bool>) {
          out += v ? "true" : "false";
        } else if constexpr (std::is_same_v<T, double>) {
          if (format == Format::json && !std::isfinite(v)) {
            append_json_string(out, std::isnan(v) ? "NaN" : (v > 0 ? "+Inf" : "-Inf"));
          } else {
            append_number(out, v);
          }
        } else {
          out += std::to_string(v);
        }
      },
      value);
}

}  // namespace

bool parse_level(std::string_view text, Level& out) {
  if (text == "debug") {
    out = Level::debug;
  } else if (text == "info") {
    out = Level::info;
  } else if (text == "warn" || text == "warning") {
    out = Level::warn;
  } else if (text == "error") {
    out = Level::error;
  } else {
    return false;
  }
  return true;
}

bool parse_format(std::string_view text, Format& out) {
  if (text == "text" || text == "logfmt") {
    out = Format::text;
  } else if (text == "json") {
    out = Format::json;
  } else {
    return false;
  }
  return true;
}

void configure(Level level, Format format) {
  g_level.store(static_cast<int>(level), std::memory_order_relaxed);
  g_format.store(static_cast<int>(format), std::memory_order_relaxed);
}

void set_output(std::FILE* out) {
  g_out.store(out, std::memory_order_relaxed);
}

bool enabled(Level level) {
  return static_cast<int>(level) >= g_level.load(std::memory_order_relaxed);
}

std::string format_record(Format format, Level level, std::string_view msg,
                          std::initializer_list<Field> fields, std::string_view timestamp) {
  std::string out;
  out.reserve(96 + msg.size() + fields.size() * 24);
  if (format == Format::json) {
    out += "{\"ts\":";
    append_json_string(out, timestamp);
    out += ",\"level\":";
    append_json_string(out, level_name(level));
    out += ",\"msg\":";
    append_text(out, format, msg);
    for (const auto& f : fields) {
      out += ',';
      append_json_string(out, f.key);
      out += ':';
      append_value(out, format, f.value);
    }
    out += "}\n";
  } else {
    out += "ts=";
    out += timestamp;
    out += " level=";
    out += level_name(level);
    out += " msg=";
    append_text(out, format, msg);
    for (const auto& f : fields) {
      out += ' ';
      out += f.key;
      out += '=';
      append_value(out, format, f.value);
    }
    out += '\n';
  }
  return out;
}

void write(Level level, std::string_view msg, std::initializer_list<Field> fields) {
  const auto format = static_cast<Format>(g_format.load(std::memory_order_relaxed));
  const std::string line = format_record(format, level, msg, fields, now_rfc3339());
  std::FILE* out = g_out.load(std::memory_order_relaxed);
  if (out == nullptr) out = stderr;
  const std::lock_guard lock(g_write_mutex);
  std::fwrite(line.data(), 1, line.size(), out);
  std::fflush(out);
}

}  // namespace aop::net::log
