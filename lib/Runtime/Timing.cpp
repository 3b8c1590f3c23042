//===- Timing.cpp - Timing launches with CUDA events ----------------------===//
//
// See Timing.h for the method.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/Timing.h"

#include <algorithm>
#include <numeric>

using namespace gpuopt::runtime;

Stats Stats::of(std::vector<double> Samples) {
  Stats S;
  S.Samples = Samples;
  if (Samples.empty())
    return S;
  std::sort(Samples.begin(), Samples.end());
  size_t N = Samples.size();
  S.Median = N % 2 ? Samples[N / 2] : (Samples[N / 2 - 1] + Samples[N / 2]) / 2;
  S.Min = Samples.front();
  S.Max = Samples.back();
  S.Mean = std::accumulate(Samples.begin(), Samples.end(), 0.0) / double(N);
  return S;
}

Expected<std::vector<Stats>>
gpuopt::runtime::timeInterleaved(const Context &C,
                                 const std::vector<TimedEntry> &Entries,
                                 const std::vector<const Stream *> &Streams,
                                 unsigned Warmup, unsigned Repeat) {
  if (Entries.empty())
    return Status::error("timeInterleaved: nothing to time");
  if (Repeat == 0)
    return Status::error("timeInterleaved: at least one timed repetition "
                         "needed");
  size_t NeededStreams = 1;
  for (const TimedEntry &E : Entries) {
    if (E.Items.empty())
      return Status::error("timeInterleaved: an entry without launches");
    if (E.Mode == GroupMode::Concurrent)
      NeededStreams = std::max(NeededStreams, E.Items.size());
  }
  if (Streams.size() < NeededStreams)
    return Status::error("timeInterleaved: " + std::to_string(NeededStreams) +
                         " streams needed, " + std::to_string(Streams.size()) +
                         " given");
  const CudaDriver &D = C.driver();
  CUstream Main = Streams[0]->get();

  // Graphs are built and instantiated once, before the first round.
  std::vector<std::unique_ptr<KernelGraph>> Graphs(Entries.size());
  for (size_t EI = 0; EI < Entries.size(); ++EI) {
    if (Entries[EI].Mode != GroupMode::Graph)
      continue;
    Expected<std::unique_ptr<KernelGraph>> G =
        KernelGraph::create(C, Entries[EI].Items);
    if (!G)
      return G.status();
    Graphs[EI] = std::move(*G);
  }

  auto NewEvent = [&](std::vector<std::unique_ptr<Event>> &List) -> Status {
    Expected<std::unique_ptr<Event>> E = Event::create(C);
    if (!E)
      return E.status();
    List.push_back(std::move(*E));
    return Status::success();
  };
  // Start/stop events per entry and timed round, read after the last round;
  // one "done" event per side stream, re-recorded whenever it is used (a
  // stream waits on the latest record at the time of the wait).
  std::vector<std::unique_ptr<Event>> Starts, Stops, Dones, Release;
  for (size_t I = 0; I < Entries.size() * Repeat; ++I) {
    if (Status S = NewEvent(Starts))
      return S;
    if (Status S = NewEvent(Stops))
      return S;
  }
  if (Status S = NewEvent(Release))
    return S;
  for (size_t I = 1; I < NeededStreams; ++I)
    if (Status S = NewEvent(Dones))
      return S;

  for (unsigned Round = 0; Round < Warmup + Repeat; ++Round) {
    bool Timed = Round >= Warmup;
    for (size_t EI = 0; EI < Entries.size(); ++EI) {
      const TimedEntry &E = Entries[EI];
      size_t Slot = (Round - (Timed ? Warmup : 0)) * Entries.size() + EI;
      CUevent Start = Timed ? Starts[Slot]->get() : Release[0]->get();
      // State reset before every launch goes before the start event.
      for (const LaunchItem &It : E.Items)
        for (const auto &[Ptr, Bytes] : It.Resets)
          GPUOPT_CU_CHECK(D, cuMemsetD8Async, Ptr, 0, Bytes, Main);
      GPUOPT_CU_CHECK(D, cuEventRecord, Start, Main);
      if (Graphs[EI]) {
        if (Status St = Graphs[EI]->launch(Main))
          return St;
        if (Timed)
          GPUOPT_CU_CHECK(D, cuEventRecord, Stops[Slot]->get(), Main);
        continue;
      }
      bool Concurrent = E.Mode == GroupMode::Concurrent;
      for (size_t I = 0; I < E.Items.size(); ++I) {
        const LaunchItem &It = E.Items[I];
        CUstream S = Main;
        if (Concurrent && I > 0) {
          S = Streams[I]->get();
          GPUOPT_CU_CHECK(D, cuStreamWaitEvent, S, Start, 0);
        }
        if (Status St = launch(C, *It.Fn, It.Config, *It.Args, S))
          return St;
        if (Concurrent && I > 0)
          GPUOPT_CU_CHECK(D, cuEventRecord, Dones[I - 1]->get(), S);
      }
      if (Concurrent)
        for (size_t I = 1; I < E.Items.size(); ++I)
          GPUOPT_CU_CHECK(D, cuStreamWaitEvent, Main, Dones[I - 1]->get(), 0);
      if (Timed)
        GPUOPT_CU_CHECK(D, cuEventRecord, Stops[Slot]->get(), Main);
    }
  }

  std::vector<std::vector<double>> Samples(Entries.size());
  for (unsigned Round = 0; Round < Repeat; ++Round) {
    for (size_t EI = 0; EI < Entries.size(); ++EI) {
      size_t Slot = Round * Entries.size() + EI;
      GPUOPT_CU_CHECK(D, cuEventSynchronize, Stops[Slot]->get());
      float Ms = 0;
      GPUOPT_CU_CHECK(D, cuEventElapsedTime_v2, &Ms, Starts[Slot]->get(),
                      Stops[Slot]->get());
      Samples[EI].push_back(Ms);
    }
  }
  std::vector<Stats> Result;
  for (std::vector<double> &S : Samples)
    Result.push_back(Stats::of(std::move(S)));
  return Result;
}

Expected<Stats>
gpuopt::runtime::timeGroup(const Context &C,
                           const std::vector<LaunchItem> &Items, GroupMode Mode,
                           const std::vector<const Stream *> &Streams,
                           unsigned Warmup, unsigned Repeat) {
  Expected<std::vector<Stats>> R =
      timeInterleaved(C, {TimedEntry{Items, Mode}}, Streams, Warmup, Repeat);
  if (!R)
    return R.status();
  return std::move((*R)[0]);
}
