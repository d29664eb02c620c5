/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/proto_parse.c - tokenizer, number parsing and formatting,
 * base64 (see proto_parse.h).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "memcached/proto_parse.h"

size_t tokenize(char *line, struct token *tokens, size_t max)
{
    size_t n = 0;
    char *s = line, *e = line;

    for (; *e != '\0'; e++) {
        if (*e != ' ')
            continue;
        if (s != e) {
            tokens[n].value = s;
            tokens[n].length = (size_t)(e - s);
            n++;
            *e = '\0';
            if (n == max - 1) {
                s = ++e;
                break;
            }
        }
        s = e + 1;
    }
    if (s != e) {
        tokens[n].value = s;
        tokens[n].length = (size_t)(e - s);
        n++;
    }
    tokens[n].value = *e == '\0' ? NULL : e;
    tokens[n].length = 0;
    return n + 1;
}

/* memcached's safe_strto*() end rule: the number may be followed by
 * whitespace (a token can hold a tab or a lone CR), not by anything else. */
static bool number_ends(const char *end)
{
    return *end == '\0' || isspace((unsigned char)*end);
}

/* A '-' is refused unless the number is zero ("-0"): memcached accepts
 * that, and also some negative numbers strtoull() wraps to large ones,
 * which would store a value the client did not mean. */
bool parse_u64(const char *s, uint64_t *out)
{
    char *end;

    if (*s == '\0' || *s == ' ')
        return false;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == ERANGE || end == s || !number_ends(end))
        return false;
    if (v != 0 && memchr(s, '-', (size_t)(end - s)) != NULL)
        return false;
    *out = v;
    return true;
}

bool parse_u32(const char *s, uint32_t *out)
{
    uint64_t v;

    if (!parse_u64(s, &v) || v > UINT32_MAX)
        return false;
    *out = (uint32_t)v;
    return true;
}

bool parse_i32(const char *s, int32_t *out)
{
    char *end;

    if (*s == '\0' || *s == ' ')
        return false;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno == ERANGE || end == s || !number_ends(end) || v < INT32_MIN ||
        v > INT32_MAX)
        return false;
    *out = (int32_t)v;
    return true;
}

bool parse_double(const char *s, double *out)
{
    char *end;

    errno = 0;
    double v = strtod(s, &end);
    if (errno == ERANGE || end == s || !number_ends(end))
        return false;
    *out = v;
    return true;
}

char *uri_encode(char *p, const char *key, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";

    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)key[i];
        if (isalnum(ch) || ch == '-' || ch == '.' || ch == '_' || ch == '~') {
            *p++ = (char)ch;
        } else {
            *p++ = '%';
            *p++ = hex[ch >> 4];
            *p++ = hex[ch & 15];
        }
    }
    return p;
}

char *fmt_u64(char *p, uint64_t v)
{
    char tmp[20];
    int n = 0;

    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

static const char b64_chars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int b64_value(char ch)
{
    const char *p = memchr(b64_chars, ch, 64);

    return ch != '\0' && p ? (int)(p - b64_chars) : -1;
}

int base64_decode(const char *in, size_t len, char *out, size_t out_size)
{
    size_t o = 0;

    if (len == 0 || len % 4 != 0)
        return -1;
    for (size_t i = 0; i < len; i += 4) {
        int v[4];
        int pad = 0;
        for (int k = 0; k < 4; k++) {
            if (in[i + k] == '=' && i + 4 == len && k >= 2) {
                v[k] = 0;
                pad++;
                continue;
            }
            if (pad)
                return -1; /* data after padding */
            v[k] = b64_value(in[i + k]);
            if (v[k] < 0)
                return -1;
        }
        uint32_t w = (uint32_t)(v[0] << 18 | v[1] << 12 | v[2] << 6 | v[3]);
        int n = 3 - pad;
        if (o + (size_t)n > out_size)
            return -1;
        out[o++] = (char)(w >> 16);
        if (n > 1)
            out[o++] = (char)(w >> 8);
        if (n > 2)
            out[o++] = (char)w;
    }
    return (int)o;
}

size_t base64_encode(const char *in, size_t len, char *out)
{
    const unsigned char *s = (const unsigned char *)in;
    size_t o = 0;

    for (size_t i = 0; i < len; i += 3) {
        uint32_t w = (uint32_t)s[i] << 16;
        if (i + 1 < len)
            w |= (uint32_t)s[i + 1] << 8;
        if (i + 2 < len)
            w |= s[i + 2];
        out[o++] = b64_chars[(w >> 18) & 63];
        out[o++] = b64_chars[(w >> 12) & 63];
        out[o++] = i + 1 < len ? b64_chars[(w >> 6) & 63] : '=';
        out[o++] = i + 2 < len ? b64_chars[w & 63] : '=';
    }
    return o;
}
