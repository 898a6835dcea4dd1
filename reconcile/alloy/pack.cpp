// Cutting and packing configuration files into Secrets; see pack.hpp.
#include "reconcile/alloy/pack.hpp"

namespace aop::alloy {
namespace {

constexpr std::string_view kSuffix = ".alloy";

std::string piece_key(std::string_view key, std::size_t index) {
  if (index == 0) return std::string(key);
  std::string_view stem = key;
  if (stem.size() >= kSuffix.size() && stem.substr(stem.size() - kSuffix.size()) == kSuffix) {
    stem.remove_suffix(kSuffix.size());
  }
  return std::string(stem) + "-" + std::to_string(index) + std::string(kSuffix);
}

std::string describe(const Block& b) {
  std::string out = "block " + b.name();
  if (b.label()) out += " \"" + *b.label() + "\"";
  return out;
}

// One file, or its pieces when it does not fit in one Secret.
Result<std::vector<ConfigEntry>> cut(const std::string& header, const File& f) {
  std::vector<std::string> blocks;
  blocks.reserve(f.blocks.size());
  std::size_t whole = header.size();
  for (const auto& b : f.blocks) {
    blocks.push_back("\n" + write_block(b));
    whole += blocks.back().size();
  }
  std::vector<ConfigEntry> out;
  if (f.key.size() + whole <= kSecretBudget) {
    std::string text = header;
    for (const auto& b : blocks) text += b;
    out.push_back({f.key, std::move(text)});
    return out;
  }
  ConfigEntry current{piece_key(f.key, 0), header};
  std::size_t in_current = 0;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    if (current.key.size() + current.text.size() + blocks[i].size() > kSecretBudget &&
        in_current > 0) {
      out.push_back(std::move(current));
      current = ConfigEntry{piece_key(f.key, out.size()), header};
      in_current = 0;
    }
    const std::size_t needed = current.key.size() + current.text.size() + blocks[i].size();
    if (needed > kSecretBudget) {
      return make_error(f.key + ": " + describe(f.blocks[i]) + " is " + std::to_string(needed) +
                        " bytes, above the " + std::to_string(kSecretBudget) +
                        "-byte limit of one config object");
    }
    current.text += blocks[i];
    ++in_current;
  }
  out.push_back(std::move(current));
  return out;
}

}  // namespace

std::string config_secret_name(std::string_view base, std::size_t index) {
  if (index == 0) return std::string(base);
  return std::string(base) + "-" + std::to_string(index);
}

Result<std::vector<ConfigSecret>> pack_config(std::string_view ns, std::string_view root,
                                              std::string_view base,
                                              const std::vector<File>& files) {
  const std::string header = file_header(ns, root);
  std::vector<ConfigSecret> secrets;
  std::size_t used = 0;
  for (const auto& f : files) {
    if (f.blocks.empty()) continue;
    auto pieces = cut(header, f);
    if (!pieces) return pieces.error();
    for (auto& e : *pieces) {
      const std::size_t size = e.key.size() + e.text.size();
      if (secrets.empty() || used + size > kSecretBudget) {
        secrets.push_back({config_secret_name(base, secrets.size()), {}});
        used = 0;
      }
      used += size;
      secrets.back().entries.push_back(std::move(e));
    }
  }
  return secrets;
}

}  // namespace aop::alloy
