/* cachesim: a set-associative cache and TLB simulation driven by a dependent random chase, the test
 * truth for fleetscope's size estimator (tests/cachesim/__init__.py drives it through ctypes).
 *
 * What is simulated, access by access:
 *   - the chase: one random cycle (Sattolo) over every 64-byte line of a buffer of `bytes`
 *     (pattern 0), or over one line per page of `bytes / page` pages, page i's line at offset
 *     (i mod 64) x 64 as the tlb kernel lays it out (pattern 1); `warmup` untimed walks, then
 *     `passes` timed walks;
 *   - physical placement: the buffer's virtual pages of `frame_bytes` (4 KiB, or 2 MiB for huge
 *     pages) land on random distinct physical frames, so a cache whose way span exceeds a frame sees
 *     its sets filled at random, one whose way span fits a frame sees them filled evenly;
 *   - caches: each level `ways`-way with LRU, tree-PLRU (a binary tree over the next power of two of
 *     ways; missing leaves never chosen), random replacement or bimodal insertion (BIP, below), indexed
 *     by physical line number.
 *     A level is filled on every miss that reaches it (non-inclusive), or, marked `victim`, only with
 *     the lines the level above evicts (exclusive, as AMD's L3), a hit there moving the line up;
 *     marked `inclusive`, its evictions also remove the line from every level above;
 *   - TLBs: levels of a set-associative translation cache of virtual pages of `page_bytes`, each with
 *     its replacement and the time an access pays when it misses that level (an L1 DTLB miss that hits
 *     the L2 TLB pays the first level's cost; a miss in both pays both).
 * Each access costs the latency of the level that holds the line (memory's past the last), plus the
 * TLB's; the result is the mean over the timed walks, in ns. No noise: the caller adds it.
 *
 * Set sampling (random-lines, large buffers): where every level has a multiple of 64 sets, a line's set in
 * each level determines its set in the smaller ones (line mod 64), so keeping only the lines whose
 * line mod 64 falls in [0, keep) keeps whole sets of every level, and each kept set sees exactly the lines
 * and the order (a random cycle) it sees in the full chase. The TLB then sees every page with keep of its
 * 64 lines, in a random order as before. `max_accesses` picks the largest power-of-two share of sets that
 * keeps a walk within it (0: every line). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* BIP: LRU victims, but a new line goes in at the LRU position except once in 32 (bimodal insertion): what
 * an adaptive LLC (DIP, DRRIP) settles on under a cyclic working set larger than itself, keeping most of it */
enum { LRU = 0, PLRU = 1, RANDOM = 2, BIP = 3 };
#define BIP_MRU_ONE_IN 32

struct level_spec {
	uint64_t bytes;
	uint32_t ways;
	uint32_t policy;
	double latency_ns;
	uint32_t victim;    /* filled by the evictions of the level above, not on misses */
	uint32_t inclusive; /* an eviction here removes the line from the levels above */
};

struct tlb_spec {
	uint32_t entries;
	uint32_t ways;
	uint32_t policy;
	double miss_ns; /* added when an access misses this TLB level */
};

struct cache {
	uint32_t sets, ways, policy, leaves;
	uint64_t *tags;    /* line + 1; 0 = empty */
	uint64_t *stamps;  /* LRU: time of last use */
	uint64_t *tree;    /* PLRU: one bit per inner node (nodes 1 .. leaves - 1), `words` per set */
	uint32_t words;
};

static uint64_t rng_state;

static uint64_t next_random(void)
{
	/* splitmix64: fast, seeded, good enough for placement and replacement */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t uniform(uint64_t bound)
{
	return next_random() % bound;
}

static void cache_free(struct cache *cache)
{
	free(cache->tags);
	free(cache->stamps);
	free(cache->tree);
	memset(cache, 0, sizeof(*cache));
}

static int cache_init(struct cache *cache, uint64_t lines, uint32_t ways, uint32_t policy)
{
	memset(cache, 0, sizeof(*cache));
	if (ways == 0 || lines < ways)
		return -1;
	cache->ways = ways;
	cache->sets = (uint32_t)(lines / ways);
	cache->policy = policy;
	cache->leaves = 1;
	while (cache->leaves < ways)
		cache->leaves <<= 1;
	cache->words = (cache->leaves + 63) / 64;
	cache->tags = calloc((size_t)cache->sets * ways, sizeof(uint64_t));
	cache->stamps = calloc((size_t)cache->sets * ways, sizeof(uint64_t));
	cache->tree = calloc((size_t)cache->sets * cache->words, sizeof(uint64_t));
	if (cache->tags && cache->stamps && cache->tree)
		return 0;
	cache_free(cache);
	return -1;
}

/* PLRU: mark `way` as most recently used (each node on its path points away from it). */
static void plru_touch(struct cache *cache, uint32_t set, uint32_t way)
{
	uint64_t *bits = cache->tree + (size_t)set * cache->words;
	uint32_t node = 1, span = cache->leaves;
	while (span > 1) {
		span >>= 1;
		int right = (way & span) != 0;
		/* bit set: the victim is on the right */
		if (right)
			bits[node / 64] &= ~(1ULL << (node % 64));
		else
			bits[node / 64] |= 1ULL << (node % 64);
		node = node * 2 + right;
	}
}

/* PLRU: follow the bits to a victim, never into a subtree without real ways. */
static uint32_t plru_victim(const struct cache *cache, uint32_t set)
{
	const uint64_t *bits = cache->tree + (size_t)set * cache->words;
	uint32_t node = 1, way = 0, span = cache->leaves;
	while (span > 1) {
		span >>= 1;
		int right = (bits[node / 64] >> (node % 64)) & 1;
		if (right && way + span >= cache->ways)
			right = 0;
		if (right)
			way += span;
		node = node * 2 + right;
	}
	return way;
}

static int cache_lookup(struct cache *cache, uint64_t line, uint64_t now, int touch)
{
	uint32_t set = (uint32_t)(line % cache->sets);
	uint64_t *tags = cache->tags + (size_t)set * cache->ways;
	for (uint32_t way = 0; way < cache->ways; way++) {
		if (tags[way] == line + 1) {
			if (touch) {
				cache->stamps[(size_t)set * cache->ways + way] = now;
				if (cache->policy == PLRU)
					plru_touch(cache, set, way);
			}
			return 1;
		}
	}
	return 0;
}

static void cache_remove(struct cache *cache, uint64_t line)
{
	uint32_t set = (uint32_t)(line % cache->sets);
	uint64_t *tags = cache->tags + (size_t)set * cache->ways;
	for (uint32_t way = 0; way < cache->ways; way++)
		if (tags[way] == line + 1)
			tags[way] = 0;
}

/* Put `line` in; returns the evicted line + 1 (0 when a way was free). */
static uint64_t cache_insert(struct cache *cache, uint64_t line, uint64_t now)
{
	uint32_t set = (uint32_t)(line % cache->sets);
	size_t base = (size_t)set * cache->ways;
	uint64_t *tags = cache->tags + base;
	uint32_t way = cache->ways;
	for (uint32_t candidate = 0; candidate < cache->ways; candidate++)
		if (tags[candidate] == 0) {
			way = candidate;
			break;
		}
	if (way == cache->ways) {
		if (cache->policy == LRU || cache->policy == BIP) {
			way = 0;
			for (uint32_t candidate = 1; candidate < cache->ways; candidate++)
				if (cache->stamps[base + candidate] < cache->stamps[base + way])
					way = candidate;
		} else if (cache->policy == PLRU) {
			way = plru_victim(cache, set);
		} else {
			way = (uint32_t)uniform(cache->ways);
		}
	}
	uint64_t evicted = tags[way];
	tags[way] = line + 1;
	cache->stamps[base + way] = cache->policy == BIP && uniform(BIP_MRU_ONE_IN) != 0 ? 0 : now;
	if (cache->policy == PLRU)
		plru_touch(cache, set, way);
	return evicted;
}

/* Random distinct physical frame numbers for `count` virtual frames (rejection on a hash set). */
static uint64_t *random_frames(uint64_t count)
{
	uint64_t slots = 1;
	while (slots < 4 * count)
		slots <<= 1;
	uint64_t *seen = calloc(slots, sizeof(uint64_t));
	uint64_t *frames = malloc(count * sizeof(uint64_t));
	if (!seen || !frames) {
		free(seen);
		free(frames);
		return NULL;
	}
	for (uint64_t i = 0; i < count; i++) {
		for (;;) {
			uint64_t frame = uniform(1ULL << 30) + 1;
			uint64_t slot = (frame * 0x9e3779b97f4a7c15ULL) & (slots - 1);
			while (seen[slot] && seen[slot] != frame)
				slot = (slot + 1) & (slots - 1);
			if (seen[slot])
				continue;
			seen[slot] = frame;
			frames[i] = frame;
			break;
		}
	}
	free(seen);
	return frames;
}

/* Mean ns per access of the chase over `bytes`; < 0 on a bad argument or no memory. */
double cachesim_point(const struct level_spec *levels, uint32_t level_count, double memory_ns,
		      const struct tlb_spec *tlbs, uint32_t tlb_count, uint64_t page_bytes,
		      uint64_t frame_bytes, uint32_t pattern, uint64_t bytes, uint32_t warmup, uint32_t passes,
		      uint64_t seed, uint64_t max_accesses)
{
	const uint64_t line_bytes = 64;
	struct cache caches[8], tlb_caches[4];
	uint64_t accesses, *frames = NULL;
	uint32_t *chain = NULL;
	double total = 0.0, result = -1.0;
	uint32_t made = 0, tlbs_made = 0;

	if (level_count > 8 || tlb_count > 4 || page_bytes < line_bytes || frame_bytes < line_bytes ||
	    bytes < 2 * line_bytes || passes == 0)
		return -1.0;
	rng_state = seed * 0x2545f4914f6cdd1dULL + 1;
	accesses = pattern == 1 ? bytes / page_bytes : bytes / line_bytes;
	uint64_t keep = 64;
	if (pattern == 0 && max_accesses && accesses % 64 == 0) {
		int sampled = 1;
		for (uint32_t k = 0; k < level_count; k++)
			if ((levels[k].bytes / line_bytes / levels[k].ways) % 64 != 0)
				sampled = 0;
		while (sampled && keep > 1 && accesses / 64 * keep > max_accesses)
			keep /= 2;
		accesses = accesses / 64 * keep;
	}
	if (accesses < 2 || accesses >= UINT32_MAX)
		return -1.0;
	for (; made < level_count; made++)
		if (cache_init(&caches[made], levels[made].bytes / line_bytes, levels[made].ways,
			       levels[made].policy) != 0)
			goto out;
	for (; tlbs_made < tlb_count; tlbs_made++)
		if (cache_init(&tlb_caches[tlbs_made], tlbs[tlbs_made].entries, tlbs[tlbs_made].ways,
			       tlbs[tlbs_made].policy) != 0)
			goto out;
	/* chain[i]: the virtual line index of the i-th access of the cycle */
	chain = malloc(accesses * sizeof(uint32_t));
	uint64_t span = pattern == 1 ? accesses * page_bytes : bytes;
	frames = random_frames((span + frame_bytes - 1) / frame_bytes);
	if (!chain || !frames)
		goto out;
	for (uint64_t i = 0; i < accesses; i++)
		chain[i] = (uint32_t)i;
	for (uint64_t i = accesses - 1; i > 0; i--) { /* Sattolo: one cycle */
		uint64_t j = uniform(i);
		uint32_t swap = chain[i];
		chain[i] = chain[j];
		chain[j] = swap;
	}
	/* chain now maps position -> element; walking i -> chain[i] from 0 visits every element once */
	uint64_t lines_per_frame = frame_bytes / line_bytes, now = 1;
	for (uint32_t pass = 0; pass < warmup + passes; pass++) {
		uint64_t element = 0;
		for (uint64_t step = 0; step < accesses; step++, now++) {
			element = chain[element];
			uint64_t virtual_line = pattern == 1
				? element * (page_bytes / line_bytes) + (element % 64) % (page_bytes / line_bytes)
				: element / keep * 64 + element % keep;
			uint64_t virtual_bytes = virtual_line * line_bytes;
			uint64_t physical_line = frames[virtual_bytes / frame_bytes] * lines_per_frame +
						 virtual_line % lines_per_frame;
			double cost = memory_ns;
			uint32_t hit = level_count;
			for (uint32_t k = 0; k < level_count; k++)
				if (cache_lookup(&caches[k], physical_line, now, 1)) {
					hit = k;
					cost = levels[k].latency_ns;
					break;
				}
			/* fill the levels above the hit; a victim level gets what its upper level evicts */
			for (uint32_t k = hit; k-- > 0;) {
				if (levels[k].victim)
					continue;
				uint64_t evicted = cache_insert(&caches[k], physical_line, now);
				if (evicted && k + 1 < level_count && levels[k + 1].victim)
					cache_insert(&caches[k + 1], evicted - 1, now);
				if (evicted && levels[k].inclusive)
					for (uint32_t above = 0; above < k; above++)
						cache_remove(&caches[above], evicted - 1);
			}
			if (hit < level_count && levels[hit].victim)
				cache_remove(&caches[hit], physical_line);
			uint64_t page = virtual_bytes / page_bytes;
			for (uint32_t t = 0; t < tlb_count; t++) {
				if (cache_lookup(&tlb_caches[t], page, now, 1))
					break;
				cost += tlbs[t].miss_ns;
				cache_insert(&tlb_caches[t], page, now);
			}
			if (pass >= warmup)
				total += cost;
		}
	}
	result = total / ((double)accesses * passes);
out:
	for (uint32_t k = 0; k < made; k++)
		cache_free(&caches[k]);
	for (uint32_t t = 0; t < tlbs_made; t++)
		cache_free(&tlb_caches[t]);
	free(chain);
	free(frames);
	return result;
}
