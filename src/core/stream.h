/* stream.h: copies that write past the cache (non-temporal stores).
 *
 * A store to a line that is not in cache first reads it (read for
 * ownership): writing n bytes of a large result costs 2n of memory
 * traffic.  A streaming store writes the line whole instead, and leaves it
 * out of the cache, which is what a result of many megabytes wants and a
 * small one, read again soon, does not: callers stream only large blocks
 * (exec.c).  x86-64 has the SSE2 stores; elsewhere this is memcpy. */
#ifndef TRD_CORE_STREAM_H
#define TRD_CORE_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* dst = src, bytes of them, dst's 16-byte-aligned middle streamed. */
static inline void trd_stream_copy(void *dst, const void *src, size_t bytes)
{
#if defined(__SSE2__)
    unsigned char *d = dst;
    const unsigned char *s = src;
    size_t head = (16 - ((uintptr_t)d & 15)) & 15;
    if (head > bytes)
        head = bytes;
    memcpy(d, s, head);
    d += head, s += head, bytes -= head;
    for (; bytes >= 64; d += 64, s += 64, bytes -= 64) /* a cache line per turn */
        for (int k = 0; k < 64; k += 16)
            _mm_stream_si128((__m128i *)(d + k), _mm_loadu_si128((const __m128i *)(s + k)));
    memcpy(d, s, bytes);
#else
    memcpy(dst, src, bytes);
#endif
}

/* Orders the streamed stores before what follows (another thread is told
 * next that the bytes are there). */
static inline void trd_stream_fence(void)
{
#if defined(__SSE2__)
    _mm_sfence();
#endif
}

#endif
