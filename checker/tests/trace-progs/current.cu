/*
 * current.cu -- kernels and a copy queued into a stream of a device that is
 * not the current one, for the trace tool's tests (format 3: the device
 * current at each runtime call).
 *
 * Build:  nvcc -O2 -lineinfo -o current current.cu
 * Run:    ./current          (exit 0 ok, 1 CUDA error or wrong result,
 *                             77 fewer than two CUDA devices)
 *
 * What it does, in order (trace-gpu.bats asserts exactly this), with a
 * created stream on each device, s0 on device 0 and s1 on device 1:
 *   1. device 0 current: right_kernel into s0;
 *   2. still device 0 current: elsewhere_kernel into s1, a stream of device
 *      1. The CUDA Programming Guide says "A kernel launch will fail if it
 *      is issued to a stream that is not associated to the current device";
 *      the program says what this GPU did: "elsewhere_launch = ok", or the
 *      error's name. Then an H2D copy into s1 (the Guide: "A memory copy
 *      will succeed even if it is issued to a stream that is not associated
 *      to the current device");
 *   3. device 1 current: right_kernel into s1;
 *   4. prints "elsewhere_ran = 1" when the elsewhere kernel's numbers are in
 *      device 1's memory (it ran, on its stream's device), else 0.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define N 256

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

__global__ void right_kernel(unsigned *d, unsigned v)
{
	d[threadIdx.x] = v;
}

__global__ void elsewhere_kernel(unsigned *d, unsigned v)
{
	d[threadIdx.x] = v;
}

int main(void)
{
	int ndev = 0;
	cudaError_t err = cudaGetDeviceCount(&ndev);
	if (err != cudaSuccess || ndev < 2) {
		fprintf(stderr, "current: fewer than two CUDA devices (%s)\n",
			err != cudaSuccess ? cudaGetErrorString(err) : "one or none");
		return 77;
	}
	unsigned *d[2], h[3 * N];
	cudaStream_t s[2];
	for (int i = 0; i < 2; i++) {
		CUDA_CHECK(cudaSetDevice(i));
		CUDA_CHECK(cudaMalloc(&d[i], 3 * N * sizeof(unsigned)));
		CUDA_CHECK(cudaMemset(d[i], 0, 3 * N * sizeof(unsigned)));
		CUDA_CHECK(cudaStreamCreate(&s[i]));
		CUDA_CHECK(cudaDeviceSynchronize());
	}
	for (int i = 0; i < N; i++)
		h[i] = 5;

	/* 1. and 2.: device 0 current */
	CUDA_CHECK(cudaSetDevice(0));
	right_kernel<<<1, N, 0, s[0]>>>(d[0], 1);
	CUDA_CHECK(cudaGetLastError());
	elsewhere_kernel<<<1, N, 0, s[1]>>>(d[1], 7);
	err = cudaGetLastError();
	printf("elsewhere_launch = %s\n", err == cudaSuccess ? "ok" : cudaGetErrorName(err));
	CUDA_CHECK(cudaMemcpyAsync(d[1] + N, h, N * sizeof(unsigned), cudaMemcpyHostToDevice,
				   s[1]));

	/* 3.: device 1 current */
	CUDA_CHECK(cudaSetDevice(1));
	right_kernel<<<1, N, 0, s[1]>>>(d[1] + 2 * N, 9);
	CUDA_CHECK(cudaGetLastError());
	CUDA_CHECK(cudaStreamSynchronize(s[1]));
	CUDA_CHECK(cudaMemcpy(h, d[1], sizeof h, cudaMemcpyDeviceToHost));
	CUDA_CHECK(cudaSetDevice(0));
	CUDA_CHECK(cudaStreamSynchronize(s[0]));

	/* 4. */
	int ran = 1, rest = 1;
	for (int i = 0; i < N; i++) {
		ran &= h[i] == 7;
		rest &= h[N + i] == 5 && h[2 * N + i] == 9;
	}
	printf("elsewhere_ran = %d\ncurrent: %s\n", ran, rest ? "ok" : "WRONG");
	for (int i = 0; i < 2; i++) {
		CUDA_CHECK(cudaSetDevice(i));
		CUDA_CHECK(cudaStreamDestroy(s[i]));
		CUDA_CHECK(cudaFree(d[i]));
	}
	return rest ? 0 : 1;
}
