// The Alloy backend as stages of the agent pipeline (reconcile/agent/pipeline.hpp): the
// static config trees of a root are translated to Alloy, packed into config Secrets, and
// built into the objects of objects.hpp, in the order they are applied:
//
//   1 the assets Secret <A>-secrets (the static backend's, shared)
//   2 metrics config Secrets; 3 per replica group its cluster Service and StatefulSet;
//   4 logs config Secrets and DaemonSet; 5 integrations-deploy config Secrets and
//   Deployment; 6 integrations-ds config Secrets and DaemonSet;
//   7 the static integrations objects of the Integrations kept on static (hybrid root), or
//     their deletion when none is kept;
//   8 deletion of the root's Alloy objects this pass does not build (stale config
//     Secrets, replica groups, workloads of configs that became empty).
//
// A translation failure (class B) applies the assets Secret only: a root already on Alloy
// keeps its last good configuration.
#pragma once

#include <string>

#include "reconcile/agent/fragments.hpp"
#include "reconcile/agent/hierarchy.hpp"
#include "reconcile/agent/objects.hpp"
#include "reconcile/agent/options.hpp"
#include "reconcile/agent/pipeline.hpp"

namespace aop::alloy {

// The AlloyTranslation condition of a root on Alloy: True/Complete,
// True/CompleteWithWarnings (class C), False/Incomplete (members skipped or Integrations
// kept on static), False/Failed (class B); the message lists up to 10 records.
struct TranslationCondition {
  std::string status;
  std::string reason;
  std::string message;
};

struct AlloyDesired {
  agent::DesiredObjects desired;
  TranslationCondition condition;
};

// translate + build objects for a root whose effective backend is Alloy. `configs` are the
// assemble stage's static trees (a needed one missing: it failed to assemble, and only
// the assets Secret is applied). Failure: the translate stage with translation_failed
// (class B, or a block too large for one config Secret), or build objects with
// invalid_name (no steps at all).
agent::Outcome<AlloyDesired> build_root(const agent::Hierarchy& h, const agent::AssetStore& assets,
                                        agent::ConfigTrees configs, const agent::Options& options);

}  // namespace aop::alloy
