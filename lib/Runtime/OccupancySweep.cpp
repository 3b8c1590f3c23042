//===- OccupancySweep.cpp - Kernel time by blocks per SM ------------------===//
//
// Padding a kernel's dynamic shared memory until only K of its blocks fit an
// SM; the driver's occupancy calculator confirms K before the kernel is
// timed at it. The fusion planner interpolates these times.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/OccupancySweep.h"
#include "gpuopt/Runtime/Session.h"

using namespace gpuopt::runtime;

Expected<OccupancySweep> gpuopt::runtime::sweepOccupancy(
    Session &S, size_t Index,
    const std::function<void(const OccupancySweep &)> &OnPoint) {
  const KernelSpec &K = S.kernel(Index);
  const Function &Fn = *S.run(Index).Fn;
  const Context &C = S.context();
  const DeviceInfo &DI = C.info();
  int Threads = int(K.Config.Block.X * K.Config.Block.Y * K.Config.Block.Z);
  Expected<int> Natural =
      activeBlocksPerSM(C, Fn, Threads, K.Config.DynamicSmem);
  if (!Natural)
    return Natural.takeStatus();
  OccupancySweep Sweep;
  Sweep.BlocksPerSM = *Natural;
  if (DI.SharedPerMultiprocessor <= 0) {
    Sweep.SharedPerSMKnown = false;
    return Sweep;
  }
  int Last = *Natural;
  for (int Want : {16, 12, 8, 6, 4, 3, 2, 1}) {
    if (Want >= *Natural)
      continue;
    int64_t PerBlock = DI.SharedPerMultiprocessor / Want;
    // The allocation granularity: round down so that Want blocks fit.
    int64_t Pad =
        (PerBlock - DI.ReservedSharedPerBlock - Fn.StaticSmem) / 128 * 128;
    if (Pad < int64_t(K.Config.DynamicSmem) ||
        Pad + Fn.StaticSmem > DI.MaxSharedPerBlockOptin)
      continue;
    if (Status St = prepareDynamicSmem(C, Fn, uint64_t(Pad), K.SmemOptin))
      return St;
    Expected<int> Got = activeBlocksPerSM(C, Fn, Threads, uint64_t(Pad));
    if (!Got)
      return Got.takeStatus();
    if (*Got >= Last || *Got < 1)
      continue;
    Last = *Got;
    LaunchItem It = S.item(Index);
    It.Config.DynamicSmem = uint64_t(Pad);
    Expected<Stats> St = timeGroup(C, {It}, GroupMode::Serial, S.streams(),
                                   S.spec().Warmup, S.spec().Repeat);
    if (!St)
      return St.takeStatus();
    if (Status Sync = S.syncAfter("timing kernel '" + K.Label + "' at " +
                                  std::to_string(*Got) + " blocks per SM"))
      return Sync;
    Sweep.Points.push_back({*Got, uint64_t(Pad), std::move(*St)});
    if (OnPoint)
      OnPoint(Sweep);
  }
  return Sweep;
}
