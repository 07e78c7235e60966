// A chain of calls built with -O2 -fomit-frame-pointer (call_chain.cpp):
// offline_chain_a -> offline_chain_b -> offline_chain_c -> offline_recurse
// (depth times) -> offline_spin_leaf, which spins until the capture holds
// `until` samples. Frame-pointer walks cannot cross these frames; CFI can.
#ifndef SPOOR_TESTS_UNWIND_CALL_CHAIN_H
#define SPOOR_TESTS_UNWIND_CALL_CHAIN_H

#include <cstddef>
#include <cstdint>

extern "C" uint64_t offline_chain_a(size_t until, int depth);
// The same chain, but the leaf spins on clock_gettime, so most samples land
// in the vDSO (which has no file: only its captured image has its CFI).
extern "C" uint64_t offline_chain_a_vdso(size_t until, int depth);

#endif  // SPOOR_TESTS_UNWIND_CALL_CHAIN_H
