// The tokenizer on a small hand-made tokenizer.json, the embedded tiny one and Qwen3's, and its
// refusals of files it cannot follow. Expected ids come from the reference library.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "mini_tokenizer.h"
#include "text/chat_format.h"
#include "text/tokenizer.h"

namespace tf::text {
namespace {

using Ids = std::vector<int32_t>;

Tokenizer mini(bool string_merges = true) {
  return Tokenizer::from_json(testing::mini_tokenizer_json(string_merges).dump(), "mini tokenizer.json");
}

std::string error_of(const Json& j) {
  try {
    Tokenizer::from_json(j.dump(), "bad tokenizer.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Tokenizer, MergesByRankLeftmostFirst) {
  for (bool string_merges : {true, false}) {
    const Tokenizer t = mini(string_merges);
    EXPECT_EQ(t.encode("abc"), (Ids{258})) << string_merges;
    EXPECT_EQ(t.encode("abcabc"), (Ids{258, 258}));
    EXPECT_EQ(t.encode("abbc"), (Ids{256, 257}));
    EXPECT_EQ(t.encode("hello"), (Ids{263}));
    EXPECT_EQ(t.summary().merges, 8u);
    EXPECT_EQ(t.summary().regular_tokens, 264u);
  }
}

TEST(Tokenizer, AddedTokensHonourTheirFlags) {
  const Tokenizer t = mini();
  EXPECT_EQ(t.encode("  <s>  [X]   y"), (Ids{264, 32, 32, 265, 121}));  // lstrip, rstrip
  EXPECT_EQ(t.encode("a word b"), (Ids{97, 32, 266, 32, 98}));          // single_word
  EXPECT_EQ(t.encode("awordb"), (Ids{97, 119, 111, 114, 100, 98}));     // not a single word
  EXPECT_EQ(t.encode("e\xCC\x81t"), (Ids{267}));                         // normalized: matched after NFC
  EXPECT_EQ(t.encode("\xC3\xA9t"), (Ids{267}));
  EXPECT_EQ(t.encode("<s>x<s>"), (Ids{268, 264}));                       // longest match first
  EXPECT_EQ(t.encode("a<s>xb"), (Ids{97, 268, 98}));
  EXPECT_EQ(t.encode("ab\xCC\x81" "c"), (Ids{256, 204, 129, 99}));
  EXPECT_EQ(t.encode(""), Ids{});
}

TEST(Tokenizer, DecodesAsTheReference) {
  const Tokenizer t = mini();
  EXPECT_EQ(t.decode({0, 1, 2, 99, 262, 263, 264, 300, 1000}), std::string("\0\1\2chellhello<s>", 16));
  EXPECT_EQ(t.decode({262, 263, 264, 97}, true), "hellhelloa");
  EXPECT_EQ(t.decode({195, 195}), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(t.token_to_id("<s>x"), 268);
  EXPECT_EQ(t.id_to_token(32), "\xC4\xA0");
}

TEST(Tokenizer, RejectsInvalidUtf8WithTheOffset) {
  const Tokenizer t = mini();
  try {
    t.encode("abc\xE2\x82");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("invalid UTF-8 at byte offset 3"), std::string::npos) << e.what();
  }
}

TEST(Tokenizer, RefusesWhatItCannotFollowByName) {
  const Json good = testing::mini_tokenizer_json();
  auto with = [&](const std::string& pointer, const Json& value) {
    Json j = good;
    j[Json::json_pointer(pointer)] = value;
    return error_of(j);
  };
  auto expect_error = [](const std::string& msg, const std::string& part) {
    EXPECT_NE(msg.find(part), std::string::npos) << "message: " << msg << "\nexpected to contain: " << part;
  };
  expect_error(with("/model/type", "WordPiece"), "model.type \"WordPiece\" is not supported");
  expect_error(with("/normalizer", Json{{"type", "Lowercase"}}), "normalizer.type \"Lowercase\" is not supported");
  expect_error(with("/pre_tokenizer/pretokenizers/0/behavior", "Removed"), "behavior \"Removed\" is not supported");
  expect_error(with("/pre_tokenizer/pretokenizers/1/add_prefix_space", true), "add_prefix_space = true is not supported");
  expect_error(with("/pre_tokenizer/pretokenizers/0/pattern/Regex", "([a-z"), "regex does not compile");
  expect_error(with("/post_processor", Json{{"type", "TemplateProcessing"}}), "post_processor.type \"TemplateProcessing\"");
  expect_error(with("/model/byte_fallback", true), "model.byte_fallback = true is not supported");
  expect_error(with("/model/dropout", 0.1), "model.dropout 0.1 is not supported");
  expect_error(with("/model/continuing_subword_prefix", "##"), "model.continuing_subword_prefix \"##\" is not supported");
  expect_error(with("/truncation", Json{{"max_length", 5}}), "truncation is not supported");
  expect_error(with("/model/merges/2", "ab c x"), "model.merges[2] \"ab c x\" must be two tokens separated by one space");
  expect_error(with("/model/merges/2", "ab zz"), "merge 2 (\"ab\" \"zz\"): \"zz\" is not in the vocabulary");
  expect_error(with("/model/merges/2", 7), "model.merges[2] must be \"left right\" or [\"left\", \"right\"]");
  expect_error(with("/model/vocab", Json::array()), "model.vocab must be an object");
  expect_error(with("/added_tokens/1/id", 300), "added_tokens[1] (\"[X]\") has id 300 but the reference library gives it id 265");
  expect_error(with("/added_tokens/0/lstrip", "yes"), "added_tokens[0].lstrip must be true or false");
  expect_error(with("/version", "2.0"), "version \"2.0\" is not supported");
  Json no_pre = good;
  no_pre.erase("pre_tokenizer");
  expect_error(error_of(no_pre), "pre_tokenizer is missing");
  const std::string text = good.dump();
  try {
    Tokenizer::from_json(text.substr(0, text.size() / 2), "half.json");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("half.json: not valid JSON"), std::string::npos) << e.what();
  }
}

TEST(Tokenizer, TruncatedGzipIsAnError) {
  const std::string src = std::string(TF_TEST_DATA) + "/qwen3-tokenizer.json.gz";
  std::ifstream in(src, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 1000u);
  const auto path = std::filesystem::temp_directory_path() / "tf_truncated_tokenizer.json.gz";
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size() / 3));
  try {
    Tokenizer::load(path.string());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

TEST(Tokenizer, ChatFormatOfTheEmptyPrompt) {
  const ChatFormat chat;
  const Tokenizer tiny = Tokenizer::load(find_tokenizer_file(std::string(TF_TEST_DATA) + "/tiny-pipeline"));
  EXPECT_EQ(tiny.encode(chat.apply("")), (Ids{4001, 1283, 198, 4002, 198, 4001, 503, 1179, 1305, 198, 4024, 198}));
  EXPECT_EQ(tiny.summary().regular_tokens, 4000u);
  EXPECT_EQ(tiny.summary().added_tokens, 33u);
  EXPECT_EQ(tiny.summary().id_limit, 4033u);
  EXPECT_EQ(tiny.token_to_id("<think>"), 4024);
  EXPECT_EQ(tiny.token_to_id("</think>"), 4025);
  const Tokenizer qwen3 = Tokenizer::load(std::string(TF_TEST_DATA) + "/qwen3-tokenizer.json.gz");
  EXPECT_EQ(qwen3.encode(chat.apply("")), (Ids{151644, 872, 198, 151645, 198, 151644, 77091, 198, 151667, 198}));
  EXPECT_EQ(qwen3.summary().regular_tokens, 151643u);
  EXPECT_EQ(qwen3.summary().merges, 151387u);
  EXPECT_EQ(qwen3.decode(qwen3.encode("Grüße, 世界! 👋\r\n")), "Grüße, 世界! 👋\r\n");
}

TEST(Tokenizer, FindsTheTokenizerOfAFolder) {
  const std::string data = TF_TEST_DATA;
  EXPECT_EQ(find_tokenizer_file(data + "/tiny-pipeline"), data + "/tiny-pipeline/tokenizer/tokenizer.json");
  EXPECT_EQ(find_tokenizer_file(data + "/tiny-pipeline/tokenizer"), data + "/tiny-pipeline/tokenizer/tokenizer.json");
  EXPECT_THROW(find_tokenizer_file(data + "/no-such-folder"), Error);
  EXPECT_THROW(find_tokenizer_file(data + "/tiny-pipeline/vae-missing"), Error);
}

}  // namespace
}  // namespace tf::text
