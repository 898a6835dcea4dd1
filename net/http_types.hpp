// Plain HTTP values shared by the client and the server: methods, header fields,
// requests and responses. No Asio or Beast here: layers above include this a lot.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "net/clock.hpp"

namespace aop::net {

enum class Method { get, head, post, put, patch, delete_, options };

std::string_view method_name(Method m);  // "GET", "DELETE", ...
std::optional<Method> parse_method(std::string_view name);
// GET, HEAD, PUT, DELETE, OPTIONS: safe to resend after a connection failure.
bool is_idempotent(Method m);

// Header fields in arrival order. Names compare case-insensitively.
class Headers {
 public:
  using Field = std::pair<std::string, std::string>;

  Headers() = default;
  Headers(std::initializer_list<Field> fields) : fields_(fields) {}

  // Appends a field (a name may repeat).
  void add(std::string name, std::string value);
  // Replaces every field with this name by one field.
  void set(std::string_view name, std::string value);
  void remove(std::string_view name);
  // The first value with this name.
  std::optional<std::string_view> get(std::string_view name) const;
  bool contains(std::string_view name) const { return get(name).has_value(); }

  std::vector<Field>::const_iterator begin() const { return fields_.begin(); }
  std::vector<Field>::const_iterator end() const { return fields_.end(); }
  std::size_t size() const { return fields_.size(); }
  bool empty() const { return fields_.empty(); }

 private:
  std::vector<Field> fields_;
};

bool iequals(std::string_view a, std::string_view b);

// Both message types declare their default constructor: GCC 12 miscompiles an
// aggregate temporary passed by value to a coroutine (`co_await c.request({})`
// frees it twice); a non-aggregate is handled correctly.
struct HttpRequest {
  HttpRequest() = default;
  Method method = Method::get;
  std::string target = "/";  // path and query, already percent-encoded
  // Free-form: Authorization, Accept, Content-Type, User-Agent... The net layer never
  // logs header values (Authorization carries bearer tokens).
  Headers headers;
  std::string body;
  // Overrides the client's I/O timeout for this request (for a stream: the idle
  // timeout between reads).
  std::optional<Duration> timeout;
};

struct HttpResponse {
  HttpResponse() = default;
  int status = 200;
  Headers headers;
  std::string body;
};

}  // namespace aop::net
