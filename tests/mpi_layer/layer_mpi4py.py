"""layer_mpi4py.py: an mpi4py program as its users write them, with
mpi4py's default initialisation (MPI_THREAD_MULTIPLE), run with and
without libtreduce_mpi.so by layer_test.sh, which compares the digests
the two runs print.

Buffer reductions (comm.Allreduce, comm.Reduce, in place too) of numpy
arrays with predefined operators and with a Python operator made by
MPI.Op.Create - the product of 2x2 matrices mod 65521 packed in one
uint64 per element, non-commutative - on MPI_COMM_WORLD, on duplicates
made and freed in a loop with ranks arriving late, on a split; and object
reductions (comm.allreduce, comm.reduce of pickled Python objects, which
mpi4py runs with its own point-to-point messages).  Every result is
checked against the fold in rank order; rank 0 prints one digest of all
of them.  Usage: layer_mpi4py.py [ROUNDS]."""
import hashlib
import random
import sys
import time

import numpy as np
from mpi4py import MPI

P16 = 65521
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
digest = hashlib.sha256()
errors = 0


def mat(w, n, salt):
    """n packed matrices of world rank w (entries below P16)."""
    rng = np.random.default_rng(w * 1_000_003 + salt)
    e = rng.integers(0, P16, size=(n, 4), dtype=np.uint64)
    return e[:, 0] | e[:, 1] << 16 | e[:, 2] << 32 | e[:, 3] << 48


def mat_mul(x, y):
    """x * y mod P16, element by element (packed uint64)."""
    a = [(x >> np.uint64(16 * k)) & np.uint64(0xFFFF) for k in range(4)]
    b = [(y >> np.uint64(16 * k)) & np.uint64(0xFFFF) for k in range(4)]
    p = np.uint64(P16)
    r = [(a[0] * b[0] + a[1] * b[2]) % p, (a[0] * b[1] + a[1] * b[3]) % p,
         (a[2] * b[0] + a[3] * b[2]) % p, (a[2] * b[1] + a[3] * b[3]) % p]
    return r[0] | r[1] << np.uint64(16) | r[2] << np.uint64(32) | r[3] << np.uint64(48)


def mat_op_fn(inbuf, inoutbuf, datatype):
    x = np.frombuffer(inbuf, dtype=np.uint64)
    y = np.frombuffer(inoutbuf, dtype=np.uint64)
    y[:] = mat_mul(x, y)


MAT = MPI.Op.Create(mat_op_fn, commute=False)


def check(ok, what):
    global errors
    if not ok:
        errors += 1
        if errors < 10:
            print(f"rank {rank}: {what}: wrong", file=sys.stderr, flush=True)


def record(arr):
    digest.update(np.ascontiguousarray(arr).tobytes())


def buffers(c, salt, what):
    """Allreduce, Iallreduce and Reduce of sums, maxima and matrices on communicator c."""
    n, me = c.Get_size(), c.Get_rank()
    world = MPI.Group.Translate_ranks(c.group, list(range(n)), MPI.COMM_WORLD.group)
    count = 1000
    x = np.array([(world[me] * 31 + i + salt) % 1000 for i in range(count)], dtype=np.float64)
    want = sum(np.array([(w * 31 + i + salt) % 1000 for i in range(count)], dtype=np.float64)
               for w in world)
    out = np.zeros(count)
    c.Allreduce(x, out, op=MPI.SUM)
    check(np.array_equal(out, want), f"{what}: Allreduce sum")
    record(out)
    y = x.copy()
    c.Allreduce(MPI.IN_PLACE, y, op=MPI.MAX)
    check(np.array_equal(y, np.maximum.reduce([np.array([(w * 31 + i + salt) % 1000
                                                        for i in range(count)])
                                              for w in world])), f"{what}: Allreduce max")
    record(y)
    m = mat(world[me], 64, salt)
    wm = mat(world[0], 64, salt)
    for w in world[1:]:
        wm = mat_mul(wm, mat(w, 64, salt))
    out = np.zeros(64, dtype=np.uint64)
    c.Allreduce(m, out, op=MAT)
    check(np.array_equal(out, wm), f"{what}: Allreduce of matrices")
    record(out)
    out = np.zeros(64, dtype=np.uint64)
    req = c.Iallreduce(m, out, op=MAT)  # nonblocking, with a point-to-point beside it
    token = c.irecv(source=(me - 1) % n, tag=3)
    c.send(me, dest=(me + 1) % n, tag=3)
    got = token.wait()
    MPI.Request.Waitall([req])
    check(np.array_equal(out, wm) and got == (me - 1) % n, f"{what}: Iallreduce of matrices")
    record(out)
    root = salt % n
    out = np.zeros(64, dtype=np.uint64)
    c.Reduce(m, out if me == root else None, op=MAT, root=root)
    if me == root:
        check(np.array_equal(out, wm), f"{what}: Reduce of matrices")
        record(out)


def objects(c, salt, what):
    """Pickled reductions: mpi4py's own messages."""
    me, n = c.Get_rank(), c.Get_size()
    got = c.allreduce((me + salt) % 7, op=MPI.SUM)
    check(got == sum((r + salt) % 7 for r in range(n)), f"{what}: allreduce of an object")
    got = c.reduce([me], op=MPI.SUM, root=0)
    if me == 0:
        check(got == list(range(n)), f"{what}: reduce of lists (concatenation)")
    digest.update(repr(got).encode())


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    rng = random.Random(rank)
    buffers(comm, 1, "COMM_WORLD")
    objects(comm, 1, "COMM_WORLD")
    for r in range(rounds):
        d = comm.Dup()
        if rng.random() < 0.5:
            time.sleep(rng.random() * 0.05)  # ranks arriving late
        buffers(d, 10 + r, f"duplicate {r}")
        if r % 5 == 0:
            objects(d, r, f"duplicate {r}")
        d.Free()
    s = comm.Split(rank % 2, -rank)
    buffers(s, 99, "split")
    s.Free()
    total = comm.allreduce(errors, op=MPI.SUM)
    hexes = comm.gather(digest.hexdigest(), root=0)
    if rank == 0:
        print("digest", hashlib.sha256("".join(hexes).encode()).hexdigest())
        print(f"layer_mpi4py: {'FAILED' if total else 'ok'} ({size} ranks, "
              f"thread level {MPI.Query_thread()})")
    MAT.Free()
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
