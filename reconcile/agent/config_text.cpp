#include "reconcile/agent/config_text.hpp"

#include <atomic>
#include <cstring>
#include <stdexcept>

#include "reconcile/agent/encoding.hpp"

namespace aop::agent {

namespace {

std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::uint64_t next_id() {
  static std::atomic<std::uint64_t> ids{0};
  return ++ids;
}

void append_u64(std::string& out, std::uint64_t v) {
  char bytes[sizeof v];
  std::memcpy(bytes, &v, sizeof v);
  out.append(bytes, sizeof v);
}

// The pieces of a file in order: spans of the skeleton and members' texts.
template <class Skeleton, class Member>
void for_each_piece(const ConfigText& t, Skeleton&& skeleton, Member&& member) {
  const std::string_view text = t.skeleton.text;
  std::size_t at = 0;
  for (const auto& p : t.skeleton.points) {
    if (p.offset > text.size() || p.offset < at || p.splice >= t.members.size() ||
        !t.members[p.splice]) {
      throw std::logic_error("ConfigText: a splice point out of order or without its member");
    }
    if (p.offset > at) skeleton(text.substr(at, p.offset - at));
    member(*t.members[p.splice]);
    at = p.offset;
  }
  if (at < text.size()) skeleton(text.substr(at));
}

// One chunk being gathered: its identity (what GzipChunks keys it by) and its pieces.
struct Chunk {
  std::string identity;
  std::vector<std::string_view> skeleton;           // spans, in order, interleaved with members
  std::vector<std::pair<bool, std::size_t>> order;  // (is member, index into the list)
  std::vector<const MemberText*> members;
  std::size_t bytes = 0;

  void add(std::string_view span) {
    identity += 'S';
    append_u64(identity, span.size());
    identity += span;
    order.emplace_back(false, skeleton.size());
    skeleton.push_back(span);
    bytes += span.size();
  }
  void add(const MemberText& m) {
    identity += 'M';
    append_u64(identity, m.id());
    order.emplace_back(true, members.size());
    members.push_back(&m);
    bytes += m.size();
  }
  bool ends_after(const MemberText& m) const {
    return bytes >= kMaxChunk || (bytes >= kMinChunk && m.digest() % kChunkModulus == 0);
  }
  std::string text() const {
    std::string out;
    out.reserve(bytes);
    for (const auto& [is_member, i] : order) {
      if (is_member) {
        members[i]->append_to(out);
      } else {
        out += skeleton[i];
      }
    }
    return out;
  }
  void clear() { *this = Chunk(); }
};

}  // namespace

MemberText::MemberText(std::string text, int column)
    : column_(column),
      size_(text.size()),
      digest_(fnv1a(text)),
      id_(next_id()),
      data_(std::move(text)) {}

std::shared_ptr<const MemberText> MemberText::packed() const {
  if (packed_) return std::make_shared<MemberText>(*this);
  auto p = std::make_shared<MemberText>(std::string(), column_);
  p->size_ = size_;
  p->digest_ = digest_;
  p->id_ = id_;
  p->packed_ = true;
  p->data_ = pack(data_);
  return p;
}

std::string MemberText::text() const {
  if (!packed_) return data_;
  return unpack(data_, size_);
}

void MemberText::append_to(std::string& out) const {
  if (packed_) {
    unpack_append(data_, size_, out);
  } else {
    out += data_;
  }
}

std::size_t ConfigText::size() const {
  std::size_t n = skeleton.text.size();
  for (const auto& p : skeleton.points) {
    if (p.splice < members.size() && members[p.splice]) n += members[p.splice]->size();
  }
  return n;
}

std::string ConfigText::str() const {
  std::string out;
  out.reserve(size());
  for_each_piece(
      *this, [&](std::string_view span) { out += span; },
      [&](const MemberText& m) { m.append_to(out); });
  return out;
}

std::size_t GzipChunks::bytes() const {
  std::size_t n = 0;
  for (const auto& [identity, gz] : chunks_) n += gz.size();
  return n;
}

std::string gzip_chunked(const ConfigText& text, GzipChunks* memory) {
  std::map<std::string, std::string, std::less<>> now;
  std::size_t compressed = 0;
  std::size_t reused = 0;
  std::string out;
  Chunk chunk;
  const auto finish = [&] {
    if (chunk.order.empty()) return;
    std::string gz;
    if (memory != nullptr) {
      if (const auto it = memory->chunks_.find(chunk.identity); it != memory->chunks_.end()) {
        gz = it->second;
        ++reused;
      }
    }
    if (gz.empty()) {
      gz = gzip_compress(chunk.text());
      ++compressed;
    }
    out += gz;
    if (memory != nullptr) now.insert_or_assign(std::move(chunk.identity), std::move(gz));
    chunk.clear();
  };
  for_each_piece(
      text, [&](std::string_view span) { chunk.add(span); },
      [&](const MemberText& m) {
        chunk.add(m);
        if (chunk.ends_after(m)) finish();
      });
  finish();
  if (out.empty()) out = gzip_compress({});  // an empty file is one empty member
  if (memory != nullptr) {
    memory->chunks_ = std::move(now);
    memory->compressed_ = compressed;
    memory->reused_ = reused;
  }
  return out;
}

std::string config_secret_payload(const ConfigText& text, GzipChunks* memory) {
  if (text.size() > kGzipThreshold) return gzip_chunked(text, memory);
  if (memory != nullptr) *memory = GzipChunks();
  return text.str();
}

std::string config_secret_payload(const std::string& text) {
  ConfigText t;
  t.skeleton.text = text;
  return config_secret_payload(t);
}

}  // namespace aop::agent
