// Config files in pieces and their chunked gzip encoding (reconcile/agent/config_text.hpp):
// what is written decompresses to the file, is the same bytes whether chunks were kept
// or compressed again (or the process restarted), and a change compresses again only the
// chunks it touched.
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <zlib.h>

#include "reconcile/agent/config_text.hpp"
#include "reconcile/agent/encoding.hpp"

namespace aop::agent {
namespace {

// A member's text of about `size` bytes, different for each (name, version).
std::string member_text(int name, int version, std::size_t size) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(name) * 1000003 +
                      static_cast<std::uint64_t>(version));
  std::string out = "            - job_name: serviceMonitor/ns/sm-" + std::to_string(name) + "/" +
                    std::to_string(version) + "\n";
  while (out.size() < size) {
    out += "              relabel_configs:\n                - regex: value-" +
           std::to_string(rng() % 50) + "\n";
  }
  return out;
}

// A file shaped like the metrics file: a header, the members, a trailer.
struct File {
  std::vector<std::string> texts;  // by member
  std::vector<int> versions;

  ConfigText text(std::vector<std::shared_ptr<const MemberText>>& members) const {
    ConfigText t;
    t.skeleton.text =
        "metrics:\n    configs:\n        - name: ns/instance\n          scrape_configs:\n";
    for (std::size_t i = 0; i < texts.size(); ++i) {
      t.skeleton.points.push_back({t.skeleton.text.size(), i});
    }
    t.skeleton.text += "    wal_directory: /var/lib/grafana-agent/data\n\n";
    t.members = members;
    return t;
  }
};

File make_file(int members, std::size_t member_size) {
  File f;
  for (int i = 0; i < members; ++i) {
    f.texts.push_back(member_text(i, 0, member_size));
    f.versions.push_back(0);
  }
  return f;
}

std::vector<std::shared_ptr<const MemberText>> texts_of(const File& f) {
  std::vector<std::shared_ptr<const MemberText>> out;
  for (const auto& t : f.texts) out.push_back(std::make_shared<MemberText>(t, 12));
  return out;
}

std::string whole(const File& f) {
  std::string out =
      "metrics:\n    configs:\n        - name: ns/instance\n          scrape_configs:\n";
  for (const auto& t : f.texts) out += t;
  return out + "    wal_directory: /var/lib/grafana-agent/data\n\n";
}

// The gzip members of a stream, counted by reading it with zlib member by member.
std::size_t gzip_members(const std::string& gz) {
  z_stream zs{};
  EXPECT_EQ(inflateInit2(&zs, 15 + 16), Z_OK);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  zs.avail_in = static_cast<uInt>(gz.size());
  std::vector<char> buf(1 << 16);
  std::size_t n = 0;
  for (;;) {
    zs.next_out = reinterpret_cast<Bytef*>(buf.data());
    zs.avail_out = static_cast<uInt>(buf.size());
    const int rc = inflate(&zs, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      ++n;
      if (zs.avail_in == 0 || inflateReset(&zs) != Z_OK) break;
    } else if (rc != Z_OK) {
      ADD_FAILURE() << "not a gzip stream: " << rc;
      break;
    }
  }
  inflateEnd(&zs);
  return n;
}

TEST(ConfigText, TheTextIsTheSkeletonWithTheMembersAtTheirPoints) {
  const File f = make_file(5, 300);
  auto members = texts_of(f);
  const ConfigText t = f.text(members);
  EXPECT_EQ(t.str(), whole(f));
  EXPECT_EQ(t.size(), whole(f).size());
  // Packed, a member reads back the same.
  EXPECT_EQ(members[2]->packed()->text(), f.texts[2]);
  EXPECT_EQ(members[2]->packed()->id(), members[2]->id());
  EXPECT_TRUE(members[2]->packed()->is_packed());
  EXPECT_LT(members[2]->packed()->stored_size(), f.texts[2].size());
}

TEST(ConfigText, SmallFilesAreStoredAsTheyAre) {
  const File f = make_file(3, 1000);
  auto members = texts_of(f);
  EXPECT_EQ(config_secret_payload(f.text(members)), whole(f));
}

TEST(ConfigText, LargeFilesAreGzipInChunksThatReadBackAsTheFile) {
  const File f = make_file(300, 15000);  // ~4.5 MB
  auto members = texts_of(f);
  const ConfigText t = f.text(members);
  ASSERT_GT(t.size(), kGzipThreshold);
  const std::string gz = config_secret_payload(t);
  EXPECT_EQ(gzip_decompress(gz), whole(f));
  // Chunks of about 128 to 512 KiB: more than one member, fewer than one per member.
  const std::size_t n = gzip_members(gz);
  EXPECT_GE(n, t.size() / kMaxChunk);
  EXPECT_LE(n, t.size() / kMinChunk + 1);
  // The chunks' sizes follow from the text alone: the same text gives the same bytes.
  auto again = texts_of(f);
  EXPECT_EQ(config_secret_payload(f.text(again)), gz);
}

TEST(ConfigText, AChangeCompressesAgainOnlyTheChunksItTouched) {
  File f = make_file(300, 15000);
  auto members = texts_of(f);
  GzipChunks memory;
  const std::string first = gzip_chunked(f.text(members), &memory);
  const std::size_t chunks = memory.size();
  ASSERT_GT(chunks, 4u);
  EXPECT_EQ(memory.compressed(), chunks);
  EXPECT_EQ(memory.reused(), 0u);

  // Unchanged: every chunk is the kept one, and the bytes are the same.
  EXPECT_EQ(gzip_chunked(f.text(members), &memory), first);
  EXPECT_EQ(memory.compressed(), 0u);
  EXPECT_EQ(memory.reused(), chunks);

  // Kept members packed (as the fragment cache keeps them): still the same chunks.
  for (auto& m : members) m = m->packed();
  EXPECT_EQ(gzip_chunked(f.text(members), &memory), first);
  EXPECT_EQ(memory.compressed(), 0u);

  // One member changed: its chunk, and at most the next (a boundary that moved), again.
  f.texts[150] = member_text(150, 1, 15000);
  members[150] = std::make_shared<MemberText>(f.texts[150], 12);
  const std::string changed = gzip_chunked(f.text(members), &memory);
  EXPECT_GE(memory.compressed(), 1u);
  EXPECT_LE(memory.compressed(), 2u);
  EXPECT_EQ(gzip_decompress(changed), whole(f));
  // The same bytes as a file encoded from nothing kept.
  auto fresh = texts_of(f);
  EXPECT_EQ(gzip_chunked(f.text(fresh)), changed);

  // A member added and one removed.
  f.texts.insert(f.texts.begin() + 10, member_text(1000, 0, 15000));
  members.insert(members.begin() + 10, std::make_shared<MemberText>(f.texts[10], 12));
  f.texts.erase(f.texts.begin() + 250);
  members.erase(members.begin() + 250);
  const std::string edited = gzip_chunked(f.text(members), &memory);
  EXPECT_LE(memory.compressed(), 4u);
  EXPECT_EQ(gzip_decompress(edited), whole(f));
  auto fresh2 = texts_of(f);
  EXPECT_EQ(gzip_chunked(f.text(fresh2)), edited);
  // The memory holds this encoding's chunks only.
  EXPECT_EQ(memory.size(), memory.compressed() + memory.reused());
}

TEST(ConfigText, ChunksSplitOnlyAfterMembers) {
  // One member larger than the largest chunk is a chunk of its own; the text around the
  // members goes with its neighbours.
  File f = make_file(3, 40000);
  f.texts[1] = member_text(1, 0, kMaxChunk + 1000);
  auto members = texts_of(f);
  const std::string gz = gzip_chunked(f.text(members));
  EXPECT_EQ(gzip_decompress(gz), whole(f));
}

TEST(Gzip, SeveralMembersReadBackAsOneStream) {
  const std::string gz = gzip_compress("one\n") + gzip_compress("two\n");
  EXPECT_EQ(gzip_decompress(gz), "one\ntwo\n");
  EXPECT_FALSE(gzip_decompress(gz.substr(0, gz.size() - 3)).has_value());
  EXPECT_FALSE(gzip_decompress(gz + "x").has_value());
}

}  // namespace
}  // namespace aop::agent
