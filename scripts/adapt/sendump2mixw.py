#!/usr/bin/env python3
"""Convert a PocketSphinx `sendump` (8-bit quantised mixture weights) to a SphinxTrain `mixture_weights` file.

usage: sendump2mixw.py SENDUMP OUT_MIXTURE_WEIGHTS

Debian's en-us model ships only `sendump`; `bw` and `map_adapt` need `mixture_weights`. A Python 3 port of
SphinxTrain's sendump.py (Python 2): each byte v is a weight of 1.0001^-(v << 10) (PocketSphinx's 8-bit
log scale); weights are renormalised per senone and stream. Written in the Sphinx-III binary format (s3 header,
byte-order magic, d1 d2 d3 count, float32 data).
"""
import struct
import sys

import numpy as np


def read_sendump(path):
    with open(path, "rb") as f:
        def readstr():
            n = struct.unpack("<I", f.read(4))[0]
            return f.read(n).rstrip(b"\0").decode("latin-1") if n else None

        shift, n_feat, cluster_count = 10, None, 0
        while True:
            s = readstr()
            if s is None:
                break
            key, _, value = s.partition(" ")
            if key == "mixw_shift":
                shift = int(value)
            elif key == "feature_count":
                n_feat = int(value)
            elif key == "cluster_count":
                cluster_count = int(value)
        if cluster_count != 0:
            raise SystemExit(f"{path}: clustered sendump (cluster_count {cluster_count}) is not supported")
        if n_feat is None:
            raise SystemExit(f"{path}: no feature_count in the header")
        n_density, n_senone = struct.unpack("<II", f.read(8))
        raw = np.fromfile(f, dtype=np.uint8, count=n_feat * n_density * n_senone)
    if raw.size != n_feat * n_density * n_senone:
        raise SystemExit(f"{path}: truncated ({raw.size} of {n_feat * n_density * n_senone} weights)")
    logw = -(raw.astype(np.float64).reshape(n_feat, n_density, n_senone) * (1 << shift))
    w = np.power(1.0001, logw).transpose(2, 0, 1)  # senone, feature, density
    w /= w.sum(axis=2, keepdims=True)
    return w.astype(np.float32)


def write_s3_3d(path, arr):
    d1, d2, d3 = arr.shape
    with open(path, "wb") as f:
        head = b"s3\nversion 1.0\n"
        pad = (4 - (len(head) + len(b"endhdr\n")) % 4) % 4
        f.write(head + b" " * pad + b"endhdr\n")
        f.write(struct.pack("<i", 0x11223344))
        f.write(struct.pack("<IIII", d1, d2, d3, d1 * d2 * d3))
        f.write(arr.astype("<f4").tobytes())


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    w = read_sendump(sys.argv[1])
    write_s3_3d(sys.argv[2], w)
    print(f"{sys.argv[2]}: {w.shape[0]} senones x {w.shape[1]} streams x {w.shape[2]} densities")


if __name__ == "__main__":
    main()
