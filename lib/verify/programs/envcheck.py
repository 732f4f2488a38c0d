# envlock verify's check of a Python environment. envlock carries this
# file as text (lib/verify/pyenv.c) and runs it with the environment's
# own python, so what is checked is what that python really imports:
#
#   python -B envcheck.py --out FILE [--cpu-only] [--mmcv] [--import NAME]...
#
# It writes KEY=VALUE lines to FILE as it goes (each flushed, so a crash
# inside a library still leaves what came before it and the part it was
# in), from "program=envlock-envcheck 1" to "end=1":
#
#   part=torch|conv|mmcv|import            before each part
#   torch_error=<the exception's last line> when import torch fails
#   torch_version, torch_file, torch_cuda, torch_hip, torch_cudnn
#   torch_cuda_available=0|1, torch_device_count, torch_device
#   conv_cpu=ok | conv_cpu_error, conv_gpu=ok|skipped | conv_gpu_error,
#   conv_max_rel_err, conv_shape
#   mmcv_error | mmcv_version, mmcv_file, mmcv_ext=0|1, mmcv_ext_error,
#   nms_ref_keep, nms_cpu_keep | nms_cpu_error, nms_gpu_keep | nms_gpu_error
#   mod.NAME.version, mod.NAME.file | mod.NAME.error
#
# Values are one line of at most 1000 characters. Nothing is printed on
# stdout; what the libraries print is theirs. Plain Python 3 (no
# f-strings), for the oldest environments envlock meets.
import sys
import traceback

report = None


def put(key, value):
    text = str(value).replace("\r", " ").replace("\n", " ")
    if len(text) > 1000:
        text = text[:1000]
    report.write("%s=%s\n" % (key, text))
    report.flush()


def last_line(exc):
    """The exception as Python's traceback ends: "ModuleNotFoundError: No module named 'torch'"."""
    lines = "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()
    return lines[-1].strip() if lines else type(exc).__name__


def torch_part(cpu_only):
    put("part", "torch")
    try:
        import torch
    except BaseException as e:  # an ImportError, or whatever torch's __init__ raised
        put("torch_error", last_line(e))
        return None
    put("torch_version", getattr(torch, "__version__", ""))
    put("torch_file", getattr(torch, "__file__", ""))
    version = getattr(torch, "version", None)
    cuda = getattr(version, "cuda", None)
    put("torch_cuda", "None" if cuda is None else cuda)
    hip = getattr(version, "hip", None)
    put("torch_hip", "None" if hip is None else hip)
    try:
        v = torch.backends.cudnn.version()
        put("torch_cudnn", "None" if v is None else int(v))
    except BaseException as e:
        put("torch_cudnn_error", last_line(e))
    if cpu_only:
        return torch
    try:
        available = bool(torch.cuda.is_available())
        put("torch_cuda_available", 1 if available else 0)
        put("torch_device_count", torch.cuda.device_count() if available else 0)
        if available:
            put("torch_device", torch.cuda.get_device_name(0))
    except BaseException as e:
        put("torch_cuda_error", last_line(e))
    return torch


def conv_part(torch, gpu):
    """One convolution forward and backward: the CPU in float64, the GPU (cuDNN) in float32."""
    put("part", "conv")
    F = torch.nn.functional
    gen = torch.Generator()
    gen.manual_seed(0)
    x = torch.randn(2, 3, 9, 9, generator=gen, dtype=torch.float64)
    w = torch.randn(4, 3, 3, 3, generator=gen, dtype=torch.float64)
    b = torch.randn(4, generator=gen, dtype=torch.float64)
    gy = torch.randn(2, 4, 9, 9, generator=gen, dtype=torch.float64)
    put("conv_shape", "input 2x3x9x9, 4 filters 3x3, padding 1")

    def run(device, dtype):
        xs = x.to(device, dtype).requires_grad_()
        ws = w.to(device, dtype).requires_grad_()
        bs = b.to(device, dtype).requires_grad_()
        y = F.conv2d(xs, ws, bs, padding=1)
        y.backward(gy.to(device, dtype))
        return [t.detach().to("cpu", torch.float64) for t in (y, xs.grad, ws.grad, bs.grad)]

    try:
        ref = run("cpu", torch.float64)
        put("conv_cpu", "ok")
    except BaseException as e:
        put("conv_cpu_error", last_line(e))
        return
    if not gpu:
        put("conv_gpu", "skipped")
        return
    try:
        # TF32 (on by default for convolutions on Ampere and later) rounds to 10 bits
        if hasattr(torch.backends.cudnn, "allow_tf32"):
            torch.backends.cudnn.allow_tf32 = False
        got = run("cuda", torch.float32)
        torch.cuda.synchronize()
    except BaseException as e:
        put("conv_gpu_error", last_line(e))
        return
    worst = 0.0
    for a, r in zip(got, ref):
        scale = max(1.0, float(r.abs().max()))
        worst = max(worst, float((a - r).abs().max()) / scale)
    put("conv_gpu", "ok")
    put("conv_max_rel_err", "%.6g" % worst)


BOXES = [[49.1, 32.4, 51.0, 35.9], [49.3, 32.9, 51.0, 35.3], [49.2, 31.8, 51.0, 35.4],
         [35.1, 11.5, 39.1, 15.7], [35.6, 11.8, 39.3, 14.2], [35.3, 11.5, 39.9, 14.5],
         [35.2, 11.7, 39.7, 15.7]]
SCORES = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3]
IOU = 0.6


def nms_reference():
    """Greedy NMS in plain Python (mmcv's nms with offset 0): the kept indices."""
    keep = []
    for i in sorted(range(len(BOXES)), key=lambda k: -SCORES[k]):
        x1, y1, x2, y2 = BOXES[i]
        ok = True
        for j in keep:
            u1, v1, u2, v2 = BOXES[j]
            iw = max(0.0, min(x2, u2) - max(x1, u1))
            ih = max(0.0, min(y2, v2) - max(y1, v1))
            inter = iw * ih
            union = (x2 - x1) * (y2 - y1) + (u2 - u1) * (v2 - v1) - inter
            if union > 0 and inter / union > IOU:
                ok = False
                break
        if ok:
            keep.append(i)
    return sorted(keep)


def keep_text(inds):
    return ",".join(str(int(i)) for i in sorted(inds.tolist()))


def mmcv_part(torch, gpu):
    put("part", "mmcv")
    try:
        import mmcv
    except BaseException as e:
        put("mmcv_error", last_line(e))
        return
    put("mmcv_version", getattr(mmcv, "__version__", ""))
    put("mmcv_file", getattr(mmcv, "__file__", ""))
    try:
        import mmcv._ext as ext
        put("mmcv_ext", 1)
        put("mmcv_ext_file", getattr(ext, "__file__", ""))
    except BaseException as e:
        put("mmcv_ext", 0)
        put("mmcv_ext_error", last_line(e))
        return
    if torch is None:
        return
    put("nms_ref_keep", ",".join(str(i) for i in nms_reference()))
    try:
        from mmcv.ops import nms
        boxes = torch.tensor(BOXES, dtype=torch.float32)
        scores = torch.tensor(SCORES, dtype=torch.float32)
        dets, inds = nms(boxes, scores, IOU)
        put("nms_cpu_keep", keep_text(inds))
    except BaseException as e:
        put("nms_cpu_error", last_line(e))
        return
    if not gpu:
        put("nms_gpu", "skipped")
        return
    try:
        dets, inds = nms(boxes.cuda(), scores.cuda(), IOU)
        torch.cuda.synchronize()
        put("nms_gpu_keep", keep_text(inds.cpu()))
    except BaseException as e:
        put("nms_gpu_error", last_line(e))


def import_part(names):
    import importlib
    put("part", "import")
    for name in names:
        try:
            m = importlib.import_module(name)
        except BaseException as e:
            put("mod.%s.error" % name, last_line(e))
            continue
        put("mod.%s.version" % name, getattr(m, "__version__", ""))
        put("mod.%s.file" % name, getattr(m, "__file__", ""))


def main(argv):
    global report
    if sys.version_info[0] < 3:
        sys.stderr.write("envcheck: Python %d.%d: envlock verify checks Python 3 environments\n" % sys.version_info[:2])
        return 3
    out, cpu_only, mmcv, names = None, False, False, []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--out" and i + 1 < len(argv):
            out = argv[i + 1]
            i += 1
        elif a == "--cpu-only":
            cpu_only = True
        elif a == "--mmcv":
            mmcv = True
        elif a == "--import" and i + 1 < len(argv):
            names.append(argv[i + 1])
            i += 1
        else:
            sys.stderr.write("envcheck: unknown argument %r\n" % a)
            return 2
        i += 1
    if out is None:
        sys.stderr.write("envcheck: --out FILE is needed\n")
        return 2
    # UTF-8 whatever the locale (Python 3.6 under LANG=C would write ASCII and fail on a path)
    report = open(out, "w", encoding="utf-8", errors="backslashreplace")
    put("program", "envlock-envcheck 1")
    put("python_version", "%d.%d.%d" % tuple(sys.version_info[:3]))
    put("python_executable", sys.executable)
    torch = torch_part(cpu_only)
    gpu = False
    if torch is not None and not cpu_only:
        try:
            gpu = bool(torch.cuda.is_available())
        except BaseException:
            gpu = False
    if torch is not None:
        conv_part(torch, gpu)
    if mmcv:
        mmcv_part(torch, gpu)
    if names:
        import_part(names)
    put("end", 1)
    report.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
