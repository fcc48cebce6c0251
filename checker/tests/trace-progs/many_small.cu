/*
 * many_small.cu -- many small operations, to measure the trace tool's overhead.
 *
 * Build:  nvcc -O2 -lineinfo -o many_small many_small.cu
 * Run:    ./many_small [PAIRS]    (default 2000)
 *
 * Issues PAIRS x (4 KiB pinned cudaMemcpyAsync H2D + a tiny kernel) in one
 * created stream, synchronizes, and prints the loop's wall time in ms. The
 * worst case for a tracer: every operation is short, so per-record cost shows.
 * Exit 0 ok, 1 CUDA error, 77 no usable CUDA device.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CUDA_CHECK(call)                                                      \
	do {                                                                  \
		cudaError_t err_ = (call);                                    \
		if (err_ != cudaSuccess) {                                    \
			fprintf(stderr, "%s:%d: CUDA error %s: %s\n  in %s\n",    \
				__FILE__, __LINE__, cudaGetErrorName(err_),   \
				cudaGetErrorString(err_), #call);             \
			exit(1);                                              \
		}                                                             \
	} while (0)

#define N 1024 /* floats per operation: 4 KiB */

__global__ void add_kernel(float *d_x, float v)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < N)
		d_x[i] += v;
}

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	int pairs = argc > 1 ? atoi(argv[1]) : 2000;
	int ndev = 0;
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
		fprintf(stderr, "many_small: no usable CUDA device\n");
		return 77;
	}
	if (pairs <= 0) {
		fprintf(stderr, "usage: many_small [PAIRS]\n");
		return 2;
	}
	float *h_x, *d_x;
	cudaStream_t s;
	CUDA_CHECK(cudaMallocHost(&h_x, N * sizeof(float)));
	CUDA_CHECK(cudaMalloc(&d_x, N * sizeof(float)));
	CUDA_CHECK(cudaStreamCreate(&s));
	for (int i = 0; i < N; i++)
		h_x[i] = 1.0f;
	CUDA_CHECK(cudaDeviceSynchronize()); /* context ready before timing */

	double t0 = now_ms();
	for (int p = 0; p < pairs; p++) {
		CUDA_CHECK(cudaMemcpyAsync(d_x, h_x, N * sizeof(float),
					   cudaMemcpyHostToDevice, s));
		add_kernel<<<(N + 255) / 256, 256, 0, s>>>(d_x, 1.0f);
		CUDA_CHECK(cudaGetLastError());
	}
	CUDA_CHECK(cudaStreamSynchronize(s));
	double t1 = now_ms();
	printf("many_small: %d pairs in %.3f ms\n", pairs, t1 - t0);

	CUDA_CHECK(cudaStreamDestroy(s));
	CUDA_CHECK(cudaFree(d_x));
	CUDA_CHECK(cudaFreeHost(h_x));
	return 0;
}
