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
    "  agent-operator render -f PATH [-f PATH...] [--output-dir DIR]\n"
    "                        [--owner-references omit|keep] [flags]\n"
    "                                             print the objects the controllers would\n"
    "                                             apply for the YAML in PATH (files or\n"
    "                                             directories), without a cluster, or\n"
    "                                             write one file per object into DIR;\n"
    "                                             ownerReferences are omitted by default\n"
    "\n"
    "Every flag can also be set through its environment variable; a flag given on the\n"
    "command line wins over the environment.\n";

// -f/--filename (repeatable), --output-dir and --owner-references are render-only: they
// are taken out of `args` before the flags shared with the run mode are parsed.
Result<void> take_render_flags(std::vector<std::string>& args, std::vector<std::string>& files,
                               RenderOutput& output) {
  std::vector<std::string> rest;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const auto eq = a.find('=');
    const std::string name = a.substr(0, eq);
    if (name != "-f" && name != "--filename" && name != "--output-dir" &&
        name != "--owner-references") {
      rest.push_back(a);
      continue;
    }
    std::string value;
    if (eq != std::string::npos) {
      value = a.substr(eq + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return make_error(name + " needs a value");
    }
    if (name == "--output-dir") {
      if (value.empty()) return make_error("--output-dir needs a directory");
      output.output_dir = value;
    } else if (name == "--owner-references") {
      auto mode = parse_owner_references(value);
      if (!mode) return mode.error();
      output.owner_references = *mode;
    } else {
      files.push_back(value);
    }
  }
  args = std::move(rest);
  return {};
}

}  // namespace

int main(const std::vector<std::string>& all_args, const FlagSet::EnvLookup& env) {
  std::vector<std::string> args = all_args;
  const bool render = !args.empty() && args.front() == "render";
  std::vector<std::string> files;
  RenderOutput render_output;
  if (render) {
    args.erase(args.begin());
    auto taken = take_render_flags(args, files, render_output);
    if (!taken) {
      std::fprintf(stderr, "agent-operator render: %s\n", taken.error().message.c_str());
      return 2;
    }
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
    return run_render(options, files, render_output);
  }
  return run_operator(options);
}

}  // namespace aop::app
