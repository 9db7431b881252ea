"""cuBLAS / cuBLASLt GEMM hooks: every hooked entry point is recorded once
per call with its exact shape, operations, types, FLOPs and status,
category `cublas`, switched by the `cublas` word of TPROF_TRACE. The
program calls the real libraries with a NULL handle (no GPU needed: they
return CUBLAS_STATUS_NOT_INITIALIZED at once); its cublasLtMatmul calls
use real descriptors and layouts. Nesting (cublasGemmEx ->
cublasLtMatmul, as libcublas does on a GPU) is played by cublas_nest.so,
a stand-in preloaded behind libtprof.so."""
import collections
import os

from tplib import *

ITERS = 3
BIG_M = 2**32 + 3
BIG_LDA = 2**32 + 11
BIG_LDB = 2**33 + 13
BIG_LDC = 2**34 + 17
BIG_BATCH = 2**31 + 19
STATUS = {1: "CUBLAS_STATUS_NOT_INITIALIZED", 7: "CUBLAS_STATUS_INVALID_VALUE"}


def gemm(m, n, k, batch, ta, tb, at, bt, ct, comp, lda, ldb, ldc, cplx,
         flops=True):
    a = {"m": m, "n": n, "k": k, "batch": batch, "transa": ta,
         "transb": tb, "a type": at, "b type": bt, "c type": ct,
         "compute type": comp, "lda": lda, "ldb": ldb, "ldc": ldc,
         "handle": "0x0"}
    if flops:
        a["flops"] = (8 if cplx else 2) * m * n * k * batch
    return a


def typed():
    out = []
    fams = (("S", "CUDA_R_32F", "CUBLAS_COMPUTE_32F", "T", "N"),
            ("D", "CUDA_R_64F", "CUBLAS_COMPUTE_64F", "T", "N"),
            ("H", "CUDA_R_16F", "CUBLAS_COMPUTE_16F", "T", "N"),
            ("C", "CUDA_C_32F", "CUBLAS_COMPUTE_32F", "C", "T"),
            ("Z", "CUDA_C_64F", "CUBLAS_COMPUTE_64F", "C", "T"))
    for p, ty, comp, ta, tb in fams:
        one = "cublasHgemm" if p == "H" else "cublas%sgemm_v2" % p
        cplx = ty.startswith("CUDA_C")
        small = (3, 5, 7)
        big = (BIG_M, 5, 7)
        lds = (11, 13, 17)
        blds = (BIG_LDA, BIG_LDB, BIG_LDC)
        for name, (m, n, k), batch, ld in (
                (one, small, 1, lds),
                (one + "_64", big, 1, blds),
                ("cublas%sgemmStridedBatched" % p, small, 19, lds),
                ("cublas%sgemmStridedBatched_64" % p, big, BIG_BATCH, blds),
                ("cublas%sgemmBatched" % p, small, 19, lds),
                ("cublas%sgemmBatched_64" % p, big, BIG_BATCH, blds)):
            out.append((name, gemm(m, n, k, batch, ta, tb, ty, ty, ty, comp,
                                   ld[0], ld[1], ld[2], cplx)))
    return out


def ex():
    s = (3, 5, 7)
    b = (BIG_M, 5, 7)
    L = (11, 13, 17)
    BL = (BIG_LDA, BIG_LDB, BIG_LDC)
    rows = (
        ("cublasGemmEx", s, 1, "N", "CUDA_R_16BF", "CUDA_R_16BF",
         "CUDA_R_16BF", "CUBLAS_COMPUTE_32F", L),
        # a legacy cudaDataType passed as computeType: its own name
        ("cublasGemmEx", s, 1, "N", "CUDA_R_32F", "CUDA_R_32F", "CUDA_R_32F",
         "CUDA_R_32F", L),
        ("cublasGemmEx_64", b, 1, "N", "CUDA_R_8F_E4M3", "CUDA_R_8F_E5M2",
         "CUDA_R_16F", "CUBLAS_COMPUTE_32F_FAST_TF32", BL),
        ("cublasGemmBatchedEx", s, 19, "N", "CUDA_R_8I", "CUDA_R_8I",
         "CUDA_R_32I", "CUBLAS_COMPUTE_32I", L),
        ("cublasGemmBatchedEx_64", b, BIG_BATCH, "N", "CUDA_R_16F",
         "CUDA_R_16F", "CUDA_R_16F", "CUBLAS_COMPUTE_32F_FAST_16F", BL),
        ("cublasGemmStridedBatchedEx", s, 19, "N", "CUDA_C_32F",
         "CUDA_C_32F", "CUDA_C_32F", "CUBLAS_COMPUTE_32F", L),
        ("cublasGemmStridedBatchedEx_64", b, BIG_BATCH, "N", "CUDA_R_16BF",
         "CUDA_R_16BF", "CUDA_R_16BF", "CUBLAS_COMPUTE_32F_FAST_16BF", BL),
    )
    out = []
    for name, (m, n, k), batch, ta, at, bt, ct, comp, ld in rows:
        out.append((name, gemm(m, n, k, batch, ta, "T", at, bt, ct, comp,
                               ld[0], ld[1], ld[2], ct.startswith("CUDA_C"))))
    # nonsense values as passed (raw numbers), and no FLOPs for m < 0
    out.insert(2, ("cublasGemmEx",
                   gemm(-1, 5, 7, 1, 7, "T", 99, "CUDA_R_32F", "CUDA_R_32F",
                        1234, 11, 13, 17, False, flops=False)))
    return out


def lt():
    full = {"m": 3, "n": 5, "k": 7, "batch": 4, "transa": "T",
            "transb": "N", "a type": "CUDA_R_16BF", "b type": "CUDA_R_16BF",
            "c type": "CUDA_R_16F", "d type": "CUDA_R_32F",
            "compute type": "CUBLAS_COMPUTE_32F_FAST_16BF",
            "scale type": "CUDA_R_32F", "lda": 11, "ldb": 13, "ldc": 17,
            "ldd": 23, "flops": 2 * 3 * 5 * 7 * 4, "handle": "0x0",
            "stream": "0x42"}
    m2 = 2**33 + 1
    inplace = {"m": m2, "n": 5, "k": 7, "batch": 1, "transa": "C",
               "transb": "T", "a type": "CUDA_C_32F", "b type": "CUDA_C_32F",
               "c type": "CUDA_C_32F", "d type": "CUDA_C_32F",
               "compute type": "CUBLAS_COMPUTE_32F",
               "scale type": "CUDA_C_32F", "lda": 11, "ldb": 13,
               "ldc": 2**33 + 8, "ldd": 2**33 + 8, "flops": 8 * m2 * 5 * 7,
               "handle": "0x0", "stream": "0x42"}
    nodesc = {k: v for k, v in full.items()
              if k not in ("k", "transa", "transb", "compute type",
                           "scale type", "flops")}
    noa = {k: v for k, v in full.items()
           if k not in ("k", "a type", "lda", "flops")}
    nothing = {"handle": "0x0", "stream": "0x42"}
    return [("cublasLtMatmul", a) for a in (full, inplace, nodesc, noa,
                                             nothing)]


ONE_ITER = typed() + ex() + lt()
HOOKED = sorted(set(n for n, _ in ONE_ITER))


def printed(r):
    """The (name, status) of each call, as the program printed them."""
    out = []
    for line in r.stdout.splitlines():
        name, st = line.split()
        out.append((name, int(st)))
    return out


def cublas_events(t):
    ev = [e for e in xevents(t) if e["cat"] == "cublas"]
    return sorted(ev, key=lambda e: e["ts"])


def with_status(args, ret):
    a = dict(args)
    a["ret"] = ret
    if ret:
        a["status"] = STATUS.get(ret, "unknown status")
    return a


def trace_of(r, label):
    files = r.files()
    if not eq(label + ": one trace file", files,
              ["tprof-rank0.trace.json.gz"]):
        return None
    path = os.path.join(r.dir, files[0])
    tprof_check(path, label + ": tprof check passes")
    return load(path)


prog_argv = [prog("cublas_calls"), str(ITERS)]
plain = run(prog_argv, preload=False)
eq("cublas: the program runs without tprof", plain.rc, 0)
calls = printed(plain)
eq("cublas: the program made every call",
   [n for n, _ in calls], [n for n, _ in ONE_ITER] * ITERS)

r = run(prog_argv)
eq("cublas: exit code unchanged", r.rc, plain.rc)
eq("cublas: stdout (every status the program got) unchanged", r.stdout,
   plain.stdout)
t = trace_of(r, "cublas")
if t:
    check("cublas: X events strictly nest", nesting_ok(t))
    ev = cublas_events(t)
    eq("cublas: every hooked name recorded",
       sorted(set(e["name"] for e in ev)), HOOKED)
    want = collections.Counter(n for n, _ in ONE_ITER * ITERS)
    got = collections.Counter(e["name"] for e in ev)
    eq("cublas: exact count per name", dict(got), dict(want))
    eq("cublas: hooked names are the exported symbols (37)", len(HOOKED), 37)
    check("cublas: category cublas",
          all(e["cat"] == "cublas" for e in ev if e["name"] in HOOKED))
    eq("cublas: trace ret = the status the program got, call by call",
       [(e["name"], e["args"]["ret"]) for e in ev], calls)
    eq("cublas: one thread", len(set(e["tid"] for e in ev)), 1)
    bad = []
    for i, e in enumerate(ev):
        name, args = ONE_ITER[i % len(ONE_ITER)]
        wantargs = with_status(args, calls[i][1])
        if e["name"] != name or e["args"] != wantargs:
            bad.append((i, e["name"], e["args"], wantargs))
    check("cublas: exact args of every event", not bad,
          "first: %r" % (bad[:1],))
    first = {}
    for e in ev:
        first.setdefault(e["name"], e["args"])
    # The same facts again, named, so that a failure says what broke.
    eq("cublas: _64 shape not truncated",
       (first["cublasSgemm_v2_64"]["m"], first["cublasSgemm_v2_64"]["ldc"],
        first["cublasGemmBatchedEx_64"]["batch"]),
       (BIG_M, BIG_LDC, BIG_BATCH))
    eq("cublas: FLOPs past 64 bits exact",
       first["cublasZgemmStridedBatched_64"]["flops"],
       8 * BIG_M * 5 * 7 * BIG_BATCH)
    eq("cublas: complex FLOPs are 8mnk",
       first["cublasCgemm_v2"]["flops"], 8 * 3 * 5 * 7)
    eq("cublas: Hgemm implies half types",
       (first["cublasHgemm"]["a type"], first["cublasHgemm"]["compute type"]),
       ("CUDA_R_16F", "CUBLAS_COMPUTE_16F"))
    lts = [e["args"] for e in ev if e["name"] == "cublasLtMatmul"][:5]
    eq("cublas: Lt shape from its layouts (k from A^T's rows)",
       [lts[0].get(k) for k in ("m", "n", "k", "batch", "ldd")],
       [3, 5, 7, 4, 23])
    eq("cublas: Lt C and D one layout: C's type and ld are D's",
       (lts[1]["c type"], lts[1]["ldc"]), ("CUDA_C_32F", 2**33 + 8))
    check("cublas: Lt without a matmul descriptor: no k, trans, FLOPs",
          not set(lts[2]) & {"k", "transa", "compute type", "flops"},
          str(lts[2]))
    check("cublas: Lt without A's layout: no k, a type, lda, FLOPs",
          not set(lts[3]) & {"k", "a type", "lda", "flops"}, str(lts[3]))
    eq("cublas: Lt with nothing: ret, status, handle, stream",
       sorted(lts[4]), ["handle", "ret", "status", "stream"])
    check("cublas: nothing nested without nesting",
          not any("nested" in e["args"] for e in ev))
    gemm_ex = [e["args"] for e in ev if e["name"] == "cublasGemmEx"]
    eq("cublas: legacy compute type named as a cudaDataType",
       gemm_ex[1]["compute type"], "CUDA_R_32F")
    eq("cublas: tprof.threads counts the events",
       sum(th["events"] for th in t["tprof"]["threads"]), len(xevents(t)))
cleanup(r)

# The TPROF_TRACE word.
r = run(prog_argv, env={"TPROF_TRACE": "cuda"})
eq("cublas: TPROF_TRACE=cuda: exit code unchanged", r.rc, plain.rc)
eq("cublas: TPROF_TRACE=cuda: stdout unchanged", r.stdout, plain.stdout)
n = 0
for f in r.files():
    n += len([e for e in xevents(load(os.path.join(r.dir, f)))
              if e["cat"] == "cublas"])
eq("cublas: TPROF_TRACE=cuda records no cublas event", n, 0)
cleanup(r)

r = run(prog_argv, env={"TPROF_TRACE": "cublas"})
eq("cublas: TPROF_TRACE=cublas: stdout unchanged", r.stdout, plain.stdout)
t = trace_of(r, "cublas: TPROF_TRACE=cublas")
if t:
    eq("cublas: TPROF_TRACE=cublas records every call",
       len(cublas_events(t)), len(ONE_ITER) * ITERS)
cleanup(r)

# Nesting: cublasSgemm_v2 -> cublasGemmEx -> cublasLtMatmul inside the
# stand-in, then cublasLtMatmul and cublasGemmEx (-> cublasLtMatmul)
# called directly. FLOPs are counted once, by the outermost call.
nest_argv = [prog("cublas_calls"), "nest"]
nest_so = prog("cublas_nest.so")
r = run(nest_argv, env={"LD_PRELOAD": LIB + ":" + nest_so}, preload=False)
eq("cublas nest: exit code 0", r.rc, 0)
eq("cublas nest: the program saw the stand-in's statuses",
   printed(r), [("cublasSgemm_v2", 0), ("cublasLtMatmul", 1),
                ("cublasGemmEx", 0)])
t = trace_of(r, "cublas nest")
if t:
    check("cublas nest: X events strictly nest", nesting_ok(t))
    ev = cublas_events(t)
    eq("cublas nest: every call recorded, inner ones too",
       [e["name"] for e in ev],
       ["cublasSgemm_v2", "cublasGemmEx", "cublasLtMatmul", "cublasLtMatmul",
        "cublasGemmEx", "cublasLtMatmul"])
    eq("cublas nest: nested marks",
       [e["args"].get("nested") for e in ev], [None, 1, 1, None, None, 1])
    eq("cublas nest: FLOPs only on the outer calls",
       [e["args"].get("flops") for e in ev], [210, None, None, 210, 210, None])

    def span(e):    # integer ns: float sums of big ts values are inexact
        ts = round(e["ts"] * 1000)
        return ts, ts + round(e["dur"] * 1000)

    def inside(inner, outer):
        (a, b), (c, d) = span(inner), span(outer)
        return a >= c and b <= d
    check("cublas nest: inner calls lie within the outer ones",
          inside(ev[1], ev[0]) and inside(ev[2], ev[1]) and
          inside(ev[5], ev[4]) and not inside(ev[3], ev[0]))
    sg = gemm(3, 5, 7, 1, "T", "N", "CUDA_R_32F", "CUDA_R_32F", "CUDA_R_32F",
              "CUBLAS_COMPUTE_32F", 11, 13, 17, False)
    eq("cublas nest: outer cublasSgemm_v2 args", ev[0]["args"],
       with_status(sg, 0))
    inner = dict(sg, **{"d type": "CUDA_R_32F", "scale type": "CUDA_R_32F",
                        "ldd": 17, "stream": "0x0", "nested": 1})
    del inner["flops"]
    eq("cublas nest: the inner cublasLtMatmul describes the same GEMM",
       ev[2]["args"], with_status(inner, 1))
    check("cublas nest: no status key on success",
          "status" not in ev[0]["args"] and "status" not in ev[1]["args"])
    eq("cublas nest: sum of FLOPs counts each GEMM once",
       sum(e["args"].get("flops", 0) for e in ev), 3 * 210)
cleanup(r)
done()
