/*
 * kinds.cu -- every kind of stream, for the trace tool's tests (format 2).
 *
 * Build:  nvcc -O2 -lineinfo -o kinds kinds.cu
 * Run:    ./kinds            (exit 0 ok, 1 CUDA error, 77 no usable CUDA device)
 *
 * What it does, in order (trace-gpu.bats asserts exactly this):
 *   1. two host threads, started together, each launch one spin kernel of
 *      one block on cudaStreamPerThread, inside an NVTX range "worker":
 *      two per-thread default streams, one per thread, whose kernels
 *      overlap;
 *   2. the main thread launches a long spin kernel on the legacy default
 *      stream, then a short one on a created blocking stream (it waits for
 *      the legacy kernel) and one on a created non-blocking stream (it does
 *      not), inside an NVTX range "kinds".
 */
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define SPIN_MS 10 /* each spin kernel; the legacy one runs twice as long */

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

/* Spin for `cycles` clock ticks, then mark the buffer. */
__global__ void spin_kernel(unsigned *d_out, long long cycles, unsigned mark)
{
	long long t0 = clock64();
	while (clock64() - t0 < cycles)
		;
	if (threadIdx.x == 0)
		d_out[blockIdx.x] = mark;
}

static long long cycles;
static unsigned *d_mark;
static pthread_barrier_t ready;

/* One host thread: a kernel on its own per-thread default stream. */
static void *worker(void *arg)
{
	unsigned k = (unsigned)(size_t)arg;
	pthread_barrier_wait(&ready); /* both launch at about the same time */
	nvtxRangePushA("worker");
	spin_kernel<<<1, 32, 0, cudaStreamPerThread>>>(d_mark + k, cycles, 10 + k);
	CUDA_CHECK(cudaGetLastError());
	CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
	nvtxRangePop();
	return NULL;
}

int main(void)
{
	int ndev = 0, khz = 0;
	cudaError_t err = cudaGetDeviceCount(&ndev);
	if (err != cudaSuccess || ndev == 0) {
		fprintf(stderr, "kinds: no usable CUDA device (%s)\n",
			err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
		return 77;
	}
	CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
	cycles = (long long)khz * SPIN_MS;
	CUDA_CHECK(cudaMalloc(&d_mark, 8 * sizeof(unsigned)));

	/* 1. two threads, each on its per-thread default stream */
	pthread_t t[2];
	pthread_barrier_init(&ready, NULL, 2);
	for (size_t k = 0; k < 2; k++)
		if (pthread_create(&t[k], NULL, worker, (void *)k)) {
			fprintf(stderr, "kinds: cannot start a thread\n");
			return 1;
		}
	for (int k = 0; k < 2; k++)
		pthread_join(t[k], NULL);

	/* 2. legacy, then blocking and non-blocking created streams */
	cudaStream_t blocking, nonblocking;
	CUDA_CHECK(cudaStreamCreate(&blocking));
	CUDA_CHECK(cudaStreamCreateWithFlags(&nonblocking, cudaStreamNonBlocking));
	nvtxRangePushA("kinds");
	spin_kernel<<<1, 32>>>(d_mark + 2, 2 * cycles, 2);
	CUDA_CHECK(cudaGetLastError());
	spin_kernel<<<1, 32, 0, blocking>>>(d_mark + 3, cycles, 3);
	CUDA_CHECK(cudaGetLastError());
	spin_kernel<<<1, 32, 0, nonblocking>>>(d_mark + 4, cycles, 4);
	CUDA_CHECK(cudaGetLastError());
	CUDA_CHECK(cudaDeviceSynchronize());
	nvtxRangePop();

	unsigned h[5];
	CUDA_CHECK(cudaMemcpy(h, d_mark, sizeof h, cudaMemcpyDeviceToHost));
	int ok = h[0] == 10 && h[1] == 11 && h[2] == 2 && h[3] == 3 && h[4] == 4;
	printf("kinds: %s\n", ok ? "ok" : "WRONG");
	CUDA_CHECK(cudaStreamDestroy(blocking));
	CUDA_CHECK(cudaStreamDestroy(nonblocking));
	CUDA_CHECK(cudaFree(d_mark));
	return ok ? 0 : 1;
}
