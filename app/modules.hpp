// Maps the operator's options onto the controller modules it runs.
#pragma once

#include <memory>
#include <vector>

#include "app/options.hpp"
#include "reconcile/runtime/module.hpp"

namespace aop::app {

runtime::QueueOptions queue_options(const Options& o);

// The modules for --controllers (and --kubelet-service), constructed against `ctx`.
Result<std::vector<std::unique_ptr<runtime::ControllerModule>>> make_modules(
    const runtime::ModuleContext& ctx, const Options& o);

}  // namespace aop::app
