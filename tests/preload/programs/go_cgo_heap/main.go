// Allocates through cgo: Go functions that call C's malloc. The shim sees
// each malloc on the thread's system stack, below Go's asmcgocall; its
// stack goes on into the goroutine's (allocateBlocks, main.main). Then
// spends ~0.2 s of CPU in C code called from spinInC, which CPU samples
// see the same way.
package main

/*
#include <stdlib.h>
#include <string.h>

static long burn(long n) {
	long s = 0;
	for (long i = 0; i < n; i++) s += i * i % 7;
	return s;
}

static void* grab_block(size_t n) {
	void* p = malloc(n);
	memset(p, 1, n);
	return p;
}
*/
import "C"

import "fmt"

//go:noinline
func allocateBlocks(count int) int {
	sum := 0
	for i := 0; i < count; i++ {
		p := C.grab_block(C.size_t(4096 + i))
		sum += int(*(*byte)(p))
		C.free(p)
	}
	return sum
}

//go:noinline
func spinInC() bool { return C.burn(100000000) > 0 }

func main() {
	done := make(chan int)
	go func() { done <- allocateBlocks(300) }()
	fmt.Println("cgo blocks", allocateBlocks(200)+<-done, spinInC())
}
