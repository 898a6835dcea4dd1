// Sources and targets. A source is an annotated Namespace or ArgoCD
// Application; its target is the namespace that gets the telegraf Deployment (the
// Namespace itself, or the Application's spec.destination.namespace). Several sources
// may share one target: their endpoints are merged, and a name defined differently by
// two sources is a conflict, left out and reported on both.
//
// Problems are values the controller turns into Warning Events on the source object
// (and `render` prints to stderr). Their messages name the source and never contain
// anything read from a Secret.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "reconcile/telegraf/annotation.hpp"
#include "reconcile/telegraf/options.hpp"

namespace aop::telegraf {

enum class SourceKind { namespace_, application };

struct SourceRef {
  SourceKind kind = SourceKind::namespace_;
  std::string ns;  // the Application's namespace; empty for a Namespace
  std::string name;
  std::string uid;  // metadata.uid when known; not part of identity or order

  // `Namespace/<name>` or `Application/<ns>/<name>`, as in the sources annotation.
  std::string str() const;
  // Identity and stable order: Namespace first, then Applications by namespace, name.
  bool operator==(const SourceRef& o) const {
    return kind == o.kind && ns == o.ns && name == o.name;
  }
  bool operator<(const SourceRef& o) const;
};

// What a problem is, as the reason of its Warning Event.
enum class ProblemReason {
  invalid_annotation,   // InvalidAnnotation: the annotation does not parse or validate
  missing_destination,  // MissingDestination: an Application without a usable destination
  endpoint_conflict,    // EndpointConflict: one endpoint name, two URLs, in two sources
  // InvalidObject: only from render input (a hand-written manifest without
  // metadata.name, say); objects served by a cluster never have these.
  invalid_object,
  // NotOwned: a ConfigMap, Secret or Deployment with the name telegraf uses exists in the
  // target namespace without the controller's managed-by label; it is left as it is.
  not_owned,
};
// The Event reason: "InvalidAnnotation", "MissingDestination", ...
std::string_view reason_name(ProblemReason reason);

struct Problem {
  SourceRef source;
  ProblemReason reason = ProblemReason::invalid_annotation;
  std::string message;  // starts with the source, says what to do

  bool operator==(const Problem&) const = default;
};

struct Source {
  SourceRef ref;
  std::string target_namespace;  // empty when an Application has no usable destination
  std::string application_name;  // Namespace: its name; Application: metadata.name
  bool valid = false;            // the annotation parsed without error
  std::vector<Endpoint> endpoints;
};

struct SourceRead {
  // Set for every annotated Namespace or watched Application that is not being
  // deleted, whether its annotation is valid or not.
  std::optional<Source> source;
  std::vector<Problem> problems;
  // Why an object is not a source although it might look like one (another kind, an
  // unwatched namespace, being deleted); empty for sources and for objects without
  // the annotation. Informational, for render.
  std::string ignored;
};

// Reads one Namespace or Application (as served by the API, or from a manifest).
SourceRead read_source(const boost::json::value& object, const TelegrafOptions& options);

// The namespace an object would target, without parsing its annotation (cheap enough
// for an informer index): a Namespace's name, an Application's
// spec.destination.namespace when it is a valid namespace name; nullopt for other
// kinds and Applications without a usable destination. Ignores the annotation and the
// watched-namespace option: an object that stops being a source must still map to the
// target it used to feed.
std::optional<std::string> target_namespace_of(const boost::json::value& object);

// Parses the value of the sources annotation (`Namespace/a,Application/argocd/b`), for
// clean-up: nullopt when it is malformed (then the object is not ours to judge).
std::optional<std::vector<SourceRef>> parse_sources_annotation(std::string_view value);

// The desired state of one target namespace, before it becomes objects.
struct TargetPlan {
  std::string ns;
  // The application name used for [global_tags] and the bucket: the target namespace's
  // name when the Namespace is a source or an Application of that name is (the
  // one-application-per-namespace convention), otherwise the first Application's name.
  std::string application;
  std::vector<SourceRef> sources;   // valid sources pointing here, in stable order
  std::vector<Endpoint> endpoints;  // merged, conflicts left out
  // Sources pointing here whose annotation is invalid: the controller must leave
  // what is deployed untouched (the last good configuration keeps running).
  std::vector<SourceRef> held_by;
  // The Namespace, when it is a valid source and its uid is known.
  std::optional<SourceRef> owner;
  std::vector<Problem> problems;  // endpoint conflicts

  bool held() const { return !held_by.empty(); }
};

// Plans one target from any sources (those pointing elsewhere are skipped). The same
// source given twice counts once (the later copy wins).
TargetPlan plan_target(std::string_view ns, std::span<const Source> sources);

// Plans every namespace some source points at, sorted by namespace.
std::vector<TargetPlan> plan_targets(std::span<const Source> sources);

}  // namespace aop::telegraf
