#pragma once
// The reference library's Oniguruma has newer Unicode tables than Debian 12's (Unicode 14): it puts
// later-assigned letters, marks and digits in \p{L}, \p{M}, \p{N}. A pattern is rewritten so those
// classes include them here too, and splits the same text the same way.
#include <string>

namespace tf::text {

// `pattern` with each \p{L}, \p{M}, \p{N}, \p{Nd}, \p{Alphabetic} (and their long names) widened
// by the code points the reference classes so; everything else as written.
std::string with_reference_unicode_classes(const std::string& pattern);

}  // namespace tf::text
