/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/stat_sink.h - how statistics producers report.
 *
 * Every subsystem that has statistics (slabs, assoc, items, ...) reports
 * them one name/value pair at a time through a sink; the protocol layer
 * supplies a sink that formats "STAT name value\r\n". Producers never see
 * the connection, so they can be tested with a sink that records.
 */
#ifndef MEMCACHED_STAT_SINK_H
#define MEMCACHED_STAT_SINK_H

/* Receives one statistic. name and value are valid only during the call. */
typedef void (*stat_sink_fn)(void *ctx, const char *name, const char *value);

/*
 * Formats value with printf-style fmt and hands (name, value) to sink.
 * Values longer than 127 bytes are truncated (no statistic is that long).
 */
void stat_sinkf(stat_sink_fn sink, void *ctx, const char *name, const char *fmt,
                ...) __attribute__((format(printf, 4, 5)));

#endif /* MEMCACHED_STAT_SINK_H */
