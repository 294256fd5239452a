// Byte-to-unicode map, UTF-8 checks, NFC and the regex rewrite, each on its own.
#include <gtest/gtest.h>

#include <set>

#include "core/error.h"
#include "text/byte_level.h"
#include "text/nfc.h"
#include "text/regex_reference_classes.h"
#include "text/utf8.h"

namespace tf::text {
namespace {

TEST(ByteLevel, EveryByteHasItsOwnPrintableCodePoint) {
  std::set<uint32_t> seen;
  for (int b = 0; b < 256; ++b) {
    const uint32_t cp = byte_to_code_point()[size_t(b)];
    EXPECT_TRUE(seen.insert(cp).second) << b;
    EXPECT_EQ(byte_of_code_point(cp), b);
  }
  EXPECT_EQ(byte_to_code_point()['A'], uint32_t('A'));
  EXPECT_EQ(byte_to_code_point()[' '], 0x120u);   // Ġ
  EXPECT_EQ(byte_to_code_point()['\n'], 0x10Au);  // Ċ
  EXPECT_EQ(byte_to_code_point()[0], 0x100u);
  EXPECT_EQ(byte_to_code_point()[0xAD], 0x143u);  // the soft hyphen is the last one moved
  EXPECT_EQ(byte_of_code_point(0x144), -1);
  EXPECT_EQ(byte_of_code_point(' '), -1);
}

TEST(ByteLevel, RoundTripsAnyBytes) {
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(char(b));
  std::string back;
  ASSERT_TRUE(from_byte_level(to_byte_level(all), back));
  EXPECT_EQ(back, all);
  EXPECT_EQ(to_byte_level("a b\n"), "a\xC4\xA0" "b\xC4\x8A");
  std::string untouched = "x";
  EXPECT_FALSE(from_byte_level("a b", untouched));  // a plain space stands for no byte
  EXPECT_EQ(untouched, "x");
}

TEST(Utf8, NamesTheFirstBadByte) {
  EXPECT_EQ(first_invalid_utf8("plain ascii"), kValidUtf8);
  EXPECT_EQ(first_invalid_utf8("h\xC3\xA9llo \xF0\x9F\x98\x80"), kValidUtf8);
  EXPECT_EQ(first_invalid_utf8("ab\xC3"), 2u);               // truncated
  EXPECT_EQ(first_invalid_utf8("ab\xC0\xAF"), 2u);           // overlong
  EXPECT_EQ(first_invalid_utf8("a\xED\xA0\x80"), 1u);        // surrogate
  EXPECT_EQ(first_invalid_utf8("abc\xF4\x90\x80\x80"), 3u);  // above U+10FFFF
  EXPECT_EQ(first_invalid_utf8("\x80"), 0u);
  try {
    require_valid_utf8("ok\xFFno", "prompt.txt");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("prompt.txt: invalid UTF-8 at byte offset 2 (byte 0xFF)"), std::string::npos)
        << e.what();
  }
}

TEST(Utf8, LossyDecodingReplacesEachMaximalBadPart) {
  EXPECT_EQ(utf8_lossy("a\xC3"), "a\xEF\xBF\xBD");
  EXPECT_EQ(utf8_lossy("\xE2\x82x"), "\xEF\xBF\xBDx");                 // one U+FFFD for a cut sequence
  EXPECT_EQ(utf8_lossy("\xFF\xFE"), "\xEF\xBF\xBD\xEF\xBF\xBD");       // one per bad byte
  EXPECT_EQ(utf8_lossy("\xF0\x9F\x98\x80"), "\xF0\x9F\x98\x80");
}

TEST(Nfc, ComposesReordersAndLeavesNfcAlone) {
  EXPECT_EQ(nfc("e\xCC\x81"), "\xC3\xA9");                               // e + acute -> é
  EXPECT_EQ(nfc("A\xCC\x8A"), "\xC3\x85");                               // A + ring -> Å
  EXPECT_EQ(nfc("\xE2\x84\xAB"), "\xC3\x85");                            // Angstrom sign -> Å
  EXPECT_EQ(nfc("a\xCC\x81\xCC\xA3"), "\xE1\xBA\xA1\xCC\x81");           // dot below (220) before acute (230)
  EXPECT_EQ(nfc("\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8"), "\xEA\xB0\x81");  // Hangul L V T -> 각
  EXPECT_EQ(nfc("\xEA\xB0\x80\xE1\x86\xA8"), "\xEA\xB0\x81");            // LV + T
  EXPECT_EQ(nfc("q\xCC\x87\xCC\xA3"), "q\xCC\xA3\xCC\x87");              // reordered, nothing composes
  EXPECT_TRUE(nfc_unchanged("plain text \xC3\xA9 \xE4\xB8\xAD"));
  EXPECT_FALSE(nfc_unchanged("e\xCC\x81"));
  EXPECT_EQ(nfc("x\xC3\xA9y e\xCC\x81 z"), "x\xC3\xA9y \xC3\xA9 z");
}

TEST(Nfc, OrdersMarksByTheReferenceClasses) {
  // U+1DF6 has class 232 in Unicode 10+, class 0 in the reference's tables: it is not moved.
  EXPECT_EQ(reference_combining_class(0x1DF6), 0);
  EXPECT_EQ(reference_combining_class(0x0301), 230);
  EXPECT_EQ(nfc("-\xE1\xB7\xB6\xCC\xB4"), "-\xE1\xB7\xB6\xCC\xB4");
  EXPECT_EQ(nfc("-\xCC\x81\xCC\xB4"), "-\xCC\xB4\xCC\x81");  // overlay (1) before acute (230)
}

TEST(RegexClasses, WidensLetterMarkNumberInsideAndOutsideBrackets) {
  const std::string re = with_reference_unicode_classes("[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}|\\p{Lu}|\\\\p{L}");
  EXPECT_NE(re.find("[^\\r\\n\\p{L}\\x{1C89}-\\x{1C8A}"), std::string::npos) << re;
  EXPECT_NE(re.find("|[\\p{N}\\x{10D40}-\\x{10D49}"), std::string::npos) << re;
  EXPECT_NE(re.find("|\\p{Lu}|"), std::string::npos) << re;            // other properties as written
  EXPECT_NE(re.find("|\\\\p{L}"), std::string::npos) << re;             // an escaped backslash is no \p
  EXPECT_EQ(with_reference_unicode_classes("\\s+(?!\\S)"), "\\s+(?!\\S)");
}

}  // namespace
}  // namespace tf::text
