#!/usr/bin/env python3
"""ziggurat_tables.py: writes src/core/ziggurat_tables.c, the layer tables of
the exponential and normal ziggurats of src/core/ziggurat.h (Marsaglia and
Tsang 2000, "The Ziggurat Method for Generating Random Variables", J. Stat.
Softw. 5(8), with 256 layers and 53-bit uniforms).

For a decreasing density f on [0, inf) (exp(-x), or exp(-x^2/2) for the
half normal) with tail area T(r) beyond r, every layer has area
v = r f(r) + T(r): x_1 = r, x_{i+1} = f^-1(f(x_i) + v / x_i), and r is the
root of x_256 = 0 (the top layer closes at the mode).  Solved here with
mpmath at 60 digits, then rounded once to doubles, so the tables do not
depend on the C library's exp and log.  Run from the repository root:

    python3 scripts/ziggurat_tables.py > src/core/ziggurat_tables.c

(python3-mpmath; not needed to build: the output is committed.)
"""
import mpmath as mp

mp.mp.dps = 60
LAYERS = 256
TWO53 = mp.mpf(2) ** 53


def ziggurat(f, finv, tail):
    """r and the boundaries x_1 = r > x_2 > ... > x_256 = 0 (exact r)."""
    def climb(r):
        """Layers climbed before the top: 255 exactly at the root."""
        v = r * f(r) + tail(r)
        x, xs = r, [r]
        for _ in range(LAYERS - 1):
            y = f(x) + v / x
            if y >= 1:
                return None, v
            x = finv(y)
            xs.append(x)
        return xs, v

    lo, hi = mp.mpf(1), mp.mpf(20)  # too many layers closing early / never
    for _ in range(400):
        mid = (lo + hi) / 2
        xs, _ = climb(mid)
        if xs is None:        # v too large: the top reached early
            lo = mid
        else:
            hi = mid
    xs, v = climb(hi)
    assert xs[-1] < mp.mpf(10) ** -25, xs[-1]  # x_256: the top closes at 0
    return hi, v, xs


def to_double(x):
    return float(x)


def tables(name, f, finv, tail):
    r, v, xs = ziggurat(f, finv, tail)
    # X[0]: the base layer's width v / f(r) (its strip beyond r stands for
    # the tail); X[i] = x_i; X[256] = 0.
    X = [to_double(v / f(r))] + [to_double(x) for x in xs[:LAYERS - 1]] + [0.0]
    F = [to_double(f(mp.mpf(x))) for x in X]
    K = [int(mp.floor(TWO53 * mp.mpf(X[i + 1]) / mp.mpf(X[i]))) for i in range(LAYERS)]
    out = []
    out.append(f"const double trd_zig_{name}_r = {float(r).hex()}; /* {mp.nstr(r, 20)} */")
    out.append(f"const double trd_zig_{name}_v = {float(v).hex()}; /* {mp.nstr(v, 20)} */")
    out.append(f"const trd_zig_layer trd_zig_{name}_layer[{LAYERS}] = {{")
    for i in range(LAYERS):
        w = X[i] * 2.0 ** -53  # exact: a power of two
        out.append(f"    {{{K[i]}u, {w.hex()}}},")
    out.append("};")
    out.append(f"const double trd_zig_{name}_f[{LAYERS + 1}] = {{")
    for i in range(0, LAYERS + 1, 3):
        out.append("    " + " ".join(f"{x.hex()}," for x in F[i:i + 3]))
    out.append("};")
    return "\n".join(out)


def main():
    exp_t = tables("exp", lambda x: mp.exp(-x), lambda y: -mp.log(y), lambda r: mp.exp(-r))
    nor_t = tables("normal", lambda x: mp.exp(-x * x / 2), lambda y: mp.sqrt(-2 * mp.log(y)),
                   lambda r: mp.sqrt(mp.pi / 2) * mp.erfc(r / mp.sqrt(2)))
    print("/* ziggurat_tables.c: written by scripts/ziggurat_tables.py (do not edit):")
    print(" * the layers of the exponential (exp(-x)) and half-normal")
    print(" * (exp(-x^2/2)) ziggurats, 256 layers each (ziggurat.h). */")
    print('#include "core/ziggurat.h"')
    print()
    print(exp_t)
    print()
    print(nor_t)


if __name__ == "__main__":
    main()
