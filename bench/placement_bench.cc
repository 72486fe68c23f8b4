// Time per placement (MER enumeration + choosing a rectangle) on 64x64 and 256x256 meshes with
// half their cores busy at random. Prints the median over batches for each size, the 64x64
// figure last: `median placement us: N`.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "common/base/clock.h"
#include "common/base/rect_allocator.h"

namespace {

snn::CoreGrid HalfBusy(std::mt19937& rng, uint32_t side) {
  snn::CoreGrid g(side, side);
  for (uint32_t y = 0; y < side; ++y)
    for (uint32_t x = 0; x < side; ++x)
      if (rng() % 2) g.Occupy(snn::Rect{x, y, 1, 1});
  return g;
}

double MedianPlacementUs(uint32_t side, int batches, int per_batch) {
  std::mt19937 rng(side);
  std::vector<double> batch_us;
  int placed = 0;
  for (int b = 0; b < batches; ++b) {
    std::vector<snn::CoreGrid> grids;
    for (int i = 0; i < per_batch; ++i) grids.push_back(HalfBusy(rng, side));
    std::vector<snn::CoreRequest> requests;
    for (int i = 0; i < per_batch; ++i) {
      requests.push_back(i % 2 ? snn::CoreRequest{1 + static_cast<uint32_t>(rng() % 8), 0, 0}
                               : snn::CoreRequest{0, 1 + static_cast<uint32_t>(rng() % 3),
                                                  1 + static_cast<uint32_t>(rng() % 3)});
    }
    const auto start = snn::MonotonicNow();
    for (int i = 0; i < per_batch; ++i)
      placed += snn::PlaceCores(grids[i], requests[i]).has_value();
    const auto end = snn::MonotonicNow();
    batch_us.push_back(std::chrono::duration<double, std::micro>(end - start).count() / per_batch);
  }
  std::sort(batch_us.begin(), batch_us.end());
  std::printf(
      "%ux%u at 50%% busy: median %.2f us per placement over %d batches of %d (%d placed)\n", side,
      side, batch_us[batch_us.size() / 2], batches, per_batch, placed);
  return batch_us[batch_us.size() / 2];
}

}  // namespace

int main() {
  MedianPlacementUs(256, 9, 20);
  const double us64 = MedianPlacementUs(64, 21, 200);
  std::printf("median placement us: %.2f\n", us64);
  return 0;
}
