/* gzip/: compression: the trace's gzip stream (ISA-L when installed,
 * else zlib) with sync points; on util/ only. */
/* The gzip trailer's CRC-32 without ISA-L: the same value as zlib's
 * crc32(), about ten times fewer instructions per byte where the CPU
 * multiplies without carries (PCLMULQDQ, every x86-64 since 2010). */
#ifndef TP_CRC32_H
#define TP_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* zlib's crc32(crc, p, n): crc of the bytes before p, then p's n. */
uint32_t tp_crc32(uint32_t crc, const void *p, size_t n);

#endif
