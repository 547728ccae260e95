/* Seeded pseudo-random numbers: splitmix64 for seeding, xoshiro256** for the
 * stream, Lemire's multiply-shift for unbiased bounded draws.
 *
 * Everything random in a run (size order, chains) derives from one recorded
 * seed, so a run can be replayed exactly. */
#ifndef FLEETSCOPE_RNG_H
#define FLEETSCOPE_RNG_H

#include <stdint.h>

struct rng {
	uint64_t state[4];
};

static inline uint64_t rng_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/* stream separates independent uses of one seed (order shuffle, the chain of
 * each working-set size, the canary) so that adding a draw to one use does
 * not change the others. */
static inline void rng_seed(struct rng *rng, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ rng_splitmix64(&stream);

	for (int i = 0; i < 4; i++)
		rng->state[i] = rng_splitmix64(&x);
}

static inline uint64_t rng_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t rng_next(struct rng *rng)
{
	uint64_t *s = rng->state;
	uint64_t result = rng_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rng_rotl(s[3], 45);
	return result;
}

/* Full 128-bit product of two 64-bit values, split into high and low words. */
static inline uint64_t rng_mul_128(uint64_t a, uint64_t b, uint64_t *low)
{
#ifdef __SIZEOF_INT128__
	unsigned __int128 product = (unsigned __int128)a * b;

	*low = (uint64_t)product;
	return (uint64_t)(product >> 64);
#else
	uint64_t a_lo = (uint32_t)a, a_hi = a >> 32;
	uint64_t b_lo = (uint32_t)b, b_hi = b >> 32;
	uint64_t lo_lo = a_lo * b_lo, hi_lo = a_hi * b_lo;
	uint64_t lo_hi = a_lo * b_hi, hi_hi = a_hi * b_hi;
	uint64_t cross = (lo_lo >> 32) + (uint32_t)hi_lo + lo_hi;

	*low = (cross << 32) | (uint32_t)lo_lo;
	return hi_hi + (hi_lo >> 32) + (cross >> 32);
#endif
}

/* Uniform integer in [0, range), range > 0, without modulo bias
 * (Lemire, "Fast Random Integer Generation in an Interval", 2019). */
static inline uint64_t rng_bounded(struct rng *rng, uint64_t range)
{
	uint64_t low;
	uint64_t high = rng_mul_128(rng_next(rng), range, &low);

	if (low < range) {
		uint64_t threshold = (0 - range) % range;

		while (low < threshold)
			high = rng_mul_128(rng_next(rng), range, &low);
	}
	return high;
}

#endif
