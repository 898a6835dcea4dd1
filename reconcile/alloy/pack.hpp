// Packing a rendered Alloy configuration into Secrets.
//
// A configuration is an ordered list of files. Each Secret may hold at most kSecretBudget
// bytes counted as Σ len(key) + len(text): 768 KiB stays under 1 MiB once base64-encoded,
// below both the Secret size limit and the API server's request limit. A file too large
// for one Secret is cut at top-level block boundaries into `<stem>.alloy`,
// `<stem>-1.alloy`, ...; then files are packed greedily, in order, into Secrets named
// `<base>`, `<base>-1`, .... Alloy loads every `*.alloy` file of its directory as one
// configuration, so where a block lands does not change its meaning.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "net/result.hpp"
#include "reconcile/alloy/syntax.hpp"

namespace aop::alloy {

inline constexpr std::size_t kSecretBudget = 786432;

struct ConfigEntry {
  std::string key;   // `<name>.alloy`
  std::string text;  // the file, verbatim UTF-8
};

struct ConfigSecret {
  std::string name;
  std::vector<ConfigEntry> entries;
};

// The name of Secret `index` of a configuration: `<base>`, then `<base>-<index>`.
std::string config_secret_name(std::string_view base, std::size_t index);

// Writes `files` (with the header naming GrafanaAgent `ns`/`root`) and packs them. A
// single block that cannot fit in one Secret even alone fails the whole configuration:
// `<file>: block <name> "<label>" is <n> bytes, above the 786432-byte limit of one config
// object` (n counts the file header and key it needs). Files without blocks are skipped.
Result<std::vector<ConfigSecret>> pack_config(std::string_view ns, std::string_view root,
                                              std::string_view base,
                                              const std::vector<File>& files);

}  // namespace aop::alloy
