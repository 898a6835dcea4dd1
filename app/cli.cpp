#include "app/cli.hpp"

#include <cstdio>

#include "app/build_info.hpp"
#include "app/operator.hpp"
#include "app/options.hpp"
#include "net/log.hpp"

namespace aop::app {

namespace {

constexpr std::string_view kUsageHeader =
    "agent-operator " AOP_VERSION
    ": turns GrafanaAgent hierarchies and telegraf annotations into running agents.\n"
    "\n"
    "Usage:\n"
    "  agent-operator [flags]                     run the controllers against a cluster\n"
    "  agent-operator render -f PATH [-f PATH...] [flags]\n"
    "                                             print the objects the controllers would\n"
    "                                             apply for the YAML in PATH (files or\n"
    "                                             directories), without a cluster\n"
    "\n"
    "Every flag can also be set through its environment variable; a flag given on the\n"
    "command line wins over the environment.\n";

}  // namespace

int main(const std::vector<std::string>& all_args, const FlagSet::EnvLookup& env) {
  std::vector<std::string> args = all_args;
  const bool render = !args.empty() && args.front() == "render";
  std::vector<std::string> files;
  if (render) {
    args.erase(args.begin());
    // -f/--filename are render-only and repeatable; take them out before the shared flags.
    std::vector<std::string> rest;
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::string& a = args[i];
      if (a == "-f" || a == "--filename") {
        if (i + 1 >= args.size()) {
          std::fprintf(stderr, "agent-operator render: %s needs a path\n", a.c_str());
          return 2;
        }
        files.push_back(args[++i]);
      } else if (a.rfind("-f=", 0) == 0 || a.rfind("--filename=", 0) == 0) {
        files.push_back(a.substr(a.find('=') + 1));
      } else {
        rest.push_back(a);
      }
    }
    args = std::move(rest);
  }

  Options options;
  FlagSet flags(render ? "agent-operator render" : "agent-operator");
  register_flags(flags, options);
  auto positional = flags.parse(args, env);
  if (!positional) {
    std::fprintf(stderr, "agent-operator: %s\n", positional.error().message.c_str());
    return 2;
  }
  if (flags.help_requested()) {
    std::fputs(kUsageHeader.data(), stdout);
    std::fputs(flags.usage().c_str(), stdout);
    return 0;
  }
  if (flags.version_requested()) {
    const std::string_view revision = build_revision();
    std::printf("agent-operator " AOP_VERSION " (revision %.*s)\n",
                static_cast<int>(revision.size()), revision.data());
    return 0;
  }
  if (!positional->empty()) {
    std::fprintf(stderr, "agent-operator: unexpected argument \"%s\" (see --help)\n",
                 positional->front().c_str());
    return 2;
  }
  if (auto v = validate(options); !v) {
    std::fprintf(stderr, "agent-operator: %s\n", v.error().message.c_str());
    return 2;
  }
  net::log::Level level = net::log::Level::info;
  net::log::Format format = net::log::Format::text;
  net::log::parse_level(options.log_level, level);
  net::log::parse_format(options.log_format, format);
  net::log::configure(level, format);

  if (render) {
    if (files.empty()) {
      std::fprintf(stderr, "agent-operator render: at least one -f PATH is required\n");
      return 2;
    }
    return run_render(options, files);
  }
  return run_operator(options);
}

}  // namespace aop::app
