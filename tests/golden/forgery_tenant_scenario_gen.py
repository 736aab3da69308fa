#!/usr/bin/env python3
"""Writes fixtures/scenarios/forgery-tenant/ and fixtures/scenarios/forgery-query-api/: the
attacks of issue 25 (a tenant with a DaemonSet; a trusted Prometheus scraping a tenant's pod)
beside a genuine cluster, in the fake apiserver's scenario format (docs/design.md#trust,
docs/security.md). tests/e2e/forgery_tenant_test.cc runs the real binary against both.

forgery-tenant: gpu-a (3 H100s) and gpu-b (2 H100s), each read by a dcgm-exporter DaemonSet pod
of gpu-operator (XID 0, healthy); GPU pods ml/train-0, research/notebook-0 (gpu-a), the victim
ml/train-1 (gpu-b GPU 0, 300 W) and the attacker's own zz-team/miner-0 (gpu-b GPU 1, 400 W).
Forged (each must move no number):
  zz-team/gpu-process-exporter-zq7xk
        a per-process exporter DaemonSet (apps/v1, controller) in the tenant namespace zz-team on
        gpu-b: ml/train-1 holds 140 GiB of both cards, idle, 700 W; miner-0 is gone
        -> untrusted, never fetched (zz-team is no exporter namespace); gpu-b stays dcgm-tier
  zz-team/nvidia-dcgm-exporter-hand1
        a bare pod with a hand-written owner reference (apiVersion example.com/v1, kind
        DaemonSet, controller: true): GPU 0 at 4,999 W with XID 79 -> untrusted, never fetched
  zz-team/gpu-health-x1
        a pod whose apps/v1 DaemonSet reference is not the controller (controller: false):
        invented GPUs 5 and 6 at 4,999 W, XID 79 -> untrusted, never fetched
  a-team/dcgm-exporter-aa1b2
        a DaemonSet pod in a-team (sorting before gpu-operator) on gpu-b reporting gpu-b's two
        UUIDs (15 lines) for invented pods -> untrusted, never fetched: the genuine exporter keeps
        its devices
  monitoring/dcgm-exporter-mmmmm
        a second dcgm-exporter DaemonSet in an exporter namespace (as kube-prometheus-stack's chart
        installs one, or anyone who may create pods in `monitoring`): trusted, so it is read; it
        reports gpu-b's GPUs 0 and 1 (duplicate_device: gpu-operator comes first by namespace) and
        invented GPUs 5 and 6 at 4,999 W with XID 79 on GPU 5 (over_capacity: gpu-b advertises
        nvidia.com/gpu: 2); gpu-b's health is unchanged
forgery-query-api: gpu-b (2 H100s) whose dcgm-exporter pod does not answer through the pod proxy
(503), so the cluster is read from the trusted Prometheus monitoring/prometheus-k8s:9090, which
also scrapes tenants' pods:
  genuine   the DaemonSet pod gpu-operator/nvidia-dcgm-exporter-bbbbb as the Prometheus Operator
            labels it (namespace/pod of the target, exported_* of the exporter)
  a-team/worker-7d9f8-abcde, a plain ReplicaSet pod on gpu-b:
            (1) GPU 0 at 4,999 W and 80 GB for ml/train-1 (Prometheus renames its labels to
                exported_*: the target is a-team's) -> untrusted_target
            (2) GPU 1 at 4,999 W, no pod labels of its own but forged kubernetes_namespace/
                kubernetes_pod_name naming the genuine exporter (its own pod then reads as the
                workload, and holds no GPU) -> untrusted_target
  a-team/gpu-exporter-x9, a DaemonSet pod in a-team: GPU 0 at 4,999 W -> untrusted_target
  a series with no target label at all (remote-written): GPU 1 at 4,999 W -> no_target

Run from the repository root: python3 tests/golden/forgery_tenant_scenario_gen.py
"""
import os
import shutil

import yaml

import forgery_scenario_gen as forgery
from forgery_scenario_gen import H100, node

SCENARIOS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures",
                         "scenarios")
DCGM_IMAGE = "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.9-3.6.1-ubuntu22.04"
FIELDS = [("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %)."),
          ("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB)."),
          ("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB)."),
          ("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W)."),
          ("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C)."),
          ("DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.")]
DS = {"apiVersion": "apps/v1", "kind": "DaemonSet", "controller": True}
UUID_A = "GPU-a0a0a0a0-0000-4000-8000-%012d"
UUID_B = "GPU-b0b0b0b0-0000-4000-8000-%012d"


def pod(ns, name, node_name, image, gpus=0, port=None, owner=None, labels=None):
    """owner: the ownerReference as a dict (owner() below), written as given."""
    p = forgery.pod(ns, name, node_name, image, gpus, port, None, labels)
    if owner:
        p["metadata"]["ownerReferences"] = [owner]
    return p


def owner(name, **over):
    o = dict(DS)
    o["name"] = name
    o.update(over)
    return {"apiVersion": o["apiVersion"], "kind": o["kind"], "name": o["name"],
            "controller": o["controller"]}


def dcgm_body(host, devices):
    """devices: (gpu, uuid, namespace, pod, [util, fb_used, fb_free, power, temp, xid])"""
    return forgery.dcgm_body(host, devices, FIELDS)


def process_body():
    """The per-process exporter of finding (a): ml/train-1 on both of gpu-b's cards."""
    out = []
    for gpu in (0, 1):
        uuid = UUID_B % gpu
        out.append('gpu_process_memory_bytes{namespace="ml",pod="train-1",container="main",'
                   'uuid="%s",gpu="%d",pid="4242"} %d' % (uuid, gpu, 70 << 30))
        out.append('gpu_process_utilization_percent{namespace="ml",pod="train-1",'
                   'container="main",uuid="%s",gpu="%d",pid="4242"} 0' % (uuid, gpu))
        out.append('gpu_total_memory_bytes{uuid="%s",gpu="%d"} %d' % (uuid, gpu, 80 << 30))
        out.append('gpu_total_utilization_percent{uuid="%s",gpu="%d"} 0' % (uuid, gpu))
        out.append('gpu_power_usage_watts{uuid="%s",gpu="%d"} 350' % (uuid, gpu))
    return "\n".join(out) + "\n"


def write_common(root, doc_title, doc, nodes, pods):
    if os.path.isdir(root):
        shutil.rmtree(root)
    os.makedirs(root)
    with open(os.path.join(root, "README.md"), "w") as f:
        f.write("# %s\n\n%s\n\nGenerated by tests/golden/forgery_tenant_scenario_gen.py.\n"
                % (doc_title, doc))
    with open(os.path.join(root, "pods.yaml"), "w") as f:
        yaml.safe_dump_all(pods, f, sort_keys=False, default_flow_style=False)
    with open(os.path.join(root, "nodes.yaml"), "w") as f:
        yaml.safe_dump_all(nodes, f, sort_keys=False, default_flow_style=False)


def write_bodies(root, bodies):
    for (ns, name, port), body in bodies.items():
        d = os.path.join(root, "exporters", ns)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "%s:%d.prom" % (name, port)), "w") as f:
            f.write(body)


def genuine_b(host):
    return [(0, UUID_B % 0, "ml", "train-1", [55, 30000, 51000, "300.000000", 58, 0]),
            (1, UUID_B % 1, "zz-team", "miner-0", [100, 70000, 11000, "400.000000", 66, 0])]


def tenant_scenario(doc):
    root = os.path.join(SCENARIOS, "forgery-tenant")
    nodes = [node("gpu-a", 3), node("gpu-b", 2), node("cpu-1", 0)]
    app = {"app": "nvidia-dcgm-exporter"}
    pods = [
        pod("gpu-operator", "nvidia-dcgm-exporter-aaaaa", "gpu-a", DCGM_IMAGE, port=9400,
            owner=owner("nvidia-dcgm-exporter"), labels=app),
        pod("gpu-operator", "nvidia-dcgm-exporter-bbbbb", "gpu-b", DCGM_IMAGE, port=9400,
            owner=owner("nvidia-dcgm-exporter"), labels=app),
        pod("ml", "train-0", "gpu-a", "pytorch/pytorch:2.4", gpus=1),
        pod("research", "notebook-0", "gpu-a", "jupyter/pytorch-notebook", gpus=1),
        pod("ml", "train-1", "gpu-b", "pytorch/pytorch:2.4", gpus=1),
        pod("zz-team", "miner-0", "gpu-b", "pytorch/pytorch:2.4", gpus=1),
        # The forgers.
        pod("zz-team", "gpu-process-exporter-zq7xk", "gpu-b",
            "ghcr.io/example/gpu-process-exporter:1.2", port=9835,
            owner=owner("gpu-process-exporter"), labels={"app": "gpu-process-exporter"}),
        pod("zz-team", "nvidia-dcgm-exporter-hand1", "gpu-b", DCGM_IMAGE, port=9400,
            owner=owner("nvidia-dcgm-exporter", apiVersion="example.com/v1"), labels=app),
        pod("zz-team", "gpu-health-x1", "gpu-b", "example.com/gpu-health:0.1", port=9400,
            owner=owner("gpu-health", controller=False), labels={"app": "gpu-health"}),
        pod("a-team", "dcgm-exporter-aa1b2", "gpu-b", DCGM_IMAGE, port=9400,
            owner=owner("dcgm-exporter"), labels={"app": "dcgm-exporter"}),
        pod("monitoring", "dcgm-exporter-mmmmm", "gpu-b", DCGM_IMAGE, port=9400,
            owner=owner("dcgm-exporter"), labels={"app": "dcgm-exporter"}),
    ]
    invented = [(5, "GPU-5757-0005", None, None, [0, 0, 81000, "4999.000000", 90, 79]),
                (6, "GPU-5757-0006", None, None, [0, 0, 81000, "4999.000000", 90, 0])]
    bodies = {
        ("gpu-operator", "nvidia-dcgm-exporter-aaaaa", 9400): dcgm_body(
            "nvidia-dcgm-exporter-aaaaa", [
                (0, UUID_A % 0, "ml", "train-0", [80, 40000, 41000, "350.000000", 61, 0]),
                (1, UUID_A % 1, "research", "notebook-0", [20, 20000, 61000, "120.000000", 45, 0]),
                (2, UUID_A % 2, None, None, [0, 0, 81000, "70.000000", 35, 0])]),
        ("gpu-operator", "nvidia-dcgm-exporter-bbbbb", 9400): dcgm_body(
            "nvidia-dcgm-exporter-bbbbb", genuine_b("nvidia-dcgm-exporter-bbbbb")),
        ("zz-team", "gpu-process-exporter-zq7xk", 9835): process_body(),
        ("zz-team", "nvidia-dcgm-exporter-hand1", 9400): dcgm_body("nvidia-dcgm-exporter-hand1", [
            (0, UUID_B % 0, "zz-team", "miner-0", [0, 0, 81000, "4999.000000", 90, 79])]),
        ("zz-team", "gpu-health-x1", 9400): dcgm_body("gpu-health-x1", invented),
        ("a-team", "dcgm-exporter-aa1b2", 9400): "".join(
            dcgm_body("dcgm-exporter-aa1b2", [
                (0, UUID_B % 0, "a-team", "ghost-0", [100, 80000, 1000, "700.000000", 80, 0]),
                (1, UUID_B % 1, "a-team", "ghost-1", [100, 80000, 1000, "700.000000", 80, 0])])),
        ("monitoring", "dcgm-exporter-mmmmm", 9400): dcgm_body("dcgm-exporter-mmmmm", [
            (0, UUID_B % 0, None, None, [54, 30000, 51000, "301.000000", 58, 0]),
            (1, UUID_B % 1, None, None, [99, 70000, 11000, "399.000000", 66, 0])] + invented),
    }
    write_common(root, "forgery-tenant", doc, nodes, pods)
    write_bodies(root, bodies)


def prom_series(name, value, labels):
    m = {"__name__": name}
    m.update(labels)
    return {"metric": m, "value": [1700000000.0, value]}


def genuine_target(gpu, workload=None):
    l = {"gpu": str(gpu), "UUID": UUID_B % gpu, "device": "nvidia%d" % gpu, "modelName": H100,
         "Hostname": "nvidia-dcgm-exporter-bbbbb", "namespace": "gpu-operator",
         "pod": "nvidia-dcgm-exporter-bbbbb", "container": "nvidia-dcgm-exporter",
         "service": "nvidia-dcgm-exporter", "endpoint": "gpu-metrics",
         "job": "nvidia-dcgm-exporter", "instance": "10.244.2.7:9400", "node": "gpu-b",
         "prometheus": "monitoring/k8s"}
    if workload:
        l.update({"exported_namespace": workload[0], "exported_pod": workload[1],
                  "exported_container": "main"})
    return l


def tenant_target(pod_name, gpu, extra):
    l = {"gpu": str(gpu), "UUID": UUID_B % gpu, "modelName": H100, "namespace": "a-team",
         "pod": pod_name, "container": "main", "service": pod_name, "endpoint": "metrics",
         "job": "a-team/" + pod_name, "instance": "10.244.2.9:9400", "node": "gpu-b",
         "prometheus": "monitoring/k8s"}
    l.update(extra)
    return l


def query_scenario(doc):
    root = os.path.join(SCENARIOS, "forgery-query-api")
    nodes = [node("gpu-b", 2), node("cpu-1", 0)]
    pods = [
        pod("gpu-operator", "nvidia-dcgm-exporter-bbbbb", "gpu-b", DCGM_IMAGE, port=9400,
            owner=owner("nvidia-dcgm-exporter"), labels={"app": "nvidia-dcgm-exporter"}),
        pod("ml", "train-1", "gpu-b", "pytorch/pytorch:2.4", gpus=1),
        pod("a-team", "worker-7d9f8-abcde", "gpu-b", "busybox:1.36",
            owner=owner("worker-7d9f8", kind="ReplicaSet"), labels={"app": "worker"}),
        pod("a-team", "gpu-exporter-x9", "gpu-b", "example.com/gpu-exporter:0.1",
            owner=owner("gpu-exporter"), labels={"app": "gpu-exporter"}),
    ]
    write_common(root, "forgery-query-api", doc, nodes, pods)
    services = {"apiVersion": "v1", "kind": "ServiceList", "items": [
        {"metadata": {"name": "prometheus-k8s", "namespace": "monitoring"},
         "spec": {"ports": [{"name": "web", "port": 9090, "protocol": "TCP",
                             "targetPort": "web"}]}}]}
    with open(os.path.join(root, "services.yaml"), "w") as f:
        yaml.safe_dump(services, f, sort_keys=False, default_flow_style=False)
    genuine = []
    for gpu, workload, values in [(0, ("ml", "train-1"), (55, 30000, 51000, 300)),
                                  (1, None, (10, 1000, 80000, 90))]:
        for (field, _), v in zip(FIELDS, values):
            genuine.append(prom_series(field, str(v), genuine_target(gpu, workload)))
    worker = "worker-7d9f8-abcde"
    forged = [
        prom_series("DCGM_FI_DEV_POWER_USAGE", "4999", tenant_target(worker, 0, {
            "exported_namespace": "ml", "exported_pod": "train-1", "exported_container": "main"})),
        prom_series("DCGM_FI_DEV_FB_USED", "80000", tenant_target(worker, 0, {
            "exported_namespace": "ml", "exported_pod": "train-1", "exported_container": "main"})),
        prom_series("DCGM_FI_DEV_POWER_USAGE", "4999", tenant_target(worker, 1, {
            "kubernetes_namespace": "gpu-operator",
            "kubernetes_pod_name": "nvidia-dcgm-exporter-bbbbb"})),
        prom_series("DCGM_FI_DEV_POWER_USAGE", "4999", tenant_target("gpu-exporter-x9", 0, {})),
        prom_series("DCGM_FI_DEV_POWER_USAGE", "4999",
                    {"gpu": "1", "UUID": UUID_B % 1, "node": "gpu-b"}),
    ]
    probe = [{"metric": {"__name__": f}, "value": "1"} for f, _ in FIELDS[:5]]
    answers = [{"contains": "count by (__name__)", "result": probe},
               {"contains": "__name__=~", "result": genuine + forged}]
    d = os.path.join(root, "prometheus", "monitoring", "prometheus-k8s:9090")
    os.makedirs(d)
    with open(os.path.join(d, "queries.yaml"), "w") as f:
        f.write("# The genuine exporter's series first, then the forged ones (README.md).\n")
        yaml.safe_dump(answers, f, sort_keys=False, default_flow_style=None, width=100)


def main():
    text = __doc__.rsplit("\n\nRun from", 1)[0]
    tenant_doc = text.split("\n\nforgery-tenant: ", 1)[1].split("\nforgery-query-api: ", 1)[0]
    query_doc = text.split("\nforgery-query-api: ", 1)[1]
    intro = "The attacks of issue 25 (docs/design.md#trust, docs/security.md); " \
            "tests/e2e/forgery_tenant_test.cc.\n\n"
    tenant_scenario(intro + "Scenario forgery-tenant: " + tenant_doc)
    query_scenario(intro + "Scenario forgery-query-api: " + query_doc)


if __name__ == "__main__":
    main()
