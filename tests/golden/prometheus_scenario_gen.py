#!/usr/bin/env python3
"""Writes fixtures/scenarios/prom-a100-mixed/ from fixtures/scenarios/attr-a100-mixed/: the
same cluster and the same dcgm-exporter data, but read the way a kube-prometheus-stack install
sees it, with no exporter pod answering through the pod proxy (docs/fallback.md).

- pods.yaml and nodes.yaml are copied; the dcgm-exporter pod stays (Running, probed) but has no
  exporter body, so the pod proxy answers 503.
- services.yaml: the kube-prometheus-stack services (Prometheus, alertmanager, operator,
  node-exporter, kube-state-metrics, grafana, thanos-discovery), a Thanos query in front of the
  two Prometheus replicas, and the dcgm-exporter service.
- Every sample is relabelled as a ServiceMonitor scrape does with honorLabels: false: the
  exporter's namespace/pod/container become exported_*, the target's namespace/pod/container
  (the exporter pod), service, endpoint, job, instance and prometheus are stamped on, and
  dcgm-exporter's Hostname is the exporter pod's name (no NODE_NAME set).
- thanos-query:10902 answers with both HA replicas (prometheus_replica ...-0 and ...-1, the
  second scraped 3.5 s later) and a `node` label from a __meta_kubernetes_pod_node_name relabel;
  kube-prometheus-stack-prometheus:9090 answers with one replica and no node label (the node then
  comes from the scraped exporter pod).

Run from the repository root: python3 tests/golden/prometheus_scenario_gen.py
"""
import os
import re
import shutil

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures", "scenarios")
SOURCE = os.path.join(ROOT, "attr-a100-mixed")
TARGET = os.path.join(ROOT, "prom-a100-mixed")
EXPORTER_NS, EXPORTER_POD, PORT = "gpu-operator", "nvidia-dcgm-exporter-dgx", 9400
NODE = "dgx-a100-1"
PROM = "monitoring/kube-prometheus-stack-prometheus"
REPLICAS = ["prometheus-kube-prometheus-stack-prometheus-0", "prometheus-kube-prometheus-stack-prometheus-1"]
TS = 1700000000.0

LINE = re.compile(r'^([A-Za-z_:][A-Za-z0-9_:]*)\{(.*)\} (\S+)$')
LABEL = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"')

SERVICES = """\
# kube-prometheus-stack in `monitoring` (release name kube-prometheus-stack), a Thanos query in
# front of its two Prometheus replicas, and the GPU operator's dcgm-exporter service.
apiVersion: v1
kind: ServiceList
items:
  - metadata: {name: kube-prometheus-stack-prometheus, namespace: monitoring, labels: {app: kube-prometheus-stack-prometheus}}
    spec:
      ports:
        - {name: http-web, port: 9090, protocol: TCP, targetPort: 9090}
        - {name: reloader-web, port: 8080, protocol: TCP, targetPort: reloader-web}
  - metadata: {name: prometheus-operated, namespace: monitoring, labels: {operated-prometheus: "true"}}
    spec:
      clusterIP: None
      ports:
        - {name: web, port: 9090, protocol: TCP, targetPort: web}
  - metadata: {name: thanos-query, namespace: monitoring, labels: {app.kubernetes.io/name: thanos-query}}
    spec:
      ports:
        - {name: grpc, port: 10901, protocol: TCP, targetPort: grpc}
        - {name: http, port: 10902, protocol: TCP, targetPort: http}
  - metadata: {name: kube-prometheus-stack-thanos-discovery, namespace: monitoring}
    spec:
      clusterIP: None
      ports:
        - {name: grpc, port: 10901, protocol: TCP, targetPort: grpc}
        - {name: http, port: 10902, protocol: TCP, targetPort: http}
  - metadata: {name: kube-prometheus-stack-alertmanager, namespace: monitoring}
    spec:
      ports:
        - {name: http-web, port: 9093, protocol: TCP, targetPort: 9093}
  - metadata: {name: kube-prometheus-stack-operator, namespace: monitoring}
    spec:
      ports:
        - {name: https, port: 443, protocol: TCP, targetPort: https}
  - metadata: {name: kube-prometheus-stack-prometheus-node-exporter, namespace: monitoring}
    spec:
      ports:
        - {name: http-metrics, port: 9100, protocol: TCP, targetPort: 9100}
  - metadata: {name: kube-prometheus-stack-kube-state-metrics, namespace: monitoring}
    spec:
      ports:
        - {name: http, port: 8080, protocol: TCP, targetPort: 8080}
  - metadata: {name: kube-prometheus-stack-grafana, namespace: monitoring}
    spec:
      ports:
        - {name: http-web, port: 80, protocol: TCP, targetPort: 3000}
  - metadata: {name: nvidia-dcgm-exporter, namespace: gpu-operator, labels: {app: nvidia-dcgm-exporter}}
    spec:
      ports:
        - {name: gpu-metrics, port: 9400, protocol: TCP, targetPort: 9400}
"""


def read_samples(path):
    out = []
    for line in open(path):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = LINE.match(line)
        assert m, line
        out.append((m.group(1), dict(LABEL.findall(m.group(2))), m.group(3)))
    return out


def relabel(name, labels, replica, with_node):
    metric = {"__name__": name}
    for k, v in labels.items():
        if k in ("namespace", "pod", "container"):
            metric["exported_" + k] = v
        elif k == "Hostname":
            metric[k] = EXPORTER_POD  # dcgm-exporter without NODE_NAME: its own pod name
        else:
            metric[k] = v
    metric.update({
        "namespace": EXPORTER_NS, "pod": EXPORTER_POD, "container": "nvidia-dcgm-exporter",
        "service": "nvidia-dcgm-exporter", "endpoint": "gpu-metrics", "job": "nvidia-dcgm-exporter",
        "instance": "10.244.3.7:%d" % PORT, "prometheus": PROM,
    })
    if replica is not None:
        metric["prometheus_replica"] = replica
    if with_node:
        metric["node"] = NODE
    return metric


def flow(d):
    return "{" + ", ".join('%s: "%s"' % (k, v.replace('"', '\\"')) for k, v in d.items()) + "}"


def write_answers(path, samples, replicas, with_node, header):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    counts = {}
    for name, _, _ in samples:
        counts[name] = counts.get(name, 0) + len(replicas)
    with open(path, "w") as f:
        f.write(header)
        f.write("# The probe (count by (__name__) of the needed families) comes first: it also names them.\n")
        f.write("- contains: \"count by (__name__)\"\n  result:\n")
        for name in sorted(counts):
            f.write("    - metric: {__name__: \"%s\"}\n      value: \"%d\"\n" % (name, counts[name]))
        f.write("- contains: \"__name__=~\"\n  result:\n")
        for i, replica in enumerate(replicas):
            for name, labels, value in samples:
                f.write("    - metric: %s\n      value: [%s, \"%s\"]\n"
                        % (flow(relabel(name, labels, replica, with_node)), TS + 3.5 * i, value))


def main():
    if os.path.exists(TARGET):
        shutil.rmtree(TARGET)
    os.makedirs(TARGET)
    for f in ("pods.yaml", "nodes.yaml"):
        shutil.copy(os.path.join(SOURCE, f), os.path.join(TARGET, f))
    with open(os.path.join(TARGET, "services.yaml"), "w") as f:
        f.write(SERVICES)
    samples = read_samples(os.path.join(SOURCE, "exporters", EXPORTER_NS,
                                        "%s:%d.prom" % (EXPORTER_POD, PORT)))
    write_answers(os.path.join(TARGET, "prometheus", "monitoring", "thanos-query:10902", "queries.yaml"),
                  samples, REPLICAS, True,
                  "# Thanos query over both Prometheus replicas (no deduplication): every series twice.\n"
                  "# Generated by tests/golden/prometheus_scenario_gen.py.\n")
    write_answers(os.path.join(TARGET, "prometheus", "monitoring", "kube-prometheus-stack-prometheus:9090",
                               "queries.yaml"),
                  samples, [None], False,
                  "# One Prometheus replica behind the kube-prometheus-stack service; no node label.\n"
                  "# Generated by tests/golden/prometheus_scenario_gen.py.\n")
    with open(os.path.join(TARGET, "README.md"), "w") as f:
        f.write("# prom-a100-mixed\n\n"
                "attr-a100-mixed (8 x A100, 47 MIG slices and a whole card, 29 pods) seen only through a\n"
                "Prometheus-compatible query API, as with kube-prometheus-stack: the dcgm-exporter pod does\n"
                "not answer through the pod proxy (503), so gpuattr falls back to the query API\n"
                "(docs/fallback.md). thanos-query:10902 serves both HA replicas with a node label;\n"
                "kube-prometheus-stack-prometheus:9090 one replica without. Series carry exported_* labels,\n"
                "the exporter pod as pod, job/instance/endpoint/service/prometheus labels, and dcgm's\n"
                "Hostname is the exporter pod's name. Attribution must equal attr-a100-mixed's.\n\n"
                "Generated by tests/golden/prometheus_scenario_gen.py.\n")


if __name__ == "__main__":
    main()
