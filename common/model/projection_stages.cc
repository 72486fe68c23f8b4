#include "common/model/projection_stages.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace snn {
namespace {

// No stage may describe more elements than a population may hold.
constexpr uint64_t kMaxElements = 100'000'000;
// The steps making a projection's synapses may take, counted as ForEachStageSynapse loops
// (about a second and a half): a small message must not buy an agent hours of work.
constexpr double kMaxWork = 2e9;

uint64_t Product(const google::protobuf::RepeatedField<uint32_t>& shape) {
  uint64_t n = 1;
  for (uint32_t d : shape) n = std::min<uint64_t>(n * d, kMaxElements + 1);
  return shape.empty() ? 0 : n;
}

std::string ShapeText(const google::protobuf::RepeatedField<uint32_t>& shape) {
  std::string s;
  for (uint32_t d : shape) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s.empty() ? "(none)" : s;
}

// A conv or pooling stage in two spatial dimensions (1-d ones have height 1).
struct Grid {
  uint32_t in_c = 0, in_h = 1, in_w = 0, out_c = 0, out_h = 1, out_w = 0;
  uint32_t k_h = 1, k_w = 1, s_h = 1, s_w = 1, p_h = 0, p_w = 0, d_h = 1, d_w = 1;
  uint32_t groups = 1;
};

// Reads a per-dimension parameter given for `rank` spatial dimensions (or empty: `fallback`).
// 1-d stages have a height of 1, and there the height's fallback always applies.
bool Spatial(const google::protobuf::RepeatedField<uint32_t>& v, size_t rank, uint32_t fallback_h,
             uint32_t fallback_w, uint32_t* h, uint32_t* w) {
  if (v.empty()) {
    *h = fallback_h;
    *w = fallback_w;
    return true;
  }
  if (static_cast<size_t>(v.size()) != rank) return false;
  *h = rank == 2 ? v[0] : fallback_h;  // 1-d: the height's own value (a padding of 0, ...)
  *w = v[v.size() - 1];
  return true;
}

uint32_t OutDim(uint32_t in, uint32_t k, uint32_t s, uint32_t p, uint32_t d) {
  const int64_t span = int64_t{d} * (k - 1) + 1;
  const int64_t room = int64_t{in} + 2 * int64_t{p} - span;
  return room < 0 ? 0 : static_cast<uint32_t>(room / s + 1);
}

Result<Grid> GridOf(const v1::Stage& s, const std::string& which) {
  Grid g;
  const bool conv = s.kind() == "conv";
  const int rank = s.in_shape_size() - 1;
  if (rank != 1 && rank != 2) {
    return InvalidArgument(which + ": a " + s.kind() + " stage takes C,L or C,H,W; got " +
                           ShapeText(s.in_shape()));
  }
  if (s.out_shape_size() != s.in_shape_size()) {
    return InvalidArgument(which + ": the " + s.kind() + " stage's output shape " +
                           ShapeText(s.out_shape()) + " has another rank than its input " +
                           ShapeText(s.in_shape()));
  }
  g.in_c = s.in_shape(0);
  g.in_h = rank == 2 ? s.in_shape(1) : 1;
  g.in_w = s.in_shape(rank);
  g.out_c = s.out_shape(0);
  g.out_h = rank == 2 ? s.out_shape(1) : 1;
  g.out_w = s.out_shape(rank);
  const std::string bad = which + ": the " + s.kind() + " stage's ";
  if (!Spatial(s.kernel(), rank, 1, 0, &g.k_h, &g.k_w) || s.kernel().empty() || g.k_h == 0 ||
      g.k_w == 0) {
    return InvalidArgument(bad + "kernel needs " + std::to_string(rank) + " sizes of at least 1");
  }
  if (!Spatial(s.stride(), rank, conv ? 1 : g.k_h, conv ? 1 : g.k_w, &g.s_h, &g.s_w) ||
      g.s_h == 0 || g.s_w == 0) {
    return InvalidArgument(bad + "stride needs " + std::to_string(rank) + " values of at least 1");
  }
  if (!Spatial(s.padding(), rank, 0, 0, &g.p_h, &g.p_w) || g.p_h > 1024 || g.p_w > 1024) {
    return InvalidArgument(bad + "padding needs " + std::to_string(rank) +
                           " values of at most 1024");
  }
  if (!Spatial(s.dilation(), rank, 1, 1, &g.d_h, &g.d_w) || g.d_h == 0 || g.d_w == 0 ||
      g.d_h > 1024 || g.d_w > 1024) {
    return InvalidArgument(bad + "dilation needs " + std::to_string(rank) +
                           " values between 1 and 1024");
  }
  if (std::max(g.k_h, g.k_w) > 4096) return InvalidArgument(bad + "kernel is wider than 4096");
  g.groups = std::max(1u, s.groups());
  if (conv) {
    if (g.in_c % g.groups != 0 || g.out_c % g.groups != 0 || g.in_c == 0 || g.out_c == 0) {
      return InvalidArgument(bad + std::to_string(g.groups) + " groups do not divide its " +
                             std::to_string(g.in_c) + " input and " + std::to_string(g.out_c) +
                             " output channels");
    }
    const uint64_t want = uint64_t{g.out_c} * (g.in_c / g.groups) * g.k_h * g.k_w;
    if (static_cast<uint64_t>(s.weights_size()) != want) {
      return InvalidArgument(bad + "kernel has " + std::to_string(s.weights_size()) + " weights; " +
                             std::to_string(g.out_c) + " x " + std::to_string(g.in_c / g.groups) +
                             " x " + std::to_string(g.k_h) + " x " + std::to_string(g.k_w) + " = " +
                             std::to_string(want) + " are needed");
    }
  } else if (g.out_c != g.in_c) {
    return InvalidArgument(bad + "output has " + std::to_string(g.out_c) + " channels, not its " +
                           std::to_string(g.in_c));
  }
  const uint32_t h = OutDim(g.in_h, g.k_h, g.s_h, g.p_h, conv ? g.d_h : 1);
  const uint32_t w = OutDim(g.in_w, g.k_w, g.s_w, g.p_w, conv ? g.d_w : 1);
  if (h != g.out_h || w != g.out_w || h == 0 || w == 0) {
    return InvalidArgument(
        bad + "output shape is " + ShapeText(s.out_shape()) +
        "; its input, kernel, stride and padding make " + std::to_string(g.out_c) +
        (rank == 2 ? "x" + std::to_string(h) : std::string()) + "x" + std::to_string(w));
  }
  return g;
}

Status CheckStage(const v1::Stage& s, const std::string& which) {
  const uint64_t in = Product(s.in_shape()), out = Product(s.out_shape());
  if (in == 0 || out == 0 || in > kMaxElements || out > kMaxElements) {
    return InvalidArgument(which + ": a " + s.kind() + " stage has shape " +
                           ShapeText(s.in_shape()) + " -> " + ShapeText(s.out_shape()) +
                           "; each must hold between 1 and " + std::to_string(kMaxElements) +
                           " elements");
  }
  for (float w : s.weights()) {
    if (!std::isfinite(w)) return InvalidArgument(which + ": stage weights must be finite numbers");
  }
  if (s.kind() == "dense") {
    if (static_cast<uint64_t>(s.weights_size()) != in * out) {
      return InvalidArgument(which + ": a dense stage of " + std::to_string(in) + " -> " +
                             std::to_string(out) + " needs " + std::to_string(in * out) +
                             " weights, not " + std::to_string(s.weights_size()));
    }
  } else if (s.kind() == "scale" || s.kind() == "reshape") {
    if (in != out) {
      return InvalidArgument(which + ": a " + s.kind() + " stage keeps its size; " +
                             ShapeText(s.in_shape()) + " -> " + ShapeText(s.out_shape()) +
                             " does not");
    }
    if (s.kind() == "scale" && static_cast<uint64_t>(s.weights_size()) != in) {
      return InvalidArgument(which + ": a scale stage of " + std::to_string(in) + " needs " +
                             std::to_string(in) + " weights, not " +
                             std::to_string(s.weights_size()));
    }
  } else if (s.kind() == "conv" || s.kind() == "sum_pool" || s.kind() == "avg_pool") {
    auto g = GridOf(s, which);
    if (!g.ok()) return g.status();
  } else {
    return InvalidArgument(which + ": unknown stage kind '" + s.kind() +
                           "' (known: dense, scale, conv, sum_pool, avg_pool, reshape)");
  }
  return Status::Ok();
}

// Sparse activity over one stage's elements: a dense buffer plus the indices touched.
struct Sparse {
  std::vector<double> value;
  std::vector<uint32_t> touched;
  void Reset(uint64_t size) {
    if (value.size() < size) value.resize(size, 0);
    for (uint32_t i : touched) value[i] = 0;
    touched.clear();
  }
  void Add(uint32_t i, double v) {
    if (value[i] == 0) touched.push_back(i);
    value[i] += v;
    if (value[i] == 0) value[i] = 1e-300;  // stays touched; rounds to a weight of 0
  }
};

void Apply(const v1::Stage& s, const Sparse& in, Sparse& out) {
  out.Reset(Product(s.out_shape()));
  if (s.kind() == "reshape") {
    for (uint32_t i : in.touched) out.Add(i, in.value[i]);
  } else if (s.kind() == "scale") {
    for (uint32_t i : in.touched) out.Add(i, in.value[i] * s.weights(static_cast<int>(i)));
  } else if (s.kind() == "dense") {
    const uint64_t n = Product(s.in_shape()), m = Product(s.out_shape());
    for (uint32_t i : in.touched) {
      for (uint64_t o = 0; o < m; ++o) {
        const float w = s.weights(static_cast<int>(o * n + i));
        if (w != 0) out.Add(static_cast<uint32_t>(o), in.value[i] * w);
      }
    }
  } else {
    const Grid g = *GridOf(s, "");
    const bool conv = s.kind() == "conv";
    const double pool_scale = s.kind() == "avg_pool" ? 1.0 / (g.k_h * g.k_w) : 1.0;
    const uint32_t per_group_in = g.in_c / g.groups, per_group_out = g.out_c / g.groups;
    for (uint32_t i : in.touched) {
      const uint32_t c = i / (g.in_h * g.in_w), y = i / g.in_w % g.in_h, x = i % g.in_w;
      const uint32_t d_h = conv ? g.d_h : 1, d_w = conv ? g.d_w : 1;
      for (uint32_t ky = 0; ky < g.k_h; ++ky) {
        const int64_t ty = int64_t{y} + g.p_h - int64_t{ky} * d_h;  // = oy * stride
        if (ty < 0 || ty % g.s_h != 0 || ty / g.s_h >= g.out_h) continue;
        const uint32_t oy = static_cast<uint32_t>(ty / g.s_h);
        for (uint32_t kx = 0; kx < g.k_w; ++kx) {
          const int64_t tx = int64_t{x} + g.p_w - int64_t{kx} * d_w;
          if (tx < 0 || tx % g.s_w != 0 || tx / g.s_w >= g.out_w) continue;
          const uint32_t ox = static_cast<uint32_t>(tx / g.s_w);
          if (!conv) {
            out.Add((c * g.out_h + oy) * g.out_w + ox, in.value[i] * pool_scale);
            continue;
          }
          const uint32_t group = c / per_group_in, ic = c % per_group_in;
          for (uint32_t o = group * per_group_out; o < (group + 1) * per_group_out; ++o) {
            const uint64_t k = ((uint64_t{o} * per_group_in + ic) * g.k_h + ky) * g.k_w + kx;
            const float w = s.weights(static_cast<int>(k));
            if (w != 0) out.Add((o * g.out_h + oy) * g.out_w + ox, in.value[i] * w);
          }
        }
      }
    }
  }
}

}  // namespace

Status CheckStages(const v1::Projection& p, int64_t from_size, int64_t to_size,
                   const std::string& which) {
  if (p.stages_size() == 0) return InvalidArgument(which + ": a stages projection has no stage");
  if (p.weights_size() > 0 || p.weight() != 0) {
    return InvalidArgument(which + ": a stages projection keeps its weights in its stages");
  }
  uint64_t size = static_cast<uint64_t>(from_size);
  for (int i = 0; i < p.stages_size(); ++i) {
    const v1::Stage& s = p.stages(i);
    const std::string where = which + " stage " + std::to_string(i);
    SNN_RETURN_IF_ERROR(CheckStage(s, where));
    if (Product(s.in_shape()) != size) {
      return InvalidArgument(where + " (" + s.kind() + ") takes " +
                             std::to_string(Product(s.in_shape())) + " elements; " +
                             std::to_string(size) + " come in");
    }
    size = Product(s.out_shape());
  }
  if (size != static_cast<uint64_t>(to_size)) {
    return InvalidArgument(which + ": its stages end in " + std::to_string(size) +
                           " elements; the target population has " + std::to_string(to_size));
  }
  // Each source neuron's activity spreads stage by stage; each element costs its stage's loop.
  double work = 0, spread = 1;
  for (const v1::Stage& s : p.stages()) {
    double loop = 1, fan_out = 1;
    if (s.kind() == "dense") {
      loop = fan_out = static_cast<double>(Product(s.out_shape()));
    } else if (s.kind() == "conv" || s.kind() == "sum_pool" || s.kind() == "avg_pool") {
      const Grid g = *GridOf(s, "");
      loop = static_cast<double>(g.k_h) * g.k_w * (s.kind() == "conv" ? g.out_c / g.groups : 1);
      fan_out = s.kind() == "conv" ? loop
                                   : std::ceil(static_cast<double>(g.k_h) / g.s_h) *
                                         std::ceil(static_cast<double>(g.k_w) / g.s_w);
    }
    work += spread * loop;
    spread = std::min(spread * fan_out, static_cast<double>(Product(s.out_shape())));
  }
  if (work * static_cast<double>(from_size) > kMaxWork) {
    return InvalidArgument(which + ": making its synapses would take about " +
                           std::to_string(static_cast<uint64_t>(work * from_size)) +
                           " steps; at most " + std::to_string(static_cast<uint64_t>(kMaxWork)) +
                           " are allowed (smaller kernels or layers)");
  }
  return Status::Ok();
}

double StageSynapseBound(const v1::Projection& p, int64_t from_size, int64_t to_size) {
  double fan_out = 1;
  for (const v1::Stage& s : p.stages()) {
    if (s.kind() == "dense") {
      fan_out *= static_cast<double>(Product(s.out_shape()));
    } else if (s.kind() == "conv" || s.kind() == "sum_pool" || s.kind() == "avg_pool") {
      const Grid g = *GridOf(s, "");
      const double taps = s.kind() == "conv"
                              ? static_cast<double>(g.k_h) * g.k_w * (g.out_c / g.groups)
                              : std::ceil(static_cast<double>(g.k_h) / g.s_h) *
                                    std::ceil(static_cast<double>(g.k_w) / g.s_w);
      fan_out *= taps;
    }
    fan_out = std::min(fan_out, static_cast<double>(to_size) * 1e3);  // keeps the product finite
  }
  return static_cast<double>(from_size) * std::min(fan_out, static_cast<double>(to_size));
}

void ForEachStageSynapse(const v1::Projection& p, uint32_t from_size,
                         const std::function<void(uint32_t, uint32_t, double)>& fn) {
  Sparse a, b;
  for (uint32_t source = 0; source < from_size; ++source) {
    a.Reset(from_size);
    a.Add(source, 1.0);
    Sparse* in = &a;
    Sparse* out = &b;
    for (const v1::Stage& s : p.stages()) {
      Apply(s, *in, *out);
      std::swap(in, out);
    }
    std::sort(in->touched.begin(), in->touched.end());
    for (uint32_t target : in->touched) {
      const double w = in->value[target];
      if (static_cast<float>(w) != 0) fn(source, target, w);
    }
  }
}

std::vector<double> ApplyStage(const v1::Stage& s, const std::vector<double>& in) {
  Sparse a, b;
  a.Reset(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != 0) a.Add(static_cast<uint32_t>(i), in[i]);
  }
  Apply(s, a, b);
  std::vector<double> out(Product(s.out_shape()), 0.0);
  for (uint32_t i : b.touched) out[i] = b.value[i] == 1e-300 ? 0 : b.value[i];
  return out;
}

}  // namespace snn
