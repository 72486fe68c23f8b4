// Splitting a separated list ("a,b,c"), as flags and settings give them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace snn {

// The items of `text` between `separator`s, in order; empty items are dropped unless
// `keep_empty` (then "" gives one empty item and "a," two).
std::vector<std::string> SplitList(std::string_view text, char separator = ',',
                                   bool keep_empty = false);

}  // namespace snn
