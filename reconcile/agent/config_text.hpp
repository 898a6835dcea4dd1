// The static backend's config files as text made of pieces, and their gzip encoding in
// chunks that a reconcile compresses again only where the text changed.
//
// A file (`agent.yml`) is what emit_config_text() writes around the members' scrape
// configs, with each member's text spliced in (MemberText: emitted once, kept packed).
// Above kGzipThreshold its Secret holds it gzip-compressed. Compressing 5 MB of text
// anew on every reconcile was half of one (9.5 ms for the scale benchmark's root), and
// most reconciles change one member. So the text is compressed in chunks, each chunk a
// gzip member of its own (RFC 1952 §2.2: a gzip file is a series of members, and every
// gzip reader reads them as one stream: Go's compress/gzip, which the agent's config
// reloader uses, zlib's gzip tools, Python's gzip), and GzipChunks keeps each chunk's
// compressed bytes by what the chunk was made of: pieces of the surrounding text (by
// their bytes) and members' texts (by identity). A chunk whose pieces are the same is
// not compressed again.
//
// Where a chunk ends depends only on the text (member text digests and sizes), never on
// what was kept: the bytes written are the same whether a chunk was compressed now or
// kept, after a restart, and with --agent-incremental-render off.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "k8s/yaml.hpp"

namespace aop::agent {

// One member's scrape configs (or PodLogs jobs) as emitted text: as it was emitted, or
// packed while it is kept (pack() of encoding.hpp: a sixth to a tenth of its size).
// Immutable; shared by every file and every root that uses it.
class MemberText {
 public:
  MemberText(std::string text, int column);

  // The same text packed, under the same id (a chunk made of it is the same chunk).
  std::shared_ptr<const MemberText> packed() const;
  bool is_packed() const { return packed_; }

  int column() const { return column_; }            // of its items' `- `
  std::size_t size() const { return size_; }        // of the text
  std::uint64_t digest() const { return digest_; }  // FNV-1a of the text
  // Unique in the process: two MemberTexts with the same id are the same object.
  std::uint64_t id() const { return id_; }
  std::size_t stored_size() const { return data_.size(); }  // the text or its packed form

  // The text (unpacked).
  std::string text() const;
  // text() appended to `out`.
  void append_to(std::string& out) const;

 private:
  int column_;
  std::size_t size_;
  std::uint64_t digest_;
  std::uint64_t id_;
  bool packed_ = false;
  std::string data_;  // the text, or pack() of it
};

// A config file: `skeleton.text` with `members[p.splice]` inserted at each point p.
struct ConfigText {
  k8s::yaml::SplicedText skeleton;
  std::vector<std::shared_ptr<const MemberText>> members;  // by splice index

  std::size_t size() const;
  std::string str() const;  // the whole text
};

// What the last encoding of one file compressed, by chunk: see the top of this file.
// One per root and file (fragment_cache.hpp keeps them between reconciles).
class GzipChunks {
 public:
  std::size_t size() const { return chunks_.size(); }
  std::size_t bytes() const;  // compressed, over every chunk kept
  // Counters of the last encode(): chunks compressed, and chunks taken as kept.
  std::size_t compressed() const { return compressed_; }
  std::size_t reused() const { return reused_; }

 private:
  friend std::string gzip_chunked(const ConfigText& text, GzipChunks* memory);
  std::map<std::string, std::string, std::less<>> chunks_;  // chunk identity → gzip member
  std::size_t compressed_ = 0;
  std::size_t reused_ = 0;
};

// A chunk ends after a member's text once it holds at least kMinChunk bytes and the
// member's digest is 0 modulo kChunkModulus, or at kMaxChunk bytes: about 200 kB of text
// per chunk. Larger chunks compress better (each member starts with an empty window: 17 %
// larger than one stream for the scale root's 5.2 MB, 137 kB against 117 kB with zlib)
// and cost more to compress again (about 0.4 ms at 200 kB).
inline constexpr std::size_t kMinChunk = 128 * 1024;
inline constexpr std::uint64_t kChunkModulus = 4;
inline constexpr std::size_t kMaxChunk = 512 * 1024;

// The file gzip-compressed in chunks (a series of gzip members), each at the default
// level. With `memory`, a chunk made of the same pieces as one the last call compressed
// is taken from it, and `memory` then holds this call's chunks.
std::string gzip_chunked(const ConfigText& text, GzipChunks* memory = nullptr);

// Configs larger than this many bytes are stored gzip-compressed, as upstream does.
inline constexpr std::size_t kGzipThreshold = 102400;

// A config Secret's data value: the text, gzip-compressed (gzip_chunked) above
// kGzipThreshold.
std::string config_secret_payload(const ConfigText& text, GzipChunks* memory = nullptr);
std::string config_secret_payload(const std::string& text);

}  // namespace aop::agent
