#include "reconcile/validation/regex.hpp"

#include <list>
#include <mutex>
#include <string>
#include <unordered_map>

#include <re2/re2.h>

#include "reconcile/validation/text.hpp"

namespace aop::validation {
namespace {

// Least-recently-used results, keyed by use and pattern. Patterns are user text of any
// length; the cache holds at most kEntries of them and skips long ones.
class RegexCache {
 public:
  static constexpr std::size_t kEntries = 4096;
  static constexpr std::size_t kMaxCachedPattern = 4096;

  Complaint check(std::string_view pattern, RegexUse use) {
    if (pattern.size() > kMaxCachedPattern) return compile(pattern, use);
    std::string key;
    key.reserve(pattern.size() + 1);
    key += use == RegexUse::prometheus_anchored ? 'a' : 'w';
    key += pattern;
    {
      const std::lock_guard lock(mutex_);
      if (const auto it = index_.find(key); it != index_.end()) {
        order_.splice(order_.begin(), order_, it->second);
        return it->second->second;
      }
    }
    Complaint result = compile(pattern, use);
    const std::lock_guard lock(mutex_);
    if (index_.find(key) == index_.end()) {
      order_.emplace_front(key, result);
      index_.emplace(std::move(key), order_.begin());
      if (order_.size() > kEntries) {
        index_.erase(order_.back().first);
        order_.pop_back();
      }
    }
    return result;
  }

 private:
  static Complaint compile(std::string_view pattern, RegexUse use) {
    RE2::Options options;
    options.set_log_errors(false);
    // Go's regexp matches UTF-8 text; a pattern that is not valid UTF-8 is an error there.
    options.set_encoding(RE2::Options::EncodingUTF8);
    std::string text = use == RegexUse::prometheus_anchored ? "^(?:" + std::string(pattern) + ")$"
                                                            : std::string(pattern);
    const RE2 re(text, options);
    if (re.ok()) return std::nullopt;
    return "regular expression " + describe(pattern) + " does not compile: " + re.error() +
           " (the agent uses Go's RE2 syntax: no lookahead, lookbehind or backreferences)";
  }

  std::mutex mutex_;  // owns order_ and index_
  std::list<std::pair<std::string, Complaint>> order_;
  std::unordered_map<std::string, std::list<std::pair<std::string, Complaint>>::iterator> index_;
};

RegexCache& cache() {
  static RegexCache c;
  return c;
}

}  // namespace

Complaint check_regex(std::string_view pattern, RegexUse use) {
  if (pattern.size() > kMaxRegexBytes) {
    return "the regular expression is " + std::to_string(pattern.size()) + " bytes long; at most " +
           std::to_string(kMaxRegexBytes) + " are accepted";
  }
  if (!is_valid_utf8(pattern)) return "the regular expression is not valid UTF-8";
  return cache().check(pattern, use);
}

bool has_named_group(std::string_view pattern) {
  RE2::Options options;
  options.set_log_errors(false);
  const RE2 re(std::string(pattern), options);
  return re.ok() && !re.NamedCapturingGroups().empty();
}

}  // namespace aop::validation
