//go:build cgo && linux

package cmem

/*
#include <stdlib.h>
#include <features.h>
#ifdef __GLIBC__
#include <malloc.h>
static int cmem_trim(void) { return malloc_trim(0); }
static int cmem_glibc(void) { return 1; }
#else
static int cmem_trim(void) { return 0; }
static int cmem_glibc(void) { return 0; }
#endif

// Allocates and frees n blocks of size bytes, leaving free memory in the allocator.
static void cmem_churn(int n, int size) {
	void **p = malloc(sizeof(void *) * n);
	if (p == NULL) return;
	for (int i = 0; i < n; i++) p[i] = malloc(size);
	for (int i = 0; i < n; i++) free(p[i]);
	free(p);
}
*/
import "C"

// Release returns free C heap memory to the operating system; it reports whether any was
// released. It takes a few milliseconds on a large heap: call it when idle.
func Release() bool {
	return C.cmem_trim() == 1
}

// trims reports whether Release can do anything here (the C library is glibc).
func trims() bool { return C.cmem_glibc() == 1 }

// churn leaves free memory in the C allocator (n blocks of size bytes, allocated and
// freed), for the tests.
func churn(n, size int) { C.cmem_churn(C.int(n), C.int(size)) }
