// Structured logging: one line per record, logfmt ("text") or JSON, to stderr.
//
// Records are built from a message and typed key/value fields, never from formatted
// strings, so log processors can index them and so secrets cannot slip in through
// string formatting: callers pass names and references, not values, of Secrets.
#pragma once

#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <string_view>
#include <variant>

namespace aop::net::log {

enum class Level { debug = 0, info = 1, warn = 2, error = 3 };
enum class Format { text, json };

struct Field {
  using Value = std::variant<std::string_view, std::int64_t, std::uint64_t, double, bool>;
  std::string_view key;
  Value value;

  Field(std::string_view k, std::string_view v) : key(k), value(v) {}
  Field(std::string_view k, const std::string& v) : key(k), value(std::string_view(v)) {}
  Field(std::string_view k, const char* v) : key(k), value(std::string_view(v)) {}
  Field(std::string_view k, bool v) : key(k), value(v) {}
  Field(std::string_view k, double v) : key(k), value(v) {}
  Field(std::string_view k, int v) : key(k), value(std::int64_t{v}) {}
  Field(std::string_view k, long v) : key(k), value(std::int64_t{v}) {}
  Field(std::string_view k, long long v) : key(k), value(std::int64_t{v}) {}
  Field(std::string_view k, unsigned v) : key(k), value(std::uint64_t{v}) {}
  Field(std::string_view k, unsigned long v) : key(k), value(std::uint64_t{v}) {}
  Field(std::string_view k, unsigned long long v) : key(k), value(std::uint64_t{v}) {}
};

// Parses "debug|info|warn|error" (also "warning"); false when unknown.
bool parse_level(std::string_view text, Level& out);
// Parses "text|json"; false when unknown.
bool parse_format(std::string_view text, Format& out);

// Process-wide configuration. Safe to call at any time; records in flight use either
// the old or the new settings.
void configure(Level level, Format format);
// Redirects output (tests). The stream must outlive all logging; nullptr = stderr.
void set_output(std::FILE* out);
bool enabled(Level level);

// Writes one record. Thread-safe; a record is written with one fwrite, so lines from
// different threads never interleave.
void write(Level level, std::string_view msg, std::initializer_list<Field> fields = {});

// Renders one record without writing it (exposed for tests).
std::string format_record(Format format, Level level, std::string_view msg,
                          std::initializer_list<Field> fields, std::string_view timestamp);

inline void debug(std::string_view msg, std::initializer_list<Field> fields = {}) {
  if (enabled(Level::debug)) write(Level::debug, msg, fields);
}
inline void info(std::string_view msg, std::initializer_list<Field> fields = {}) {
  if (enabled(Level::info)) write(Level::info, msg, fields);
}
inline void warn(std::string_view msg, std::initializer_list<Field> fields = {}) {
  if (enabled(Level::warn)) write(Level::warn, msg, fields);
}
inline void error(std::string_view msg, std::initializer_list<Field> fields = {}) {
  if (enabled(Level::error)) write(Level::error, msg, fields);
}

}  // namespace aop::net::log
