#include "app/flags.hpp"

#include "k8s/duration.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace aop::app {

using namespace std::chrono;

std::string FlagSet::env_name(std::string_view flag) {
  std::string out = "AGENT_OPERATOR_";
  for (const char c : flag) {
    out +=
        c == '-' || c == '.' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out;
}

void FlagSet::group(std::string title) {
  current_group_ = std::move(title);
}

void FlagSet::add(Flag flag) {
  flag.info.env = env_name(flag.info.name);
  flag.info.group = current_group_;
  flags_.push_back(std::move(flag));
}

FlagSet::Flag* FlagSet::find(std::string_view name) {
  for (auto& f : flags_) {
    if (f.info.name == name) return &f;
  }
  return nullptr;
}

void FlagSet::add_string(std::string name, std::string* target, std::string help) {
  Flag f;
  f.info = {name, "", *target, std::move(help), ""};
  f.set = [target](std::string_view v) -> Result<void> {
    *target = std::string(v);
    return {};
  };
  add(std::move(f));
}

void FlagSet::add_bool(std::string name, bool* target, std::string help) {
  Flag f;
  f.info = {name, "", *target ? "true" : "false", std::move(help), ""};
  f.is_bool = true;
  f.set = [target, name](std::string_view v) -> Result<void> {
    std::string lower(v);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (lower == "true" || lower == "1" || lower == "t" || lower == "yes") {
      *target = true;
    } else if (lower == "false" || lower == "0" || lower == "f" || lower == "no") {
      *target = false;
    } else {
      return make_error("--" + name + ": expected true or false, got \"" + std::string(v) + "\"");
    }
    return {};
  };
  add(std::move(f));
}

void FlagSet::add_int(std::string name, std::int64_t* target, std::string help, std::int64_t min,
                      std::int64_t max) {
  Flag f;
  f.info = {name, "", std::to_string(*target), std::move(help), ""};
  f.set = [target, name, min, max](std::string_view v) -> Result<void> {
    std::int64_t value = 0;
    const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), value);
    if (ec != std::errc() || ptr != v.data() + v.size()) {
      return make_error("--" + name + ": expected an integer, got \"" + std::string(v) + "\"");
    }
    if (value < min || value > max) {
      return make_error("--" + name + ": " + std::to_string(value) + " is out of range [" +
                        std::to_string(min) + ", " + std::to_string(max) + "]");
    }
    *target = value;
    return {};
  };
  add(std::move(f));
}

void FlagSet::add_double(std::string name, double* target, std::string help, double min) {
  Flag f;
  std::ostringstream def;
  def << *target;
  f.info = {name, "", def.str(), std::move(help), ""};
  f.set = [target, name, min](std::string_view v) -> Result<void> {
    const std::string s(v);
    char* end = nullptr;
    const double value = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(value)) {
      return make_error("--" + name + ": expected a number, got \"" + s + "\"");
    }
    if (value < min) return make_error("--" + name + ": must be at least " + std::to_string(min));
    *target = value;
    return {};
  };
  add(std::move(f));
}

void FlagSet::add_duration(std::string name, nanoseconds* target, std::string help) {
  Flag f;
  f.info = {name, "", k8s::format_go_duration(*target), std::move(help), ""};
  f.set = [target, name](std::string_view v) -> Result<void> {
    auto d = k8s::parse_go_duration(v);
    if (!d) return make_error("--" + name + ": " + d.error().message + " (e.g. 30s, 10m, 1h30m)");
    if (d->count() < 0) return make_error("--" + name + ": must not be negative");
    *target = *d;
    return {};
  };
  add(std::move(f));
}

void FlagSet::add_list(std::string name, std::vector<std::string>* target, std::string help) {
  Flag f;
  std::string def;
  for (const auto& s : *target) def += (def.empty() ? "" : ",") + s;
  f.info = {name, "", def, std::move(help), ""};
  f.set = [target](std::string_view v) -> Result<void> {
    target->clear();
    std::size_t start = 0;
    while (start <= v.size()) {
      const auto comma = v.find(',', start);
      std::string_view item =
          v.substr(start, comma == std::string_view::npos ? v.npos : comma - start);
      while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
      while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
      if (!item.empty()) target->emplace_back(item);
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    return {};
  };
  add(std::move(f));
}

void FlagSet::add_choice(std::string name, std::string* target, std::vector<std::string> choices,
                         std::string help) {
  Flag f;
  std::string joined;
  for (const auto& c : choices) joined += (joined.empty() ? "" : "|") + c;
  f.info = {name, "", *target, std::move(help) + " (" + joined + ")", ""};
  f.set = [target, name, choices, joined](std::string_view v) -> Result<void> {
    if (std::find(choices.begin(), choices.end(), v) == choices.end()) {
      return make_error("--" + name + ": expected one of " + joined + ", got \"" + std::string(v) +
                        "\"");
    }
    *target = std::string(v);
    return {};
  };
  add(std::move(f));
}

Result<std::vector<std::string>> FlagSet::parse(const std::vector<std::string>& args,
                                                const EnvLookup& env) {
  for (auto& f : flags_) {
    if (const auto value = env(f.info.env)) {
      if (auto r = f.set(*value); !r) {
        return make_error("environment variable " + f.info.env + ": " + r.error().message);
      }
    }
  }
  std::vector<std::string> positional;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      positional.insert(positional.end(), args.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                        args.end());
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      positional.push_back(arg);
      continue;
    }
    std::string_view body(arg);
    body.remove_prefix(body.substr(0, 2) == "--" ? 2 : 1);
    std::string_view name = body;
    std::optional<std::string> value;
    if (const auto eq = body.find('='); eq != std::string_view::npos) {
      name = body.substr(0, eq);
      value = std::string(body.substr(eq + 1));
    }
    if (name == "help" || name == "h") {
      help_ = true;
      return positional;
    }
    if (name == "version") {
      version_ = true;
      return positional;
    }
    Flag* f = find(name);
    if (f == nullptr) {
      return make_error("unknown flag " + arg + " (see " + program_ + " --help)");
    }
    if (!value) {
      if (f->is_bool) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return make_error("flag --" + std::string(name) + " needs a value");
      }
    }
    if (auto r = f->set(*value); !r) return r.error();
  }
  return positional;
}

std::vector<FlagSet::Info> FlagSet::describe() const {
  std::vector<Info> out;
  out.reserve(flags_.size());
  for (const auto& f : flags_) out.push_back(f.info);
  return out;
}

std::string FlagSet::usage() const {
  std::string out;
  std::string group;
  for (const auto& f : flags_) {
    if (f.info.group != group) {
      group = f.info.group;
      out += "\n" + group + ":\n";
    }
    std::string line = "  --" + f.info.name + (f.is_bool ? "" : " VALUE");
    out += line + "\n      " + f.info.help + "\n      env " + f.info.env + ", default \"" +
           f.info.default_text + "\"\n";
  }
  return out;
}

std::optional<std::string> process_env(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

}  // namespace aop::app
