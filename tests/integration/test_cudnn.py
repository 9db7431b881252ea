"""cuDNN hooks: every hooked entry point is recorded once per call with
the shapes read from real descriptors, exact FLOPs, the status, and the
return code the program got; nothing is read from NULL descriptors; the
TPROF_TRACE word `cudnn` switches them on and off. No GPU needed: the
calls pass a NULL handle and cuDNN rejects them."""
import os

from tplib import *

NAME = "tprof-rank0.trace.json.gz"
X4 = [8, 64, 56, 56]
W4 = [128, 32, 3, 3]
Y4 = [8, 128, 28, 28]
HALF, FLOAT = "CUDNN_DATA_HALF", "CUDNN_DATA_FLOAT"
BAD, UNSUPPORTED = "CUDNN_STATUS_BAD_PARAM", "CUDNN_STATUS_NOT_SUPPORTED"


def conv_flops(x, w, y, groups):
    """2 * N * K * prod(output spatial) * (C / groups) * prod(filter
    spatial), written out independently of the library's code."""
    f = 2 * x[0] * w[0] * (x[1] // groups)
    for i in range(2, len(x)):
        f *= y[i] * w[i]
    return f


def conv(algo, ws, x=X4, w=W4, y=Y4, dtype=HALF, pad=(1, 1),
         stride=(2, 2), dilation=(1, 1), groups=2,
         mode="CUDNN_CROSS_CORRELATION", flops=True):
    a = {"handle": "0x0", "algo": algo, "workspace bytes": ws}
    if x:
        a["x"] = list(x)
    if w:
        a["w"] = list(w)
    if y:
        a["y"] = list(y)
    if x or w or y:
        a["dtype"] = dtype
    if groups:
        a.update(pad=list(pad), stride=list(stride),
                 dilation=list(dilation), groups=groups, mode=mode)
        a["compute type"] = FLOAT
    if flops:
        a["flops"] = conv_flops(x, w, y, groups)
    return a


def op(x=X4, dtype=HALF, **kw):
    a = {"handle": "0x0"}
    if x:
        a.update(x=list(x), dtype=dtype)
    for k, v in kw.items():
        a[k.replace("_", " ")] = v
    return a


X3, W3, Y3 = [2, 16, 8, 32, 32], [32, 16, 3, 3, 3], [2, 32, 4, 32, 16]
RNN_X = [20, 4, 256]
ATTN_Q = [12, 2, 1, 64]   # [time, batch, beam, vect]


def expected(plan, pack):
    """(name, status or None, args without ret/status) per call, in the
    program's order."""
    rnn = dict(rnn="0x0")
    attn = dict(attn="0x0")
    return [
        ("cudnnConvolutionForward", BAD, conv(1, 4096)),
        ("cudnnConvolutionBackwardData", BAD, conv(1, 8192)),
        ("cudnnConvolutionBackwardFilter", BAD, conv(3, 0)),
        ("cudnnConvolutionBiasActivationForward", BAD, conv(7, 64)),
        ("cudnnConvolutionForward", BAD,
         conv(2, 1, X3, W3, Y3, FLOAT, (1, 2, 3), (1, 1, 2), (2, 1, 1), 1,
              "CUDNN_CONVOLUTION")),
        ("cudnnConvolutionForward", BAD,
         conv(4, 0, None, None, None, groups=0, flops=False)),
        ("cudnnConvolutionBackwardFilter", BAD,
         conv(0, 0, w=None, flops=False)),
        ("cudnnConvolutionForward", BAD, conv(0, 0, groups=3, flops=False)),
        ("cudnnConvolutionBackwardData", BAD,
         conv(0, 0, groups=0, flops=False)),
        ("cudnnBackendExecute", BAD,
         {"handle": "0x0", "plan": "0x0", "variant pack": "0x0"}),
        ("cudnnBackendExecute", BAD,
         {"handle": "0x0", "plan": plan, "variant pack": pack}),
        ("cudnnBatchNormalizationForwardTraining", BAD,
         op(mode="CUDNN_BATCHNORM_SPATIAL")),
        ("cudnnBatchNormalizationForwardTrainingEx", BAD,
         op(mode="CUDNN_BATCHNORM_SPATIAL_PERSISTENT",
            ops="CUDNN_BATCHNORM_OPS_BN_ACTIVATION",
            workspace_bytes=1024, reserve_bytes=2048)),
        ("cudnnBatchNormalizationForwardInference", BAD,
         op(mode="CUDNN_BATCHNORM_PER_ACTIVATION")),
        ("cudnnBatchNormalizationBackward", BAD,
         op(mode="CUDNN_BATCHNORM_SPATIAL")),
        ("cudnnBatchNormalizationBackwardEx", BAD,
         op(mode="CUDNN_BATCHNORM_SPATIAL",
            ops="CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION",
            workspace_bytes=3072, reserve_bytes=4096)),
        ("cudnnBatchNormalizationForwardInference", BAD,
         op(None, mode="CUDNN_BATCHNORM_SPATIAL")),
        ("cudnnNormalizationForwardTraining", BAD,
         op(mode="CUDNN_NORM_PER_CHANNEL", ops="CUDNN_NORM_OPS_NORM",
            algo="CUDNN_NORM_ALGO_PERSIST", workspace_bytes=512,
            reserve_bytes=256)),
        ("cudnnNormalizationForwardInference", UNSUPPORTED,
         op(mode="CUDNN_NORM_PER_ACTIVATION",
            ops="CUDNN_NORM_OPS_NORM_ACTIVATION",
            algo="CUDNN_NORM_ALGO_STANDARD")),
        ("cudnnNormalizationBackward", BAD,
         op(mode="CUDNN_NORM_PER_CHANNEL",
            ops="CUDNN_NORM_OPS_NORM_ADD_ACTIVATION",
            algo="CUDNN_NORM_ALGO_STANDARD", workspace_bytes=128,
            reserve_bytes=64)),
        ("cudnnSoftmaxForward", BAD,
         op([32, 1000, 1, 1], FLOAT, mode="CUDNN_SOFTMAX_MODE_CHANNEL",
            algo="CUDNN_SOFTMAX_LOG")),
        ("cudnnSoftmaxBackward", BAD,
         op([16, 10, 7, 7], "CUDNN_DATA_BFLOAT16",
            mode="CUDNN_SOFTMAX_MODE_INSTANCE",
            algo="CUDNN_SOFTMAX_ACCURATE")),
        ("cudnnRNNForward", BAD,
         op(RNN_X, mode="CUDNN_FWD_MODE_TRAINING", weight_bytes=1000,
            workspace_bytes=2000, reserve_bytes=3000, **rnn)),
        ("cudnnRNNBackwardData_v8", BAD,
         op(RNN_X, weight_bytes=1001, workspace_bytes=2001,
            reserve_bytes=3001, **rnn)),
        ("cudnnRNNBackwardWeights_v8", UNSUPPORTED,
         op(RNN_X, mode="CUDNN_WGRAD_MODE_SET", weight_bytes=1002,
            workspace_bytes=2002, reserve_bytes=3002, **rnn)),
        ("cudnnRNNForward", BAD,
         op(None, mode="CUDNN_FWD_MODE_INFERENCE", weight_bytes=0,
            workspace_bytes=0, reserve_bytes=0, **rnn)),
        ("cudnnMultiHeadAttnForward", BAD,
         dict(op(None, curr_idx=-1, weight_bytes=100, workspace_bytes=200,
                 reserve_bytes=300, **attn), q=ATTN_Q, dtype=FLOAT)),
        ("cudnnMultiHeadAttnBackwardData", BAD,
         dict(op(None, weight_bytes=101, workspace_bytes=201,
                 reserve_bytes=301, **attn), q=ATTN_Q, dtype=FLOAT)),
        ("cudnnMultiHeadAttnBackwardWeights", BAD,
         dict(op(None, mode="CUDNN_WGRAD_MODE_ADD", weight_bytes=102,
                 workspace_bytes=202, reserve_bytes=302, **attn),
              q=ATTN_Q, dtype=FLOAT)),
        ("cudnnMultiHeadAttnForward", BAD,
         op(None, curr_idx=3, weight_bytes=0, workspace_bytes=0,
            reserve_bytes=0, **attn)),
    ]


def calls(stdout):
    """(name, ret) per call the program made, and its plan/pack lines."""
    out, ptrs = [], {}
    for line in stdout.splitlines():
        w = line.split()
        if w[0] == "plan":
            ptrs = {"plan": w[1], "pack": w[3]}
        else:
            out.append((w[0], int(w[1])))
    return out, ptrs


def cudnn_events(t):
    ev = [e for e in xevents(t) if e["name"].startswith("cudnn")]
    return sorted(ev, key=lambda e: e["ts"])


prog_ = prog("cudnn_calls")
plain = run([prog_], preload=False)
eq("cudnn: program runs without tprof", plain.rc, 0)
want_calls, _ = calls(plain.stdout)

for label, env in (("default", {}), ("TPROF_TRACE=cudnn",
                                      {"TPROF_TRACE": "cudnn"})):
    r = run([prog_], env=env)
    eq("cudnn %s: exit code unchanged" % label, r.rc, plain.rc)
    got_calls, ptrs = calls(r.stdout)
    eq("cudnn %s: return codes unchanged" % label, got_calls, want_calls)
    check("cudnn %s: no missing symbol" % label,
          not [l for l in r.lines() if "cannot find" in l], r.stderr)
    eq("cudnn %s: one file" % label, r.files(), [NAME])
    if r.files() != [NAME]:
        cleanup(r)
        continue
    path = os.path.join(r.dir, NAME)
    t = load(path)
    tprof_check(path, "cudnn %s: tprof check passes" % label)
    check("cudnn %s: X events strictly nest" % label, nesting_ok(t))
    ev = cudnn_events(t)
    eq("cudnn %s: one event per call" % label, len(ev), len(got_calls))
    eq("cudnn %s: names and ret in call order" % label,
       [(e["name"], e["args"]["ret"]) for e in ev], got_calls)
    check("cudnn %s: category cudnn" % label,
          ev and all(e["cat"] == "cudnn" for e in ev))
    eq("cudnn %s: nothing else recorded" % label,
       len(xevents(t)), len(ev))
    want = expected(ptrs.get("plan"), ptrs.get("pack"))
    eq("cudnn %s: expected calls" % label, [w[0] for w in want],
       [c[0] for c in got_calls])
    for i, (e, (name, status, args)) in enumerate(zip(ev, want)):
        a = dict(e["args"])
        ret = a.pop("ret")
        eq("cudnn %s: #%d %s status" % (label, i, name),
           a.pop("status", None), status if ret else None)
        eq("cudnn %s: #%d %s args" % (label, i, name), a, args)
    cleanup(r)

# The three directions of one layer count the same FLOPs.
eq("cudnn: forward FLOPs of the 2D layer", conv(0, 0)["flops"],
   2 * 8 * 128 * 28 * 28 * 32 * 3 * 3)

# Other sources only: the hooks still forward every call, record nothing.
for words in ("cuda", "cuda,gpu,cublas,nccl,nvtx"):
    r = run([prog_], env={"TPROF_TRACE": words})
    eq("cudnn off (%s): exit code unchanged" % words, r.rc, plain.rc)
    eq("cudnn off (%s): return codes unchanged" % words,
       calls(r.stdout)[0], want_calls)
    n = 0
    for f in r.files():
        n += len([e for e in xevents(load(os.path.join(r.dir, f)))
                  if e.get("cat") == "cudnn"])
    eq("cudnn off (%s): no cudnn events" % words, n, 0)
    cleanup(r)

# TPROF_DISABLE: inert, same results.
r = run([prog_], env={"TPROF_DISABLE": "1"})
eq("cudnn disabled: return codes unchanged", calls(r.stdout)[0], want_calls)
eq("cudnn disabled: no file", r.files(), [])
cleanup(r, plain)
done()
