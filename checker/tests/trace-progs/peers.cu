/*
 * peers.cu -- copies between two GPUs, for the trace tool's tests (format 2).
 *
 * Build:  nvcc -O2 -lineinfo -o peers peers.cu
 * Run:    ./peers            (exit 0 ok, 1 CUDA error or wrong result,
 *                             77 fewer than two CUDA devices)
 *
 * What it does, in order (trace-gpu.bats asserts exactly this), with a
 * created stream on each device:
 *   1. a kernel on device 1's legacy default stream and one on device 0's;
 *   2. "staged": peer access off, cudaMemcpyPeerAsync of BYTES from device
 *      0 to device 1 on device 0's stream, between two events on that
 *      stream (the driver copies it through host memory);
 *   3. "direct": peer access on (both ways), the same copy again between
 *      two events;
 *   4. prints both copies' event times: "staged_ms = ...", "direct_ms = ...".
 */
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>

#define BYTES (64u << 20)

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

__global__ void fill_kernel(unsigned *d, size_t n, unsigned v)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		d[i] = v;
}

/* Copy device 0's buffer to device 1's between two events on s; return ms. */
static float timed_copy(const char *range, unsigned *dst, unsigned *src, cudaStream_t s,
			cudaEvent_t ev[2])
{
	float ms = 0;
	nvtxRangePushA(range);
	CUDA_CHECK(cudaEventRecord(ev[0], s));
	CUDA_CHECK(cudaMemcpyPeerAsync(dst, 1, src, 0, BYTES, s));
	CUDA_CHECK(cudaEventRecord(ev[1], s));
	CUDA_CHECK(cudaEventSynchronize(ev[1]));
	nvtxRangePop();
	CUDA_CHECK(cudaEventElapsedTime(&ms, ev[0], ev[1]));
	return ms;
}

int main(void)
{
	int ndev = 0, can = 0;
	cudaError_t err = cudaGetDeviceCount(&ndev);
	if (err != cudaSuccess || ndev < 2) {
		fprintf(stderr, "peers: fewer than two CUDA devices (%s)\n",
			err != cudaSuccess ? cudaGetErrorString(err) : "one or none");
		return 77;
	}
	CUDA_CHECK(cudaDeviceCanAccessPeer(&can, 0, 1));
	unsigned *d[2];
	cudaStream_t s[2];
	cudaEvent_t ev[2];
	for (int i = 0; i < 2; i++) {
		CUDA_CHECK(cudaSetDevice(i));
		CUDA_CHECK(cudaMalloc(&d[i], BYTES));
		CUDA_CHECK(cudaStreamCreate(&s[i]));
	}
	/* 1. a kernel on each device's legacy stream: device 0's fills the source */
	CUDA_CHECK(cudaSetDevice(1));
	fill_kernel<<<64, 256>>>(d[1], BYTES / 4, 0);
	CUDA_CHECK(cudaGetLastError());
	CUDA_CHECK(cudaSetDevice(0));
	fill_kernel<<<64, 256>>>(d[0], BYTES / 4, 7);
	CUDA_CHECK(cudaGetLastError());
	CUDA_CHECK(cudaEventCreate(&ev[0]));
	CUDA_CHECK(cudaEventCreate(&ev[1]));
	CUDA_CHECK(cudaSetDevice(1));
	CUDA_CHECK(cudaDeviceSynchronize());
	CUDA_CHECK(cudaSetDevice(0));
	CUDA_CHECK(cudaDeviceSynchronize());

	/* 2. and 3. the same copy, through the host, then directly */
	float staged = timed_copy("staged", d[1], d[0], s[0], ev);
	float direct = -1;
	if (can) {
		CUDA_CHECK(cudaSetDevice(1));
		CUDA_CHECK(cudaDeviceEnablePeerAccess(0, 0));
		CUDA_CHECK(cudaSetDevice(0));
		CUDA_CHECK(cudaDeviceEnablePeerAccess(1, 0));
		direct = timed_copy("direct", d[1], d[0], s[0], ev);
	}
	unsigned h = 0;
	CUDA_CHECK(cudaSetDevice(1));
	CUDA_CHECK(cudaMemcpy(&h, d[1] + BYTES / 8, sizeof h, cudaMemcpyDeviceToHost));
	printf("staged_ms = %.4f\ndirect_ms = %.4f\npeers: %s\n", staged, direct,
	       h == 7 ? "ok" : "WRONG");
	for (int i = 0; i < 2; i++) {
		CUDA_CHECK(cudaSetDevice(i));
		CUDA_CHECK(cudaStreamDestroy(s[i]));
		CUDA_CHECK(cudaFree(d[i]));
	}
	CUDA_CHECK(cudaEventDestroy(ev[0]));
	CUDA_CHECK(cudaEventDestroy(ev[1]));
	return h == 7 ? 0 : 1;
}
