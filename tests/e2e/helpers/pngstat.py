#!/usr/bin/env python3
"""What a PNG shows, for the partition map's test (tests/e2e/observe.sh), with Python alone.

    pngstat.py FILE [#rrggbb...]

Prints "WIDTH HEIGHT COLOURS" (COLOURS: how many distinct colours its pixels have), then for
each colour asked "#rrggbb N", N the pixels of exactly that colour. Exits 1 if FILE is not a
PNG of 8-bit RGB or RGBA that decodes whole (a bad signature, a chunk's CRC, a filter).
"""
import struct
import sys
import zlib


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    at, idat, head = 8, b"", None
    while at < len(data):
        n, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + n]
        if zlib.crc32(kind + body) != struct.unpack(">I", data[at + 8 + n:at + 12 + n])[0]:
            raise ValueError("bad CRC in %s" % kind)
        if kind == b"IHDR":
            head = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
        at += 12 + n
    width, height, depth, ctype = head[:4]
    if depth != 8 or ctype not in (2, 6) or head[6]:
        raise ValueError("not 8-bit RGB(A) without interlace: depth %d type %d" % (depth, ctype))
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                line[x] = (line[x] + paeth(a, b, c)) & 255
            elif f != 0:
                raise ValueError("filter %d" % f)
        rows.append(line)
        prev = line
    return width, height, bpp, rows


def main(argv):
    try:
        width, height, bpp, rows = decode(argv[0])
    except (ValueError, OSError, zlib.error, struct.error, TypeError) as e:
        print("%s: %s" % (argv[0], e))
        return 1
    counts = {}
    for line in rows:
        for x in range(0, len(line), bpp):
            rgb = bytes(line[x:x + 3])
            counts[rgb] = counts.get(rgb, 0) + 1
    print(width, height, len(counts))
    for want in argv[1:]:
        print(want, counts.get(bytes.fromhex(want.lstrip("#")), 0))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
