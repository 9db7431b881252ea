/* util/: small leaf helpers: the one-line tprof: logger, FNV hash,
 * UTF-8 check; calls no other folder. */
/* UTF-8 encoding of one code point, for the CLI's JSON parser (\u
 * escapes) and NVTX's wide strings. */
#ifndef TP_UTF8_H
#define TP_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Writes cp (at most U+10FFFF) to b; returns the bytes written. */
static inline size_t tp_utf8_encode(uint32_t cp, unsigned char b[4])
{
	if (cp < 0x80) {
		b[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		b[0] = (unsigned char)(0xc0 | cp >> 6);
		b[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		b[0] = (unsigned char)(0xe0 | cp >> 12);
		b[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		b[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	b[0] = (unsigned char)(0xf0 | cp >> 18);
	b[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
	b[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
	b[3] = (unsigned char)(0x80 | (cp & 0x3f));
	return 4;
}

#endif
