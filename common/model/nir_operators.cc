#include "common/model/nir_operators.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace snn {
namespace {

constexpr uint32_t kMaxDelaySteps = 65'536;

const NirArray* Param(const NirNode& n, const std::string& name) {
  auto it = n.numbers.find(name);
  return it == n.numbers.end() ? nullptr : &it->second;
}

// Element i of a parameter given per element or once for all.
double At(const NirArray& a, uint64_t i) {
  return a.values.size() == 1 ? a.values[0] : a.values[i % a.values.size()];
}

}  // namespace

uint64_t Count(const std::vector<uint32_t>& shape) {
  uint64_t n = 1;
  for (uint32_t d : shape) n = std::min<uint64_t>(n * d, uint64_t{1} << 40);
  return n;
}

std::vector<uint32_t> Shape(const std::vector<uint64_t>& dims) {
  std::vector<uint32_t> s;
  for (uint64_t d : dims) s.push_back(static_cast<uint32_t>(std::min<uint64_t>(d, UINT32_MAX)));
  if (s.empty()) s.push_back(1);
  return s;
}

std::string ShapeText(const std::vector<uint32_t>& shape) {
  std::string s;
  for (uint32_t d : shape) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

namespace {

// Appends one operator node's stages to a projection, tracking the shape that flows through.
struct OperatorBuild {
  const NirNode& n;
  double step_ms;
  const std::string& file;
  std::vector<uint32_t>& shape;
  v1::Projection& p;
  std::vector<double>* bias;
  const std::string who = "node '" + n.name + "' (" + n.type + ")";
  const uint64_t in = Count(shape);

  Status Error(const std::string& what) const { return InvalidArgument(file + ": " + what); }
  Result<const NirArray*> Need(const std::string& name) const {
    const NirArray* a = Param(n, name);
    if (a == nullptr || a->values.empty()) {
      return Error("node '" + n.name + "' (" + n.type + ") has no '" + name + "'");
    }
    return a;
  }
  v1::Stage* stage(const std::string& kind) {
    v1::Stage* s = p.add_stages();
    s->set_kind(kind);
    for (uint32_t d : shape) s->add_in_shape(d);
    return s;
  }
  void finish(v1::Stage* s, std::vector<uint32_t> out) {
    for (uint32_t d : out) s->add_out_shape(d);
    shape = std::move(out);
  }

  // Affine, Linear.
  Status Dense() {
    auto w = Need("weight");
    if (!w.ok()) return w.status();
    const NirArray& a = **w;
    if (a.dims.size() != 2 || a.dims[1] != in) {
      return Error(who + " takes " +
                   (a.dims.size() == 2 ? std::to_string(a.dims[1]) : std::string("?")) +
                   " inputs (its weight is " + ShapeText(Shape(a.dims)) + "); " +
                   std::to_string(in) + " come in (" + ShapeText(shape) + ")");
    }
    v1::Stage* s = stage("dense");
    for (double v : a.values) s->add_weights(static_cast<float>(v));
    finish(s, {static_cast<uint32_t>(a.dims[0])});
    if (const NirArray* b = Param(n, "bias"); n.type == "Affine" && b && !b->values.empty()) {
      if (b->values.size() != 1 && b->values.size() != a.dims[0]) {
        return Error(who + ": its bias has " + std::to_string(b->values.size()) + " values for " +
                     std::to_string(a.dims[0]) + " outputs");
      }
      for (uint64_t i = 0; i < a.dims[0]; ++i) bias->push_back(At(*b, i));
    }
    return Status::Ok();
  }

  // Scale.
  Status Scale() {
    auto w = Need("scale");
    if (!w.ok()) return w.status();
    v1::Stage* s = stage("scale");
    for (uint64_t i = 0; i < in; ++i) s->add_weights(static_cast<float>(At(**w, i)));
    finish(s, shape);
    return Status::Ok();
  }

  // Flatten, Delay, and a subgraph's Input and Output.
  Status Reshape() {
    if (n.type == "Input" || n.type == "Output") {
      // A subgraph's port passes on what reaches it, which must be what it declares (NIR's own
      // type check refuses a mismatch too).
      for (const char* key :
           {"shape", "input_type/input", "output_type/output", "input_type", "output_type"}) {
        const NirArray* a = Param(n, key);
        if (a == nullptr || a->values.empty()) continue;
        std::vector<uint32_t> declared;
        for (double v : a->values) {
          declared.push_back(v >= 1 && v <= 1e8 ? static_cast<uint32_t>(v) : 0);
        }
        if (Count(declared) != in) {
          return Error(who + " declares " + ShapeText(declared) + " (" +
                       std::to_string(Count(declared)) + " values), but " + ShapeText(shape) +
                       " (" + std::to_string(in) + " values) reaches it");
        }
        break;
      }
    }
    if (n.type == "Delay") {
      auto d = Need("delay");
      if (!d.ok()) return d.status();
      const double first = At(**d, 0);
      for (double v : (*d)->values) {
        if (v != first)
          return Error(who + ": delays differ between elements, which snn cannot run");
      }
      const double steps = first * 1000 / step_ms;
      const double whole = std::round(steps);
      if (!(whole >= 0 && whole <= kMaxDelaySteps) ||
          std::abs(steps - whole) > 1e-6 * (1 + whole)) {
        return Error(who + ": a delay of " + Number(first) + " s is not a whole number of " +
                     Number(step_ms) + " ms steps (at most " + std::to_string(kMaxDelaySteps) +
                     ")");
      }
      p.set_delay_steps(p.delay_steps() + static_cast<uint32_t>(whole));
    }
    finish(stage("reshape"), n.type == "Flatten" ? std::vector<uint32_t>{uint32_t(in)} : shape);
    return Status::Ok();
  }

  // Conv1d, Conv2d, SumPool2d, SumPooling, AvgPool2d: a window over channels and space.
  const bool conv = n.type == "Conv1d" || n.type == "Conv2d";
  const size_t rank = n.type == "Conv1d" ? 1 : 2;
  std::vector<uint32_t> kernel;
  const NirArray* w = nullptr;
  double groups = 1;

  // The window's kernel (and a convolution's weights), and the input seen as C,H,W or C,L.
  Status WindowShape() {
    uint32_t channels = shape.size() == rank + 1 ? shape[0] : 0;
    if (conv) {
      auto weight = Need("weight");
      if (!weight.ok()) return weight.status();
      w = *weight;
      if (w->dims.size() != rank + 2) return Error(who + ": its weight has the wrong rank");
      for (size_t i = 2; i < w->dims.size(); ++i) kernel.push_back(uint32_t(w->dims[i]));
      if (const NirArray* g = Param(n, "groups"); g && !g->values.empty()) groups = g->values[0];
      if (!(groups >= 1 && groups <= 65536)) return Error(who + ": groups out of range");
      channels = static_cast<uint32_t>(w->dims[1] * groups);
    } else {
      auto k = Need("kernel_size");
      if (!k.ok()) return k.status();
      for (size_t i = 0; i < rank; ++i) kernel.push_back(uint32_t(At(**k, i)));
    }
    if (shape.size() != rank + 1) {  // flat so far: take the spatial shape the node gives
      const NirArray* spatial = Param(n, "input_shape");
      std::vector<uint32_t> s = {channels};
      for (size_t i = 0; spatial && i < rank && i < spatial->values.size(); ++i) {
        s.push_back(uint32_t(spatial->values[i]));
      }
      if (s.size() != rank + 1 || Count(s) != in) {
        return Error(who + " gets " + ShapeText(shape) + " and cannot tell its " +
                     (rank == 2 ? "C,H,W" : "C,L") + " shape");
      }
      finish(stage("reshape"), s);
    }
    if (conv && shape[0] != channels) {
      return Error(who + " takes " + std::to_string(channels) + " channels; " + ShapeText(shape) +
                   " comes in");
    }
    return Status::Ok();
  }

  Status Window() {
    SNN_RETURN_IF_ERROR(WindowShape());
    v1::Stage* s = stage(conv ? "conv" : (n.type == "AvgPool2d" ? "avg_pool" : "sum_pool"));
    for (uint32_t k : kernel) s->add_kernel(k);
    auto spatial = [&](const char* key, uint32_t fallback,
                       google::protobuf::RepeatedField<uint32_t>* into) -> Status {
      const NirArray* a = Param(n, key);
      for (size_t i = 0; i < rank; ++i) {
        const double v = a && !a->values.empty() ? At(*a, i) : fallback;
        if (!(v >= 0 && v <= 4096)) return Error(who + ": " + key + " out of range");
        into->Add(static_cast<uint32_t>(v));
      }
      return Status::Ok();
    };
    if (Param(n, "padding") == nullptr && n.strings.count("padding")) {
      return Error(who + ": padding '" + n.strings.at("padding") +
                   "' is not supported; give sizes");
    }
    SNN_RETURN_IF_ERROR(spatial("stride", conv ? 1 : 0, s->mutable_stride()));
    if (!conv && Param(n, "stride") == nullptr) {  // pooling strides default to the window
      for (size_t i = 0; i < rank; ++i) s->set_stride(static_cast<int>(i), kernel[i]);
    }
    SNN_RETURN_IF_ERROR(spatial("padding", 0, s->mutable_padding()));
    uint32_t out_c = shape[0];
    if (conv) {
      SNN_RETURN_IF_ERROR(spatial("dilation", 1, s->mutable_dilation()));
      s->set_groups(static_cast<uint32_t>(groups));
      for (double v : w->values) s->add_weights(static_cast<float>(v));
      out_c = static_cast<uint32_t>(w->dims[0]);
    }
    std::vector<uint32_t> out = {out_c};
    for (size_t i = 0; i < rank; ++i) {
      const int64_t in_d = shape[1 + i], k = kernel[i];
      const int64_t st = std::max<uint32_t>(1, s->stride(static_cast<int>(i)));
      const int64_t pad = s->padding(static_cast<int>(i));
      const int64_t dil = conv ? s->dilation(static_cast<int>(i)) : 1;
      const int64_t room = in_d + 2 * pad - dil * (k - 1) - 1;
      if (room < 0) return Error(who + ": its window is larger than its input " + ShapeText(shape));
      out.push_back(static_cast<uint32_t>(room / st + 1));
    }
    finish(s, out);
    if (const NirArray* b = Param(n, "bias"); conv && b && !b->values.empty()) {
      if (b->values.size() != 1 && b->values.size() != out_c) {
        return Error(who + ": its bias has " + std::to_string(b->values.size()) + " values for " +
                     std::to_string(out_c) + " channels");
      }
      const uint64_t per_channel = Count(out) / out_c;
      for (uint32_t c = 0; c < out_c; ++c) bias->insert(bias->end(), per_channel, At(*b, c));
    }
    return Status::Ok();
  }
};

}  // namespace

Status AppendOperator(const NirNode& n, double step_ms, const std::string& file,
                      std::vector<uint32_t>& shape, v1::Projection& p, std::vector<double>* bias) {
  OperatorBuild build{n, step_ms, file, shape, p, bias};
  if (n.type == "Affine" || n.type == "Linear") return build.Dense();
  if (n.type == "Scale") return build.Scale();
  if (n.type == "Flatten" || n.type == "Delay" || n.type == "Input" || n.type == "Output") {
    return build.Reshape();
  }
  return build.Window();
}

}  // namespace snn
