/*
 * cuda_standin.c: what the CUDA driver does with CUDA_INJECTION64_PATH at
 * cuInit (dlopen the library, call its InitializeInjection), for testing
 * `snr host record`'s CUPTI injection on a machine without a GPU: the real
 * libsnr_cupti.so is loaded and writes its file at exit (no activity
 * records: there is no driver to produce them). Prints the two variables it
 * saw; exits 3 if the library cannot be loaded.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	const char *lib = getenv("CUDA_INJECTION64_PATH"), *out = getenv("SNR_CUPTI_OUTPUT");
	printf("CUDA_INJECTION64_PATH=%s\nSNR_CUPTI_OUTPUT=%s\n", lib ? lib : "", out ? out : "");
	fflush(stdout);
	if (!lib)
		return 0;
	void *h = dlopen(lib, RTLD_NOW);
	int (*init)(void) = h ? (int (*)(void))dlsym(h, "InitializeInjection") : NULL;
	if (!init) {
		fprintf(stderr, "cuda_standin: %s: %s\n", lib, h ? "no InitializeInjection" : dlerror());
		return 3;
	}
	printf("InitializeInjection -> %d\n", init());
	return 0;
}
