#include "reconcile/runtime/errors.hpp"

namespace aop::runtime {
namespace {

class ReconcileCategory final : public boost::system::error_category {
 public:
  const char* name() const noexcept override { return "aop.reconcile"; }
  std::string message(int ev) const override {
    switch (static_cast<Errc>(ev)) {
      case Errc::invalid_spec:
        return "the root's spec is invalid";
      case Errc::validation_failed:
        return "a value of the root would be refused by the component that reads it";
      case Errc::discovery_failed:
        return "discovering the hierarchy failed";
      case Errc::asset_resolution_failed:
        return "a referenced Secret or ConfigMap lacks a referenced key";
      case Errc::asset_read_failed:
        return "reading a referenced Secret or ConfigMap failed";
      case Errc::render_failed:
        return "rendering the configuration failed";
      case Errc::invalid_name:
        return "a generated name would be refused by the API server";
      case Errc::apply_failed:
        return "applying the generated objects failed";
      case Errc::status_write_failed:
        return "writing the status failed";
      case Errc::invalid_backend:
        return "the root's backend annotation is invalid";
      case Errc::translation_failed:
        return "translating the configuration for the root's backend failed";
      case Errc::not_owned:
        return "a generated object's name is taken by an object the root does not own";
    }
    return "unknown reconcile error";
  }
};

}  // namespace

const boost::system::error_category& reconcile_category() noexcept {
  static const ReconcileCategory category;
  return category;
}

std::string_view reason(Errc e) noexcept {
  switch (e) {
    case Errc::invalid_spec:
      return "InvalidSpec";
    case Errc::validation_failed:
      return "ValidationFailed";
    case Errc::discovery_failed:
      return "DiscoveryFailed";
    case Errc::asset_resolution_failed:
      return "AssetResolutionFailed";
    case Errc::asset_read_failed:
      return "AssetReadFailed";
    case Errc::render_failed:
      return "RenderFailed";
    case Errc::invalid_name:
      return "InvalidName";
    case Errc::apply_failed:
      return "ApplyFailed";
    case Errc::status_write_failed:
      return "StatusWriteFailed";
    case Errc::invalid_backend:
      return "InvalidBackend";
    case Errc::translation_failed:
      return "TranslationFailed";
    case Errc::not_owned:
      return "NotOwned";
  }
  return "Unknown";
}

}  // namespace aop::runtime
