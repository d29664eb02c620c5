/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/crawler.h - the background expiry crawler.
 *
 * A thread that walks each slab class's LRU from tail to head and unlinks
 * expired and flushed items, so their memory comes back even if nobody asks
 * for them again. It runs on its own every few seconds (less often while it
 * finds nothing) and on request ("lru_crawler crawl").
 */
#ifndef MEMCACHED_CRAWLER_H
#define MEMCACHED_CRAWLER_H

#include <stdbool.h>
#include <stdint.h>

#define CRAWLER_ALL_CLASSES UINT64_MAX

/* Starts the thread ("lru_crawler enable"); 0, -EALREADY if it runs, or
 * a negative errno. settings.lru_crawler says whether it runs. */
int crawler_start(void);

/* Stops and joins it (no-op if not started; "lru_crawler disable"). */
void crawler_stop(void);

/*
 * Asks for a crawl of the classes whose bit is set in class_mask (bit i =
 * class id i). Returns false if the crawler is not running or busy with an
 * earlier request.
 */
bool crawler_request(uint64_t class_mask);

/*
 * Like crawler_request(), but never refused while the thread runs: a crawl
 * in progress is followed at once by one of these classes (flush_all needs
 * the flushed items gone even if a crawl had already passed them).
 */
void crawler_queue(uint64_t class_mask);

/* Crawls of the whole cache or of requested classes so far, and whether
 * one is running now. */
uint64_t crawler_starts(void);
bool crawler_running(void);

/*
 * Walks class clsid once on the calling thread (the thread's body, and
 * tests). Returns the number of items reclaimed.
 */
uint64_t crawler_crawl_class(unsigned clsid);

/*
 * lru_crawler metadump, in parts: a dump of the live items of the classes
 * whose bit is set in class_mask, class by class in id order, each from
 * its LRU tail (oldest) to its head. The dump keeps its place with its own
 * cursor in the LRU, so other threads work on between the parts (an item
 * bumped to the head meanwhile may be seen twice, as in memcached).
 * crawler_dump_begin() returns NULL when out of memory.
 * crawler_dump_next() steps over up to max more items (dead ones are
 * skipped, as memcached's metadump does) and calls fn(ctx, it) for the live
 * ones, with
 * their class's LRU lock held (fn must not take item or LRU locks; it may
 * read the item); returns true once the dump is complete.
 * crawler_dump_end() frees the dump, complete or not (NULL: no-op). One
 * thread uses a dump at a time; dumps and crawls may run side by side.
 */
struct item;
struct crawler_dump;
typedef void (*crawler_dump_fn)(void *ctx, struct item *it);
struct crawler_dump *crawler_dump_begin(uint64_t class_mask);
bool crawler_dump_next(struct crawler_dump *d, unsigned max, crawler_dump_fn fn,
                       void *ctx);
void crawler_dump_end(struct crawler_dump *d);

#endif /* MEMCACHED_CRAWLER_H */
