/* nvtx_off.cu -- uses every NVTX macro; built with and without NVTX=0. */
#include "lab.h"

int main(void)
{
    cudaStream_t s = 0;

    NVTX_PUSH("range", NVTX_GREEN);
    NVTX_NAME_STREAM(s, "stream");
    NVTX_POP();
    return s == 0 ? 0 : 1;
}
