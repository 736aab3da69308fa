#!/usr/bin/env python3
"""Writes the attribution scenarios fixtures/scenarios/attr-*/ (pods.yaml, nodes.yaml,
exporters/<ns>/<pod>:<port>.prom) in the fake apiserver's scenario format.

The scenarios are modelled on the shapes of real exporter captures (dcgm-exporter with and
without pod labels, MIG with only PROF_GR_ENGINE_ACTIVE and repeated power, time-slicing with
vgpu duplicates, per-process exporters) but every value is made up here.

Run from the repository root: python3 tests/golden/attribution_scenarios_gen.py
Then regenerate the goldens: UPDATE_GOLDEN=1 build/gpuattr_unit_tests --gtest_filter='AttributionGolden*'
"""
import os
import shutil

import yaml

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures", "scenarios")
MiB = 1048576

DCGM_HELP = {
    "DCGM_FI_DEV_GPU_UTIL": ("GPU utilization (in %).", "gauge"),
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE": ("Ratio of time the graphics engine is active.", "gauge"),
    "DCGM_FI_PROF_SM_ACTIVE": ("The ratio of cycles an SM has at least 1 warp assigned.", "gauge"),
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": ("Ratio of cycles the tensor (HMMA) pipe is active.", "gauge"),
    "DCGM_FI_PROF_DRAM_ACTIVE": ("Ratio of cycles the device memory interface is active.", "gauge"),
    "DCGM_FI_DEV_FB_USED": ("Framebuffer memory used (in MiB).", "gauge"),
    "DCGM_FI_DEV_FB_FREE": ("Framebuffer memory free (in MiB).", "gauge"),
    "DCGM_FI_DEV_FB_TOTAL": ("Framebuffer memory total (in MiB).", "gauge"),
    "DCGM_FI_DEV_POWER_USAGE": ("Power draw (in W).", "gauge"),
    "DCGM_FI_DEV_GPU_TEMP": ("GPU temperature (in C).", "gauge"),
    "DCGM_FI_DEV_XID_ERRORS": ("Value of the last XID error encountered.", "gauge"),
    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": ("Total number of double-bit volatile ECC errors.", "counter"),
    "DCGM_FI_DEV_ROW_REMAP_FAILURE": ("Whether remapping of rows has failed.", "gauge"),
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": ("Number of remapped rows for uncorrectable errors.", "counter"),
    "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS": ("Current clock throttle reasons.", "gauge"),
    # Fields gpuattr does not read: a trimmed counter list may still export only these.
    "DCGM_FI_DEV_SM_CLOCK": ("SM clock frequency (in MHz).", "gauge"),
    "DCGM_FI_DEV_MEM_CLOCK": ("Memory clock frequency (in MHz).", "gauge"),
    "DCGM_FI_PROF_PIPE_FP16_ACTIVE": ("Ratio of cycles the fp16 pipes are active.", "gauge"),
}
DCGM_ORDER = list(DCGM_HELP)


def fmt(v):
    if isinstance(v, float) and not v.is_integer():
        return repr(v)
    return str(int(v)) if float(v).is_integer() else repr(v)


def labels_text(labels):
    return ",".join('%s="%s"' % (k, v) for k, v in labels)


def dcgm_body(devices):
    """devices: list of (labels [(k,v)...], {FIELD: value})."""
    out = []
    for field in DCGM_ORDER:
        rows = [(l, vals[field]) for l, vals in devices if field in vals]
        if not rows:
            continue
        help_, typ = DCGM_HELP[field]
        out.append("# HELP %s %s" % (field, help_))
        out.append("# TYPE %s %s" % (field, typ))
        for l, v in rows:
            out.append("%s{%s} %s" % (field, labels_text(l), fmt(v)))
    return "\n".join(out) + "\n"


def dcgm_labels(gpu, uuid, model, hostname, profile=None, gi=None, pod=None, vgpu=None):
    l = [("gpu", str(gpu)), ("UUID", uuid), ("device", "nvidia%d" % gpu), ("modelName", model)]
    if profile is not None:
        l += [("GPU_I_PROFILE", profile), ("GPU_I_ID", str(gi))]
    l.append(("Hostname", hostname))
    if pod is not None:
        ns, name, container = pod
        l += [("container", container), ("namespace", ns), ("pod", name)]
    if vgpu is not None:
        l.append(("vgpu", str(vgpu)))
    return l


def process_body(processes, devices):
    """processes: (ns, pod, container, pid, gpu, uuid, mem_bytes, util_percent);
    devices: (gpu, uuid, total_bytes, util_percent or None, power, temp)."""
    def plabels(ns, pod, c, pid, gpu, uuid):  # a process of no pod has no pod labels
        l = [("namespace", ns), ("pod", pod), ("container", c), ("pid", pid), ("gpu", gpu), ("uuid", uuid)]
        return labels_text([(k, v) for k, v in l if v])
    out = ["# HELP gpu_process_memory_bytes GPU memory used by a process.",
           "# TYPE gpu_process_memory_bytes gauge"]
    for ns, pod, c, pid, gpu, uuid, mem, util in processes:
        out.append('gpu_process_memory_bytes{%s} %d' % (plabels(ns, pod, c, pid, gpu, uuid), mem))
    out += ["# HELP gpu_process_utilization_percent SM utilisation of a process.",
            "# TYPE gpu_process_utilization_percent gauge"]
    for ns, pod, c, pid, gpu, uuid, mem, util in processes:
        out.append('gpu_process_utilization_percent{%s} %s' % (plabels(ns, pod, c, pid, gpu, uuid), fmt(util)))
    for fam, idx, help_ in (("gpu_total_memory_bytes", 2, "Total GPU memory."),
                            ("gpu_total_utilization_percent", 3, "GPU utilisation."),
                            ("gpu_power_usage_watts", 4, "GPU power draw."),
                            ("gpu_temperature_celsius", 5, "GPU temperature.")):
        rows = [d for d in devices if d[idx] is not None]
        if not rows:
            continue
        out += ["# HELP %s %s" % (fam, help_), "# TYPE %s gauge" % fam]
        for d in rows:
            out.append('%s{gpu="%s",uuid="%s"} %s' % (fam, d[0], d[1], fmt(d[idx])))
    return "\n".join(out) + "\n"


def pod(ns, name, node, resources=None, phase="Running", image="busybox"):
    c = {"name": "main", "image": image}
    if resources:
        c["resources"] = {"limits": dict(resources), "requests": dict(resources)}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "uid": "uid-%s-%s" % (ns, name)},
            "spec": {"nodeName": node, "containers": [c]},
            "status": {"phase": phase}}


def exporter_pod(ns, name, node, image="nvcr.io/nvidia/k8s/dcgm-exporter:4.2.3", port=9400):
    p = pod(ns, name, node, image=image)
    p["spec"]["containers"][0]["ports"] = [{"name": "metrics", "containerPort": port}]
    p["metadata"]["labels"] = {"app": name.rsplit("-", 1)[0]}
    # A DaemonSet's pod, as exporters are deployed: only such a pod may speak for its node's GPUs.
    p["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet",
                                         "name": name.rsplit("-", 1)[0], "controller": True}]
    return p


def node(name, labels=None, resources=None):
    res = {"cpu": "64", "memory": "512Gi", "pods": "110"}
    res.update({k: str(v) for k, v in (resources or {}).items()})
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": dict(labels or {}, **{"kubernetes.io/hostname": name})},
            "status": {"capacity": dict(res), "allocatable": dict(res)}}


def write(name, pods, nodes, exporters, readme):
    d = os.path.join(ROOT, name)
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)
    with open(os.path.join(d, "README.md"), "w") as f:
        f.write("# %s\n\n%s\n\nGenerated by tests/golden/attribution_scenarios_gen.py.\n" % (name, readme.strip()))
    with open(os.path.join(d, "pods.yaml"), "w") as f:
        yaml.safe_dump_all(pods, f, sort_keys=False, default_flow_style=False)
    with open(os.path.join(d, "nodes.yaml"), "w") as f:
        yaml.safe_dump_all(nodes, f, sort_keys=False, default_flow_style=False)
    for (ns, podname, port), body in exporters.items():
        ed = os.path.join(d, "exporters", ns)
        os.makedirs(ed, exist_ok=True)
        with open(os.path.join(ed, "%s:%d.prom" % (podname, port)), "w") as f:
            f.write(body)


GPU1 = {"nvidia.com/gpu": 1}
H100 = "NVIDIA H100 80GB HBM3"
A100 = "NVIDIA A100-SXM4-80GB"
L40 = "NVIDIA L40S"


def whole_gpus():
    host = "dcgm-exporter-7xk2p"  # the exporter pod's name, as dcgm-exporter reports without NODE_NAME
    devs = []
    spec = [  # gpu, pod, util%, prof, used MiB, free MiB, power, temp
        (0, ("ml", "trainer-0", "train"), 91, 0.88, 70000, 11000, 612.5, 68),
        (1, ("ml", "trainer-0", "train"), 45, 0.41, 66000, 15000, 402.25, 61),
        (2, ("web", "embed-1", "tei"), 12, 0.10, 4096, 76904, 120, 44),
        (3, None, 0, 0.0, 0, 81000, 71, 33),
    ]
    for gpu, p, util, prof, used, free, power, temp in spec:
        l = dcgm_labels(gpu, "GPU-whole-%04d" % gpu, H100, host, pod=p)
        devs.append((l, {"DCGM_FI_DEV_GPU_UTIL": util, "DCGM_FI_PROF_GR_ENGINE_ACTIVE": prof,
                         "DCGM_FI_PROF_SM_ACTIVE": round(prof * 0.9, 3),
                         "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": round(prof * 0.5, 3),
                         "DCGM_FI_PROF_DRAM_ACTIVE": round(prof * 0.3, 3),
                         "DCGM_FI_DEV_FB_USED": used, "DCGM_FI_DEV_FB_FREE": free,
                         "DCGM_FI_DEV_POWER_USAGE": power, "DCGM_FI_DEV_GPU_TEMP": temp}))
    pods = [exporter_pod("gpu-operator", host, "gpu-h100-a"),
            pod("ml", "trainer-0", "gpu-h100-a", {"nvidia.com/gpu": 2}),
            pod("web", "embed-1", "gpu-h100-a", GPU1),
            pod("web", "frontend-0", "cpu-1")]
    nodes = [node("gpu-h100-a", {"nvidia.com/gpu.product": H100}, {"nvidia.com/gpu": 4}),
             node("cpu-1")]
    write("attr-whole-gpus", pods, nodes, {("gpu-operator", host, 9400): dcgm_body(devs)}, """
Four whole H100s on node gpu-h100-a, dcgm-exporter with pod labels, Hostname = the exporter pod's
name (the node must come from the exporter pod's spec.nodeName). ml/trainer-0 holds GPUs 0 and 1,
web/embed-1 GPU 2, GPU 3 has no pod (pod labels absent). GPU_UTIL and PROF_GR_ENGINE_ACTIVE are
both exported and must never be added; memory total comes from FB_USED + FB_FREE.""")


def mig_prof_only():
    host = "mig-node-1"
    devs = []
    # card 0: three 1g.10gb (7, 8, 9), card 1: 3g.40gb (1) + 4g.40gb (2, no pod)
    spec = [
        (0, "1g.10gb", 7, ("asr", "transcribe-0", "worker"), 0.42, 6000, 3700),
        (0, "1g.10gb", 8, ("asr", "transcribe-1", "worker"), 0.05, 5900, 3800),
        (0, "1g.10gb", 9, ("docs", "ocr-0", "worker"), 0.9, 9000, 700),
        (1, "3g.40gb", 1, ("docs", "llm-0", "vllm"), 0.77, 38000, 2000),
        (1, "4g.40gb", 2, None, 0.0, 0, 40000),
    ]
    card_power = {0: 250, 1: 180.5}
    for gpu, prof, gi, p, eng, used, free in spec:
        l = dcgm_labels(gpu, "GPU-mig-%04d" % gpu, A100, host, prof, gi, pod=p)
        devs.append((l, {"DCGM_FI_PROF_GR_ENGINE_ACTIVE": eng, "DCGM_FI_DEV_FB_USED": used,
                         "DCGM_FI_DEV_FB_FREE": free, "DCGM_FI_DEV_POWER_USAGE": card_power[gpu],
                         "DCGM_FI_DEV_GPU_TEMP": 50 + gpu}))
    pods = [exporter_pod("gpu-operator", "nvidia-dcgm-exporter-m1", host),
            pod("asr", "transcribe-0", host, {"nvidia.com/mig-1g.10gb": 1}),
            pod("asr", "transcribe-1", host, {"nvidia.com/mig-1g.10gb": 1}),
            pod("docs", "ocr-0", host, {"nvidia.com/mig-1g.10gb": 1}),
            pod("docs", "llm-0", host, {"nvidia.com/mig-3g.40gb": 1})]
    nodes = [node(host, {"nvidia.com/mig.strategy": "mixed"},
                  {"nvidia.com/mig-1g.10gb": 3, "nvidia.com/mig-3g.40gb": 1, "nvidia.com/mig-4g.40gb": 1})]
    write("attr-mig-prof-only", pods, nodes,
          {("gpu-operator", "nvidia-dcgm-exporter-m1", 9400): dcgm_body(devs)}, """
Two A100s partitioned with MIG on node mig-node-1. Slices export only PROF_GR_ENGINE_ACTIVE (no
GPU_UTIL) and repeat their card's power on every slice line: card 0 (250 W, three 1g.10gb slices)
must count once and split 1/3 each; card 1 (180.5 W) has a 3g.40gb slice with a pod and an idle
4g.40gb slice whose 4/7 share stays unattributed.""")


def process_shared():
    uu = ["GPU-proc-%04d" % i for i in range(4)]
    G = 1024 * MiB
    procs = [
        ("ml", "vllm-0", "vllm", "1001", "0", uu[0], 40 * G, 60),
        ("ml", "vllm-0", "vllm", "1002", "0", uu[0], 10 * G, 20),
        ("search", "tei-1", "tei", "2001", "0", uu[0], 20 * G, 15),
        ("search", "tei-2", "tei", "3001", "1", uu[1], 4 * G, 3),
        ("lab", "notebook-0", "jupyter", "4001", "2", uu[2], 12 * G, 1),
    ]
    devs = [("0", uu[0], 80 * G, 75, 400, 70), ("1", uu[1], 80 * G, 3, 100, 41),
            ("2", uu[2], 80 * G, 1, 90, 39), ("3", uu[3], 80 * G, 0, 60, 30)]
    host = "gpu-proc-a"
    pods = [exporter_pod("monitoring", "gpu-process-exporter-q8", host, image="ghcr.io/example/gpu-process-exporter:1.2", port=9835),
            pod("ml", "vllm-0", host, GPU1), pod("search", "tei-1", host, GPU1),
            pod("search", "tei-2", host, GPU1), pod("lab", "notebook-0", host)]
    nodes = [node(host, {"nvidia.com/gpu.product": L40}, {"nvidia.com/gpu": 4})]
    write("attr-process-shared", pods, nodes,
          {("monitoring", "gpu-process-exporter-q8", 9835): process_body(procs, devs)}, """
A per-process exporter on node gpu-proc-a (process tier). GPU 0 is shared by ml/vllm-0 (two
processes, 50 GiB) and search/tei-1 (20 GiB): power by share of the device's 80 GiB. GPU 1 has
search/tei-2 alone (whole card). GPU 2 runs lab/notebook-0, which requests no GPU at all
(unrequested use). GPU 3 has no process: its power is unattributed.""")


def timesliced():
    host = "ts-node-1"
    devs = []
    # GPU 0: three replicas repeating the device value (even split)
    for vg, p in enumerate([("chat", "bot-a", "app"), ("chat", "bot-b", "app"), ("etl", "batch-0", "job")]):
        l = dcgm_labels(0, "GPU-ts-0000", A100, host, pod=p, vgpu=vg)
        devs.append((l, {"DCGM_FI_DEV_GPU_UTIL": 64, "DCGM_FI_DEV_FB_USED": 30000,
                         "DCGM_FI_DEV_FB_FREE": 51000, "DCGM_FI_DEV_FB_TOTAL": 81920,
                         "DCGM_FI_DEV_POWER_USAGE": 300, "DCGM_FI_DEV_GPU_TEMP": 60}))
    # GPU 1: two pods with different per-pod FB_USED / GPU_UTIL
    for vg, (p, used, util) in enumerate([(("chat", "bot-c", "app"), 20480, 30),
                                          (("etl", "batch-1", "job"), 10240, 20)]):
        l = dcgm_labels(1, "GPU-ts-0001", A100, host, pod=p, vgpu=vg)
        devs.append((l, {"DCGM_FI_DEV_GPU_UTIL": util, "DCGM_FI_DEV_FB_USED": used,
                         "DCGM_FI_DEV_FB_TOTAL": 81920, "DCGM_FI_DEV_POWER_USAGE": 256,
                         "DCGM_FI_DEV_GPU_TEMP": 55}))
    # GPU 2: a pod alone on a time-sliced node
    l = dcgm_labels(2, "GPU-ts-0002", A100, host, pod=("etl", "batch-2", "job"), vgpu=0)
    devs.append((l, {"DCGM_FI_DEV_GPU_UTIL": 2, "DCGM_FI_DEV_FB_USED": 1024,
                     "DCGM_FI_DEV_FB_TOTAL": 81920, "DCGM_FI_DEV_POWER_USAGE": 80,
                     "DCGM_FI_DEV_GPU_TEMP": 40}))
    shared = {"nvidia.com/gpu.shared": 1}
    pods = [exporter_pod("gpu-operator", "nvidia-dcgm-exporter-ts", host)] + [
        pod(ns, n, host, shared) for ns, n in
        [("chat", "bot-a"), ("chat", "bot-b"), ("etl", "batch-0"), ("chat", "bot-c"),
         ("etl", "batch-1"), ("etl", "batch-2")]]
    nodes = [node(host, {"nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.sharing-strategy": "time-slicing"},
                  {"nvidia.com/gpu.shared": 12})]
    write("attr-timesliced-vgpu", pods, nodes,
          {("gpu-operator", "nvidia-dcgm-exporter-ts", 9400): dcgm_body(devs)}, """
Time-slicing on ts-node-1 (nvidia.com/gpu.replicas=4, resource nvidia.com/gpu.shared), dcgm-exporter
with --kubernetes-virtual-gpus. GPU 0: three pods whose lines repeat the device value (equal
FB_USED) → memory, power and GPU-equivalents split evenly. GPU 1: two pods with different FB_USED
(per-pod values) → power by share of FB_TOTAL. GPU 2: one pod alone, still time_sliced.""")


def mixed_pool():
    G = 1024 * MiB
    # process-only node
    pp = "pool-proc-1"
    procs = [("ml", "ft-0", "train", "11", "0", "GPU-pp-0000", 30 * G, 88),
             ("ml", "ft-1", "train", "12", "1", "GPU-pp-0001", 8 * G, 40)]
    pdevs = [("0", "GPU-pp-0000", 48 * G, 90, 280, 66), ("1", "GPU-pp-0001", 48 * G, 40, 150, 52)]
    # dcgm-only node
    dc = "pool-dcgm-1"
    ddevs = []
    for gpu, p, util, used, power in [(0, ("ml", "serve-0", "srv"), 55, 20000, 210),
                                      (1, ("web", "rank-0", "srv"), 5, 500, 90)]:
        ddevs.append((dcgm_labels(gpu, "GPU-dc-%04d" % gpu, L40, "dcgm-exporter-dc1", pod=p),
                      {"DCGM_FI_DEV_GPU_UTIL": util, "DCGM_FI_DEV_FB_USED": used,
                       "DCGM_FI_DEV_FB_FREE": 46068 - used, "DCGM_FI_DEV_POWER_USAGE": power,
                       "DCGM_FI_DEV_GPU_TEMP": 50}))
    # both exporters on one node: pods from the process tier, device gauges from dcgm
    bo = "pool-both-1"
    bdevs = []
    for gpu, util, used, power in [(0, 70, 24000, 300), (1, 0, 300, 75)]:
        bdevs.append((dcgm_labels(gpu, "GPU-bo-%04d" % gpu, L40, "dcgm-exporter-bo1",
                                  pod=("ml", "owner-%d" % gpu, "x")),
                      {"DCGM_FI_DEV_GPU_UTIL": util, "DCGM_FI_DEV_FB_USED": used,
                       "DCGM_FI_DEV_FB_FREE": 46068 - used, "DCGM_FI_DEV_POWER_USAGE": power,
                       "DCGM_FI_DEV_GPU_TEMP": 58}))
    bprocs = [("ml", "owner-0", "x", "21", "0", "GPU-bo-0000", 16 * G, 50),
              ("web", "sidecar-0", "y", "22", "0", "GPU-bo-0000", 6 * G, 20)]
    bpdevs = [("0", "GPU-bo-0000", 45 * G, 99, 999, 99)]  # must be ignored: dcgm wins
    pods = [exporter_pod("monitoring", "gpu-process-exporter-p1", pp, image="ghcr.io/example/gpu-process-exporter:1.2", port=9835),
            exporter_pod("gpu-operator", "dcgm-exporter-dc1", dc),
            exporter_pod("gpu-operator", "dcgm-exporter-bo1", bo),
            exporter_pod("monitoring", "gpu-process-exporter-b1", bo, image="ghcr.io/example/gpu-process-exporter:1.2", port=9835),
            pod("ml", "ft-0", pp, GPU1), pod("ml", "ft-1", pp, GPU1),
            pod("ml", "serve-0", dc, GPU1), pod("web", "rank-0", dc, GPU1),
            pod("ml", "owner-0", bo, GPU1), pod("ml", "owner-1", bo, GPU1),
            pod("web", "sidecar-0", bo, GPU1)]
    nodes = [node(n, {"nvidia.com/gpu.product": L40}, {"nvidia.com/gpu": 2}) for n in (pp, dc, bo)]
    write("attr-mixed-pool", pods, nodes, {
        ("monitoring", "gpu-process-exporter-p1", 9835): process_body(procs, pdevs),
        ("gpu-operator", "dcgm-exporter-dc1", 9400): dcgm_body(ddevs),
        ("gpu-operator", "dcgm-exporter-bo1", 9400): dcgm_body(bdevs),
        ("monitoring", "gpu-process-exporter-b1", 9835): process_body(bprocs, bpdevs),
    }, """
A mixed fleet: pool-proc-1 has only a per-process exporter (process tier, device figures from it),
pool-dcgm-1 only dcgm-exporter with pod labels, pool-both-1 both: there the pods come from the
process tier (ml/owner-0 and web/sidecar-0 share GPU 0; ml/owner-1 has no process so it is not on
GPU 1) while utilisation, memory and power come from dcgm (the per-process exporter's 999 W is
ignored).""")


def no_pod_labels():
    host = "plain-1"
    devs = []
    for gpu, util, used, power in [(0, 35, 12000, 150), (1, 0, 0, 40)]:
        devs.append((dcgm_labels(gpu, "GPU-np-%04d" % gpu, "NVIDIA RTX A5000", "dcgm-exporter-np"),
                     {"DCGM_FI_DEV_GPU_UTIL": util, "DCGM_FI_DEV_FB_USED": used,
                      "DCGM_FI_DEV_FB_FREE": 24564 - used, "DCGM_FI_DEV_POWER_USAGE": power,
                      "DCGM_FI_DEV_GPU_TEMP": 45}))
    pods = [exporter_pod("monitoring", "dcgm-exporter-np", host),
            pod("vision", "detector-0", host, GPU1),
            pod("vision", "pending-0", host, GPU1, phase="Pending"),
            pod("vision", "done-0", host, GPU1, phase="Succeeded"),
            pod("vision", "cpu-only-0", host),
            pod("vision", "elsewhere-0", "other-1", GPU1)]
    nodes = [node(host, {}, {"nvidia.com/gpu": 2}), node("other-1", {}, {"nvidia.com/gpu": 1})]
    write("attr-no-pod-labels", pods, nodes,
          {("monitoring", "dcgm-exporter-np", 9400): dcgm_body(devs)}, """
dcgm-exporter without --kubernetes on plain-1: no pod labels at all. Devices are published with
their candidate pods (vision/detector-0 Running and vision/pending-0 Pending but bound, both
requesting nvidia.com/gpu on this node; not the finished pod, the CPU pod or the pod on another
node). No owner is guessed: all power is unattributed.""")


def a100_mixed():
    host = "dgx-a100-1"
    devs = []
    pods = [exporter_pod("gpu-operator", "nvidia-dcgm-exporter-dgx", host)]
    namespaces = ["team-a", "team-b", "team-c", "research"]
    powers = [98.5, 101.25, 97, 104.5, 99.75, 102, 96.5, 100.5]
    n_pod = 0
    resources = {}
    for card in range(8):
        uuid = "GPU-a100-%04d" % card
        if card == 7:
            slices = []
        elif card == 6:
            slices = [("3g.40gb", 2)] + [("1g.10gb", 9 + i) for i in range(4)]
        else:
            slices = [("1g.10gb", 7 + i) for i in range(7)]
        if not slices:
            p = ("research", "big-train-0", "train")
            pods.append(pod(p[0], p[1], host, GPU1))
            resources["nvidia.com/gpu"] = 1
            devs.append((dcgm_labels(card, uuid, A100, host, pod=p),
                         {"DCGM_FI_DEV_GPU_UTIL": 97, "DCGM_FI_DEV_FB_USED": 75000,
                          "DCGM_FI_DEV_FB_FREE": 6920, "DCGM_FI_DEV_POWER_USAGE": powers[card],
                          "DCGM_FI_DEV_GPU_TEMP": 70}))
            continue
        for i, (prof, gi) in enumerate(slices):
            res = "nvidia.com/mig-" + prof
            resources[res] = resources.get(res, 0) + 1
            # 28 of the 47 slices have a pod; the others idle
            p = None
            if (card * 7 + i) % 5 != 4 and n_pod < 28:
                ns = namespaces[n_pod % 4]
                p = (ns, "worker-%02d" % n_pod, "w")
                pods.append(pod(ns, p[1], host, {res: 1}))
                n_pod += 1
            util = round(((card * 7 + i) * 37 % 100) / 100.0, 2) if p else 0.0
            size = 40000 if prof.startswith("3g") else 9728
            used = (int(size * util * 0.9) + 300) if p else 0
            devs.append((dcgm_labels(card, uuid, A100, host, prof, gi, pod=p),
                         {"DCGM_FI_PROF_GR_ENGINE_ACTIVE": util, "DCGM_FI_DEV_FB_USED": used,
                          "DCGM_FI_DEV_FB_FREE": size - used,
                          "DCGM_FI_DEV_POWER_USAGE": powers[card], "DCGM_FI_DEV_GPU_TEMP": 40 + card}))
    nodes = [node(host, {"nvidia.com/mig.strategy": "mixed", "nvidia.com/gpu.product": "A100-SXM4-80GB"},
                  resources)]
    write("attr-a100-mixed", pods, nodes,
          {("gpu-operator", "nvidia-dcgm-exporter-dgx", 9400): dcgm_body(devs)}, """
An 8 x A100 box in mig.strategy=mixed: 47 MIG slices on 7 cards (six cards with seven 1g.10gb
slices, one with a 3g.40gb and four 1g.10gb) and one whole card; 29 pods. Every slice line repeats
its card's power (~100 W). The node must total ~800 W (not the ~5,000 W a sum of slice lines
gives), devices must sum to their cards, and namespaces to no more than the cards.""")


def health():
    """Health fields (docs/design.md#health): XIDs, ECC, row remapping, throttling."""
    host = "health-a"
    spec = [  # gpu, pod, power, health fields
        (0, ("ml", "trainer-0", "train"), 300,
         {"DCGM_FI_DEV_XID_ERRORS": 0, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": 0,
          "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS": 0x1}),
        (1, ("ml", "trainer-0", "train"), 290,
         {"DCGM_FI_DEV_XID_ERRORS": 31, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": 0,
          "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS": 0xc1}),
        (2, ("web", "embed-1", "tei"), 80,
         {"DCGM_FI_DEV_XID_ERRORS": 79, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": 2}),
        (3, None, 60,
         {"DCGM_FI_DEV_XID_ERRORS": 0, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": 3,
          "DCGM_FI_DEV_ROW_REMAP_FAILURE": 0}),
    ]
    devs = []
    for gpu, p, power, fields in spec:
        l = dcgm_labels(gpu, "GPU-health-%04d" % gpu, H100, host, pod=p)
        devs.append((l, dict({"DCGM_FI_DEV_POWER_USAGE": power}, **fields)))
    mig_host = "health-mig"
    mig = []
    # card 0: three 1g.10gb slices, the card's XID field only on slice 7's line; card 1: one
    # 3g.40gb slice exporting only a harmless throttle mask (0x4, sw power cap).
    for gpu, prof, gi, fields in [(0, "1g.10gb", 7, {"DCGM_FI_DEV_XID_ERRORS": 0}),
                                  (0, "1g.10gb", 8, {}), (0, "1g.10gb", 9, {}),
                                  (1, "3g.40gb", 1, {"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS": 0x4})]:
        l = dcgm_labels(gpu, "GPU-hmig-%04d" % gpu, A100, mig_host, prof, gi)
        mig.append((l, dict({"DCGM_FI_DEV_POWER_USAGE": 100 + gpu}, **fields)))
    pods = [exporter_pod("gpu-operator", "dcgm-exporter-ha", host),
            exporter_pod("gpu-operator", "dcgm-exporter-hm", mig_host),
            pod("ml", "trainer-0", host, {"nvidia.com/gpu": 2}),
            pod("web", "embed-1", host, GPU1)]
    withdrawn = node(host, {"nvidia.com/gpu.product": H100}, {"nvidia.com/gpu": 4})
    withdrawn["status"]["allocatable"]["nvidia.com/gpu"] = "3"  # the device plugin withdrew one
    nodes = [withdrawn,
             node(mig_host, {"nvidia.com/mig.strategy": "mixed"},
                  {"nvidia.com/mig-1g.10gb": 3, "nvidia.com/mig-3g.40gb": 1}),
             node("health-idle", {}, {"nvidia.com/gpu": 0}),
             node("cpu-1")]
    write("attr-health", pods, nodes,
          {("gpu-operator", "dcgm-exporter-ha", 9400): dcgm_body(devs),
           ("gpu-operator", "dcgm-exporter-hm", 9400): dcgm_body(mig)}, """
Health fields. Node health-a (4 whole H100s, nvidia.com/gpu capacity 4 but allocatable 3, so the
node is critical): GPU 0 ok (XID 0, no ECC error, throttle 0x1 idle only); GPU 1 warning (XID 31,
an application fault, and throttle 0xc1: hw thermal 0x40 and power brake 0x80); GPU 2 critical
(XID 79 "GPU has fallen off the bus", 2 double-bit ECC errors); GPU 3 warning (3 rows pending
remap). Node health-mig: card 0's three 1g.10gb slices inherit the card's ok (the XID field sits
on slice 7's line only); card 1's 3g.40gb slice exports only throttle 0x4 and is unknown; the
node is ok (unknown devices do not count). Node health-idle advertises nvidia.com/gpu 0 and has
no exporter: unknown. cpu-1 is no GPU node and has no health series.""")


def dcgm_and_process():
    """docs/design.md#tiers: dcgm-exporter and a per-process exporter on one node."""
    G = 1024 * MiB
    host = "gpu-both-a"
    dcgm_pod = "nvidia-dcgm-exporter-b7k2q"  # Hostname below: the exporter pod, not the node
    uu = ["GPU-both-0000", "GPU-both-0001"]
    total = 81559 * MiB  # what an H100 80GB HBM3 reports
    # dcgm-exporter with a trimmed counter list: no FB_FREE, no FB_TOTAL. With --kubernetes on a
    # time-sliced node it labels each device with one arbitrary pod (never the attribution).
    devs = []
    for gpu, p, util, used, power, temp in [(0, ("ml", "chat-0", "vllm"), 71, 43008, 612.5, 66),
                                            (1, ("research", "ft-0", "train"), 88, 53248, 540, 63)]:
        devs.append((dcgm_labels(gpu, uu[gpu], H100, dcgm_pod, pod=p),
                     {"DCGM_FI_DEV_GPU_UTIL": util, "DCGM_FI_DEV_FB_USED": used,
                      "DCGM_FI_DEV_POWER_USAGE": power, "DCGM_FI_DEV_GPU_TEMP": temp,
                      "DCGM_FI_DEV_XID_ERRORS": 0}))
    # The per-process exporter numbers the cards the other way round (CUDA's fastest-first order):
    # dcgm and process readings must join by UUID, not by index.
    pgpu = {uu[0]: "1", uu[1]: "0"}
    procs = [
        ("ml", "chat-0", "vllm", "101", pgpu[uu[0]], uu[0], 24 * G, 65),
        ("ml", "chat-0", "vllm", "102", pgpu[uu[0]], uu[0], 6 * G, 20),
        ("ml", "embed-0", "tei", "201", pgpu[uu[0]], uu[0], 8 * G, 12),
        ("lab", "notebook-3", "jupyter", "301", pgpu[uu[0]], uu[0], 4 * G, 3),  # requests no GPU
        ("research", "ft-0", "train", "401", pgpu[uu[1]], uu[1], 40 * G, 80),
        ("research", "eval-0", "eval", "501", pgpu[uu[1]], uu[1], 10 * G, 9),
        ("", "", "", "601", pgpu[uu[1]], uu[1], 2 * G, 1),  # a process of no pod
    ]
    # Its device figures differ from dcgm's (another sampling moment): dcgm's win, only the total
    # memory that dcgm does not export is taken from here.
    pdevs = [(pgpu[u], u, total, 70, 600, 65) for u in uu]
    shared = {"nvidia.com/gpu": 1}  # one of 4 replicas per GPU (time-slicing, not renamed)
    pods = [exporter_pod("gpu-operator", dcgm_pod, host),
            exporter_pod("monitoring", "gpu-process-exporter-z4", host,
                         image="ghcr.io/example/gpu-process-exporter:1.2", port=9835),
            pod("ml", "chat-0", host, shared), pod("ml", "embed-0", host, shared),
            pod("lab", "notebook-3", host),
            pod("research", "ft-0", host, shared), pod("research", "eval-0", host, shared)]
    nodes = [node(host, {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                         "nvidia.com/gpu.replicas": "4",
                         "nvidia.com/gpu.sharing-strategy": "time-slicing"},
                  {"nvidia.com/gpu": 8})]
    write("attr-dcgm-and-process", pods, nodes, {
        ("gpu-operator", dcgm_pod, 9400): dcgm_body(devs),
        ("monitoring", "gpu-process-exporter-z4", 9835): process_body(procs, pdevs),
    }, """
Both exporters on node gpu-both-a (2 x H100 80GB, time-sliced 4 ways without renaming:
nvidia.com/gpu 8 with nvidia.com/gpu.replicas=4, i.e. 2 physical GPUs). dcgm-exporter's Hostname
is its own pod's name and its counter list has no FB_FREE/FB_TOTAL; its pod labels name one
arbitrary pod per device. The per-process exporter numbers the cards the other way round (CUDA
order) but carries the same UUIDs. Pods come from the process tier: card 0 (GPU-both-0000) has
ml/chat-0 (two processes, 30 GiB), ml/embed-0 (8 GiB) and lab/notebook-3, which requests no GPU
(4 GiB, unrequested use); card 1 has research/ft-0 (40 GiB), research/eval-0 (10 GiB) and a
process of no pod (2 GiB). Device gauges come from dcgm (612.5 W and 540 W, not the process
exporter's 600 W); the total memory (81,559 MiB) comes from the process exporter's
gpu_total_memory_bytes matched by UUID. Each pod's power = card W x its memory / 81,559 MiB
(method process); the memory nobody holds stays unattributed.""")


def mig_shared_zero():
    """docs/design.md#sharing: `.shared` resources advertised at 0 share nothing."""
    host = "mig-mixed-2"
    devs = []
    # card 0: 3g.40gb (2) + four 1g.10gb (9..12); card 1: one 7g.80gb (0)
    spec = [
        (0, "3g.40gb", 2, ("llm", "serve-0", "vllm"), 0.66, 30000),
        (0, "1g.10gb", 9, ("asr", "whisper-0", "asr"), 0.31, 7000),
        (0, "1g.10gb", 10, ("asr", "whisper-1", "asr"), 0.12, 6500),
        (0, "1g.10gb", 11, ("docs", "ocr-0", "ocr"), 0.04, 2048),
        (0, "1g.10gb", 12, None, 0.0, 0),
        (1, "7g.80gb", 0, ("llm", "train-0", "train"), 0.93, 76000),
    ]
    size = {"1g.10gb": 9728, "3g.40gb": 40192, "7g.80gb": 80896}
    card_power = {0: 265.5, 1: 398}
    for gpu, prof, gi, p, eng, used in spec:
        l = dcgm_labels(gpu, "GPU-msz-%04d" % gpu, A100, host, prof, gi, pod=p)
        devs.append((l, {"DCGM_FI_PROF_GR_ENGINE_ACTIVE": eng, "DCGM_FI_DEV_FB_USED": used,
                         "DCGM_FI_DEV_FB_FREE": size[prof] - used,
                         "DCGM_FI_DEV_POWER_USAGE": card_power[gpu], "DCGM_FI_DEV_GPU_TEMP": 48 + gpu}))
    pods = [exporter_pod("gpu-operator", "nvidia-dcgm-exporter-msz", host),
            pod("llm", "serve-0", host, {"nvidia.com/mig-3g.40gb": 1}),
            pod("asr", "whisper-0", host, {"nvidia.com/mig-1g.10gb": 1}),
            pod("asr", "whisper-1", host, {"nvidia.com/mig-1g.10gb": 1}),
            pod("docs", "ocr-0", host, {"nvidia.com/mig-1g.10gb": 1}),
            pod("llm", "train-0", host, {"nvidia.com/mig-7g.80gb": 1})]
    labels = {"nvidia.com/mig.strategy": "mixed", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
    for prof in ("1g.10gb", "3g.40gb", "7g.80gb"):  # as gpu-feature-discovery labels them
        labels["nvidia.com/mig-%s.replicas" % prof] = "1"
        labels["nvidia.com/mig-%s.sharing-strategy" % prof] = "none"
    resources = {"nvidia.com/gpu": 0, "nvidia.com/gpu.shared": 0,
                 "nvidia.com/mig-1g.10gb": 4, "nvidia.com/mig-1g.10gb.shared": 0,
                 "nvidia.com/mig-3g.40gb": 1, "nvidia.com/mig-3g.40gb.shared": 0,
                 "nvidia.com/mig-7g.80gb": 1, "nvidia.com/mig-7g.80gb.shared": 0}
    nodes = [node(host, labels, resources)]
    write("attr-mig-shared-zero", pods, nodes,
          {("gpu-operator", "nvidia-dcgm-exporter-msz", 9400): dcgm_body(devs)}, """
A mig.strategy=mixed node whose device plugin has a time-slicing config that gives no replicas:
it advertises nvidia.com/gpu.shared and nvidia.com/mig-<profile>.shared at "0" beside the real
slices. A .shared resource at 0 time-slices nothing: every slice with one pod is sharing="mig",
method="dcgm_pod", and goes whole to its pod. Card 0 (265.5 W): a 3g.40gb slice and four 1g.10gb
slices (one idle, its 1/7 stays unattributed); card 1 (398 W): one 7g.80gb slice. Node device
capacity is 6 (the .shared resources are never devices).""")


def custom_counters():
    """docs/design.md#devices-and-cards: a device is any DCGM series carrying a device key, whatever
    the field."""
    # Node clk-node-1: a counter list of clocks only, no pod labels, MIG slices. The 7g slice's
    # profile is exported as 7g.79gb while its resource is nvidia.com/mig-7g.80gb.
    clk = "clk-node-1"
    cdevs = []
    for gpu, prof, gi, sm, mem in [(0, "7g.79gb", 0, 1980, 2619), (1, "3g.40gb", 2, 1755, 2619),
                                   (1, "4g.40gb", 1, 1410, 2619)]:
        cdevs.append((dcgm_labels(gpu, "GPU-clk-%04d" % gpu, H100, "dcgm-exporter-clk", prof, gi),
                      {"DCGM_FI_DEV_SM_CLOCK": sm, "DCGM_FI_DEV_MEM_CLOCK": mem}))
    # Node prof-node-1: profiling fields only (no GR_ENGINE_ACTIVE: no utilisation), pod labels.
    prof_host = "prof-node-1"
    pdevs = []
    for gpu, p, sm, tensor, dram, fp16 in [(0, ("web", "rank-0", "srv"), 0.62, 0.35, 0.21, 0.1),
                                           (1, None, 0.0, 0.0, 0.0, 0.0)]:
        pdevs.append((dcgm_labels(gpu, "GPU-prof-%04d" % gpu, L40, "dcgm-exporter-prof", pod=p),
                      {"DCGM_FI_PROF_SM_ACTIVE": sm, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": tensor,
                       "DCGM_FI_PROF_DRAM_ACTIVE": dram, "DCGM_FI_PROF_PIPE_FP16_ACTIVE": fp16}))
    pods = [exporter_pod("gpu-operator", "dcgm-exporter-clk", clk),
            exporter_pod("gpu-operator", "dcgm-exporter-prof", prof_host),
            pod("ml", "big-0", clk, {"nvidia.com/mig-7g.80gb": 1}),
            pod("ml", "mid-0", clk, {"nvidia.com/mig-3g.40gb": 1}),
            pod("web", "rank-0", prof_host, GPU1)]
    nodes = [node(clk, {"nvidia.com/mig.strategy": "mixed"},
                  {"nvidia.com/mig-7g.80gb": 1, "nvidia.com/mig-3g.40gb": 1, "nvidia.com/mig-4g.40gb": 1}),
             node(prof_host, {"nvidia.com/gpu.product": L40}, {"nvidia.com/gpu": 2})]
    write("attr-custom-counters", pods, nodes, {
        ("gpu-operator", "dcgm-exporter-clk", 9400): dcgm_body(cdevs),
        ("gpu-operator", "dcgm-exporter-prof", 9400): dcgm_body(pdevs),
    }, """
dcgm-exporters run with trimmed counter lists. On clk-node-1 (2 x H100, MIG, no pod labels) the
exporter reports only DCGM_FI_DEV_SM_CLOCK and DCGM_FI_DEV_MEM_CLOCK: its three MIG slices are
still devices, with the profile exactly as exported (7g.79gb, although the resource is
nvidia.com/mig-7g.80gb), and the node's GPU pods as candidates; every gauge gpuattr has no field
for is absent (no power, memory or utilisation: unknown, never 0). On prof-node-1 (2 x L40S, pod
labels) only profiling fields are exported (SM, tensor, DRAM active and an fp16 field gpuattr does
not read, no GR_ENGINE_ACTIVE): web/rank-0 is on GPU 0 (dcgm_pod) with no utilisation, memory or
power, GPU 1 has no pod.""")


def replicas():
    """docs/design.md#allocation: replicas are never devices; a time-sliced node counts GPUs."""
    ts = "ts-plain-1"
    devs = []
    # GPU 0: chat/bot-0 (1 replica) and chat/bot-1 (2 replicas), per-pod FB_USED lines (vgpu).
    for vg, (p, used, util) in enumerate([(("chat", "bot-0", "app"), 12288, 35),
                                          (("chat", "bot-1", "app"), 30720, 50)]):
        devs.append((dcgm_labels(0, "GPU-rep-0000", A100, ts, pod=p, vgpu=vg),
                     {"DCGM_FI_DEV_GPU_UTIL": util, "DCGM_FI_DEV_FB_USED": used,
                      "DCGM_FI_DEV_FB_TOTAL": 81920, "DCGM_FI_DEV_POWER_USAGE": 310,
                      "DCGM_FI_DEV_GPU_TEMP": 61, "DCGM_FI_DEV_XID_ERRORS": 0}))
    # GPU 1: fallen off the bus; the device plugin withdrew its 4 replicas.
    devs.append((dcgm_labels(1, "GPU-rep-0001", A100, ts),
                 {"DCGM_FI_DEV_POWER_USAGE": 55, "DCGM_FI_DEV_XID_ERRORS": 79}))
    whole = "whole-1"
    wdevs = [(dcgm_labels(0, "GPU-whl-0000", A100, whole, pod=("chat", "train-0", "train")),
              {"DCGM_FI_DEV_GPU_UTIL": 97, "DCGM_FI_DEV_FB_USED": 70000, "DCGM_FI_DEV_FB_FREE": 11920,
               "DCGM_FI_DEV_POWER_USAGE": 402, "DCGM_FI_DEV_XID_ERRORS": 0}),
             (dcgm_labels(1, "GPU-whl-0001", A100, whole),
              {"DCGM_FI_DEV_GPU_UTIL": 0, "DCGM_FI_DEV_FB_USED": 0, "DCGM_FI_DEV_FB_FREE": 81920,
               "DCGM_FI_DEV_POWER_USAGE": 61, "DCGM_FI_DEV_XID_ERRORS": 0})]
    pods = [exporter_pod("gpu-operator", "nvidia-dcgm-exporter-rep", ts),
            exporter_pod("gpu-operator", "nvidia-dcgm-exporter-whl", whole),
            pod("chat", "bot-0", ts, {"nvidia.com/gpu": 1}),
            pod("chat", "bot-1", ts, {"nvidia.com/gpu": 2}),
            pod("chat", "train-0", whole, {"nvidia.com/gpu": 1})]
    sliced = node(ts, {"nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.sharing-strategy": "time-slicing"},
                  {"nvidia.com/gpu": 8})
    sliced["status"]["allocatable"]["nvidia.com/gpu"] = "4"
    nodes = [sliced, node(whole, {}, {"nvidia.com/gpu": 2})]
    write("attr-replicas", pods, nodes, {
        ("gpu-operator", "nvidia-dcgm-exporter-rep", 9400): dcgm_body(devs),
        ("gpu-operator", "nvidia-dcgm-exporter-whl", 9400): dcgm_body(wdevs),
    }, """
Replicas are never devices. ts-plain-1 time-slices its 2 A100s 4 ways without renaming the
resource (nvidia.com/gpu 8, label nvidia.com/gpu.replicas=4): its device capacity is 2 physical
GPUs; GPU 1 fell off the bus (XID 79) and the device plugin withdrew its 4 replicas (allocatable
nvidia.com/gpu 4), so allocatable is 1 and unhealthy 1. chat/bot-0 holds 1 replica and chat/bot-1
2 (per-pod FB_USED lines on GPU 0: power by share of FB_TOTAL). On whole-1, chat/train-0 holds a
whole GPU. Namespace chat: requested devices nvidia.com/gpu 1, requested replicas nvidia.com/gpu 3
(same resource name, never added together).""")


# ---- issue 27: every platform's node shapes (docs/design.md#node-shapes) ----------------------

def without(labels, *keys):
    return [(k, v) for k, v in labels if k not in keys]


def mig_single():
    """mig.strategy=single: nvidia.com/gpu units are 1g.10gb slices."""
    host = "mig-single-1"
    devs = []
    held = {(0, 7): ("ml", "s-0", "app"), (0, 8): ("ml", "s-1", "app"),
            (1, 7): ("ml", "s-1", "app"), (1, 8): ("web", "s-2", "app")}
    util = {("ml", "s-0"): 0.5, ("ml", "s-1"): 0.25, ("web", "s-2"): 0.75}
    for card, power in ((0, 210), (1, 140)):
        for gi in range(7, 14):
            p = held.get((card, gi))
            l = dcgm_labels(card, "GPU-ms-%04d" % card, A100, host, "1g.10gb", gi, pod=p)
            if card == 1:  # this card's lines carry no GPU_I_PROFILE: the node label names it
                l = without(l, "GPU_I_PROFILE")
            u = util[(p[0], p[1])] if p else 0.0
            used = 4096 if p else 0
            devs.append((l, {"DCGM_FI_PROF_GR_ENGINE_ACTIVE": u, "DCGM_FI_DEV_FB_USED": used,
                             "DCGM_FI_DEV_FB_FREE": 9728 - used, "DCGM_FI_DEV_POWER_USAGE": power,
                             "DCGM_FI_DEV_GPU_TEMP": 50 + card}))
    pods = [exporter_pod("gpu-operator", "nvidia-dcgm-exporter-ms", host),
            pod("ml", "s-0", host, GPU1), pod("ml", "s-1", host, {"nvidia.com/gpu": 2}),
            pod("web", "s-2", host, GPU1),
            pod("ml", "wants-profile", "", {"nvidia.com/mig-1g.10gb": 1}, phase="Pending"),
            pod("ml", "wants-many", "", {"nvidia.com/gpu": 20}, phase="Pending")]
    nodes = [node(host, {"nvidia.com/mig.strategy": "single",
                         "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb"},
                  {"nvidia.com/gpu": 14})]
    write("attr-mig-single", pods, nodes,
          {("gpu-operator", "nvidia-dcgm-exporter-ms", 9400): dcgm_body(devs)}, """
mig.strategy=single on mig-single-1: 2 x A100 80GB, each cut into seven 1g.10gb slices, advertised
as nvidia.com/gpu 14 (label nvidia.com/gpu.product ...-MIG-1g.10gb). Card 0's dcgm lines name the
profile (GPU_I_PROFILE), card 1's do not (the node label names it). ml/s-0 holds slice 0:7, ml/s-1
slices 0:8 and 1:7, web/s-2 slice 1:8. Pending: ml/wants-profile asks for nvidia.com/mig-1g.10gb
(offered only as nvidia.com/gpu here), ml/wants-many for 20 nvidia.com/gpu.""")


def gke_partition():
    """GKE GPU partitions: nvidia.com/gpu units are 3g.40gb slices; the model from gke-accelerator."""
    host = "gke-part-1"
    devs = []
    for gi, p, u, used in ((1, ("ml", "p-0", "app"), 0.6, 20000), (2, None, 0.0, 0)):
        l = without(dcgm_labels(0, "GPU-gkp-0000", A100, host, "3g.40gb", gi, pod=p),
                    "modelName", "GPU_I_PROFILE")
        devs.append((l, {"DCGM_FI_PROF_GR_ENGINE_ACTIVE": u, "DCGM_FI_DEV_FB_USED": used,
                         "DCGM_FI_DEV_FB_FREE": 40192 - used, "DCGM_FI_DEV_POWER_USAGE": 300,
                         "DCGM_FI_DEV_GPU_TEMP": 57}))
    pods = [exporter_pod("gpu-operator", "nvidia-dcgm-exporter-gkp", host),
            pod("ml", "p-0", host, GPU1),
            pod("ml", "p-big", "", {"nvidia.com/gpu": 3}, phase="Pending")]
    nodes = [node(host, {"cloud.google.com/gke-gpu-partition-size": "3g.40gb",
                         "cloud.google.com/gke-accelerator": "nvidia-a100-80gb",
                         "cloud.google.com/gke-gpu": "true"},
                  {"nvidia.com/gpu": 2})]
    write("attr-gke-partition", pods, nodes,
          {("gpu-operator", "nvidia-dcgm-exporter-gkp", 9400): dcgm_body(devs)}, """
A GKE node with GPU partitions (cloud.google.com/gke-gpu-partition-size=3g.40gb): one A100 80GB cut
into two 3g.40gb slices, advertised as nvidia.com/gpu 2. The exporter names neither the model nor
the profile: the model comes from cloud.google.com/gke-accelerator (nvidia-a100-80gb), the profile
from the partition label. ml/p-0 holds slice 0:1, slice 0:2 is free; ml/p-big (Pending) asks for
3 nvidia.com/gpu.""")


def mps():
    """NVIDIA device plugin MPS: replicas are not devices, pods on one device share it (mps)."""
    host = "mps-1"
    devs = []
    for vg, p in enumerate([("chat", "m-a", "app"), ("chat", "m-b", "app")]):
        devs.append((dcgm_labels(0, "GPU-mps-0000", L40, host, pod=p, vgpu=vg),
                     {"DCGM_FI_DEV_GPU_UTIL": 70, "DCGM_FI_DEV_FB_USED": 12000,
                      "DCGM_FI_DEV_FB_TOTAL": 46068, "DCGM_FI_DEV_POWER_USAGE": 200,
                      "DCGM_FI_DEV_GPU_TEMP": 62}))
    devs.append((dcgm_labels(1, "GPU-mps-0001", L40, host, pod=("etl", "m-c", "job"), vgpu=0),
                 {"DCGM_FI_DEV_GPU_UTIL": 30, "DCGM_FI_DEV_FB_USED": 8000,
                  "DCGM_FI_DEV_FB_TOTAL": 46068, "DCGM_FI_DEV_POWER_USAGE": 120,
                  "DCGM_FI_DEV_GPU_TEMP": 48}))
    pods = [exporter_pod("gpu-operator", "nvidia-dcgm-exporter-mps", host),
            pod("chat", "m-a", host, GPU1), pod("chat", "m-b", host, {"nvidia.com/gpu": 2}),
            pod("etl", "m-c", host, GPU1)]
    nodes = [node(host, {"nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.sharing-strategy": "mps",
                         "nvidia.com/gpu.product": "NVIDIA-L40S"}, {"nvidia.com/gpu": 8})]
    write("attr-mps", pods, nodes,
          {("gpu-operator", "nvidia-dcgm-exporter-mps", 9400): dcgm_body(devs)}, """
MPS through the NVIDIA device plugin on mps-1 (nvidia.com/gpu.sharing-strategy=mps,
nvidia.com/gpu.replicas=4, resource not renamed: nvidia.com/gpu 8 = 2 L40S x 4). GPU 0: chat/m-a (1
replica) and chat/m-b (2 replicas), lines repeating the device value (even split); GPU 1: etl/m-c
alone (still mps).""")


def gke_sharing():
    """GKE time-sharing and GKE MPS: gke-max-shared-clients-per-gpu replicas per GPU."""
    ts, mp = "gke-ts-1", "gke-mps-1"
    tdevs = []
    for vg, (p, used, util) in enumerate([(("chat", "g-0", "app"), 6000, 40),
                                          (("chat", "g-1", "app"), 3000, 20),
                                          (("etl", "g-2", "job"), 2000, 10)]):
        tdevs.append((without(dcgm_labels(0, "GPU-gts-0000", L40, ts, pod=p, vgpu=vg), "modelName"),
                      {"DCGM_FI_DEV_GPU_UTIL": util, "DCGM_FI_DEV_FB_USED": used,
                       "DCGM_FI_DEV_FB_TOTAL": 23034, "DCGM_FI_DEV_POWER_USAGE": 60,
                       "DCGM_FI_DEV_GPU_TEMP": 50}))
    tdevs.append((without(dcgm_labels(1, "GPU-gts-0001", L40, ts), "modelName"),
                  {"DCGM_FI_DEV_GPU_UTIL": 0, "DCGM_FI_DEV_FB_USED": 0,
                   "DCGM_FI_DEV_FB_TOTAL": 23034, "DCGM_FI_DEV_POWER_USAGE": 16,
                   "DCGM_FI_DEV_GPU_TEMP": 35}))
    mdevs = []
    for vg, p in enumerate([("chat", "q-0", "app"), ("chat", "q-1", "app")]):
        mdevs.append((without(dcgm_labels(0, "GPU-gmp-0000", L40, mp, pod=p, vgpu=vg), "modelName"),
                      {"DCGM_FI_DEV_GPU_UTIL": 55, "DCGM_FI_DEV_FB_USED": 5000,
                       "DCGM_FI_DEV_FB_TOTAL": 23034, "DCGM_FI_DEV_POWER_USAGE": 50,
                       "DCGM_FI_DEV_GPU_TEMP": 47}))
    pods = [exporter_pod("gpu-operator", "nvidia-dcgm-exporter-gts", ts),
            exporter_pod("gpu-operator", "nvidia-dcgm-exporter-gmp", mp),
            pod("chat", "g-0", ts, GPU1), pod("chat", "g-1", ts, GPU1), pod("etl", "g-2", ts, GPU1),
            pod("chat", "q-0", mp, GPU1), pod("chat", "q-1", mp, GPU1)]
    gke = {"cloud.google.com/gke-accelerator": "nvidia-l4", "cloud.google.com/gke-gpu": "true"}
    nodes = [node(ts, dict(gke, **{"cloud.google.com/gke-gpu-sharing-strategy": "time-sharing",
                                   "cloud.google.com/gke-max-shared-clients-per-gpu": "3"}),
                  {"nvidia.com/gpu": 6}),
             node(mp, dict(gke, **{"cloud.google.com/gke-gpu-sharing-strategy": "mps",
                                   "cloud.google.com/gke-max-shared-clients-per-gpu": "2"}),
                  {"nvidia.com/gpu": 2})]
    write("attr-gke-sharing", pods, nodes, {
        ("gpu-operator", "nvidia-dcgm-exporter-gts", 9400): dcgm_body(tdevs),
        ("gpu-operator", "nvidia-dcgm-exporter-gmp", 9400): dcgm_body(mdevs),
    }, """
GKE GPU sharing, the model only in cloud.google.com/gke-accelerator (nvidia-l4; the exporter gives
no modelName). gke-ts-1: time-sharing, 3 clients per GPU, nvidia.com/gpu 6 = 2 GPUs; GPU 0 has
chat/g-0, chat/g-1, etl/g-2 with per-pod FB_USED (power by share of FB_TOTAL), GPU 1 is idle.
gke-mps-1: MPS, 2 clients per GPU, nvidia.com/gpu 2 = 1 GPU shared by chat/q-0 and chat/q-1
(lines repeating the device value: even split).""")


def hami():
    """HAMi vGPUs: a pod holds max(memory share, cores share) of the card its annotation names."""
    host = "hami-1"
    devs = []
    for gpu, power, util, used in ((0, 60, 80, 14000), (1, 40, 35, 4000)):
        devs.append((dcgm_labels(gpu, "GPU-hami-%04d" % gpu, "NVIDIA L4", host),
                     {"DCGM_FI_DEV_GPU_UTIL": util, "DCGM_FI_DEV_FB_USED": used,
                      "DCGM_FI_DEV_FB_TOTAL": 23034, "DCGM_FI_DEV_POWER_USAGE": power,
                      "DCGM_FI_DEV_GPU_TEMP": 45}))
    def vpod(ns, name, containers, annotation):
        p = pod(ns, name, host)
        p["spec"]["containers"] = [
            {"name": "c%d" % i, "image": "busybox",
             "resources": {"limits": dict(c), "requests": dict(c)}} for i, c in enumerate(containers)]
        p["metadata"]["annotations"] = {"hami.io/vgpu-devices-allocated": annotation,
                                        "hami.io/vgpu-node": host}
        return p
    pods = [exporter_pod("gpu-operator", "nvidia-dcgm-exporter-hami", host),
            vpod("ml", "h-0", [{"nvidia.com/gpu": 1, "nvidia.com/gpumem": 11517}],
                 "GPU-hami-0000,NVIDIA,11517,0:;"),
            vpod("ml", "h-1", [{"nvidia.com/gpu": 1, "nvidia.com/gpumem": 4096, "nvidia.com/gpucores": 30}],
                 "GPU-hami-0000,NVIDIA,4096,30:;"),
            vpod("web", "h-2", [{"nvidia.com/gpu": 1, "nvidia.com/gpucores": 25}] * 2,
                 "GPU-hami-0001,NVIDIA,2048,25:;GPU-hami-0001,NVIDIA,2048,25:;"),
            vpod("web", "h-bad", [{"nvidia.com/gpu": 1, "nvidia.com/gpumem-percentage": 10}],
                 "GPU-hami-0001,NVIDIA,lots,10:;")]
    register = ('[{"id":"GPU-hami-0000","count":10,"devmem":23034,"devcore":100,"type":"NVIDIA-L4",'
                '"health":true},{"id":"GPU-hami-0001","count":10,"devmem":23034,"devcore":100,'
                '"type":"NVIDIA-L4","health":true}]')
    n = node(host, {"gpu": "on"}, {"nvidia.com/gpu": 20})
    n["metadata"]["annotations"] = {"hami.io/node-nvidia-register": register}
    write("attr-hami", pods, [n],
          {("gpu-operator", "nvidia-dcgm-exporter-hami", 9400): dcgm_body(devs)}, """
HAMi vGPUs (v2.10.0 annotations) on hami-1: 2 x L4 (23034 MiB) registered with 10 slots each
(nvidia.com/gpu 20 = 2 GPUs). The dcgm-exporter has no pod labels: pods come from
hami.io/vgpu-devices-allocated. ml/h-0: 11517 MiB, no core limit on GPU 0 (holds 0.5); ml/h-1:
4096 MiB, 30 % cores on GPU 0 (holds max(0.178, 0.3) = 0.3); web/h-2: two containers of 2048 MiB,
25 % on GPU 1 (holds 0.25 + 0.25 = 0.5); web/h-bad: a malformed annotation (holds nothing in
attribution; its slot request still counts in the scheduler view).""")


def hami_monitor_body(containers, host, cards):
    """HAMi's vGPU monitor as v2.10.0 serves it (cmd/vGPUmonitor/metrics.go; the collector is
    registered with a constant zone="vGPU" label) with --legacy-metrics, so the same figures
    appear again under the earlier names. containers: (ns, pod, container, vdevice, uuid,
    memory_bytes, sm_util_percent); cards: (index, uuid, memory_used_bytes, util_percent)."""
    def fam(name, help_, rows):
        return ["# HELP %s %s" % (name, help_), "# TYPE %s gauge" % name] + rows
    out = []
    out += fam("hami_host_gpu_memory_used_bytes", "GPU device memory usage in bytes",
               ['hami_host_gpu_memory_used_bytes{device_index="%d",device_type="NVIDIA-NVIDIA L4",'
                'device_uuid="%s",node="%s",zone="vGPU"} %d' % (i, u, host, m) for i, u, m, _ in cards])
    out += fam("hami_host_gpu_utilization_ratio", "GPU core utilization ratio (0-100)",
               ['hami_host_gpu_utilization_ratio{device_index="%d",device_type="NVIDIA-NVIDIA L4",'
                'device_uuid="%s",node="%s",zone="vGPU"} %d' % (i, u, host, ut) for i, u, _, ut in cards])
    def ctr(name, help_, value):
        return fam(name, help_, ['%s{container="%s",device_uuid="%s",namespace="%s",pod="%s",'
                                 'vdevice_index="%d",zone="vGPU"} %s' % (name, c, u, ns, p, v, fmt(value(row)))
                                 for row in containers for ns, p, c, v, u, _, _ in [row]])
    out += ctr("hami_vgpu_memory_used_bytes", "vGPU device memory usage in bytes", lambda r: r[5])
    out += ctr("hami_vgpu_memory_limit_bytes", "vGPU device memory limit in bytes", 
               lambda r: {"h-0": 11517, "h-1": 4096}.get(r[1], 2048) * MIB)
    out += ctr("hami_container_device_utilization_ratio", "Container device SM utilization ratio",
               lambda r: r[6])
    def legacy(name, help_, value):
        return fam(name, help_, ['%s{ctrname="%s",deviceuuid="%s",podname="%s",podnamespace="%s",'
                                 'vdeviceid="%d",zone="vGPU"} %s' % (name, c, u, p, ns, v, fmt(value(row)))
                                 for row in containers for ns, p, c, v, u, _, _ in [row]])
    out += fam("HostCoreUtilization", "GPU core utilization",
               ['HostCoreUtilization{deviceidx="%d",devicetype="NVIDIA-NVIDIA L4",deviceuuid="%s",'
                'nodeid="%s",zone="vGPU"} %d' % (i, u, host, ut) for i, u, _, ut in cards])
    out += legacy("vGPU_device_memory_usage_in_bytes", "vGPU device usage", lambda r: r[5])
    out += legacy("Device_utilization_desc_of_container", "Container device utilization description",
                  lambda r: r[6])
    return "\n".join(out) + "\n"


MIB = 1048576


def hami_monitor():
    """HAMi with its vGPU monitor scraped: the monitor's per-container memory is a per-pod memory
    source like a per-process exporter's (the process tier), the dcgm-exporter gives the cards."""
    host = "hami-1"
    devs = []
    for gpu, power, util, used in ((0, 60, 80, 14000), (1, 40, 35, 4000)):
        devs.append((dcgm_labels(gpu, "GPU-hami-%04d" % gpu, "NVIDIA L4", host),
                     {"DCGM_FI_DEV_GPU_UTIL": util, "DCGM_FI_DEV_FB_USED": used,
                      "DCGM_FI_DEV_FB_TOTAL": 23034, "DCGM_FI_DEV_POWER_USAGE": power,
                      "DCGM_FI_DEV_GPU_TEMP": 45}))
    def vpod(ns, name, containers, annotation):
        p = pod(ns, name, host)
        p["spec"]["containers"] = [
            {"name": "c%d" % i, "image": "busybox",
             "resources": {"limits": dict(c), "requests": dict(c)}} for i, c in enumerate(containers)]
        p["metadata"]["annotations"] = {"hami.io/vgpu-devices-allocated": annotation,
                                        "hami.io/vgpu-node": host}
        return p
    # The HAMi chart's device-plugin DaemonSet pod (release "hami" in kube-system): the device
    # plugin without a port, the vGPU monitor on its port "metrics" 9394.
    monitor = pod("kube-system", "hami-device-plugin-x7q2k", host)
    monitor["metadata"]["labels"] = {"app.kubernetes.io/component": "hami-device-plugin",
                                     "app.kubernetes.io/name": "hami"}
    monitor["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet",
                                               "name": "hami-device-plugin", "controller": True}]
    monitor["spec"]["containers"] = [
        {"name": "device-plugin", "image": "docker.io/projecthami/hami:v2.10.0"},
        {"name": "vgpu-monitor", "image": "docker.io/projecthami/hami:v2.10.0",
         "ports": [{"name": "metrics", "containerPort": 9394}]}]
    pods = [exporter_pod("gpu-operator", "nvidia-dcgm-exporter-hami", host), monitor,
            vpod("ml", "h-0", [{"nvidia.com/gpu": 1, "nvidia.com/gpumem": 11517}],
                 "GPU-hami-0000,NVIDIA,11517,0:;"),
            vpod("ml", "h-1", [{"nvidia.com/gpu": 1, "nvidia.com/gpumem": 4096, "nvidia.com/gpucores": 30}],
                 "GPU-hami-0000,NVIDIA,4096,30:;"),
            vpod("web", "h-2", [{"nvidia.com/gpu": 1, "nvidia.com/gpumem": 2048, "nvidia.com/gpucores": 25}] * 2,
                 "GPU-hami-0001,NVIDIA,2048,25:;GPU-hami-0001,NVIDIA,2048,25:;")]
    containers = [("ml", "h-0", "c0", 0, "GPU-hami-0000", 9000 * MIB, 55),
                  ("ml", "h-1", "c0", 0, "GPU-hami-0000", 3000 * MIB, 20),
                  ("web", "h-2", "c0", 0, "GPU-hami-0001", 1024 * MIB, 10),
                  ("web", "h-2", "c1", 0, "GPU-hami-0001", 1500 * MIB, 12)]
    cards = [(0, "GPU-hami-0000", 14000 * MIB, 80), (1, "GPU-hami-0001", 4000 * MIB, 35)]
    register = ('[{"id":"GPU-hami-0000","count":10,"devmem":23034,"devcore":100,"type":"NVIDIA-L4",'
                '"health":true},{"id":"GPU-hami-0001","count":10,"devmem":23034,"devcore":100,'
                '"type":"NVIDIA-L4","health":true}]')
    n = node(host, {"gpu": "on"}, {"nvidia.com/gpu": 20})
    n["metadata"]["annotations"] = {"hami.io/node-nvidia-register": register}
    write("attr-hami-monitor", pods, [n],
          {("gpu-operator", "nvidia-dcgm-exporter-hami", 9400): dcgm_body(devs),
           ("kube-system", "hami-device-plugin-x7q2k", 9394): hami_monitor_body(containers, host, cards)}, """
attr-hami's node and pods (HAMi v2.10.0: 2 x L4 of 23034 MiB, 10 slots each) with HAMi's vGPU
monitor scraped: kube-system/hami-device-plugin-x7q2k, a DaemonSet pod in an exporter namespace,
serves the v2.10.0 names and, as with --legacy-metrics, the earlier ones (each container is read
once). Its per-container memory makes hami-1 a process-tier node: pods from the monitor, power by
memory share of the card's FB_TOTAL (dcgm), sharing "hami". GPU 0 (60 W): ml/h-0 9000 MiB
(9000/23034 = 0.3907, 23.44 W), ml/h-1 3000 MiB (0.1302, 7.81 W); GPU 1 (40 W): web/h-2's two
containers 1024 + 1500 = 2524 MiB (0.1096, 4.38 W). Unattributed 60 - 31.26 + 40 - 4.38 = 64.36 W.""")


if __name__ == "__main__":
    whole_gpus()
    mig_prof_only()
    process_shared()
    timesliced()
    mixed_pool()
    no_pod_labels()
    a100_mixed()
    health()
    dcgm_and_process()
    mig_shared_zero()
    custom_counters()
    replicas()
    mig_single()
    gke_partition()
    mps()
    gke_sharing()
    hami()
    hami_monitor()
