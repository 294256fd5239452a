#include "backend/variants.h"

#include <cstdlib>

#include "core/error.h"

namespace tf::variants {

namespace {

// "a, b or c"
std::string choice_list(const VariantRow& r) {
  std::string out;
  const int n = choice_count(r);
  for (int i = 0; i < n; ++i) out += (i == 0 ? "" : i + 1 == n ? " or " : ", ") + std::string(r.choices[i]);
  return out;
}

int choice_or_fail(Variant v, std::string_view value, const char* who) {
  const int i = choice_index(v, value);
  if (i < 0)
    fail(who + std::string(row(v).env) + "=" + std::string(value) + ": expected " + choice_list(row(v)));
  return i;
}

}  // namespace

Choices from_environment() {
  Choices c{};
  for (const VariantRow& r : kVariantTable) {
    const char* e = std::getenv(std::string(r.env).c_str());
    c[static_cast<size_t>(r.variant)] = e && *e ? choice_or_fail(r.variant, e, "") : 0;
  }
  return c;
}

int* detail::chosen() {
  static Choices chosen = from_environment();
  return chosen.data();
}

Choices current() {
  Choices c{};
  const int* now = detail::chosen();
  for (size_t i = 0; i < kVariantCount; ++i) c[i] = now[i];
  return c;
}

Override::Override(Variant v, std::string_view choice)
    : v_(v), previous_(detail::chosen()[static_cast<int>(v)]) {
  detail::chosen()[static_cast<int>(v)] = choice_or_fail(v, choice, "variants::Override ");
}

Override::~Override() { detail::chosen()[static_cast<int>(v_)] = previous_; }

std::string markdown() {
  std::string out =
      "| variable | choices, the default first | what it chooses | the same bytes |\n"
      "|---|---|---|---|\n";
  for (const VariantRow& r : kVariantTable) {
    std::string choices;
    for (int i = 0; i < choice_count(r); ++i) choices += (i ? ", `" : "`") + std::string(r.choices[i]) + "`";
    out += "| `" + std::string(r.env) + "` | " + choices + " | " + std::string(r.chooses) + " | " +
           (r.same_bytes ? "yes" : "other bytes, within the same contract") + " |\n";
  }
  return out;
}

}  // namespace tf::variants
