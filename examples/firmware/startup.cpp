// Reset and the vector table: what runs before main. The table's first two
// words are the initial stack pointer and the reset handler; the core loads
// both itself on reset. Only the 16 system exceptions are listed: the
// example enables no external interrupt.
#include <stdint.h>

#include "semihosting.h"

extern "C" {
// From link.ld.
extern uint32_t _stack_top;
extern uint32_t _data_start, _data_end, _data_load, _bss_start, _bss_end;
extern void (*_init_array_start[])();
extern void (*_init_array_end[])();

int main();
void systick_handler();  // systick_clock.cpp
void reset_handler();
}

namespace {

// A fault means a bug: say which one and stop QEMU with a code the tests
// cannot mistake for success.
[[noreturn]] void fault(const char* what) {
  semihosting::print(what);
  semihosting::exit(100);
}

void nmi_handler() { fault("NMI\n"); }
void hard_fault_handler() { fault("hard fault\n"); }
void mem_manage_handler() { fault("memory management fault\n"); }
void bus_fault_handler() { fault("bus fault\n"); }
void usage_fault_handler() { fault("usage fault\n"); }
void unexpected_handler() { fault("unexpected exception\n"); }

}  // namespace

extern "C" void reset_handler() {
  // Word copies: both ends are 4-byte aligned by link.ld.
  for (uint32_t *src = &_data_load, *dst = &_data_start; dst < &_data_end;) *dst++ = *src++;
  for (uint32_t* p = &_bss_start; p < &_bss_end;) *p++ = 0;
  // Static constructors, if any (the example's globals are constinit).
  for (void (**f)() = _init_array_start; f < _init_array_end; ++f) (*f)();
  semihosting::exit(static_cast<uint32_t>(main()));
}

using Handler = void (*)();

// Exception numbers 0..15; 0 is the initial stack pointer.
extern "C" __attribute__((section(".vectors"), used)) const Handler g_vector_table[16] = {
    reinterpret_cast<Handler>(&_stack_top),
    reset_handler,
    nmi_handler,
    hard_fault_handler,
    mem_manage_handler,
    bus_fault_handler,
    usage_fault_handler,
    nullptr, nullptr, nullptr, nullptr,  // reserved
    unexpected_handler,                  // SVCall
    unexpected_handler,                  // debug monitor
    nullptr,                             // reserved
    unexpected_handler,                  // PendSV
    systick_handler,
};
