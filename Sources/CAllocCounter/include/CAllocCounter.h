#ifndef C_ALLOC_COUNTER_H
#define C_ALLOC_COUNTER_H

#include <stdint.h>

/// Allocation calls (malloc, calloc, realloc, memalign family) made by the calling thread since it started.
/// Benchmarks read it before and after a loop to report allocations per packet.
uint64_t skirmish_thread_allocations(void);

#endif
