#include "common/base/array_spec.h"

#include <algorithm>
#include <charconv>

#include "common/base/split.h"

namespace snn {
namespace {

Result<uint32_t> Index(std::string_view s, std::string_view whole) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v > ArrayLimits::kMaxIndex) {
    return InvalidArgument("array '" + std::string(whole.substr(0, 64)) + "': '" +
                           std::string(s.substr(0, 16)) + "' is not an index from 0 to " +
                           std::to_string(ArrayLimits::kMaxIndex));
  }
  return static_cast<uint32_t>(v);
}

// "N", "A-B" or "A-B:S", with last moved down onto the sequence.
Result<v1::ArrayRange> ParseRange(std::string_view item, std::string_view whole) {
  v1::ArrayRange r;
  uint32_t step = 1;
  if (size_t colon = item.find(':'); colon != std::string_view::npos) {
    auto s = Index(item.substr(colon + 1), whole);
    if (!s.ok()) return s.status();
    if (*s == 0) return InvalidArgument("array '" + std::string(whole) + "': a step is at least 1");
    step = *s;
    item = item.substr(0, colon);
    if (item.find('-') == std::string_view::npos) {
      return InvalidArgument("array '" + std::string(whole) + "': a step needs a range (A-B:S)");
    }
  }
  const size_t dash = item.find('-');
  auto first = Index(item.substr(0, dash), whole);
  if (!first.ok()) return first.status();
  uint32_t last = *first;
  if (dash != std::string_view::npos) {
    auto l = Index(item.substr(dash + 1), whole);
    if (!l.ok()) return l.status();
    if (*l < *first) {
      return InvalidArgument("array '" + std::string(whole) + "': range " + std::string(item) +
                             " runs backwards");
    }
    last = *l;
  }
  r.set_first(*first);
  r.set_last(*first + (last - *first) / step * step);
  r.set_step(r.first() == r.last() ? 1 : step);
  return r;
}

uint64_t CountRange(const v1::ArrayRange& r) { return (r.last() - r.first()) / r.step() + 1; }

void Sort(ArrayRanges& ranges) {
  std::sort(ranges.begin(), ranges.end(),
            [](const v1::ArrayRange& a, const v1::ArrayRange& b) { return a.first() < b.first(); });
}

// The first element of `r` at or after `at`, and the last at or before `at` (false: none).
bool FirstFrom(const v1::ArrayRange& r, uint32_t at, uint32_t* out) {
  if (at <= r.first()) {
    *out = r.first();
    return true;
  }
  if (at > r.last()) return false;
  const uint64_t k = (uint64_t{at} - r.first() + r.step() - 1) / r.step();
  const uint64_t v = r.first() + k * r.step();
  if (v > r.last()) return false;
  *out = static_cast<uint32_t>(v);
  return true;
}
bool LastUpTo(const v1::ArrayRange& r, uint32_t at, uint32_t* out) {
  if (at >= r.last()) {
    *out = r.last();
    return true;
  }
  if (at < r.first()) return false;
  *out = r.first() + (at - r.first()) / r.step() * r.step();
  return true;
}

v1::ArrayRange Make(uint32_t first, uint32_t last, uint32_t step) {
  v1::ArrayRange r;
  r.set_first(first);
  r.set_last(last);
  r.set_step(first == last ? 1 : step);
  return r;
}

Result<std::vector<v1::ArrayRange>> ParseList(std::string_view list, std::string_view whole) {
  std::vector<v1::ArrayRange> out;
  for (const std::string& item : SplitList(list, ',', true)) {
    auto r = ParseRange(item, whole);
    if (!r.ok()) return r.status();
    out.push_back(*r);
    if (out.size() > ArrayLimits::kMaxRanges) {
      return InvalidArgument("array '" + std::string(whole.substr(0, 64)) + "': more than " +
                             std::to_string(ArrayLimits::kMaxRanges) + " ranges");
    }
  }
  return out;
}

}  // namespace

Result<v1::ArraySpec> ParseArraySpec(std::string_view text) {
  v1::ArraySpec spec;
  std::string_view list = text;
  if (size_t pct = text.find('%'); pct != std::string_view::npos) {
    auto k = Index(text.substr(pct + 1), text);
    if (!k.ok() || *k == 0) {
      return InvalidArgument("array '" + std::string(text.substr(0, 64)) +
                             "': %K takes a number of elements from 1 (at most K run at once)");
    }
    spec.set_max_running(*k);
    list = text.substr(0, pct);
  }
  if (list.empty()) {
    return InvalidArgument("array is empty; write indices such as 0-99, 1,3,5-9 or 0-98:2");
  }
  auto ranges = ParseList(list, text);
  if (!ranges.ok()) return ranges.status();
  for (auto& r : *ranges) *spec.add_ranges() = r;
  Sort(*spec.mutable_ranges());
  for (int i = 1; i < spec.ranges_size(); ++i) {
    if (spec.ranges(i).first() <= spec.ranges(i - 1).last()) {
      return InvalidArgument("array '" + std::string(text.substr(0, 64)) + "': ranges overlap at " +
                             std::to_string(spec.ranges(i).first()) + "; give each index once");
    }
  }
  if (const uint64_t n = CountOf(spec.ranges()); n > ArrayLimits::kMaxElements) {
    return InvalidArgument("array '" + std::string(text.substr(0, 64)) + "' has " +
                           std::to_string(n) + " elements; at most " +
                           std::to_string(ArrayLimits::kMaxElements));
  }
  return spec;
}

std::string FormatArrayRanges(const ArrayRanges& ranges) {
  std::string out;
  for (const auto& r : ranges) {
    if (!out.empty()) out += ",";
    out += std::to_string(r.first());
    if (r.last() != r.first()) out += "-" + std::to_string(r.last());
    if (r.step() > 1) out += ":" + std::to_string(r.step());
  }
  return out;
}

Result<ArraySelection> ParseArraySelection(std::string_view text) {
  ArraySelection sel;
  const size_t us = text.find('_');
  const std::string_view id = text.substr(0, us);
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(id.data(), id.data() + id.size(), v);
  if (id.empty() || ec != std::errc() || p != id.data() + id.size() || v == 0) {
    return InvalidArgument("'" + std::string(text.substr(0, 64)) +
                           "' is not a job ID (a number, or ARRAY_INDEX, ARRAY_[A-B,C])");
  }
  sel.job_id = v;
  if (us == std::string_view::npos) return sel;
  std::string_view list = text.substr(us + 1);
  if (list.size() >= 2 && list.front() == '[' && list.back() == ']') {
    list = list.substr(1, list.size() - 2);
  }
  auto ranges = ParseList(list, text);
  if (!ranges.ok()) return ranges.status();
  sel.all = false;
  sel.ranges = std::move(*ranges);
  return sel;
}

uint64_t CountOf(const ArrayRanges& ranges) {
  uint64_t n = 0;
  for (const auto& r : ranges) n += CountRange(r);
  return n;
}

bool Contains(const ArrayRanges& ranges, uint32_t index) {
  for (const auto& r : ranges) {
    if (index >= r.first() && index <= r.last() && (index - r.first()) % r.step() == 0) return true;
  }
  return false;
}

uint32_t PopFirst(ArrayRanges& ranges) {
  Sort(ranges);
  v1::ArrayRange& r = ranges[0];
  const uint32_t index = r.first();
  if (r.first() == r.last()) {
    ranges.erase(ranges.begin());
  } else {
    r.set_first(r.first() + r.step());
    if (r.first() == r.last()) r.set_step(1);
  }
  return index;
}

uint64_t RemoveSpan(ArrayRanges& ranges, uint32_t first, uint32_t last, ArrayRanges* removed) {
  ArrayRanges kept;
  uint64_t count = 0;
  for (const auto& r : ranges) {
    uint32_t a = 0, b = 0;
    if (!FirstFrom(r, first, &a) || !LastUpTo(r, last, &b) || a > b) {
      *kept.Add() = r;
      continue;
    }
    if (a > r.first()) *kept.Add() = Make(r.first(), a - r.step(), r.step());
    if (b < r.last()) *kept.Add() = Make(b + r.step(), r.last(), r.step());
    const v1::ArrayRange gone = Make(a, b, r.step());
    count += CountRange(gone);
    if (removed != nullptr) *removed->Add() = gone;
  }
  Sort(kept);
  ranges.Swap(&kept);
  return count;
}

void AddRanges(ArrayRanges& ranges, const ArrayRanges& more) {
  for (const auto& r : more) *ranges.Add() = r;
  Sort(ranges);
}

void AddInterval(ArrayRanges& intervals, uint32_t first, uint32_t last) {
  ArrayRanges out;
  bool placed = false;
  for (const auto& iv : intervals) {
    if (uint64_t{iv.last()} + 1 < first) {  // wholly before, not touching
      *out.Add() = iv;
    } else if (uint64_t{last} + 1 < iv.first()) {  // wholly after
      if (!placed) *out.Add() = Make(first, last, 1);
      placed = true;
      *out.Add() = iv;
    } else {  // overlaps or touches: widens what is being added
      first = std::min(first, iv.first());
      last = std::max(last, iv.last());
    }
  }
  if (!placed) *out.Add() = Make(first, last, 1);
  intervals.Swap(&out);
}

namespace {

// Calls `each(a, b, step)` for every stretch of `ranges` inside one interval, in order, until it
// returns false.
template <typename Each>
void ForEachOverlap(const ArrayRanges& ranges, const ArrayRanges& intervals, Each each) {
  for (const auto& r : ranges) {
    for (const auto& iv : intervals) {
      if (iv.last() < r.first()) continue;
      if (iv.first() > r.last()) break;
      uint32_t a = 0, b = 0;
      if (!FirstFrom(r, iv.first(), &a) || !LastUpTo(r, iv.last(), &b) || a > b) continue;
      if (!each(a, b, r.step())) return;
    }
  }
}

}  // namespace

std::optional<uint32_t> FirstIn(const ArrayRanges& ranges, const ArrayRanges& intervals) {
  std::optional<uint32_t> first;
  ForEachOverlap(ranges, intervals, [&](uint32_t a, uint32_t, uint32_t) {
    first = a;
    return false;
  });
  return first;
}

uint64_t CountIn(const ArrayRanges& ranges, const ArrayRanges& intervals, uint64_t cap) {
  uint64_t n = 0;
  ForEachOverlap(ranges, intervals, [&](uint32_t a, uint32_t b, uint32_t step) {
    n += (b - a) / step + 1;
    return n < cap;
  });
  return std::min(n, cap);
}

std::optional<uint32_t> NextAfter(const ArrayRanges& ranges, uint32_t index) {
  std::optional<uint32_t> next;
  for (const auto& r : ranges) {
    uint32_t v = 0;
    if (index < r.last() && FirstFrom(r, index + 1, &v) && (!next || v < *next)) next = v;
  }
  return next;
}

std::string JobName(const v1::JobRecord& job) {
  if (job.array_parent() != 0) {
    return std::to_string(job.array_job_id()) + "_" + std::to_string(job.array_task_id());
  }
  if (!job.spec().has_array() || job.array_left_size() == 0) {
    return std::to_string(job.tenant_job_id());
  }
  std::string left = FormatArrayRanges(job.array_left());
  if (left.size() > 40) left = left.substr(0, 37) + "...";
  const uint32_t k = job.spec().array().max_running();
  return std::to_string(job.tenant_job_id()) + "_[" + left +
         (k > 0 ? "%" + std::to_string(k) : "") + "]";
}

}  // namespace snn
