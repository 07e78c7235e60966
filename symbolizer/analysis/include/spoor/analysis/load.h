// Loading a trace into a TraceModel in one pass over its events, in time
// order, with any number of visitors riding along: each sees every event
// right after the model took in what it says about processes, threads,
// modules and stacks, so the event's process, image and thread are current.
// Events themselves are not kept: a visitor that needs more than the model
// keeps its own compact per-event data.
#ifndef SPOOR_ANALYSIS_LOAD_H
#define SPOOR_ANALYSIS_LOAD_H

#include <span>
#include <string>
#include <vector>

#include "spoor/analysis/known_events.h"
#include "spoor/analysis/model.h"
#include "spoor/reader/event.h"
#include "spoor/reader/result.h"
#include "spoor/reader/trace.h"

namespace spoor::analysis {

// Where an event belongs, as the model knows it when the event is handed
// to the visitors.
struct EventContext {
  const TraceModel* model = nullptr;  // partial: only what came before this event
  const KnownEvent* known = nullptr;  // never null
  ProcessIndex process = kNone;       // never kNone for an event
  ImageIndex image = kNone;           // the process's current image (the one before it for a
                                      // kernel sample taken in an exec's tail: Loader::sampled_image)
  ThreadIndex thread = kNone;
  // A Spoor.Kernel CpuSample's stack, unwound by the loader (model.stacks
  // has it); 0 for every other event and for a sample without a pc.
  StackKey unwound = 0;

  // A stack ID of this event as a model-wide key.
  StackKey stack(uint32_t id) const { return stack_key(image, id); }
};

class EventVisitor {
 public:
  virtual ~EventVisitor() = default;
  // Every event in time order. Cost matters: called 10 million times for a
  // 10-million-event trace.
  virtual void on_event(const reader::Event& event, const EventContext& context) = 0;
  // Whether on_event reads events of `kind`: asked once per kind before the
  // first event, so that each event reaches only the visitors that read
  // it (a heap trace's 20 M events need not pass through the I/O, CPU and
  // kernel analyses, one indirect call and one return each).
  virtual bool wants(EventKind kind) const {
    (void)kind;
    return true;
  }
  // After the last event: `model` is complete (threads still alive at their
  // process's end are ended there).
  virtual void on_end(const TraceModel& model) { (void)model; }
};

// Where the loader finds the files it unwinds kernel samples with (the
// symbolizer's options say the same for symbols).
struct LoadOptions {
  std::vector<std::string> debug_dirs;
  std::string sysroot;
  // When not empty, the visitors see only the events of these processes
  // (all their images and threads); the model still has every process,
  // image and module. What a process got from an unselected parent (a
  // fork child's descriptors and live blocks) is then not known.
  std::vector<uint32_t> only_pids;
};

// Reads every event of `trace` once. Spoor.Kernel events count for the
// process and thread their pid/tid fields name; their Mmap records become
// modules (for traces without ModuleLoad); their CpuSamples are unwound
// here (cost: one DWARF walk per sample, bench/RESULTS.md). Damage does not fail the load: the
// model's health lists it, and the events before it are in. The model's
// stacks point into `trace`, which must outlive it.
TraceModel load_trace(const reader::Trace& trace, std::span<EventVisitor* const> visitors = {},
                      const LoadOptions& options = {});

}  // namespace spoor::analysis

#endif  // SPOOR_ANALYSIS_LOAD_H
