#include "reconcile/validation/report.hpp"

#include <algorithm>

namespace aop::validation {
namespace {

bool plain_key(std::string_view k) {
  return !k.empty() && std::all_of(k.begin(), k.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.' || c == '/';
  });
}

}  // namespace

Checker::Checker(std::string root) {
  if (!root.empty()) path_.push_back(std::move(root));
}

Checker::Scope::~Scope() {
  if (c_ != nullptr) c_->path_.pop_back();
}

Checker::Scope Checker::field(std::string_view name) {
  path_.push_back(path_.empty() ? std::string(name) : "." + std::string(name));
  return Scope(this);
}

Checker::Scope Checker::index(std::size_t i) {
  path_.push_back("[" + std::to_string(i) + "]");
  return Scope(this);
}

Checker::Scope Checker::key(std::string_view k) {
  if (plain_key(k)) {
    path_.push_back("[" + std::string(k) + "]");
  } else {
    // Quoted, escaped and bounded: a map key is user text.
    std::string q = "[\"";
    for (std::size_t i = 0; i < k.size() && i < 64; ++i) {
      const auto c = static_cast<unsigned char>(k[i]);
      if (c == '"' || c == '\\') {
        q += '\\';
        q += static_cast<char>(c);
      } else if (c < 0x20 || c == 0x7F) {
        q += '?';
      } else {
        q += static_cast<char>(c);
      }
    }
    if (k.size() > 64) q += "...";
    path_.push_back(q + "\"]");
  }
  return Scope(this);
}

std::string Checker::path() const {
  std::string out;
  for (const auto& p : path_) out += p;
  return out;
}

std::string Checker::path(std::string_view field) const {
  std::string out = path();
  if (field.empty()) return out;
  if (!out.empty() && field.front() != '[') out += '.';
  out += field;
  return out;
}

bool Checker::check(const Complaint& c) {
  if (!c) return false;
  add(path(), *c);
  return true;
}

bool Checker::check(std::string_view field, const Complaint& c) {
  if (!c) return false;
  add(path(field), *c);
  return true;
}

bool Checker::warn(std::string_view field, const Complaint& c) {
  if (!c) return false;
  add(path(field), *c, true);
  return true;
}

void Checker::add(std::string field_path, std::string message, bool warning) {
  violations_.push_back(Violation{std::move(field_path), std::move(message), warning});
}

bool Checker::ok() const {
  return std::none_of(violations_.begin(), violations_.end(),
                      [](const Violation& v) { return !v.warning; });
}

}  // namespace aop::validation
