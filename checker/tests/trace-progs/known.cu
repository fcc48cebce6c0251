/*
 * known.cu -- a CUDA program of known structure, for the trace tool's tests.
 *
 * Build:  nvcc -O2 -lineinfo -o known known.cu
 * Run:    ./known            (exit 0 ok, 1 CUDA error or wrong result,
 *                             77 no usable CUDA device)
 *
 * What it does, in order (trace-gpu.bats asserts exactly this):
 *   1. one H2D copy from pageable (malloc) memory, on the legacy default
 *      stream, with cudaMemcpy;
 *   2. two created streams A and B. A runs a long kernel while B makes
 *      COPIES pinned (cudaMallocHost) H2D copies; then B runs a long kernel
 *      while A makes COPIES pinned H2D copies. So each stream's copies
 *      overlap the kernel in the other stream;
 *   3. one pinned D2H copy per created stream, then the host waits inside an
 *      NVTX range named "host_work" and synchronizes each stream;
 *   4. checks the values copied back.
 */
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COPIES 4                 /* pinned H2D copies per created stream */
#define CHUNK (4u << 20)         /* bytes per pinned copy */
#define FIRST (8u << 20)         /* bytes of the pageable copy */
#define SPIN_MS 20               /* how long each long kernel runs */

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

/* ---------------------------------------------------------------- kernels */

/* Spin for `cycles` clock ticks, then mark the buffer: a kernel long
 * enough for copies in another stream to run under it. */
__global__ void spin_kernel(unsigned *d_out, long long cycles, unsigned mark)
{
	long long t0 = clock64();
	while (clock64() - t0 < cycles)
		;
	if (threadIdx.x == 0 && blockIdx.x == 0)
		d_out[0] = mark;
}

/* ------------------------------------------------------------------- main */

int main(void)
{
	int ndev = 0;
	cudaError_t err = cudaGetDeviceCount(&ndev);
	if (err != cudaSuccess || ndev == 0) {
		fprintf(stderr, "known: no usable CUDA device (%s)\n",
			err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
		return 77;
	}
	int khz = 0;
	CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
	long long cycles = (long long)khz * SPIN_MS;

	/* 1. pageable H2D on the legacy default stream */
	unsigned char *h_page = (unsigned char *)malloc(FIRST);
	unsigned char *d_first, *d_chunks;
	unsigned *d_mark;
	if (!h_page) {
		fprintf(stderr, "known: out of host memory\n");
		return 1;
	}
	memset(h_page, 1, FIRST);
	CUDA_CHECK(cudaMalloc(&d_first, FIRST));
	CUDA_CHECK(cudaMalloc(&d_chunks, 2 * COPIES * (size_t)CHUNK));
	CUDA_CHECK(cudaMalloc(&d_mark, 2 * sizeof(unsigned)));
	CUDA_CHECK(cudaMemcpy(d_first, h_page, FIRST, cudaMemcpyHostToDevice));

	/* 2. two created streams, copies under the other stream's kernel */
	cudaStream_t s[2];
	unsigned char *h_pin;
	unsigned *h_mark;
	CUDA_CHECK(cudaStreamCreate(&s[0]));
	CUDA_CHECK(cudaStreamCreate(&s[1]));
	/* pinned, so cudaMemcpyAsync really is asynchronous */
	CUDA_CHECK(cudaMallocHost(&h_pin, 2 * COPIES * (size_t)CHUNK));
	CUDA_CHECK(cudaMallocHost(&h_mark, 2 * sizeof(unsigned)));
	memset(h_pin, 2, 2 * COPIES * (size_t)CHUNK);
	for (int k = 0; k < 2; k++) {
		cudaStream_t ks = s[k], cs = s[1 - k];
		spin_kernel<<<1, 32, 0, ks>>>(d_mark + k, cycles, 100u + k);
		CUDA_CHECK(cudaGetLastError());
		for (int i = 0; i < COPIES; i++) {
			size_t off = ((size_t)k * COPIES + i) * CHUNK;
			CUDA_CHECK(cudaMemcpyAsync(d_chunks + off, h_pin + off, CHUNK,
						   cudaMemcpyHostToDevice, cs));
		}
		/* the next kernel must not start under these copies' kernel:
		 * wait for this one before launching in the other stream */
		CUDA_CHECK(cudaStreamSynchronize(ks));
	}

	/* 3. one D2H per stream, host waits inside an NVTX range */
	CUDA_CHECK(cudaMemcpyAsync(&h_mark[0], d_mark + 0, sizeof(unsigned),
				   cudaMemcpyDeviceToHost, s[0]));
	CUDA_CHECK(cudaMemcpyAsync(&h_mark[1], d_mark + 1, sizeof(unsigned),
				   cudaMemcpyDeviceToHost, s[1]));
	nvtxRangePushA("host_work");
	CUDA_CHECK(cudaStreamSynchronize(s[0]));
	CUDA_CHECK(cudaStreamSynchronize(s[1]));
	nvtxRangePop();

	/* 4. verify */
	int ok = h_mark[0] == 100u && h_mark[1] == 101u;
	printf("known: %s (marks %u %u)\n", ok ? "ok" : "WRONG", h_mark[0], h_mark[1]);

	CUDA_CHECK(cudaStreamDestroy(s[0]));
	CUDA_CHECK(cudaStreamDestroy(s[1]));
	CUDA_CHECK(cudaFreeHost(h_pin));
	CUDA_CHECK(cudaFreeHost(h_mark));
	CUDA_CHECK(cudaFree(d_first));
	CUDA_CHECK(cudaFree(d_chunks));
	CUDA_CHECK(cudaFree(d_mark));
	free(h_page);
	return ok ? 0 : 1;
}
