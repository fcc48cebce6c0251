/*
 * extras.cu -- the record kinds known.cu does not make, for the trace tool.
 *
 * Build:  nvcc -O2 -lineinfo -o extras extras.cu
 * Run:    ./extras        (exit 0 ok, 1 CUDA error, 77 no usable CUDA device)
 *
 * In order: a memset and a D2D copy on the default stream; an event recorded
 * in stream A that stream B waits for (cudaStreamWaitEvent), then
 * cudaEventSynchronize, cudaStreamSynchronize and cudaDeviceSynchronize;
 * nested NVTX ranges "outer" > "inner"; then cudaDeviceReset (the tracer
 * must flush before it) and one more H2D copy in the new context.
 */
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>

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

#define BYTES (1u << 20)

__global__ void scale_kernel(float *d_x, int n, float a)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		d_x[i] *= a;
}

int main(void)
{
	int ndev = 0;
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
		fprintf(stderr, "extras: no usable CUDA device\n");
		return 77;
	}
	int n = BYTES / sizeof(float);
	float *d_a, *d_b, *h_x;
	CUDA_CHECK(cudaMalloc(&d_a, BYTES));
	CUDA_CHECK(cudaMalloc(&d_b, BYTES));
	CUDA_CHECK(cudaMemset(d_a, 0, BYTES));
	CUDA_CHECK(cudaMemcpy(d_b, d_a, BYTES, cudaMemcpyDeviceToDevice));

	cudaStream_t a, b;
	cudaEvent_t done_a;
	CUDA_CHECK(cudaStreamCreate(&a));
	CUDA_CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
	CUDA_CHECK(cudaEventCreate(&done_a));
	nvtxRangePushA("outer");
	scale_kernel<<<(n + 255) / 256, 256, 0, a>>>(d_a, n, 2.0f);
	CUDA_CHECK(cudaGetLastError());
	CUDA_CHECK(cudaEventRecord(done_a, a));
	/* b must not read d_a before a's kernel wrote it */
	CUDA_CHECK(cudaStreamWaitEvent(b, done_a, 0));
	scale_kernel<<<(n + 255) / 256, 256, 0, b>>>(d_a, n, 3.0f);
	CUDA_CHECK(cudaGetLastError());
	nvtxRangePushA("inner");
	CUDA_CHECK(cudaEventSynchronize(done_a));
	CUDA_CHECK(cudaStreamSynchronize(b));
	nvtxRangePop();
	CUDA_CHECK(cudaDeviceSynchronize());
	nvtxRangePop();

	CUDA_CHECK(cudaEventDestroy(done_a));
	CUDA_CHECK(cudaStreamDestroy(a));
	CUDA_CHECK(cudaStreamDestroy(b));
	CUDA_CHECK(cudaDeviceReset());

	/* a new context after the reset */
	h_x = (float *)malloc(BYTES);
	if (!h_x)
		return 1;
	for (int i = 0; i < n; i++)
		h_x[i] = 1.0f;
	CUDA_CHECK(cudaMalloc(&d_a, BYTES));
	CUDA_CHECK(cudaMemcpy(d_a, h_x, BYTES, cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaFree(d_a));
	free(h_x);
	printf("extras: ok\n");
	return 0;
}
