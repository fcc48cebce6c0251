/*
 * nvtx.h -- named ranges on the host timeline, for the trace tool and Nsight.
 *
 *   NVTX_PUSH("cpu work", NVTX_GREEN);
 *   ... host code ...
 *   NVTX_POP();
 *   NVTX_NAME_STREAM(stream, "copy stream");
 *
 * Push and pop in the same function, with a literal name. NVTX3 is
 * header-only: no library to link. Build with NVTX=0 (make NVTX=0) and the
 * macros compile to nothing.
 */
#ifndef LAB_NVTX_H
#define LAB_NVTX_H

#define NVTX_RED    0xffe53935u
#define NVTX_GREEN  0xff43a047u
#define NVTX_BLUE   0xff1e88e5u
#define NVTX_ORANGE 0xfffb8c00u
#define NVTX_PURPLE 0xff8e24aau
#define NVTX_GREY   0xff757575u

#if defined(LAB_NVTX) && LAB_NVTX == 0

#define NVTX_PUSH(name, color) do { } while (0)
#define NVTX_POP()             do { } while (0)
#define NVTX_NAME_STREAM(s, n) do { (void)(s); } while (0)

#else

#include <string.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCudaRt.h>

/* Open a coloured range on this host thread. Zeroed with memset: C++ warns on = {0}. */
static inline void lab_nvtx_push(const char *name, unsigned int color)
{
    nvtxEventAttributes_t a;

    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.colorType = NVTX_COLOR_ARGB;
    a.color = color;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name;
    nvtxRangePushEx(&a);
}

#define NVTX_PUSH(name, color) lab_nvtx_push((name), (color))
#define NVTX_POP()             nvtxRangePop()
#define NVTX_NAME_STREAM(s, n) nvtxNameCudaStreamA((s), (n))

#endif

#endif /* LAB_NVTX_H */
