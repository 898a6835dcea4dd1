// The two modes of the binary.
#pragma once

#include <string>
#include <vector>

#include "app/options.hpp"
#include "app/render_output.hpp"

namespace aop::app {

// Runs the controllers until SIGTERM/SIGINT; returns the exit status.
int run_operator(const Options& options);

// Prints (or writes to output.output_dir) the objects the controllers would apply for the
// given YAML files/directories; returns non-zero when any root failed (every root that
// could be rendered is still output).
int run_render(const Options& options, const std::vector<std::string>& paths,
               const RenderOutput& output);

}  // namespace aop::app
