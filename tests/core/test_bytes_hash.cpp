#include "core/bytes_hash.h"

#include <gtest/gtest.h>

#include <cstring>

namespace {

TEST(BytesHash, IsFnv1a64) {
  // the published FNV-1a 64 test vectors
  EXPECT_EQ(tf::bytes_hash("", 0), 0xcbf29ce484222325ull);
  EXPECT_EQ(tf::bytes_hash("a", 1), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(tf::bytes_hash("foobar", 6), 0x85944171f73967e8ull);
}

TEST(BytesHash, OneChangedByteChangesIt) {
  unsigned char a[64], b[64];
  for (int i = 0; i < 64; ++i) a[i] = b[i] = static_cast<unsigned char>(i * 7);
  EXPECT_EQ(tf::bytes_hash(a, 64), tf::bytes_hash(b, 64));
  b[63] ^= 1;
  EXPECT_NE(tf::bytes_hash(a, 64), tf::bytes_hash(b, 64));
}

}  // namespace
