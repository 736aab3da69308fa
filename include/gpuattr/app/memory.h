// The daemon's resident memory (docs/design.md#targets: peak RSS ≤ 200 MB at 1,000 nodes). A cycle
// allocates its readings and stages from up to scrape.concurrency fetch threads and frees them
// when the next cycle's output replaces them; with glibc's default of one malloc arena per thread
// (up to 8 per core) each arena keeps its freed pages resident. Where the daemon's memory goes at
// 1,000 nodes: README, Performance.
#pragma once

namespace gpuattr::app {

// At start: at most 2 malloc arenas (unless MALLOC_ARENA_MAX is set in the environment, which
// glibc reads itself). No-op where the allocator is not glibc's.
void TuneAllocator();

// After a cycle, before its rendering, and after the publication: hands the free pages of every
// arena back to the kernel (malloc_trim).
void ReleaseFreeMemory();

}  // namespace gpuattr::app
