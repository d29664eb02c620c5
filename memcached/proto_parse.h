/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/proto_parse.h - lexical helpers of the ASCII protocol:
 * memcached's tokenizer, its strict number parsers, fast decimal
 * formatting and base64 for meta keys.
 */
#ifndef MEMCACHED_PROTO_PARSE_H
#define MEMCACHED_PROTO_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAX_TOKENS     24 /* memcached's limit per tokenizer pass */
#define KEY_MAX_LENGTH 250

struct token {
    char *value;
    size_t length;
};

/*
 * Splits line (NUL-terminated) at spaces, in place, as memcached does:
 * runs of spaces separate, at most max - 1 tokens are cut, and a final
 * empty token is appended whose value is NULL when the whole line was
 * consumed, or points at the unparsed rest. Returns the token count,
 * terminal token included.
 */
size_t tokenize(char *line, struct token *tokens, size_t max);

/* Strict decimal parsers: the token must be the number (an optional '+',
 * no '-' for unsigned types but in "-0"), in range, followed by nothing or
 * by whitespace (as memcached's safe_strto* accept "1\t" or "1\ra"). */
bool parse_u32(const char *s, uint32_t *out);
bool parse_i32(const char *s, int32_t *out);
bool parse_u64(const char *s, uint64_t *out);
/* memcached's safe_strtod: strtod's reading, followed by nothing or by
 * whitespace. */
bool parse_double(const char *s, double *out);

/* memcached's uriencode() of a key (metadump and watch lines): every byte
 * but [A-Za-z0-9._~-] as %XX. Writes at most 3 * n bytes at p (no NUL);
 * returns the end. */
char *uri_encode(char *p, const char *key, size_t n);

/* Writes v in decimal at p (no NUL); returns the end. */
char *fmt_u64(char *p, uint64_t v);

/* Base64 (RFC 4648, with padding). decode returns the decoded length or
 * -1 on malformed input / overflow of out_size. */
int base64_decode(const char *in, size_t len, char *out, size_t out_size);
size_t base64_encode(const char *in, size_t len, char *out);
#define BASE64_ENCODED_LEN(n) ((((n) + 2) / 3) * 4)

#endif /* MEMCACHED_PROTO_PARSE_H */
