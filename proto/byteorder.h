/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto/byteorder.h - types for big-endian fields and the only conversions
 * between them and host order.
 *
 * The NIC reads WQE segments, doorbell records and GET requests big-endian
 * (proto/mlx5.h, proto/rdn_wire.h). A field declared be16/be32/be64 holds
 * the big-endian image of a number; the host reads it with be32_to_cpu() and
 * writes it with cpu_to_be32(). Under sparse (./scripts/check-sparse, run by
 * ./scripts/test) the types are __bitwise: assigning a host-order integer to
 * one, reading one as an integer or doing arithmetic on it is a warning, so a
 * missing byte swap fails the build's checks instead of the NIC. For the
 * compiler they are plain integers of the same size and layout.
 *
 * Constant 0 needs no conversion: it is 0 in either order. A be64 has
 * uint64_t's C type (not linux/types.h's __be64, an unsigned long long), so
 * a word the table code reads as uint64_t and as be64 stays one type.
 */
#ifndef PROTO_BYTEORDER_H
#define PROTO_BYTEORDER_H

#include <endian.h>
#include <stdint.h>

/* Spelled as linux/types.h spells __bitwise, so either may come first. */
#ifndef __bitwise
#ifdef __CHECKER__
#define __bitwise __attribute__((bitwise))
#else
#define __bitwise
#endif
#endif
#ifndef __force
#ifdef __CHECKER__
#define __force __attribute__((force))
#else
#define __force
#endif
#endif

typedef uint16_t __bitwise be16;
typedef uint32_t __bitwise be32;
typedef uint64_t __bitwise be64;

static inline be16 cpu_to_be16(uint16_t x)
{
    return (__force be16)htobe16(x);
}

static inline be32 cpu_to_be32(uint32_t x)
{
    return (__force be32)htobe32(x);
}

static inline be64 cpu_to_be64(uint64_t x)
{
    return (__force be64)htobe64(x);
}

static inline uint16_t be16_to_cpu(be16 x)
{
    return be16toh((__force uint16_t)x);
}

static inline uint32_t be32_to_cpu(be32 x)
{
    return be32toh((__force uint32_t)x);
}

static inline uint64_t be64_to_cpu(be64 x)
{
    return be64toh((__force uint64_t)x);
}

#endif /* PROTO_BYTEORDER_H */
