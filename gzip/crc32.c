/* gzip/: compression: the trace's gzip stream (ISA-L when installed,
 * else zlib) with sync points; on util/ only. */
/* CRC-32 (gzip's polynomial, bits reflected) by folding: 64 bytes at a
 * time are carried 64 bytes ahead with carry-less multiplies by
 * x^(512 +- 32) mod P, which leaves the CRC unchanged, until 16 bytes and
 * a tail under 16 are left; zlib's crc32() does those. zlib's own loop
 * costs about 3.9 instructions a byte here, this one about 0.3: with
 * zlib compressing, the CRC was 12 % of the writer's instructions.
 *
 * The state s of a CRC (zlib's crc, inverted) XORed into the first four
 * bytes of what follows gives the same CRC as carrying s; the fold keeps
 * that: CRC(R || rest) stays the CRC of everything so far, R being the
 * 16 bytes in the register. */
#include <zlib.h>

#include "crc32.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define FOLD_MIN 64

/* (x^(4*128+32) mod P, x^(4*128-32) mod P), then the same for 128 bits,
 * each bit-reflected and shifted left by one (a carry-less product of
 * reflected operands comes out one bit low). */
#define K_512_LO 0x154442bd4ull
#define K_512_HI 0x1c6e41596ull
#define K_128_LO 0x1751997d0ull
#define K_128_HI 0x0ccaa009eull

__attribute__((target("pclmul,sse4.1")))
static inline __m128i fold(__m128i x, __m128i k, __m128i next)
{
	return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
					   _mm_clmulepi64_si128(x, k, 0x11)),
			     next);
}

__attribute__((target("pclmul,sse4.1")))
static uint32_t crc_fold(uint32_t crc, const unsigned char *p, size_t n)
{
	const __m128i k4 = _mm_set_epi64x((long long)K_512_HI,
					  (long long)K_512_LO);
	const __m128i k1 = _mm_set_epi64x((long long)K_128_HI,
					  (long long)K_128_LO);
	__m128i x0, x1, x2, x3;
	unsigned char r[16];

	x0 = _mm_loadu_si128((const __m128i *)(const void *)p);
	x1 = _mm_loadu_si128((const __m128i *)(const void *)(p + 16));
	x2 = _mm_loadu_si128((const __m128i *)(const void *)(p + 32));
	x3 = _mm_loadu_si128((const __m128i *)(const void *)(p + 48));
	x0 = _mm_xor_si128(x0, _mm_cvtsi32_si128((int)~crc));
	p += 64;
	n -= 64;
	for (; n >= 64; p += 64, n -= 64) {
		x0 = fold(x0, k4, _mm_loadu_si128((const __m128i *)
						  (const void *)p));
		x1 = fold(x1, k4, _mm_loadu_si128((const __m128i *)
						  (const void *)(p + 16)));
		x2 = fold(x2, k4, _mm_loadu_si128((const __m128i *)
						  (const void *)(p + 32)));
		x3 = fold(x3, k4, _mm_loadu_si128((const __m128i *)
						  (const void *)(p + 48)));
	}
	x0 = fold(x0, k1, x1);
	x0 = fold(x0, k1, x2);
	x0 = fold(x0, k1, x3);
	for (; n >= 16; p += 16, n -= 16)
		x0 = fold(x0, k1, _mm_loadu_si128((const __m128i *)
						  (const void *)p));
	_mm_storeu_si128((__m128i *)(void *)r, x0);
	/* CRC(R || tail) from a zero state, which is zlib's crc ~0 (zlib
	 * inverts its state on the way in and out). */
	crc = (uint32_t)crc32(0xffffffffu, r, sizeof(r));
	return (uint32_t)crc32(crc, p, (uInt)n);
}

static int have_clmul(void)
{
	/* Asked once; threads that ask at once store the same answer. */
	static int have = -1;
	int h = __atomic_load_n(&have, __ATOMIC_RELAXED);

	if (h < 0) {
		/* Also from a constructor that runs before libgcc's. */
		__builtin_cpu_init();
		h = __builtin_cpu_supports("pclmul") &&
		    __builtin_cpu_supports("sse4.1");
		__atomic_store_n(&have, h, __ATOMIC_RELAXED);
	}
	return h;
}
#endif

uint32_t tp_crc32(uint32_t crc, const void *p, size_t n)
{
#if defined(__x86_64__) && defined(__GNUC__)
	if (n >= FOLD_MIN && have_clmul())
		return crc_fold(crc, p, n);
#endif
	return (uint32_t)crc32(crc, p, (uInt)n);
}
