#!/usr/bin/env python3
"""Writes fixtures/scenarios/forgery/: two genuine GPU nodes and the forgeries of issue 14
(docs/design.md#trust-limits-and-failure), in the fake apiserver's scenario format.

Genuine: gpu-a (3 H100s) and gpu-b (2 H100s), each read by a dcgm-exporter DaemonSet pod of
gpu-operator, and the GPU pods ml/train-0, research/notebook-0 (gpu-a) and ml/train-1 (gpu-b).
Forged (each must move no number; tests/e2e/forgery_test.cc):
  finance/gpu-helper-0   a StatefulSet pod on the CPU node cpu-1, named like a GPU helper,
                         serving a dcgm-looking body: a 999,999 W idle GPU for
                         finance/payroll-db-0 (no such pod) and pods in invented namespaces
                         -> probe outcome "untrusted", never read
  tenant-b/gpu-telemetry-x7k2p
                         a DaemonSet pod on gpu-b reporting gpu-a's UUIDs with invented pods
                         -> untrusted, never fetched (since issue 25: tenant-b is no exporter
                         namespace; read, it would lose them as duplicate_device)
  nvidia-dcgm-exporter-bbbbb (genuine, gpu-b) labels GPU-B1 with ml/train-0, which runs on gpu-a
                         -> pod_on_other_node (the device stays, unattributed)
  nvidia-dcgm-exporter-aaaaa (genuine, gpu-a) labels GPU-A2 with ml/deleted-job-0 (no such pod)
                         -> unknown_pod; and reports 250 % utilisation for GPU-A1 -> bad_value
  tenant-c/gpu-stats-c4n8w
                         a DaemonSet pod on cpu-1 reporting 130 devices -> untrusted, never
                         fetched; trusted by a rule (the test's config), rejected whole
                         (scrape.limits.devices_per_node is 128): gpuattr_exporter_up 0

The numbers of the genuine devices equal those of the same cluster without the forgeries
(ForgeryBaseline in the test strips them in code).

Run from the repository root: python3 tests/golden/forgery_scenario_gen.py
"""
import os
import shutil

import yaml

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures", "scenarios",
                    "forgery")
H100 = "NVIDIA H100 80GB HBM3"
FIELDS = [("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %)."),
          ("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB)."),
          ("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB)."),
          ("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W)."),
          ("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).")]


def node(name, gpus):
    res = {"cpu": "64", "memory": "512Gi", "pods": "110"}
    labels = {"kubernetes.io/hostname": name}
    if gpus:
        res["nvidia.com/gpu"] = str(gpus)
        labels["nvidia.com/gpu.product"] = H100.replace(" ", "-")
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"capacity": dict(res), "allocatable": dict(res)}}


def pod(ns, name, node_name, image, gpus=0, port=None, owner=None, labels=None):
    c = {"name": "main", "image": image}
    if gpus:
        c["resources"] = {"limits": {"nvidia.com/gpu": gpus}, "requests": {"nvidia.com/gpu": gpus}}
    if port:
        c["ports"] = [{"name": "metrics", "containerPort": port}]
    meta = {"name": name, "namespace": ns, "uid": "uid-%s-%s" % (ns, name)}
    if labels:
        meta["labels"] = labels
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1],
                                    "controller": True}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"nodeName": node_name, "containers": [c]},
            "status": {"phase": "Running", "containerStatuses": [{"name": "main", "ready": True}]}}


def labels_text(gpu, uuid, host, ns=None, podname=None):
    l = [("gpu", str(gpu)), ("UUID", uuid), ("device", "nvidia%d" % gpu), ("modelName", H100),
         ("Hostname", host)]
    if podname:
        l += [("container", "main"), ("namespace", ns), ("pod", podname)]
    return ",".join('%s="%s"' % kv for kv in l)


def dcgm_body(host, devices, fields=FIELDS):
    """devices: (gpu, uuid, namespace or None, pod or None, [a value per field])"""
    out = []
    for i, (field, help_) in enumerate(fields):
        out += ["# HELP %s %s" % (field, help_), "# TYPE %s gauge" % field]
        for gpu, uuid, ns, podname, values in devices:
            out.append("%s{%s} %s" % (field, labels_text(gpu, uuid, host, ns, podname), values[i]))
    return "\n".join(out) + "\n"


def main():
    if os.path.isdir(ROOT):
        shutil.rmtree(ROOT)
    os.makedirs(ROOT)
    nodes = [node("gpu-a", 3), node("gpu-b", 2), node("cpu-1", 0)]
    ds = ("DaemonSet", "nvidia-dcgm-exporter")
    pods = [
        pod("gpu-operator", "nvidia-dcgm-exporter-aaaaa", "gpu-a",
            "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.9-3.6.1-ubuntu22.04", port=9400, owner=ds,
            labels={"app": "nvidia-dcgm-exporter"}),
        pod("gpu-operator", "nvidia-dcgm-exporter-bbbbb", "gpu-b",
            "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.9-3.6.1-ubuntu22.04", port=9400, owner=ds,
            labels={"app": "nvidia-dcgm-exporter"}),
        pod("ml", "train-0", "gpu-a", "pytorch/pytorch:2.4", gpus=1),
        pod("research", "notebook-0", "gpu-a", "jupyter/pytorch-notebook", gpus=1),
        pod("ml", "train-1", "gpu-b", "pytorch/pytorch:2.4", gpus=1),
        # The forgers.
        pod("finance", "gpu-helper-0", "cpu-1", "busybox:1.36", port=9400,
            owner=("StatefulSet", "gpu-helper"), labels={"app": "gpu-helper"}),
        pod("tenant-b", "gpu-telemetry-x7k2p", "gpu-b", "example.com/gpu-telemetry:1.0",
            port=9400, owner=("DaemonSet", "gpu-telemetry"), labels={"app": "gpu-telemetry"}),
        pod("tenant-c", "gpu-stats-c4n8w", "cpu-1", "example.com/gpu-stats:0.1", port=9400,
            owner=("DaemonSet", "gpu-stats"), labels={"app": "gpu-stats"}),
    ]
    bodies = {
        ("gpu-operator", "nvidia-dcgm-exporter-aaaaa"): dcgm_body("nvidia-dcgm-exporter-aaaaa", [
            (0, "GPU-a0a0a0a0-0000-4000-8000-000000000000", "ml", "train-0",
             [80, 40000, 41000, "350.000000", 61]),
            (1, "GPU-a0a0a0a0-0000-4000-8000-000000000001", "research", "notebook-0",
             [250, 20000, 61000, "120.000000", 45]),  # 250 %: bad_value
            (2, "GPU-a0a0a0a0-0000-4000-8000-000000000002", "ml", "deleted-job-0",
             [0, 0, 81000, "70.000000", 35]),  # no such pod: unknown_pod
        ]),
        ("gpu-operator", "nvidia-dcgm-exporter-bbbbb"): dcgm_body("nvidia-dcgm-exporter-bbbbb", [
            (0, "GPU-b0b0b0b0-0000-4000-8000-000000000000", "ml", "train-1",
             [55, 30000, 51000, "300.000000", 58]),
            (1, "GPU-b0b0b0b0-0000-4000-8000-000000000001", "ml", "train-0",
             [10, 1000, 80000, "90.000000", 40]),  # runs on gpu-a: pod_on_other_node
        ]),
        ("tenant-b", "gpu-telemetry-x7k2p"): dcgm_body("gpu-telemetry-x7k2p", [
            (0, "GPU-a0a0a0a0-0000-4000-8000-000000000000", "tenant-b", "miner-0",
             [100, 80000, 1000, "700.000000", 80]),
            (1, "GPU-a0a0a0a0-0000-4000-8000-000000000001", "tenant-b", "miner-1",
             [100, 80000, 1000, "700.000000", 80]),
        ]),
        ("finance", "gpu-helper-0"): dcgm_body("gpu-helper-0", [
            (0, "GPU-f0f0f0f0-0000-4000-8000-000000000000", "finance", "payroll-db-0",
             [0, 80000, 1000, "999999.000000", 30])] + [
            (i, "GPU-f0f0f0f0-0000-4000-8000-%012d" % i, "invented-ns-%04d" % i, "pod-%d" % i,
             [0, 80000, 1000, "999999.000000", 30]) for i in range(1, 21)]),
        ("tenant-c", "gpu-stats-c4n8w"): "".join(
            'DCGM_FI_DEV_GPU_TEMP{gpu="%d",UUID="GPU-5757-%08d"} 1\n' % (i, i) for i in range(130)),
    }
    with open(os.path.join(ROOT, "README.md"), "w") as f:
        text = __doc__.rsplit("\n\nRun from", 1)[0].replace("Writes fixtures/scenarios/forgery/: t", "T")
        f.write("# forgery\n\n" + text + "\n\nGenerated by tests/golden/forgery_scenario_gen.py.\n")
    with open(os.path.join(ROOT, "pods.yaml"), "w") as f:
        yaml.safe_dump_all(pods, f, sort_keys=False, default_flow_style=False)
    with open(os.path.join(ROOT, "nodes.yaml"), "w") as f:
        yaml.safe_dump_all(nodes, f, sort_keys=False, default_flow_style=False)
    for (ns, name), body in bodies.items():
        d = os.path.join(ROOT, "exporters", ns)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "%s:9400.prom" % name), "w") as f:
            f.write(body)


if __name__ == "__main__":
    main()
