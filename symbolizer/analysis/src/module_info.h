// A model's module as the symbolizer and the unwinder take it.
#ifndef SPOOR_ANALYSIS_MODULE_INFO_H
#define SPOOR_ANALYSIS_MODULE_INFO_H

#include "spoor/analysis/model.h"
#include "spoor/symbolizer/symbolizer.h"

namespace spoor::analysis {

inline symbolizer::ModuleInfo module_info(const Module& mod) {
  symbolizer::ModuleInfo info;
  info.path = mod.path;
  info.build_id = mod.build_id;
  info.bias = mod.bias;
  info.start = mod.start;
  info.size = mod.size;
  info.image = mod.image;
  return info;
}

}  // namespace spoor::analysis

#endif  // SPOOR_ANALYSIS_MODULE_INFO_H
