// cupti_overlap.cu: a CUDA program whose kernels and copies overlap, for
// bench/cupti_gpu_check.sh. Each round: a host-to-device copy of 64 MiB
// from pinned memory on stream 1 while a kernel spins on stream 0, then a
// memset on stream 0 and a device-to-host copy on stream 1, and one
// cudaDeviceSynchronize (the host wait). It times each kernel and each copy
// with CUDA events (the GPU's own clock) and prints the sums, the reference
// for what CUPTI records.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CK(x)                                                                                     \
	do {                                                                                      \
		cudaError_t e_ = (x);                                                             \
		if (e_ != cudaSuccess) {                                                          \
			fprintf(stderr, "cupti_overlap: %s: %s\n", #x, cudaGetErrorString(e_));   \
			return 1;                                                                 \
		}                                                                                 \
	} while (0)

__global__ void spin(float *x, int n, int iters)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		float v = x[i];
		for (int k = 0; k < iters; k++)
			v = v * 1.0000001f + 0.5f;
		x[i] = v;
	}
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 10;
	int iters = argc > 2 ? atoi(argv[2]) : 2000;
	const int n = 1 << 24; /* 64 MiB of floats */
	float *h = nullptr, *d0 = nullptr, *d1 = nullptr;
	CK(cudaMallocHost(&h, n * sizeof(float)));
	CK(cudaMalloc(&d0, n * sizeof(float)));
	CK(cudaMalloc(&d1, n * sizeof(float)));
	cudaStream_t s0, s1;
	CK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
	cudaEvent_t ev[8];
	for (auto &e : ev)
		CK(cudaEventCreate(&e));
	float kernel_ms = 0, copy_ms = 0, f;
	for (int r = 0; r < rounds; r++) {
		CK(cudaEventRecord(ev[0], s1));
		CK(cudaMemcpyAsync(d1, h, n * sizeof(float), cudaMemcpyHostToDevice, s1));
		CK(cudaEventRecord(ev[1], s1));
		CK(cudaEventRecord(ev[2], s0));
		spin<<<(n + 255) / 256, 256, 0, s0>>>(d0, n, iters);
		CK(cudaGetLastError());
		CK(cudaEventRecord(ev[3], s0));
		CK(cudaMemsetAsync(d0, 0, n * sizeof(float), s0));
		CK(cudaEventRecord(ev[4], s1));
		CK(cudaMemcpyAsync(h, d1, n * sizeof(float), cudaMemcpyDeviceToHost, s1));
		CK(cudaEventRecord(ev[5], s1));
		CK(cudaDeviceSynchronize());
		CK(cudaEventElapsedTime(&f, ev[2], ev[3]));
		kernel_ms += f;
		CK(cudaEventElapsedTime(&f, ev[0], ev[1]));
		copy_ms += f;
		CK(cudaEventElapsedTime(&f, ev[4], ev[5]));
		copy_ms += f;
	}
	printf("cupti_overlap: %d rounds; cuda events: kernels %.3f ms, copies %.3f ms\n", rounds, kernel_ms, copy_ms);
	return 0;
}
