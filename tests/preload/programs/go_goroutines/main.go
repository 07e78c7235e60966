// Goroutines burning CPU on their small stacks, in a cgo binary (so that it
// is dynamically linked and spoor record can inject its library): the
// sampler's handler must run on the threads' signal stacks, as Go's own.
package main

// #include <stdlib.h>
import "C"

import (
	"fmt"
	"sync"
)

func leaf(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * i % 7
	}
	return s
}

func main() {
	C.free(C.malloc(16))
	var wg sync.WaitGroup
	results := make([]int, 64)
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for k := 0; k < 20; k++ {
				results[g] += leaf(200000)
			}
		}(g)
	}
	wg.Wait()
	total := 0
	for _, r := range results {
		total += r
	}
	fmt.Println("goroutines done", total > 0)
}
