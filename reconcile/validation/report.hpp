// The shape every validator shares: a rule returns a Complaint (what is wrong and what
// would be right, as a sentence fragment, or nothing), and a Checker collects complaints
// under the JSON path of the field they are about:
//
//   Checker c;                                      // paths relative to the object
//   { auto s = c.field("spec"); auto e = c.field("endpoints"); auto i = c.index(2);
//     c.check("interval", check_prometheus_duration(ep.interval)); }
//   -> {field: "spec.endpoints[2].interval", message: "..."}
//
// Rules never echo more than a bounded, escaped excerpt of a value (describe()), and
// callers never pass them secret values.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aop::validation {

// An error message, or nothing when the value is fine.
using Complaint = std::optional<std::string>;

struct Violation {
  std::string field;  // JSON path inside the object, e.g. spec.endpoints[2].interval
  std::string message;
  bool warning = false;  // reported, but the object is still used
  bool operator==(const Violation&) const = default;
};

class Checker {
 public:
  explicit Checker(std::string root = {});

  // Path scopes (RAII): `.name`, `[i]`, `[key]` (a map key, quoted when it is not a plain
  // word).
  class Scope {
   public:
    Scope(Scope&& other) noexcept : c_(other.c_) { other.c_ = nullptr; }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    Scope& operator=(Scope&&) = delete;
    ~Scope();

   private:
    friend class Checker;
    explicit Scope(Checker* c) : c_(c) {}
    Checker* c_;
  };
  [[nodiscard]] Scope field(std::string_view name);
  [[nodiscard]] Scope index(std::size_t i);
  [[nodiscard]] Scope key(std::string_view k);

  std::string path() const;
  // `<path>.<field>` without opening a scope.
  std::string path(std::string_view field) const;

  // Records the complaint, if any, at the current path (or at `<path>.<field>`).
  // Returns true when there was one.
  bool check(const Complaint& c);
  bool check(std::string_view field, const Complaint& c);
  bool warn(std::string_view field, const Complaint& c);
  void add(std::string field_path, std::string message, bool warning = false);

  bool ok() const;  // no errors (warnings allowed)
  const std::vector<Violation>& violations() const { return violations_; }
  std::vector<Violation> take() { return std::move(violations_); }

 private:
  std::vector<std::string> path_;
  std::vector<Violation> violations_;
};

}  // namespace aop::validation
